// LD_PRELOAD helper for repro.c: every shm_open of JACK's shared segments (engine, graph,
// client control; not the wake-up entries, `jack_sem.*`) waits 20 ms, widening the window of
// jack2 issue 721 (between the server's answer to a client's open and the client mapping its
// control block) so that the race shows in tens of openings instead of thousands.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int shm_open(const char *name, int flags, mode_t mode) {
    static int (*next)(const char *, int, mode_t);
    if (!next) next = (int (*)(const char *, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
    if (strstr(name, "jack_sem") == NULL) usleep(20000);
    return next(name, flags, mode);
}
