#ifndef SPECTRUM_CALLOCATIONCOUNTER_H
#define SPECTRUM_CALLOCATIONCOUNTER_H
// Test-only: counts heap calls made by a thread while it is inside enter()/exit().
// Linked only into the test binary, whose malloc/free definitions take precedence over
// glibc's, so no LD_PRELOAD is needed.
#include <stdint.h>

void allocation_counter_enter(void);
void allocation_counter_exit(void);
void allocation_counter_reset(void);
uint64_t allocation_counter_allocations(void);
uint64_t allocation_counter_frees(void);
#endif
