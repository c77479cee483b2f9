#include "CRealtime.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

// Declared weak: present only when linked with -fsanitize=realtime.
extern void __rtsan_realtime_enter(void) __attribute__((weak));
extern void __rtsan_realtime_exit(void) __attribute__((weak));

uint32_t spectrum_denormals_disable(void) {
#if defined(__x86_64__) || defined(__i386__)
    uint32_t previous = _mm_getcsr();
    _mm_setcsr(previous | 0x8040u); // FTZ (bit 15) | DAZ (bit 6)
    return previous;
#else
    return 0;
#endif
}

void spectrum_denormals_restore(uint32_t previous) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(previous);
#else
    (void)previous;
#endif
}

void spectrum_rtsan_enter(void) {
    if (__rtsan_realtime_enter) __rtsan_realtime_enter();
}

void spectrum_rtsan_exit(void) {
    if (__rtsan_realtime_exit) __rtsan_realtime_exit();
}
