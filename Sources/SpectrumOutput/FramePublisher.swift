// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Glibc
import SpectrumCore
import Synchronization

/// The one output layer: a dedicated (not real-time) thread drains a `FrameRing` and hands
/// every frame to every output — each OSC target's rig (routes → one bundle, or plain
/// messages) — and sends the datagrams.
///
/// Lifecycle (the host's side):
/// ```
/// let publisher = try FramePublisher(configuration: config, ring: ring,
///                                    captureClock: CaptureClock { jack_get_time() },
///                                    status: { host.statusSnapshot() })   // resolves, opens sockets
/// try publisher.start()          // before or after jack_activate
/// …                              // the process callback pushes frames into `ring`
/// publisher.stop()               // after jack_deactivate: sends what is pending, joins
/// ```
/// Pacing: frames are produced at the output rate of audio time (one per hop), and each is sent
/// as it is popped, so the send rate follows the audio clock, including under freewheel. The
/// JACK callback cannot wake the thread (that would be a system call), so the thread polls the
/// ring every `pollIntervalMilliseconds`.
///
/// Status (`/status`, target health, routes with `when: status`) comes with every
/// `round(outputRateHz)`-th frame (once per second of audio, counted in frames, starting with
/// the first), filled by the `status` closure on the publisher thread.
///
/// Targets that share a rig get the same bytes, rendered once. Sending never blocks
/// (non-blocking sockets, `MSG_DONTWAIT`); errors (ECONNREFUSED, ENETUNREACH, a full socket
/// buffer) are counted per target and sending goes on.
///
/// All methods are for non-real-time threads; the publisher never touches the JACK thread
/// except through the ring. `start`, `flush` and `stop` are meant for one controlling thread.
public final class FramePublisher: @unchecked Sendable {
    public let configuration: PublisherConfiguration
    /// The targets with their numeric addresses, in configuration order.
    public let targets: [ResolvedOSCTarget]

    private let worker: PublisherWorker
    private var thread: pthread_t?

