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
    /// `jack_port_t *` of each input port.
    let ports: UnsafeMutablePointer<OpaquePointer?>
    let portCount: Int
    /// This cycle's port buffers, refetched every cycle (never cached across cycles).
    let portBuffers: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Mono mix of one chunk; the callback processes any `nframes` in chunks of this size.
    let mono: UnsafeMutablePointer<Float>
    let monoCapacity: Int
    /// The analyser in use. Swapped by the control side with an atomic exchange; see
    /// `AnalyzerExchange`.
    let analyzer: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Analyzer>>>
    let ring: FrameRing
    /// Each beat event as soon as the block holding it is analysed (before the hop's frame).
    let beats: BeatMailbox
    let counters: UnsafeMutablePointer<LiveCounters>
}
