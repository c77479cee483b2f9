import CJack
import Foundation
import Glibc
import SpectrumCore
import SpectrumDSP
import Synchronization

/// Keeps the JACK client alive across server restarts, on a thread of its own (never a JACK
/// thread; JACK forbids calling the server from its callbacks):
/// - applies the graph events (connections made and removed, ports that appear) to the
///   remembered connections (of the inputs and of the MIDI clock), and connects a remembered
///   peer (a source, or a clock destination) as soon as its port appears;
/// - when the shutdown callback has flagged the client dead: closes it with a time bound
///   (jack2 #395: close can hang after many restarts; past `closeTimeoutSeconds` it is
///   abandoned), then opens a new one with back-off (100 ms rising to 2 s, forever), with a
///   fresh analyser at the server's rate, re-registers the ports, activates, and makes every
///   remembered connection whose peer exists;
/// - when the server's cycles run on but our process callback is never entered (the client is
///   stuck, see `stallSeconds`): closes it and opens a new one the same way.
///
/// Owns the current `JackIncarnation`; `LiveClient` owns the memory that outlives it.
/// Thread-safe; not real-time code.
final class JackSupervisor: @unchecked Sendable {
    private let configuration: LiveConfiguration
    private let processCallback: LiveProcessCallback
    private let counters: UnsafeMutablePointer<LiveCounters>
    private let exchange: AnalyzerExchange
    private let ring: FrameRing
    private let beats: UnsafeMutablePointer<BeatMailbox>
    private let graphEvents: GraphEvents
    private let state: Mutex<State>
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let threadStarted = Atomic<Bool>(false)
    /// Held while the set of inputs changes and while a new client registers its ports, so a
    /// client opened after a server restart has exactly the inputs of the moment. Taken before
    /// `state`.
    private let membership = NSLock()
    /// How long `removeInput` waits for the process thread to move past the removed analyser.
    static let removalWaitSeconds = 2.0

    /// How long a dead client's `jack_client_close` may take before it is abandoned.
    static let closeTimeoutSeconds = 2.0
    /// Back-off between attempts to open a client while the server is lost.
    static let reconnectFirstDelaySeconds = 0.1
    static let reconnectMaximumDelaySeconds = 2.0
    static let reconnectDelayGrowth = 1.5
    /// How often the thread looks at the graph events and the shutdown flag.
    static let intervalSeconds = 0.02
    /// Our process callback not entered while the server's cycles advanced this much of its
    /// time means the client is stuck and is reopened: libjack (jackd2 1.9.21, jack2 issue
    /// 721) can leave a client waiting on a dead wake-up (docs/live.md, "A client that is never
    /// run"). One second: far beyond a skipped cycle of a loaded dummy driver (≤ 0.1 s seen).
    static let stallSeconds = 1.0
    /// A reopen that did not help (e.g. a stuck client upstream holds ours too) doubles the
    /// wait before the next one, up to this, so a graph stuck elsewhere is not churned.
    static let stallMaximumSeconds = 64.0

    private struct State: @unchecked Sendable {
        /// The client's current life; nil while the server is lost and once stopped.
        var incarnation: JackIncarnation?
        var isStopped = false
        var memory = ConnectionMemory()
        /// When the server was lost (monotonic seconds); nil while it runs.
        var lostSinceSeconds: Double?
        var reconnections = 0
        var abandonedClients = 0
        var lastReconnectError: String?
        var stallRecoveries = 0
    }

    /// What `LiveClient.status()` reports of the client's life.
    struct LifeStatus {
        var isStopped: Bool
        /// The server went away and no reconnection will follow (`reconnects` off).
        var isShutDown: Bool
        var serverLostSeconds: Double?
        var reconnections: Int
        var abandonedClients: Int
        /// Times the client was found stuck and reopened.
        var stallRecoveries: Int
        var dspLoadPercent: Double
        var clientName: String?
        var lastReconnectError: String?
    }

