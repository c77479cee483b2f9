import Glibc
import Synchronization
import SpectrumCore

/// Sends the analysis over OSC: a dedicated (not real-time) thread drains a `FrameRing` and
/// sends, for every frame, ONE bundle to every target containing all enabled messages, time
/// tagged with the frame's acoustic time.
///
/// Lifecycle (the host's side):
/// ```
/// let publisher = try OSCPublisher(configuration: config, ring: ring,
///                                  captureClock: CaptureClock { jack_get_time() },
///                                  status: { host.statusSnapshot() })   // resolves, opens sockets
/// try publisher.start()          // before or after jack_activate
/// …                              // the process callback pushes frames into `ring`
/// publisher.stop()               // after jack_deactivate: sends what is pending, joins
/// ```
/// Pacing: frames are produced at the output rate of audio time (one per hop), and each is sent
/// as it is popped, so the send rate follows the audio clock, including under freewheel; the
/// thread polls the ring every `pollIntervalMilliseconds` (2 ms) when it is empty.
///
/// `/status` goes with every `round(outputRateHz)`-th frame (once per second of audio, counted
/// in frames, starting with the first), filled by the `status` closure on the publisher thread;
/// without a closure no status is sent.
///
/// Sending never blocks (non-blocking sockets, `MSG_DONTWAIT`); errors (ECONNREFUSED,
/// ENETUNREACH, a full socket buffer) are counted per target and sending goes on.
///
/// All methods are for non-real-time threads; the publisher never touches the JACK thread
/// except through the ring. `start`, `flush` and `stop` are meant for one controlling thread.
public final class OSCPublisher: @unchecked Sendable {
    public let configuration: PublisherConfiguration
    /// The targets with their numeric addresses, in configuration order.
    public let targets: [ResolvedOSCTarget]

    private let worker: PublisherWorker
    private var thread: pthread_t?

    /// Validates the configuration, resolves every host name (blocking DNS, once), and opens
    /// the sockets. Throws a one-line `OSCConfigurationError`. Allocates; not real-time safe.
    ///
    /// - Parameters:
    ///   - ring: the ring the host's process callback pushes into; the publisher is its only
    ///     consumer. The caller owns it and deallocates it after `stop()`.
    ///   - captureClock: the clock of `captureTimeMicroseconds` (JACK: `jack_get_time()`).
    ///     Without it, or for frames with capture time 0, bundles are tagged "immediate".
    ///   - beats: the host's beat mailbox (`LiveClient.beats`): each beat is sent at once in a
    ///     bundle of its own, within a poll interval of its JACK cycle, and left out of its frame's
    ///     bundle. Without it, `/beat` goes in the bundle of the frame holding the beat.
    ///   - status: called once per second of audio on the publisher thread to fill `/status`.
    ///   - frameObserver: called on the publisher thread with every frame after it was sent
    ///     (e.g. for a terminal display); it must be quick, it delays the next bundle.
    public init(configuration: PublisherConfiguration, ring: FrameRing, beats: BeatMailbox? = nil, captureClock: CaptureClock? = nil,
                status: (@Sendable () -> PublisherStatus)? = nil,
                frameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        var resolved: [ResolvedOSCTarget] = []
        for target in configuration.targets {
            resolved.append(try target.resolve())
        }
        targets = resolved
        let transport = try UDPTransport(targets: resolved, multicastInterface: configuration.multicastInterface, multicastTTL: configuration.multicastTTL)
        worker = PublisherWorker(configuration: configuration, ring: ring, beats: beats, transport: transport,
                                 captureClock: captureClock, status: status, frameObserver: frameObserver)
    }

    deinit {
        stop()
    }

    /// The address table this publisher sends (for `--help`-style listings and logs).
    public func addressSpace(bandCount: Int = 128) -> OSCAddressSpace {
        configuration.addressSpace(bandCount: bandCount)
    }

    public var isRunning: Bool { thread != nil }

