import SpectrumDSP
import Synchronization
import SpectrumCore

/// Counters and flags written by the JACK threads and read by the control side.
///
/// Lives in memory allocated once by `LiveClient` (never moved while JACK runs); every field is
/// an atomic, so any thread may read it. Writers: the process callback (`callbacksEntered`,
/// `callbacksCompleted`, `pushedFrames`, `droppedFrames`, `cost…`, `lastFrameCount`); the other
/// JACK callbacks (`xruns`, `periodFrames`, `sampleRateHz`, `captureLatencyFrames`,
/// `freewheeling`, `shutDown`).
struct LiveCounters: ~Copyable {
    /// Process cycles started. Read after an analyser swap to know which cycles may still hold
    /// the old analyser (see `AnalyzerExchange`).
    let callbacksEntered = Atomic<UInt64>(0)
    /// Process cycles finished.
    let callbacksCompleted = Atomic<UInt64>(0)
    let pushedFrames = Atomic<UInt64>(0)
    /// Frames lost because the ring was full (the consumer is behind).
    let droppedFrames = Atomic<UInt64>(0)
    let xruns = Atomic<UInt64>(0)
    /// Sum and maximum of the process callback's own cost (jack_get_time() µs).
    let costTotalMicroseconds = Atomic<UInt64>(0)
    let costMaximumMicroseconds = Atomic<UInt64>(0)
    /// The period announced by the buffer-size callback.
    let periodFrames = Atomic<UInt32>(0)
    /// `nframes` of the latest process cycle (may differ from the announced period).
    let lastFrameCount = Atomic<UInt32>(0)
    /// Cycles whose `nframes` exceeded the mono buffer and were processed in chunks.
    let chunkedCycles = Atomic<UInt64>(0)
    let sampleRateHz = Atomic<UInt32>(0)
    /// Largest capture latency of the input ports, in frames (`JackCaptureLatency`, max of range).
    let captureLatencyFrames = Atomic<UInt32>(0)
    let freewheeling = Atomic<Bool>(false)
    /// Set by `jack_on_info_shutdown`: the server has gone away or thrown the client out.
    /// Cleared by the supervisor just before a new client is activated.
    let shutDown = Atomic<Bool>(false)
    /// Set by the control side (`LiveClient.relearnTempo()`); the next cycle clears it and
    /// restarts the tempo learning.
    let relearnRequested = Atomic<Bool>(false)
    /// The most frames completed in one process cycle, over all inputs: with the inputs' hops
    /// staggered (`AnalyzerExchange.staggerFraction`) it stays at 1 while the period is shorter
    /// than a hop divided by the number of inputs. Written by the process callback.
    let mostFramesInOneCycle = Atomic<UInt64>(0)

    // MIDI clock (`--midi-clock`): written by the process callback, except `midiClockHold`
    // (the control side: blackout) and `playbackLatencyFrames` (the latency callback).
    /// Set by the control side: the clock stops (FC) as if the tempo were lost.
    let midiClockHold = Atomic<Bool>(false)
    /// The input slot whose beat grid the clock (and `FramePublisher`'s tempo outputs) follow
    /// (`LiveConfiguration.tempoSlot`): stored before the first cycle, and again by
    /// `LiveClient.setTempoInput` (OSC `/control/tempo_input`). Loaded once per cycle.
    let tempoSlot = Atomic<Int>(0)
    let midiClockRunning = Atomic<Bool>(false)
    let midiClockTicks = Atomic<UInt64>(0)
    let midiClockStarts = Atomic<UInt64>(0)
    let midiClockStops = Atomic<UInt64>(0)
    /// `jack_midi_event_write` refusals (the port buffer was full).
    let midiClockWriteFailures = Atomic<UInt64>(0)
    /// The glided tick period (frames, `Double` bits; 0 while stopped) and the latest tick's
    /// phase error against the beat grid (ticks, `Double` bits).
    let midiClockTickPeriodBits = Atomic<UInt64>(0)
    let midiClockPhaseErrorBits = Atomic<UInt64>(0)
    /// Playback latency of the MIDI clock port (`JackPlaybackLatency`, range maximum), frames.
    let playbackLatencyFrames = Atomic<UInt32>(0)