    init(configuration: LiveConfiguration, processCallback: LiveProcessCallback, counters: UnsafeMutablePointer<LiveCounters>,
         exchange: AnalyzerExchange, ring: FrameRing, beats: UnsafeMutablePointer<BeatMailbox>, graphEvents: GraphEvents,
         incarnation: JackIncarnation, remembering plan: [ConnectionMemory.Connection]) {
        self.configuration = configuration
        self.processCallback = processCallback
        self.counters = counters
        self.exchange = exchange
        self.ring = ring
        self.beats = beats
        self.graphEvents = graphEvents
        var initial = State(incarnation: incarnation)
        for connection in plan { initial.memory.remember(connection) }
        state = Mutex(initial)
    }

    func start() {
        threadStarted.store(true, ordering: .releasing)
        let thread = Thread { [self] in
            superviseUntilStopped()
            finished.signal()
        }
        thread.name = "spectrum-jack"
        thread.start()
    }

    /// Stops the thread (waiting at most its close bound), then deactivates and closes the
    /// client and frees every analyser. Idempotent.
    func stop() {
        let first = !stopRequested.exchange(true, ordering: .acquiringAndReleasing)
        if first && threadStarted.load(ordering: .acquiring) { finished.wait() }
        state.withLock { state in
            guard !state.isStopped else { return }
            state.isStopped = true
            state.incarnation?.close(serverGone: counters.pointee.shutDown.load(ordering: .acquiring))
            state.incarnation = nil
            // No callback can run any more: every analyser may go.
            exchange.destroyAll()
        }
    }

    /// Runs `body` with the client while it is alive (not lost, not stopped); nil otherwise.
    func withLiveIncarnation<Result>(_ body: (JackIncarnation) -> Result) -> Result? {
        state.withLock { state in
            guard let incarnation = state.incarnation, !counters.pointee.shutDown.load(ordering: .acquiring) else { return nil }
            return body(incarnation)
        }
    }

    func rememberedConnections() -> [ConnectionMemory.Connection] { state.withLock { $0.memory.remembered } }

    /// The client name in use (nil while lost or stopped).
    var currentClientName: String? { state.withLock { $0.incarnation?.name } }

    // MARK: Inputs at run time (the control side; never the process thread)

    /// Adds input `input`: its analyser built here and put in a free slot, its ports registered
    /// (now, or by the next client while the server is lost), its sources connected and
    /// remembered. Returns the slot.
    func addInput(_ input: LiveInput) throws(LiveClientError) -> Int {
        membership.lock()
        defer { membership.unlock() }
        let slot = try exchange.add(name: input.name, analysis: input.analysis) { (slot: Int) throws(LiveClientError) in
            let registered: Result<Void, LiveClientError>? = withLiveIncarnation { incarnation in
                do throws(LiveClientError) { try incarnation.registerPorts(slot: slot, input: input.name) } catch { return .failure(error) }
                return .success(())
            }
            try registered?.get()
        }
        connect(input.sources, toSlot: slot)
        return slot
    }

    /// Re-points input `slot`: every connection of its ports is removed and forgotten, then
    /// `sources` are connected and remembered.
    func repointInput(slot: Int, to sources: [String]) {
        membership.lock()
        defer { membership.unlock() }
        let channels = configuration.channelCount
        state.withLock { state in
            state.memory.forget(inputIndices: slot * channels ..< (slot + 1) * channels)
            guard let incarnation = state.incarnation, !counters.pointee.shutDown.load(ordering: .acquiring) else { return }
            _ = incarnation.disconnectAll(slot: slot)
        }
        connect(sources, toSlot: slot)
    }