    /// Starts the publisher thread. Does nothing when already running. Throws when the thread
    /// cannot be created.
    public func start() throws {
        guard thread == nil else { return }
        worker.stopRequested.store(false, ordering: .releasing)
        let context = Unmanaged.passRetained(worker).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, publisherThreadMain, context)
        guard result == 0 else {
            Unmanaged<PublisherWorker>.fromOpaque(context).release()
            throw OSCConfigurationError("OSC publisher: cannot start its thread (\(UDPTransport.errorText(result)))")
        }
        thread = handle
    }

    /// Returns once every frame pushed before the call has been sent (to every target).
    /// Returns at once when the publisher is not running.
    public func flush() {
        guard thread != nil else { return }
        let request = worker.flushRequested.add(1, ordering: .acquiringAndReleasing).newValue
        while worker.flushAcknowledged.load(ordering: .acquiring) < request {
            usleep(500)
        }
    }

    /// Sends what is still in the ring, then stops and joins the thread. Safe to call twice.
    public func stop() {
        guard let handle = thread else { return }
        worker.stopRequested.store(true, ordering: .releasing)
        pthread_join(handle, nil)
        thread = nil
    }

    /// Counters so far; any thread may read them.
    public var statistics: PublisherStatistics {
        PublisherStatistics(
            framesPublished: worker.framesPublished.load(ordering: .relaxed),
            statusMessagesSent: worker.statusMessagesSent.load(ordering: .relaxed),
            targets: zip(targets, worker.targetCounters).map { target, counters in
                TargetStatistics(
                    target: target.target,
                    bundlesSent: counters.sent.load(ordering: .relaxed),
                    sendErrors: counters.errors.load(ordering: .relaxed),
                    lastErrorCode: counters.lastError.load(ordering: .relaxed))
            })
    }
}

/// What the publisher has done so far.
public struct PublisherStatistics: Sendable, Equatable {
    /// Frames popped and turned into a bundle.
    public var framesPublished: Int
    /// Bundles that carried `/status`.
    public var statusMessagesSent: Int
    public var targets: [TargetStatistics]
}

public struct TargetStatistics: Sendable, Equatable {
    public var target: OSCTarget
    /// Bundles the kernel accepted for this target.
    public var bundlesSent: Int
    /// Bundles that failed to send (dropped for this target only).
    public var sendErrors: Int
    /// errno of the latest failure (0: none yet), e.g. ECONNREFUSED, ENETUNREACH, EAGAIN.
    public var lastErrorCode: Int32
}

// MARK: - The thread

/// Thread entry: a global function, not a closure literal (see docs/osc.md, "Threads").
private func publisherThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let worker = Unmanaged<PublisherWorker>.fromOpaque(context!).takeRetainedValue()
    worker.run()
    return nil
}

final class TargetCounters: Sendable {
    let sent = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let lastError = Atomic<Int32>(0)
}

