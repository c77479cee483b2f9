#include "CAllocationCounter.h"
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static __thread allocation_tally *current_tally = NULL;

void allocation_counter_enter(allocation_tally *tally) { current_tally = tally; }
void allocation_counter_exit(void) { current_tally = NULL; }
uint64_t allocation_tally_allocations(const allocation_tally *tally) { return __atomic_load_n(&tally->allocations, __ATOMIC_SEQ_CST); }
uint64_t allocation_tally_frees(const allocation_tally *tally) { return __atomic_load_n(&tally->frees, __ATOMIC_SEQ_CST); }

// Under RealtimeSanitizer (scripts/rtsan builds with -DSPECTRUM_RTSAN_BUILD) these strong
// definitions would shadow RTSan's own (weak) malloc/free interceptors, and RTSan would never
// see an allocation. There RTSan is the allocation detector: tallies stay at 0.
#ifndef SPECTRUM_RTSAN_BUILD
static inline void count_allocation(void) {
    allocation_tally *tally = current_tally;
    if (tally != NULL) __atomic_fetch_add(&tally->allocations, 1, __ATOMIC_SEQ_CST);
}

void *malloc(size_t size) { count_allocation(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { count_allocation(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { count_allocation(); return __libc_realloc(pointer, size); }
void free(void *pointer) {
    allocation_tally *tally = current_tally;
    if (tally != NULL && pointer != NULL) __atomic_fetch_add(&tally->frees, 1, __ATOMIC_SEQ_CST);
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