    /// Connects source k to the slot's channel k mod N (remembered even when the server is lost
    /// or the source is not there yet: it is made when it appears).
    private func connect(_ sources: [String], toSlot slot: Int) {
        let channels = configuration.channelCount
        state.withLock { state in
            let alive = !counters.pointee.shutDown.load(ordering: .acquiring) ? state.incarnation : nil
            for (index, source) in sources.enumerated() {
                let connection = ConnectionMemory.Connection.input(slot * channels + index % channels, from: source)
                state.memory.remember(connection)
                if let alive, alive.peerExists(source) { alive.connect(connection) }
            }
        }
    }

    /// Removes input `slot`: its analyser out at once (the process thread skips the slot from
    /// its next cycle), its connections forgotten; once the cycles that could hold the analyser
    /// have completed (at most `removalWaitSeconds`), its ports are unregistered. Throws when
    /// the process thread did not move on in time (the ports then stay registered, unused).
    func removeInput(slot: Int) throws(LiveClientError) {
        membership.lock()
        defer { membership.unlock() }
        let epoch = exchange.remove(slot: slot)
        let channels = configuration.channelCount
        state.withLock { $0.memory.forget(inputIndices: slot * channels ..< (slot + 1) * channels) }
        let deadline = Self.monotonicSeconds() + Self.removalWaitSeconds
        while counters.pointee.callbacksCompleted.load(ordering: .acquiring) < epoch {
            if counters.pointee.shutDown.load(ordering: .acquiring) { return }  // no process thread; the next client has no such ports
            guard Self.monotonicSeconds() < deadline else {
                throw LiveClientError(.activationFailed, "the JACK process thread did not move on within \(Self.removalWaitSeconds) s: the removed input's ports stay registered, unused")
            }
            usleep(1000)
        }
        _ = withLiveIncarnation { $0.unregisterPorts(slot: slot) }
        exchange.reclaim()
    }

    /// Also frees retired analysers while running.
    func lifeStatus() -> LifeStatus {
        let dead = counters.pointee.shutDown.load(ordering: .acquiring)
        let now = Self.monotonicSeconds()
        return state.withLock { state in
            if !state.isStopped { exchange.reclaim() }
            let alive = !state.isStopped && !dead ? state.incarnation : nil
            let lostSeconds: Double? = state.isStopped || !configuration.reconnects ? nil
                : state.lostSinceSeconds.map { now - $0 } ?? (dead ? 0 : nil)
            return LifeStatus(isStopped: state.isStopped, isShutDown: dead && !configuration.reconnects, serverLostSeconds: lostSeconds,
                              reconnections: state.reconnections, abandonedClients: state.abandonedClients,
                              stallRecoveries: state.stallRecoveries,
                              dspLoadPercent: alive.map { Double(jack_cpu_load($0.client)) } ?? 0,
                              clientName: state.incarnation?.name, lastReconnectError: state.lastReconnectError)
        }
    }

    // MARK: The thread

    private func superviseUntilStopped() {
        var watch = StallWatch()
        while !stopRequested.load(ordering: .acquiring) {
            usleep(UInt32(Self.intervalSeconds * 1_000_000))
            applyGraphEvents()
            if configuration.reconnects && isStuck(&watch) {
                recoverFromStall()
                continue
            }
            guard configuration.reconnects, counters.pointee.shutDown.load(ordering: .acquiring) else { continue }
            retireDeadClient()
            reconnect()
            // A new life on another server: nothing seen of the old one applies (the new
            // client may even sit at the old one's address).
            watch = StallWatch()
        }
    }

    /// What the stall watch last saw of the client's life (supervisor thread only).
    private struct StallWatch {
        /// The client watched (a new life starts the watch afresh).
        var client: OpaquePointer?
        var callbacksEntered: UInt64 = 0
        /// The server's frame time (`jack_last_frame_time`, the start of its latest cycle) when
        /// our callback was last seen entered.
        var progressFrame: UInt32 = 0
        var thresholdSeconds = JackSupervisor.stallSeconds
    }

