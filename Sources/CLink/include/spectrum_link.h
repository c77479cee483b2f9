#ifndef SPECTRUM_LINK_H
#define SPECTRUM_LINK_H
// A small C interface over Ableton Link (Debian's header-only ableton-link-dev, GPL-2.0-or-later),
// for Spectrum's Link thread. None of these functions is for the JACK process thread: Link's
// commit signals a condition variable, and the host-time filter allocates while it fills.
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spectrum_link spectrum_link;

/// The session as this peer sees it at `host_micros` (Link's clock, CLOCK_MONOTONIC_RAW µs).
typedef struct {
    double tempo_bpm;
    double beat;
    double phase;
} spectrum_link_timeline;

/// A Link peer with the given initial tempo, not yet enabled; NULL if Link could not start.
spectrum_link *spectrum_link_create(double bpm);
void spectrum_link_destroy(spectrum_link *link);
/// Joins (true) or leaves (false) the session: discovery multicasts 224.76.78.75:20808.
void spectrum_link_enable(spectrum_link *link, bool enabled);
size_t spectrum_link_peer_count(spectrum_link *link);
/// Link's clock now, µs.
int64_t spectrum_link_clock_micros(spectrum_link *link);
/// Link's host time (µs) for a moment `jack_micros` on JACK's clock (jack_get_time(),
/// CLOCK_MONOTONIC) read just before this call: Link's host-time filter, a linear regression
/// over the latest 512 (JACK time, Link time) pairs, so the mapping is steady and follows the
/// two clocks' drift.
int64_t spectrum_link_host_time(spectrum_link *link, double jack_micros);
spectrum_link_timeline spectrum_link_capture(spectrum_link *link, int64_t host_micros, double quantum);
/// Sets the session's tempo at `host_micros` and, with `align_beat`, puts the nearest whole beat
/// of the session's timeline at `host_micros` (forceBeatAtTime: every peer follows), then commits.
void spectrum_link_commit(spectrum_link *link, double bpm, int64_t host_micros, double quantum, bool align_beat);

#ifdef __cplusplus
}
#endif
#endif
