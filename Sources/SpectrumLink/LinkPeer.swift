import CLink
import Foundation
import Synchronization
import SpectrumCore

/// Spectrum as an Ableton Link peer (`--link`): the detected tempo and beat phase go into the
/// Link session from a thread of its own (never the JACK thread: Link's commit signals a
/// condition variable).
///
/// Every `pollMilliseconds` the thread takes the newest analysed frame (`offer`), works out
/// where its beat falls on JACK's clock (capture time + lead − phase × beat), maps that to
/// Link's clock with Link's host-time filter (Link reads CLOCK_MONOTONIC_RAW; JACK's clock is the
/// server's — here jackd2 1.9.21 reads within µs of it, but the filter does not assume so),
/// and, when it leads the session, commits the tempo and puts the nearest whole beat of the
/// session's timeline there (`forceBeatAtTime`; quantum = beats per bar) whenever the tempo
/// differs by more than `tempoToleranceBpm` or the beat by more than `phaseToleranceMilliseconds`.
///
/// Whether it leads is decided once, when the tempo first locks: as Link's own join rule goes, a
/// peer that joins a running session adopts its tempo, so Spectrum leads only if it found no
/// peer then (it started the session), or with `--link-lead` (it takes over).
///
/// Thread-safety: `offer` from one thread (the publisher's frame observer), `status` from any;
/// `stop()` from a normal thread. Allocates; not for the real-time thread.
public final class LinkPeer: @unchecked Sendable {
    /// What the Link side is doing, for status lines.
    public struct Status: Sendable, Equatable {
        public var peers: Int
        /// Spectrum sets the session's tempo and beat (it started the session, or `--link-lead`).
        public var isLeading: Bool
        /// The session's tempo now.
        public var sessionBpm: Double
        /// The session's beat against Spectrum's beat grid, ms (positive: the session is late);
        /// 0 while no tempo is locked.
        public var phaseErrorMilliseconds: Double
        public var commits: Int
    }

    public static let pollMilliseconds = 20.0
    /// Commit when the session's tempo is this far from the detected one.
    public static let tempoToleranceBpm = 0.01
    /// Commit when the session's beat is this far from the detected beat (1 ms: well below what
    /// anyone hears, above the filter's jitter, so the session is not re-timed every poll).
    public static let phaseToleranceMilliseconds = 1.0

    private struct Reading {
        var bpm: Double
        var phase: Double
        var captureTimeMicroseconds: UInt64
    }

    private let link: OpaquePointer
    private let takesLead: Bool
    private let quantum: Double
    private let leadMilliseconds: @Sendable () -> Double
    private let jackNowMicroseconds: @Sendable () -> UInt64
    private let latest = Mutex<Reading?>(nil)
    private let state = Mutex(Status(peers: 0, isLeading: false, sessionBpm: 0, phaseErrorMilliseconds: 0, commits: 0))
    private let running = Atomic<Bool>(false)
    private var thread: Thread?
    private var leadDecided = false

    public struct StartError: Error, CustomStringConvertible { public let description: String }

    /// Joins the session (enables Link). `takesLead`: `--link-lead`. `leadMilliseconds`: the
    /// analysis' current `rhythm.lead_ms` (the phase reading includes it; the beat goes to Link
    /// at its acoustic time, since Link peers compensate their own output latency).
    /// `jackNowMicroseconds`: JACK's clock now (`jack_get_time()`), the clock of the frames'
    /// capture times.
    public init(takesLead: Bool, beatsPerBar: Int, initialBpm: Double = 120, leadMilliseconds: @escaping @Sendable () -> Double,
                jackNowMicroseconds: @escaping @Sendable () -> UInt64) throws {
        guard let link = spectrum_link_create(initialBpm) else { throw StartError(description: "cannot start Ableton Link") }
        self.link = link
        self.takesLead = takesLead
        quantum = Double(max(1, beatsPerBar))
        self.leadMilliseconds = leadMilliseconds
        self.jackNowMicroseconds = jackNowMicroseconds
        spectrum_link_enable(link, true)
        running.store(true, ordering: .relaxed)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "spectrum-link"
        self.thread = thread
        thread.start()
    }

    deinit {
        stop()
        spectrum_link_destroy(link)
    }

    /// The newest analysed frame (its tempo, phase and capture time). Cheap; any one thread.
    public func offer(_ frame: borrowing AnalysisFrame) {
        let tempo = frame.tempo, capture = frame.captureTimeMicroseconds
        let reading = tempo.bpm > 0 && capture > 0
            ? Reading(bpm: Double(tempo.bpm), phase: Double(tempo.phase), captureTimeMicroseconds: capture)
            : nil
        latest.withLock { $0 = reading }
    }

    public var status: Status { state.withLock { $0 } }

    /// Leaves the session and stops the thread. Idempotent.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        while thread?.isFinished == false { usleep(1000) }
        spectrum_link_enable(link, false)
    }

    private func run() {
        while running.load(ordering: .relaxed) {
            step()
            usleep(UInt32(Self.pollMilliseconds * 1000))
        }
    }

    private func step() {
        // Both clocks at one moment, through Link's filter: host = jack + offset.
        let jackNow = Double(jackNowMicroseconds())
        let offset = Double(spectrum_link_host_time(link, jackNow)) - jackNow
        let peers = Int(spectrum_link_peer_count(link))
        let reading = latest.withLock { $0 }
        var status = state.withLock { $0 }
        status.peers = peers
        if let reading {
            if !leadDecided {
                leadDecided = true
                status.isLeading = takesLead || peers == 0
            }
            let beatMicroseconds = 60_000_000 / reading.bpm
            let beatJack = Double(reading.captureTimeMicroseconds) + leadMilliseconds() * 1000 - reading.phase * beatMicroseconds
            let beatHost = Int64((beatJack + offset).rounded())
            var timeline = spectrum_link_capture(link, beatHost, quantum)
            var error = (timeline.beat - timeline.beat.rounded()) * 60_000 / timeline.tempo_bpm
            if status.isLeading && (abs(timeline.tempo_bpm - reading.bpm) > Self.tempoToleranceBpm || abs(error) > Self.phaseToleranceMilliseconds) {
                spectrum_link_commit(link, reading.bpm, beatHost, quantum, true)
                status.commits += 1
                timeline = spectrum_link_capture(link, beatHost, quantum)
                error = (timeline.beat - timeline.beat.rounded()) * 60_000 / timeline.tempo_bpm
            }
            // The session's beat sits `error` ms after its grid point; positive: the session is early.
            status.phaseErrorMilliseconds = -error
            status.sessionBpm = timeline.tempo_bpm
        } else {
            status.phaseErrorMilliseconds = 0
            status.sessionBpm = spectrum_link_capture(link, Int64(spectrum_link_clock_micros(link)), quantum).tempo_bpm
        }
        state.withLock { $0 = status }
    }
}
