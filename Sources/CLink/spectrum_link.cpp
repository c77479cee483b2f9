// Spectrum's C interface over Ableton Link (see include/spectrum_link.h). GPL-2.0-or-later code
// (Link) linked into a GPL-3.0-or-later program: see the README's licence note.
#include "spectrum_link.h"

#include <ableton/Link.hpp>
#include <ableton/link/HostTimeFilter.hpp>
#include <chrono>
#include <cmath>
#include <new>

struct spectrum_link {
    explicit spectrum_link(double bpm) : link(bpm) {}
    ableton::Link link;
    ableton::link::HostTimeFilter<ableton::link::platform::Clock> filter;
    /// The first JACK time given to the filter: its sample times count from here, as Link's own
    /// sample counters do (absolute µs near 10⁹–10¹⁰, squared in the regression, lose the
    /// precision the intercept needs: a first run was 160 ms off).
    double jackBaseMicros = -1;
};

extern "C" {

spectrum_link *spectrum_link_create(double bpm) {
    try {
        return new spectrum_link(bpm);
    } catch (...) {
        return nullptr;
    }
}

void spectrum_link_destroy(spectrum_link *link) { delete link; }

void spectrum_link_enable(spectrum_link *link, bool enabled) { link->link.enable(enabled); }

size_t spectrum_link_peer_count(spectrum_link *link) { return link->link.numPeers(); }

int64_t spectrum_link_clock_micros(spectrum_link *link) { return link->link.clock().micros().count(); }

int64_t spectrum_link_host_time(spectrum_link *link, double jack_micros) {
    if (link->jackBaseMicros < 0) {
        link->jackBaseMicros = jack_micros;
    }
    return link->filter.sampleTimeToHostTime(jack_micros - link->jackBaseMicros).count();
}

spectrum_link_timeline spectrum_link_capture(spectrum_link *link, int64_t host_micros, double quantum) {
    const auto state = link->link.captureAppSessionState();
    const auto time = std::chrono::microseconds(host_micros);
    return spectrum_link_timeline{state.tempo(), state.beatAtTime(time, quantum), state.phaseAtTime(time, quantum)};
}

void spectrum_link_commit(spectrum_link *link, double bpm, int64_t host_micros, double quantum, bool align_beat) {
    auto state = link->link.captureAppSessionState();
    const auto time = std::chrono::microseconds(host_micros);
    state.setTempo(bpm, time);
    if (align_beat) {
        state.forceBeatAtTime(std::round(state.beatAtTime(time, quantum)), time, quantum);
    }
    link->link.commitAppSessionState(state);
}

}