    /// Validates the configuration, compiles every rig, resolves every host name (blocking DNS,
    /// once), and opens the sockets. Throws a one-line `OSCConfigurationError`. Allocates; not
    /// real-time safe.
    ///
    /// - Parameters:
    ///   - ring: the ring the host's process callback pushes into; the publisher is its only
    ///     consumer. The caller owns it and deallocates it after `stop()`.
    ///   - captureClock: the clock of `captureTimeMicroseconds` (JACK: `jack_get_time()`).
    ///     Without it, or for frames with capture time 0, bundles are tagged "immediate".
    ///   - beats: the host's beat mailboxes, one per input slot (`LiveClient.beatMailboxes`):
    ///     the routes a beat moves (`/beat`, beat pulses) are sent at once, in a bundle of their
    ///     own, within a poll interval of its JACK cycle. Without them, they go with the frame
    ///     holding the beat.
    ///   - status: called once per second of audio on the publisher thread to fill `/status`.
    ///   - frameObserver: called on the publisher thread with every frame of the first input
    ///     (or `PublisherConfiguration.tempoSlot`'s) after it was sent (e.g. for a terminal display); it must be quick, it delays the next
    ///     bundle.
    ///   - inputFrameObserver: the same with every frame of every input (`inputIndex` says
    ///     which), e.g. for OSCQuery, which lists every input.
    public init(configuration: PublisherConfiguration, ring: FrameRing, beats: [BeatMailbox] = [], captureClock: CaptureClock? = nil,
                status: (@Sendable () -> PublisherStatus)? = nil,
                frameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)? = nil,
                inputFrameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)? = nil) throws {
        try configuration.validate()
        self.configuration = configuration
        var resolved: [ResolvedOSCTarget] = []
        for target in configuration.targets {
            resolved.append(try target.resolve())
        }
        if !configuration.wledTargets.isEmpty, configuration.bandCentreFrequenciesHz.count != configuration.bandCount {
            throw OSCConfigurationError("--wled: expected the centre frequencies of all \(configuration.bandCount) bands, got \(configuration.bandCentreFrequenciesHz.count)")
        }
        // WLED receivers come after the OSC targets in the transport and the statistics.
        for target in configuration.wledTargets {
            resolved.append(try target.resolve(optionName: "--wled"))
        }
        let wled = configuration.wledTargets.isEmpty ? nil
            : (WLEDAudioSyncEncoder(bandCentreFrequenciesHz: configuration.bandCentreFrequenciesHz, sampleRateHz: configuration.sampleRateHz),
               Array(configuration.targets.count..<resolved.count))
        targets = resolved
        // Targets sharing a rig share one renderer (the same bytes go to each).
        var renderers: [(RigRenderer, [Int])] = []
        for (index, target) in configuration.targets.enumerated() {
            let rig = configuration.rig(for: target)
            if let existing = renderers.firstIndex(where: { $0.0.rig == rig }) {
                renderers[existing].1.append(index)
            } else {
                let renderer = try RigRenderer(rig: rig, prefix: configuration.prefix, bandCount: configuration.bandCount,
                                               outputRateHz: configuration.outputRateHz, targetCount: configuration.targets.count + configuration.wledTargets.count)
                renderers.append((renderer, [index]))
            }
        }
        // Named inputs: the spectrum rig once per input under prefix/NAME; another rig (its own
        // addresses) slot 0's input only.
        var inputRenderers: [[(RigRenderer, [Int])]?] = [renderers]
        if configuration.hasNamedInputs {
            inputRenderers = try configuration.inputNames.enumerated().map { slot, name in
                try name.map { try Self.inputRenderers(renderers, configuration: configuration, slot: slot, name: $0) }
            }
        }
        let transport = try UDPTransport(targets: resolved, multicastInterface: configuration.multicastInterface, multicastTTL: configuration.multicastTTL)
        worker = PublisherWorker(configuration: configuration, ring: ring, beats: beats, transport: transport, renderers: renderers,
                                 inputRenderers: inputRenderers, wled: wled,
                                 captureClock: captureClock, status: status, frameObserver: frameObserver, inputFrameObserver: inputFrameObserver)
    }

    deinit {
        stop()
    }

    /// An input's renderers: the spectrum rig's under `prefix/NAME`; another rig's (its own
    /// addresses) with the routes that name this input (`Route.input`) and, for slot 0, those
    /// that name none. A rig without such routes goes to slot 0 whole.
    private static func inputRenderers(_ renderers: [(RigRenderer, [Int])], configuration: PublisherConfiguration, slot: Int, name: String) throws -> [(RigRenderer, [Int])] {
        let targetCount = configuration.targets.count + configuration.wledTargets.count
        return try renderers.compactMap { renderer, targets in
            if renderer.rig.name == Rig.spectrumName {
                return (try RigRenderer(rig: renderer.rig, prefix: configuration.prefix + "/" + name, bandCount: configuration.bandCount,
                                        outputRateHz: configuration.outputRateHz, targetCount: targetCount), targets)
            }
            guard renderer.rig.routes.contains(where: { $0.input != nil }) else { return slot == 0 ? (renderer, targets) : nil }
            var own = renderer.rig
            own.routes = own.routes.filter { $0.input == name || ($0.input == nil && slot == 0) }
            guard !own.routes.isEmpty else { return nil }
            return (try RigRenderer(rig: own, prefix: configuration.prefix, bandCount: configuration.bandCount,
                                    outputRateHz: configuration.outputRateHz, targetCount: targetCount), targets)
        }
    }

    /// Starts sending input `slot`'s frames under `prefix/NAME` (an input added at run time), or
    /// stops sending them (`name` nil: removed; frames of that slot still in the ring are
    /// dropped). Only with named inputs. Takes effect on the publisher thread's next pass.
    /// Allocates; any non-real-time thread.
    public func setInput(slot: Int, name: String?) throws {
        guard configuration.hasNamedInputs, configuration.inputNames.indices.contains(slot) else {
            throw OSCConfigurationError("input slot \(slot): the publisher has no such slot")
        }
        if let name, !OSCAddressSpace.isValidPrefix(configuration.prefix + "/" + name) {
            throw OSCConfigurationError("input \(name): expected a name that makes an OSC address under \(configuration.prefix)")
        }
        let renderers = try name.map { try Self.inputRenderers(worker.renderers.map { ($0.renderer, $0.targets) }, configuration: configuration, slot: slot, name: $0) }
        let change = InputChange(slot: slot, renderers: renderers)
        worker.inputChanges.withLock { $0.append(change) }
    }

    /// The address table this publisher sends (for `--help`-style listings and logs).
    public func addressSpace(bandCount: Int = 128) -> OSCAddressSpace {
        configuration.addressSpace(bandCount: bandCount)
    }

    public var isRunning: Bool { thread != nil }

    /// The publisher thread's name (`/proc/PID/task/TID/comm`, at most 15 bytes).
    public static let threadName = "spectrum-osc"

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
            throw OSCConfigurationError("publisher: cannot start its thread (\(UDPTransport.errorText(result)))")
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

    /// Blackout on: every output (OSC rigs, WLED) gets one frame of zeros at once, then nothing
    /// (no frames, beats or status) until it is turned off. Any thread.
    public func setBlackout(_ on: Bool) { worker.blackoutRequested.store(on, ordering: .relaxed) }

    /// Makes input `slot`'s frames the ones that count the status interval, feed WLED and the
    /// frame observer (the live summary, Link): the tempo input switched at run time
    /// (`/control/tempo_input`). Takes effect on the publisher thread's next pass. Any thread.
    public func setTempoSlot(_ slot: Int) { worker.tempoSlot.store(slot, ordering: .relaxed) }

    public var isBlackedOut: Bool { worker.blackoutRequested.load(ordering: .relaxed) }

    /// Tells every OSC target what a control message did: `<prefix>/status/control ss` (the
    /// address, `ok: …` or `error: …`), sent with the next frame or sooner. Any thread.
    public func announce(_ address: String, _ text: String) { worker.notices.withLock { $0.append((address, text)) } }

    /// Counters so far; any thread may read them.
    public var statistics: PublisherStatistics {
        PublisherStatistics(
            framesPublished: worker.framesPublished.load(ordering: .relaxed),
            wakeups: worker.wakeups.load(ordering: .relaxed),
            statusMessagesSent: worker.statusMessagesSent.load(ordering: .relaxed),
            targets: zip(targets, worker.targetCounters).map { target, counters in
                TargetStatistics(
                    target: target.target,
                    datagramsSent: counters.sent.load(ordering: .relaxed),
                    sendErrors: counters.errors.load(ordering: .relaxed),
                    lastErrorCode: counters.lastError.load(ordering: .relaxed),
                    state: TargetHealth.State.allCases[Int(counters.state.load(ordering: .relaxed))])
            })
    }
}