    init() {}
}

/// The memory the real-time process callback works on: a plain struct of raw pointers, no
/// class references and no `Unmanaged`, so reading it costs no reference counting.
///
/// Allocated and filled by `JackIncarnation` before `jack_activate` (one per life of the client),
/// freed after `jack_client_close`.
/// The process callback receives a pointer to it as its `arg`.
struct ProcessContext {
    /// `jack_client_t *`.
    let client: OpaquePointer
    /// `jack_port_t *` of each input port: input slot `s`, channel `c` at `s × channelsPerInput + c`
    /// (nil for a slot with no input). Atomic: inputs are added and removed while JACK runs; a
    /// slot's ports are set before its analyser and cleared only once no cycle can use them
    /// (`JackSupervisor.removeInput`), and the callback reads them only after loading a
    /// non-nil analyser for the slot.
    let ports: UnsafeMutablePointer<Atomic<OpaquePointer?>>
    /// `inputCapacity × channelsPerInput`.
    let portCount: Int
    /// Ports per input (`--channels`), averaged to mono for that input's analysis.
    let channelsPerInput: Int
    /// This cycle's port buffers, refetched every cycle (never cached across cycles).
    let portBuffers: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Mono mix of one chunk; the callback processes any `nframes` in chunks of this size.
    let mono: UnsafeMutablePointer<Float>
    let monoCapacity: Int
    /// One analyser slot per input slot, swapped by the control side with an atomic exchange
    /// (nil: no input in that slot); see `AnalyzerExchange`.
    let analyzers: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Analyzer>?>>
    /// Each input slot's beat mailbox (as soon as the block holding a beat is analysed, before
    /// the hop's frame).
    let beats: UnsafeMutablePointer<BeatMailbox>
    /// Slots `0 ..< inputCapacity` exist; the callback skips the empty ones.
    let inputCapacity: Int
    /// Every input's frames, tagged with `AnalysisFrame.inputIndex` (its slot).
    let ring: FrameRing
    let counters: UnsafeMutablePointer<LiveCounters>
    /// The MIDI clock output port (`midi_clock`) and its scheduler; nil without `--midi-clock`.
    /// One scheduler per life of the client: after a server restart the clock starts afresh (FA
    /// on the next downbeat) on the re-registered port. It follows input slot
    /// `LiveCounters.tempoSlot`.
    let midiClockPort: OpaquePointer?
    let midiClock: UnsafeMutablePointer<MidiClockState>?
}

/// The MIDI clock's state on the process thread: the scheduler, and the beat grid as read from
/// the newest *completed* frame (a frame's tempo and phase are consistent only once it is
/// complete: the rhythm stage runs before the hop's end).
struct MidiClockState {
    var scheduler = MidiClockScheduler()
    /// The analyser the reading came from (a swapped-in analyser restarts the stream count).
    var analyzer: UnsafeMutablePointer<Analyzer>?
    var tempo = TempoReading.none
    /// The completed frame's `streamFrame`, at which `tempo.phase` holds.
    var streamFrame: Int64 = 0
    /// The latest beat event when the frame completed (its place in the bar).
    var latestBeat = BeatReading.none
    /// The input slot the reading came from: after the tempo input is switched, until the new
    /// slot completes a frame, it is the former one.
    var readingSlot = 0
    /// The grid the clock followed in the latest cycle, on the next cycle's timeline: held over
    /// the switch of tempo input (at most `maximumHeldFrames`, until the new input's first
    /// completed frame), so the clock glides to the new grid instead of stopping (FC) and
    /// starting again (FA).
    var heldGrid = MidiClockGrid.unlocked
    var heldFrames = 0
    let maximumHeldFrames: Int
    /// Far more than a hop, which is all a switch needs.
    static let maximumHeldSeconds = 1.0

    init(sampleRateHz: UInt32) {
        maximumHeldFrames = Int(Self.maximumHeldSeconds * Double(sampleRateHz))
    }
}
