#ifndef SPECTRUM_CALLOCATIONCOUNTER_H
#define SPECTRUM_CALLOCATIONCOUNTER_H
// Test-only: counts heap calls made by a thread between enter() and exit(), into a tally the
// test owns, so tests running in parallel never see each other's counts. Linked only into the
// test binary, whose malloc/free definitions take precedence over glibc's (no LD_PRELOAD).
#include <stdint.h>

typedef struct allocation_tally {
    uint64_t allocations; // updated atomically
    uint64_t frees;       // updated atomically
} allocation_tally;

/// From now on, heap calls made by the calling thread are added to `tally`.
void allocation_counter_enter(allocation_tally *tally);
/// Stops counting on the calling thread.
void allocation_counter_exit(void);
uint64_t allocation_tally_allocations(const allocation_tally *tally);
uint64_t allocation_tally_frees(const allocation_tally *tally);
#endif