/// The publisher thread's state. Only the publisher thread touches `builder`, `transport`,
/// `frame` and `framesUntilStatus`; the atomics are the interface to other threads.
final class PublisherWorker: @unchecked Sendable {
    let ring: FrameRing
    let beats: BeatMailbox?
    let builder: OSCBundleBuilder
    let transport: UDPTransport
    let captureClock: CaptureClock?
    let status: (@Sendable () -> PublisherStatus)?
    let frameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)?
    let statusIntervalFrames: Int
    let pollNanoseconds: Int

    let stopRequested = Atomic<Bool>(false)
    let flushRequested = Atomic<Int>(0)
    let flushAcknowledged = Atomic<Int>(0)
    let framesPublished = Atomic<Int>(0)
    let statusMessagesSent = Atomic<Int>(0)
    let targetCounters: [TargetCounters]

    private var frame = AnalysisFrame()
    private var framesUntilStatus = 0
    private var beatSequence: UInt64 = 0
    /// Time (stream frames) of the last beat sent from the mailbox: its frame leaves it out.
    private var lastEarlyBeatFrames: Double?

    init(configuration: PublisherConfiguration, ring: FrameRing, beats: BeatMailbox?, transport: UDPTransport, captureClock: CaptureClock?,
         status: (@Sendable () -> PublisherStatus)?, frameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)?) {
        self.ring = ring
        self.beats = beats
        self.frameObserver = frameObserver
        builder = OSCBundleBuilder(prefix: configuration.prefix, groupCount: configuration.groupCount, messages: configuration.messages)
        self.transport = transport
        self.captureClock = captureClock
        self.status = status
        statusIntervalFrames = BandGrouping.statusIntervalFrames(outputRateHz: configuration.outputRateHz)
        pollNanoseconds = Int(configuration.pollIntervalMilliseconds * 1_000_000)
        targetCounters = (0..<transport.count).map { _ in TargetCounters() }
    }

    func run() {
        while true {
            // Read the requests before draining: frames pushed before a request are sent
            // before it is acknowledged.
            let stopping = stopRequested.load(ordering: .acquiring)
            let flushRequest = flushRequested.load(ordering: .acquiring)
            publishNewBeat()
            while ring.pop(into: &frame) {
                // A beat posted before this frame was pushed goes out first, on its own.
                publishNewBeat()
                publish()
                frameObserver?(frame)
            }
            flushAcknowledged.store(flushRequest, ordering: .releasing)
            if stopping { return }
            var pause = timespec(tv_sec: 0, tv_nsec: pollNanoseconds)
            nanosleep(&pause, nil)
        }
    }

    /// Sends the mailbox's beat if it is new and `/beat` is enabled.
    private func publishNewBeat() {
        guard let beats, let event = beats.take(after: &beatSequence) else { return }
        lastEarlyBeatFrames = event.beat.timeFrames
        guard builder.messages.contains(.beat) else { return }
        send(builder.serialiseBeat(event, timeTag: timeTag(captureMicroseconds: event.captureTimeMicroseconds)))
    }

    private func timeTag(captureMicroseconds: UInt64) -> OSCTimeTag {
        guard captureMicroseconds != 0, let captureClock else { return .immediate }
        let (captureNow, wallNow) = captureClock.readWithWallClock()
        return OSCTimeTag.converting(captureMicroseconds: captureMicroseconds, captureClockNowMicroseconds: captureNow, wallNow: wallNow)
    }


    private func publish() {
        // 1) Status once per second of audio (counted in frames).
        var statusForFrame: PublisherStatus?
        if framesUntilStatus == 0 {
            framesUntilStatus = statusIntervalFrames
            statusForFrame = status?()
        }
        framesUntilStatus -= 1

        // 2) One bundle, time tagged with the frame's capture time on the wall clock, the same
        //    bytes to every target; without the beat if the mailbox already sent it.
        let beatSentEarly = frame.beat.isBeat && frame.beat.timeFrames == lastEarlyBeatFrames
        let bytes = builder.serialise(frame, status: statusForFrame, timeTag: timeTag(captureMicroseconds: frame.captureTimeMicroseconds),
                                      includingBeat: !beatSentEarly)
        framesPublished.add(1, ordering: .relaxed)
        if statusForFrame != nil, builder.messages.contains(.status) { statusMessagesSent.add(1, ordering: .relaxed) }
        send(bytes)
    }

    private func send(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else {
            for counters in targetCounters { counters.errors.add(1, ordering: .relaxed); counters.lastError.store(ENOMEM, ordering: .relaxed) }
            return
        }
        for index in 0..<transport.count {
            let error = transport.send(bytes, to: index)
            let counters = targetCounters[index]
            if error == 0 {
                counters.sent.add(1, ordering: .relaxed)
            } else {
                counters.errors.add(1, ordering: .relaxed)
                counters.lastError.store(error, ordering: .relaxed)
            }
        }
    }
}
