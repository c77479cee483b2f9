// Reproduces jack2 issue 721 as it hits Spectrum: two JACK clients of one process ("spectrum",
// then a tone "a440" connected into it) opened while another process opens and closes clients
// (as `jack_lsp` polling does). A client number freed while "spectrum" was still opening keeps
// a stale wake-up entry in libjack's per-process table; "a440", given that number, is never run
// (jackd: "a440 was not finished, state = Triggered"), and "spectrum" downstream stops too.
// With --recover, the tone checks that it runs right after opening and "spectrum" once the tone
// is connected; a client not run within 0.3 s is closed (its close clears its own entry) and
// opened again, up to 3 times: what Spectrum's test tone and its supervisor do.
// Usage: repro OPENINGS [--recover]; prints the stalls. Private jackd, stopped by PID.
#define _GNU_SOURCE
#include <jack/jack.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_ulong calls[2];
static char server[64];

static int process(jack_nframes_t frames, void *argument) {
    (void)frames;
    atomic_fetch_add(&calls[(long)argument], 1);
    return 0;
}

static void quiet(const char *message) { (void)message; }

static jack_client_t *open_client(const char *name, long index, int output) {
    jack_status_t status;
    jack_client_t *client = NULL;
    for (int tries = 0; tries < 200 && !client; tries++) {
        client = jack_client_open(name, JackNoStartServer | JackServerName, &status, server);
        if (!client) usleep(20000);
    }
    if (!client) return NULL;
    jack_port_register(client, output ? "out" : "in", JACK_DEFAULT_AUDIO_TYPE, output ? JackPortIsOutput : JackPortIsInput, 0);
    jack_set_process_callback(client, process, (void *)index);
    jack_activate(client);
    return client;
}

static int runs(long index) {
    unsigned long before = atomic_load(&calls[index]);
    usleep(300000);
    return atomic_load(&calls[index]) != before;
}

// Opens a client; with `recover`, reopens it (up to 3 times) while it does not run.
static jack_client_t *open_running(const char *name, long index, int output, int recover, int *reopened) {
    jack_client_t *client = open_client(name, index, output);
    for (int attempt = 1; recover && client && attempt < 3 && !runs(index); attempt++) {
        jack_client_close(client);
        usleep(200000);
        client = open_client(name, index, output);
        (*reopened)++;
    }
    return client;
}

// A private jackd named `server`, its output discarded.
static pid_t start_server(void) {
    pid_t jackd = fork();
    if (jackd == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(null, 2);
        execlp("jackd", "jackd", "-n", server, "-d", "dummy", "-r", "48000", "-p", "256", (char *)NULL);
        _exit(127);
    }
    return jackd;
}

int main(int argc, char **argv) {
    int openings = argc > 1 ? atoi(argv[1]) : 20;
    int recover = argc > 2 && strcmp(argv[2], "--recover") == 0;
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(server, sizeof server, "stale-wakeup-%d", getpid());
    pid_t jackd = start_server();
    usleep(500000);
    pid_t churners[2];
    for (int k = 0; k < 2; k++) {
        churners[k] = fork();
        if (churners[k] == 0) {
            for (;;) {
                jack_status_t status;
                jack_client_t *client = jack_client_open("churn", JackNoStartServer | JackServerName, &status, server);
                if (client) jack_client_close(client); else usleep(10000);
            }
        }
    }
    int stalls = 0, reopened = 0;
    for (int opening = 0; opening < openings; opening++) {
        atomic_store(&calls[0], 0);
        atomic_store(&calls[1], 0);
        // As in the test: "spectrum" opens, then the tone (which checks that it runs, as
        // ToneClient does), is connected into it; then "spectrum" is watched (its supervisor).
        jack_client_t *spectrum = open_client("spectrum", 0, 0);
        jack_client_t *tone = open_running("a440", 1, 1, recover, &reopened);
        if (!spectrum || !tone) { fprintf(stderr, "cannot open a client on %s\n", server); break; }
        char source[128], destination[128];
        snprintf(source, sizeof source, "%s:out", jack_get_client_name(tone));
        snprintf(destination, sizeof destination, "%s:in", jack_get_client_name(spectrum));
        jack_connect(tone, source, destination);
        usleep(100000);
        for (int attempt = 1; recover && attempt < 3 && !runs(0); attempt++) {
            jack_client_close(spectrum);
            usleep(200000);
            spectrum = open_client("spectrum", 0, 0);
            snprintf(destination, sizeof destination, "%s:in", jack_get_client_name(spectrum));
            jack_connect(tone, source, destination);
            reopened++;
        }
        int stalled = !runs(0) || !runs(1);
        stalls += stalled;
        if (stalled) printf("opening %d: stalled (spectrum %lu, a440 %lu callbacks)\n", opening, atomic_load(&calls[0]), atomic_load(&calls[1]));
        jack_client_close(tone);
        jack_client_close(spectrum);
        if ((opening + 1) % 10 == 0) printf("  after %d openings: %d stalled, %d clients reopened\n", opening + 1, stalls, reopened);
    }
    printf("%s: %d stalls in %d openings (%d clients reopened)\n", recover ? "with recovery" : "without recovery", stalls, openings, reopened);
    for (int k = 0; k < 2; k++) { kill(churners[k], SIGKILL); waitpid(churners[k], NULL, 0); }
    kill(jackd, SIGTERM);
    waitpid(jackd, NULL, 0);
    // jackd can leave its slot in JACK's server registry (8 per machine) after this run (seen:
    // every run left one); a server of the same name started and stopped cleanly frees it.
    pid_t successor = start_server();
    jack_status_t status;
    jack_client_t *probe = NULL;
    for (int tries = 0; tries < 100 && !probe; tries++) {
        probe = jack_client_open("probe", JackNoStartServer | JackServerName, &status, server);
        if (!probe) usleep(50000);
    }
    if (probe) jack_client_close(probe);
    kill(successor, SIGTERM);
    waitpid(successor, NULL, 0);
    return 0;
}