    /// True when the server's cycles advanced by `watch.thresholdSeconds` of its time since our
    /// process callback was last entered. The cycles' frame time moves only when the server
    /// runs a cycle (not while it is frozen or gone), and our callback is entered in every one
    /// unless the client is stuck.
    private func isStuck(_ watch: inout StallWatch) -> Bool {
        state.withLock { state in
            guard !state.isStopped, let incarnation = state.incarnation, !counters.pointee.shutDown.load(ordering: .acquiring) else {
                watch.client = nil
                return false
            }
            let entered = counters.pointee.callbacksEntered.load(ordering: .relaxed)
            let frame = jack_last_frame_time(incarnation.client)
            if watch.client != incarnation.client || entered != watch.callbacksEntered {
                if watch.client == incarnation.client { watch.thresholdSeconds = Self.stallSeconds }  // it runs
                watch.client = incarnation.client
                watch.callbacksEntered = entered
                watch.progressFrame = frame
                return false
            }
            guard Double(frame &- watch.progressFrame) >= watch.thresholdSeconds * Double(incarnation.sampleRateHz) else { return false }
            watch.thresholdSeconds = min(watch.thresholdSeconds * 2, Self.stallMaximumSeconds)
            watch.client = nil
            return true
        }
    }

    /// Closes the stuck client (its own wake-up entry in libjack goes with it) and opens a new
    /// one with the ports, callbacks and remembered connections, as after a server restart.
    private func recoverFromStall() {
        let stuck: JackIncarnation? = state.withLock { state in
            guard !state.isStopped else { return nil }
            defer { state.incarnation = nil }
            return state.incarnation
        }
        guard let stuck else { return }
        closeBounded(stuck, serverGone: false)
        // Our ports' connections went with the closed client: those disconnections are ours,
        // not someone's wish to forget them.
        _ = graphEvents.takeAll()
        state.withLock { state in
            state.memory.serverLost()
            state.stallRecoveries += 1
        }
        reconnect(countsAsReconnection: false)
    }

    private func applyGraphEvents() {
        let events = graphEvents.takeAll()
        let now = Self.monotonicSeconds()
        state.withLock { state in
            guard !state.isStopped else { return }
            let alive = !counters.pointee.shutDown.load(ordering: .acquiring) ? state.incarnation : nil
            for event in events {
                let wanted = state.memory.apply(event, nowSeconds: now)
                guard let alive else { continue }
                for connection in wanted where !alive.isConnected(connection) { alive.connect(connection) }
            }
            guard let alive, !state.memory.pendingDisconnections.isEmpty else { return }
            state.memory.judgeDisconnections(nowSeconds: now, peerExists: alive.peerExists, isConnected: alive.isConnected)
        }
    }

    /// Closes the dead client on a thread of its own and waits at most `closeTimeoutSeconds`;
    /// a close that hangs is abandoned (its memory is never freed under a JACK thread).
    private func retireDeadClient() {
        let dead: JackIncarnation? = state.withLock { state in
            guard !state.isStopped else { return nil }
            state.lostSinceSeconds = state.lostSinceSeconds ?? Self.monotonicSeconds()
            state.memory.serverLost()
            defer { state.incarnation = nil }
            return state.incarnation
        }
        guard let dead else { return }
        closeBounded(dead, serverGone: true)
    }

