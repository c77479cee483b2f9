#include "CAllocationCounter.h"
#include <stddef.h>
#include <errno.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static __thread int counting = 0;
static _Atomic uint64_t allocations = 0;
static _Atomic uint64_t frees = 0;

void allocation_counter_enter(void) { counting = 1; }
void allocation_counter_exit(void) { counting = 0; }
void allocation_counter_reset(void) {
    atomic_store(&allocations, 0);
    atomic_store(&frees, 0);
}
uint64_t allocation_counter_allocations(void) { return atomic_load(&allocations); }
uint64_t allocation_counter_frees(void) { return atomic_load(&frees); }

// Under RealtimeSanitizer (scripts/rtsan builds with -DSPECTRUM_RTSAN_BUILD) these strong
// definitions would shadow RTSan's own (weak) malloc/free interceptors, and RTSan would never
// see an allocation. There RTSan is the allocation detector: the counter stays at 0.
#ifndef SPECTRUM_RTSAN_BUILD
static inline void count_allocation(void) { if (counting) atomic_fetch_add(&allocations, 1); }

void *malloc(size_t size) { count_allocation(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { count_allocation(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { count_allocation(); return __libc_realloc(pointer, size); }
void free(void *pointer) {
    if (counting && pointer != NULL) atomic_fetch_add(&frees, 1);
    __libc_free(pointer);
}
void *memalign(size_t alignment, size_t size) { count_allocation(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count_allocation(); return __libc_memalign(alignment, size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
    count_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
#endif // SPECTRUM_RTSAN_BUILD