/// What the publisher has done so far.
public struct PublisherStatistics: Sendable, Equatable {
    /// Frames popped and rendered for every output.
    public var framesPublished: Int
    /// Times the thread woke up to look for frames and beats (once per poll interval).
    public var wakeups: Int
    /// Frames that carried the status (once per second of audio).
    public var statusMessagesSent: Int
    public var targets: [TargetStatistics]
}

public struct TargetStatistics: Sendable, Equatable {
    public var target: OSCTarget
    /// Datagrams (bundles or plain messages) the kernel accepted for this target.
    public var datagramsSent: Int
    /// Datagrams that failed to send (dropped for this target only).
    public var sendErrors: Int
    /// errno of the latest failure (0: none yet), e.g. ECONNREFUSED, ENETUNREACH, EAGAIN.
    public var lastErrorCode: Int32
    /// As of the last second of audio: ok, refused, unreachable, error, idle.
    public var state: TargetHealth.State
}

// MARK: - The thread

/// Thread entry: a global function, not a closure literal (see docs/osc.md, "Threads").
private func publisherThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    // Named so that per-thread tools (top -H, /proc/PID/task/*/comm, the process benchmark)
    // can tell it from JACK's threads. (pthread_setname_np is not imported into Swift: it
    // writes the same file.)
    let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    if comm >= 0 {
        _ = FramePublisher.threadName.withCString { write(comm, $0, strlen($0)) }
        close(comm)
    }
    let worker = Unmanaged<PublisherWorker>.fromOpaque(context!).takeRetainedValue()
    worker.run()
    return nil
}