    /// Closes `incarnation` on a thread of its own and waits at most `closeTimeoutSeconds`; a
    /// close that hangs is abandoned (counted, its memory never freed under a JACK thread).
    private func closeBounded(_ incarnation: JackIncarnation, serverGone: Bool) {
        let closed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            incarnation.close(serverGone: serverGone)
            closed.signal()
        }
        if closed.wait(timeout: .now() + Self.closeTimeoutSeconds) == .timedOut {
            state.withLock { $0.abandonedClients += 1 }
        }
    }

    /// Opens a new client with back-off until one runs, or `stop()`. A back-off pause ends
    /// early when jackd2's server socket is created anew, so a server that comes back after a
    /// long absence is joined within ~100 ms, not up to the 2 s step.
    private func reconnect(countsAsReconnection: Bool = true) {
        var delaySeconds = Self.reconnectFirstDelaySeconds
        let socket = ServerSocketWatch(serverName: configuration.serverName)
        while !stopRequested.load(ordering: .acquiring) {
            do {
                try openNextIncarnation(countsAsReconnection: countsAsReconnection)
                return
            } catch {
                state.withLock { $0.lastReconnectError = error.description }
            }
            let seen = socket.identity()
            pause(seconds: delaySeconds) { socket.identity() != seen && socket.identity() != nil }
            delaySeconds = min(delaySeconds * Self.reconnectDelayGrowth, Self.reconnectMaximumDelaySeconds)
        }
    }

    /// One attempt: open; a fresh analyser at the server's rate (the audio is discontinuous, and
    /// the rate or period may have changed); ports and callbacks; activate; then every
    /// remembered connection whose peer exists (the others are made when their ports appear).
    private func openNextIncarnation(countsAsReconnection: Bool) throws(LiveClientError) {
        membership.lock()
        defer { membership.unlock() }
        let client = try JackIncarnation.openClient(configuration)
        let sampleRate = jack_get_sample_rate(client)
        do {
            try exchange.install(sampleRateHz: Double(sampleRate))
        } catch {
            jack_client_close(client)
            throw LiveClientError(.analysis, "cannot analyse at the JACK server's sample rate \(sampleRate) Hz: \(error.description)")
        }
        counters.pointee.sampleRateHz.store(sampleRate, ordering: .relaxed)
        counters.pointee.periodFrames.store(jack_get_buffer_size(client), ordering: .relaxed)
        let incarnation = try JackIncarnation(client: client, configuration: configuration, processCallback: processCallback, exchange: exchange,
                                              ring: ring, beats: beats, counters: counters, graphEvents: graphEvents)
        // The thread is the only writer of the flag while it runs (`stop()` waits for it).
        counters.pointee.shutDown.store(false, ordering: .releasing)
        do {
            try incarnation.activate()  // closes itself when it throws
        } catch {
            counters.pointee.shutDown.store(true, ordering: .releasing)
            throw error
        }
        // One critical section: a status never reads "lost" once frames can flow.
        state.withLock { state in
            state.incarnation = incarnation
            state.lostSinceSeconds = nil
            state.lastReconnectError = nil
            if countsAsReconnection { state.reconnections += 1 }
            for connection in state.memory.remembered where incarnation.peerExists(connection.peer) {
                incarnation.connect(connection)
            }
        }
    }

    /// Sleeps `seconds` in slices, returning early on `stop()` or when `wakeEarly` holds.
    private func pause(seconds: Double, wakeEarly: () -> Bool = { false }) {
        let deadline = Self.monotonicSeconds() + seconds
        while !stopRequested.load(ordering: .acquiring), Self.monotonicSeconds() < deadline, !wakeEarly() {
            usleep(UInt32(Self.intervalSeconds * 1_000_000))
        }
    }

    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// jackd2's server socket, `/dev/shm/jack_<server>_<uid>_0`: a new one (another inode or change
/// time) means a server has just started. Only a hint to end a back-off pause early; with
/// other JACK implementations the path never exists and the back-off alone applies.
struct ServerSocketWatch {
    let path: String

    init(serverName: String?) {
        let name = serverName ?? ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"] ?? "default"
        path = "/dev/shm/jack_\(name)_\(getuid())_0"
    }

    struct Identity: Equatable {
        var inode: UInt
        var changeSeconds: Int
        var changeNanoseconds: Int
    }

    /// The socket's identity now; nil when there is none.
    func identity() -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(inode: UInt(info.st_ino), changeSeconds: info.st_ctim.tv_sec, changeNanoseconds: info.st_ctim.tv_nsec)
    }
}
