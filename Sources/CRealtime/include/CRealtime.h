#ifndef SPECTRUM_CREALTIME_H
#define SPECTRUM_CREALTIME_H
// Tiny helpers for the real-time path that Swift cannot express directly.
#include <stdint.h>

/// Turns on flush-to-zero and denormals-are-zero for the calling thread and returns the
/// previous control word, so that decaying filters never fall into slow denormal arithmetic.
/// Real-time safe (one register read and write).
uint32_t spectrum_denormals_disable(void);

/// Restores the control word returned by spectrum_denormals_disable. Real-time safe.
void spectrum_denormals_restore(uint32_t previous);

/// Marks the calling thread as real-time for RealtimeSanitizer. A no-op in builds without
/// -fsanitize=realtime (the sanitizer entry points are weak symbols).
void spectrum_rtsan_enter(void);
void spectrum_rtsan_exit(void);

#endif