final class TargetCounters: Sendable {
    let sent = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let lastError = Atomic<Int32>(0)
    /// Index into `TargetHealth.State.allCases`, updated once per second of audio.
    let state = Atomic<Int>(TargetHealth.State.allCases.firstIndex(of: .idle)!)
}

/// An input added (its renderers, made by the caller of `setInput`, then used only by the
/// publisher thread) or removed (nil).
struct InputChange: @unchecked Sendable {
    let slot: Int
    let renderers: [(RigRenderer, [Int])]?
}

/// One input slot's outputs on the publisher thread: its rigs' renderers (under `prefix/NAME`
/// with named inputs), its beat mailbox and the latest frame sent. Only the publisher thread
/// touches it.
final class PublisherInput {
    let renderers: [(renderer: RigRenderer, targets: [Int])]
    let beats: BeatMailbox?
    var beatSequence: UInt64 = 0
    var lastFrame = AnalysisFrame()
    var blackoutSent = false

    init(renderers: [(renderer: RigRenderer, targets: [Int])], beats: BeatMailbox?) {
        self.renderers = renderers
        self.beats = beats
    }
}

/// The publisher thread's state. Only the publisher thread touches the renderers, `transport`,
/// `frame` and the status bookkeeping; the atomics are the interface to other threads.
final class PublisherWorker: @unchecked Sendable {
    let ring: FrameRing
    let transport: UDPTransport
    /// Each rig's renderer under the prefix with the indices of the targets it sends to: every
    /// frame's with one unnamed input; the status alone once per second with named inputs.
    let renderers: [(renderer: RigRenderer, targets: [Int])]
    /// Each input slot's outputs (nil: no input there).
    private var inputs: [PublisherInput?]
    /// Inputs added (renderers) or removed (nil) by `FramePublisher.setInput`, applied by the
    /// publisher thread.
    let inputChanges = Mutex<[InputChange]>([])
    /// Named inputs: frames are rendered per input, the status apart under the prefix.
    private let statusApart: Bool
    private let beatMailboxes: [BeatMailbox]
    /// `PublisherConfiguration.tempoSlot`, else the lowest slot with an input: its frames count
    /// the status interval, feed WLED and the frame observer.
    private var firstSlot = 0
    /// `PublisherConfiguration.tempoSlot`, then `FramePublisher.setTempoSlot`; -1: none.
    let tempoSlot: Atomic<Int>
    /// The WLED encoder and the transport indices of the WLED receivers.
    let wled: (encoder: WLEDAudioSyncEncoder, targets: [Int])?
    private let wledPacket = UnsafeMutableRawBufferPointer.allocate(byteCount: WLEDAudioSyncEncoder.packetByteCount, alignment: 4)
    let targetAddresses: [String]
    let captureClock: CaptureClock?
    let status: (@Sendable () -> PublisherStatus)?
    let frameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)?
    let inputFrameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)?
    let statusIntervalFrames: Int
    let pollNanoseconds: Int

    let stopRequested = Atomic<Bool>(false)
    /// Blackout: every output gets one all-zero frame, then nothing until it is lifted.
    let blackoutRequested = Atomic<Bool>(false)
    /// Control acknowledgements waiting to go to every OSC target (`<prefix>/status/control ss`).
    let notices = Mutex<[(address: String, text: String)]>([])
    let noticePath: String
    let oscTargetIndices: [Int]
    let flushRequested = Atomic<Int>(0)
    let flushAcknowledged = Atomic<Int>(0)
    let framesPublished = Atomic<Int>(0)
    let wakeups = Atomic<Int>(0)
    let statusMessagesSent = Atomic<Int>(0)
    let targetCounters: [TargetCounters]

    private var frame = AnalysisFrame()
    private var framesUntilStatus = 0
    /// Monotonic time of the latest frame and of the latest status sent without one.
    private var lastFrameNanoseconds = PublisherWorker.monotonicNanoseconds()
    private var lastHeartbeatNanoseconds: UInt64 = 0
    private var context = RenderContext()
    /// Counters at the previous status, for each target's state over the last second.
    private var previousSent: [Int]
    private var previousErrors: [Int]

    init(configuration: PublisherConfiguration, ring: FrameRing, beats: [BeatMailbox], transport: UDPTransport, renderers: [(RigRenderer, [Int])],
         inputRenderers: [[(RigRenderer, [Int])]?],
         wled: (WLEDAudioSyncEncoder, [Int])?, captureClock: CaptureClock?, status: (@Sendable () -> PublisherStatus)?, frameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)?,
         inputFrameObserver: (@Sendable (borrowing AnalysisFrame) -> Void)?) {
        self.ring = ring
        self.frameObserver = frameObserver
        self.inputFrameObserver = inputFrameObserver
        self.transport = transport
        self.renderers = renderers.map { (renderer: $0.0, targets: $0.1) }
        inputs = inputRenderers.enumerated().map { slot, renderers in
            renderers.map { PublisherInput(renderers: $0.map { (renderer: $0.0, targets: $0.1) }, beats: slot < beats.count ? beats[slot] : nil) }
        }
        beatMailboxes = beats
        tempoSlot = Atomic(configuration.tempoSlot ?? -1)
        firstSlot = configuration.tempoSlot ?? inputs.firstIndex { $0 != nil } ?? 0
        statusApart = configuration.hasNamedInputs
        self.wled = wled.map { (encoder: $0.0, targets: $0.1) }
        targetAddresses = configuration.targets.map(\.description) + configuration.wledTargets.map { "wled \($0)" }
        self.captureClock = captureClock
        self.status = status
        // Every input's frames count: once per second of audio whatever the number of inputs.
        statusIntervalFrames = BandGrouping.statusIntervalFrames(outputRateHz: configuration.outputRateHz)
        pollNanoseconds = Int(configuration.pollIntervalMilliseconds * 1_000_000)
        targetCounters = (0..<transport.count).map { _ in TargetCounters() }
        previousSent = Array(repeating: 0, count: transport.count)
        previousErrors = Array(repeating: 0, count: transport.count)
        context.targets = targetAddresses.map { TargetHealth(address: $0, state: .idle, sent: 0, errors: 0) }
        noticePath = configuration.prefix + "/status/control"
        oscTargetIndices = Array(0..<configuration.targets.count)
    }

    deinit { wledPacket.deallocate() }

    func run() {
        while true {
            // Read the requests before draining: frames pushed before a request are sent
            // before it is acknowledged.
            let stopping = stopRequested.load(ordering: .acquiring)
            let flushRequest = flushRequested.load(ordering: .acquiring)
            applyInputChanges()
            let chosenSlot = tempoSlot.load(ordering: .relaxed)
            if chosenSlot >= 0 { firstSlot = chosenSlot }
            publishNotices()
            publishNewBeats()
            let now = Self.monotonicNanoseconds()
            var popped = false
            while ring.pop(into: &frame) {
                // A beat posted before this frame was pushed goes out first, on its own.
                publishNewBeats()
                // A frame of an input slot the publisher does not know (none today) is dropped.
                let slot = Int(frame.inputIndex)
                guard inputs.indices.contains(slot), let input = inputs[slot] else { continue }
                publish(input, first: slot == firstSlot)
                if slot == firstSlot { frameObserver?(frame) }
                inputFrameObserver?(frame)
                popped = true
            }
            if popped {
                lastFrameNanoseconds = now
            } else if now - lastFrameNanoseconds >= Self.heartbeatNanoseconds, now - lastHeartbeatNanoseconds >= Self.heartbeatNanoseconds {
                lastHeartbeatNanoseconds = now
                publishStatusAlone()
            }
            flushAcknowledged.store(flushRequest, ordering: .releasing)
            if stopping { return }
            var pause = timespec(tv_sec: 0, tv_nsec: pollNanoseconds)
            nanosleep(&pause, nil)
            wakeups.add(1, ordering: .relaxed)
        }
    }

    /// While no frame comes (the JACK server is lost, or nothing runs the process callback) the
    /// status still goes out once per second of wall time, alone: `/status/server` says why.
    static let heartbeatNanoseconds: UInt64 = 1_000_000_000

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The status routes of every rig, without a frame (never a stale or zero frame: that
    /// would black out a rig).
    private func publishStatusAlone() {
        guard let status, !blackoutRequested.load(ordering: .relaxed) else { return }
        context.isStatusFrame = true
        context.status = status()
        updateTargetHealth()
        for (renderer, targets) in renderers {
            renderer.renderStatus(lastFrame: frame, context: context) { send($0, to: targets) }
        }
        statusMessagesSent.add(1, ordering: .relaxed)
    }

    /// Takes the inputs added and removed since the last pass. A new input skips the beat its
    /// slot's mailbox may still hold from a former input.
    private func applyInputChanges() {
        let changes = inputChanges.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for change in changes {
            let slot = change.slot
            inputs[slot] = change.renderers.map { renderers in
                let input = PublisherInput(renderers: renderers.map { (renderer: $0.0, targets: $0.1) }, beats: slot < beatMailboxes.count ? beatMailboxes[slot] : nil)
                _ = input.beats?.take(after: &input.beatSequence)
                return input
            }
        }
        let chosenSlot = tempoSlot.load(ordering: .relaxed)
        if !changes.isEmpty { firstSlot = chosenSlot >= 0 ? chosenSlot : inputs.firstIndex { $0 != nil } ?? 0 }
    }

    /// Sends the waiting control acknowledgements as plain messages to every OSC target.
    private func publishNotices() {
        let waiting = notices.withLock { queue -> [(address: String, text: String)] in
            defer { queue.removeAll() }
            return queue
        }
        for notice in waiting {
            var writer = OSCWriter()
            defer { writer.free() }
            noticePath.withCString { writer.append(string: $0) }
            ",ss".withCString { writer.append(string: $0) }
            notice.address.withCString { writer.append(string: $0) }
            notice.text.withCString { writer.append(string: $0) }
            send(writer.written, to: oscTargetIndices)
        }
    }

    /// Sends what each input's mailbox beat moves, if it is new.
    private func publishNewBeats() {
        guard !blackoutRequested.load(ordering: .relaxed) else { return }
        for case let input? in inputs {
            guard let beats = input.beats, let event = beats.take(after: &input.beatSequence) else { continue }
            let tag = timeTag(captureMicroseconds: event.captureTimeMicroseconds)
            for (renderer, targets) in input.renderers where renderer.sendsOnBeats {
                renderer.renderBeat(event, lastFrame: input.lastFrame, context: context, timeTag: tag) { send($0, to: targets) }
            }
        }
    }

    private func timeTag(captureMicroseconds: UInt64) -> OSCTimeTag {
        guard captureMicroseconds != 0, let captureClock else { return .immediate }
        let (captureNow, wallNow) = captureClock.readWithWallClock()
        return OSCTimeTag.converting(captureMicroseconds: captureMicroseconds, captureClockNowMicroseconds: captureNow, wallNow: wallNow)
    }

    /// Sends `frame`, of `input` (`first`: the first input's, which count the status interval
    /// and alone feed WLED).
    private func publish(_ input: PublisherInput, first: Bool) {
        // 0) Blackout: one frame of zeros through every output (every light off), then silence.
        if blackoutRequested.load(ordering: .relaxed) {
            guard !input.blackoutSent else { return }
            input.blackoutSent = true
            var dark = AnalysisFrame()
            dark.bandCount = frame.bandCount
            dark.streamFrame = frame.streamFrame
            dark.captureTimeMicroseconds = frame.captureTimeMicroseconds
            dark.inputIndex = frame.inputIndex
            frame = dark
        } else {
            input.blackoutSent = false
        }
        input.lastFrame = frame

        // 1) Status once per second of audio (counted in the first input's frames), with every
        //    target's state over that second: in this frame's bundle, or (named inputs) alone
        //    under the prefix.
        let isStatusFrame = first && framesUntilStatus == 0
        if isStatusFrame {
            framesUntilStatus = statusIntervalFrames
            if let status { context.status = status() }
            updateTargetHealth()
            if status != nil { statusMessagesSent.add(1, ordering: .relaxed) }
        }
        if first { framesUntilStatus -= 1 }
        context.isStatusFrame = isStatusFrame && !statusApart
        if isStatusFrame && statusApart {
            context.isStatusFrame = true
            for (renderer, targets) in renderers {
                renderer.renderStatus(lastFrame: frame, context: context) { send($0, to: targets) }
            }
            context.isStatusFrame = false
        }

        // 2) Every rig renders the frame once; its datagrams go to each of its targets.
        let tag = timeTag(captureMicroseconds: frame.captureTimeMicroseconds)
        // An onset with an acoustic time of its own (live) goes in a bundle of its own, tagged
        // with its attack, as a beat is with its beat.
        let onsetCapture = frame.onset.isOnset ? frame.onset.captureTimeMicroseconds : 0
        let onsetTag = onsetCapture != 0 ? timeTag(captureMicroseconds: onsetCapture) : nil
        for (renderer, targets) in input.renderers {
            renderer.render(frame, context: context, timeTag: tag, onsetTimeTag: onsetTag == .immediate ? nil : onsetTag) { send($0, to: targets) }
        }
        // 3) WLED: a 44-byte packet, at most 50 a second of audio.
        if first, let wled, wled.encoder.packet(for: frame, into: wledPacket) {
            send(UnsafeRawBufferPointer(wledPacket), to: wled.targets)
        }
        framesPublished.add(1, ordering: .relaxed)
    }

    private func updateTargetHealth() {
        for index in 0..<targetCounters.count {
            let counters = targetCounters[index]
            let sent = counters.sent.load(ordering: .relaxed), errors = counters.errors.load(ordering: .relaxed)
            let state = TargetHealth.state(sentSince: sent - previousSent[index], errorsSince: errors - previousErrors[index],
                                           lastError: counters.lastError.load(ordering: .relaxed), sentTotal: sent)
            counters.state.store(TargetHealth.State.allCases.firstIndex(of: state)!, ordering: .relaxed)
            context.targets[index] = TargetHealth(address: targetAddresses[index], state: state, sent: sent, errors: errors)
            previousSent[index] = sent
            previousErrors[index] = errors
        }
    }

    private func send(_ bytes: UnsafeRawBufferPointer, to targets: [Int]) {
        for index in targets {
            let counters = targetCounters[index]
            let error = bytes.count > 0 ? transport.send(bytes, to: index) : ENOMEM
            if error == 0 {
                counters.sent.add(1, ordering: .relaxed)
            } else {
                counters.errors.add(1, ordering: .relaxed)
                counters.lastError.store(error, ordering: .relaxed)
            }
        }
    }
}
