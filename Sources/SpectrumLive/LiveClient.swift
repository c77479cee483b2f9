import CJack
import Glibc
import SpectrumDSP
import Synchronization
import SpectrumCore

/// The JACK client: opens, registers ports and callbacks, activates, connects, and hands the
/// analysed frames to one consumer through `frames`.
///
/// The control side (this class) never runs on the process thread; the real-time work is in
/// ProcessCallback.swift, on memory this class prepares (`ProcessContext`). Lifecycle, as in
/// JACK's example clients: open → register ports → set callbacks → activate → connect → run →
/// `stop()` (deactivate, close).
///
/// Thread-safety: every member may be called from any non-real-time thread, concurrently.
/// `frames` has exactly one consumer. Call `stop()` before dropping the last reference (deinit
/// stops too). `frames` stays valid until this object is deinitialised.
public final class LiveClient: @unchecked Sendable {
    /// The client name JACK gave us (may differ from the requested one).
    public let clientName: String
    /// True when JACK changed the requested name (another client had it, or it was too long).
    public let clientNameWasChanged: Bool
    /// Full names of our input ports, e.g. `spectrum:in` or `spectrum:in_1`, `spectrum:in_2`.
    public let portNames: [String]
    /// The source ports connected at start (`[]` with `.none` or no physical capture port).
    public let connectedSources: [String]
    /// Analysed frames, oldest first. Exactly one consumer thread pops. Real-time safe to pop.
    public let frames: FrameRing
    /// Each beat event as soon as the JACK cycle holding it is analysed, ahead of its frame
    /// (which carries it too). One reader; valid until this object is deinitialised.
    public let beats: BeatMailbox

    private let client: OpaquePointer
    private let context: UnsafeMutablePointer<ProcessContext>
    private let counters: UnsafeMutablePointer<LiveCounters>
    private let exchange: AnalyzerExchange
    private let exchangeForJack: Unmanaged<AnalyzerExchange>
    /// True once closed. Held while closing and while using `client` from the control side.
    private let closed = Mutex<Bool>(false)

    /// The JACK audio port type (`JACK_DEFAULT_AUDIO_TYPE`).
    public static let audioPortType = "32 bit float mono audio"

    /// Opens the client and starts analysing. Allocates; not real-time safe.
    ///
    /// - Parameter processCallback: the C process callback given to JACK with the context
    ///   pointer. Always `spectrumLiveProcess` in production; tests pass a trampoline that
    ///   wraps it (e.g. with the allocation counter) so the production path stays identical.
    /// - Throws: `LiveClientError` with a one-line description (no server, missing port, …).
    public init(configuration: LiveConfiguration, processCallback: LiveProcessCallback = spectrumLiveProcess) throws(LiveClientError) {
        // 1) Validate what does not need JACK.
        guard (1...LiveConfiguration.maximumChannelCount).contains(configuration.channelCount) else {
            throw LiveClientError(.invalidConfiguration, "channel count \(configuration.channelCount) is out of range: expected 1 to \(LiveConfiguration.maximumChannelCount)")
        }
        guard configuration.ringCapacity > 0, configuration.mixBufferFrames >= 0 else {
            throw LiveClientError(.invalidConfiguration, "ring capacity must be positive and the mix buffer not negative")
        }
        if configuration.quietJackLibrary {
            jack_set_error_function(liveQuietJackMessage)
            jack_set_info_function(liveQuietJackMessage)
        }

        // 2) Open, never starting a server.
        let requestedName = Self.truncatedClientName(configuration.clientName, maximumBytes: Self.maximumClientNameBytes)
        var status = jack_status_t(0)
        let opened: OpaquePointer? = requestedName.withCString { name in
            if let server = configuration.serverName {
                return server.withCString { spectrum_jack_client_open(name, JackNoStartServer, &status, $0) }
            }
            return spectrum_jack_client_open(name, JackNoStartServer, &status, nil)
        }
        guard let client = opened else {
            throw Self.openError(status: status, serverName: configuration.serverName, clientName: requestedName)
        }
        let actualName = String(cString: jack_get_client_name(client))
        var cleanup = PartialCleanup(client: client)

        // 3) Analyser at the server's rate.
        let sampleRate = jack_get_sample_rate(client)
        let period = jack_get_buffer_size(client)
        let counters = UnsafeMutablePointer<LiveCounters>.allocate(capacity: 1)
        counters.initialize(to: LiveCounters())
        counters.pointee.sampleRateHz.store(sampleRate, ordering: .relaxed)
        counters.pointee.periodFrames.store(period, ordering: .relaxed)
        cleanup.counters = counters
        let exchange: AnalyzerExchange
        do {
            exchange = try AnalyzerExchange(configuration: configuration.analysis, sampleRateHz: Double(sampleRate), counters: counters)
        } catch {
            cleanup.run()
            throw LiveClientError(.analysis, "cannot analyse at the JACK server's sample rate: \(error.description)")
        }
        cleanup.exchange = exchange

        // 4) Ports.
        let channelCount = configuration.channelCount
        let ports = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: channelCount)
        ports.initialize(repeating: nil, count: channelCount)
        cleanup.ports = ports
        var portNames: [String] = []
        for index in 0..<channelCount {
            let shortName = channelCount == 1 ? "in" : "in_\(index + 1)"
            guard let port = jack_port_register(client, shortName, Self.audioPortType, UInt(JackPortIsInput.rawValue), 0) else {
                cleanup.run()
                throw LiveClientError(.portRegistrationFailed, "JACK refused to register port \(actualName):\(shortName)")
            }
            ports[index] = port
            portNames.append(String(cString: jack_port_name(port)))
        }

        // 5) Sources to connect: resolved before activation, so a typo fails with nothing
        //    half-connected.
        let plan: [(source: String, destination: String)]
        do {
            plan = try Self.connectionPlan(configuration.connections, client: client, destinations: portNames)
        } catch {
            cleanup.run()
            throw error
        }

        // 6) The real-time context.
        let mixFrames = max(configuration.mixBufferFrames > 0 ? configuration.mixBufferFrames : Int(period), 16)
        let mono = UnsafeMutablePointer<Float>.allocate(capacity: mixFrames)
        mono.initialize(repeating: 0, count: mixFrames)
        let portBuffers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: channelCount)
        portBuffers.initialize(repeating: nil, count: channelCount)
        let ring = FrameRing(capacity: configuration.ringCapacity)
        let beats = BeatMailbox()
        let context = UnsafeMutablePointer<ProcessContext>.allocate(capacity: 1)
        context.initialize(to: ProcessContext(
            client: client, ports: ports, portCount: channelCount, portBuffers: portBuffers,
            mono: mono, monoCapacity: mixFrames, analyzer: exchange.slot, ring: ring, beats: beats, counters: counters))
        cleanup.context = context

        // 7) Callbacks. The process callback and its small siblings get the raw context; the
        //    sample-rate callback (which allocates) gets a retained AnalyzerExchange.
        let exchangeForJack = Unmanaged.passRetained(exchange)
        cleanup.exchangeForJack = exchangeForJack
        let raw = UnsafeMutableRawPointer(context)
        var result = jack_set_process_callback(client, processCallback, raw)
        result |= jack_set_buffer_size_callback(client, liveBufferSizeChanged, raw)
        result |= jack_set_sample_rate_callback(client, liveSampleRateChanged, exchangeForJack.toOpaque())
        result |= jack_set_xrun_callback(client, liveXrun, raw)
        result |= jack_set_latency_callback(client, liveLatency, raw)
        result |= jack_set_freewheel_callback(client, liveFreewheel, raw)
        jack_on_info_shutdown(client, liveShutdown, raw)
        guard result == 0 else {
            cleanup.run()
            throw LiveClientError(.activationFailed, "JACK refused the callbacks of client \(actualName)")
        }

        // 8) Activate, then connect (only after activation, as JACK requires).
        guard jack_activate(client) == 0 else {
            cleanup.run()
            throw LiveClientError(.activationFailed, "cannot activate JACK client \(actualName)")
        }
        cleanup.active = true
        for connection in plan {
            let code = jack_connect(client, connection.source, connection.destination)
            guard code == 0 || code == EEXIST else {
                cleanup.run()
                throw LiveClientError(.connectionFailed, "cannot connect \(connection.source) to \(connection.destination) (JACK error \(code)): the source must be an audio output port (list them with `jack_lsp -t -p`)")
            }
        }
        updateCaptureLatency(context)

        self.client = client
        self.clientName = actualName
        self.clientNameWasChanged = actualName != configuration.clientName
        self.portNames = portNames
        self.connectedSources = plan.map(\.source)
        self.frames = ring
        self.beats = beats
        self.context = context
        self.counters = counters
        self.exchange = exchange
        self.exchangeForJack = exchangeForJack
    }

    deinit {
        stop()
        frames.deallocate()
        beats.deallocate()
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    /// Deactivates and closes the client, then frees the real-time state (not `frames`,
    /// `beats`, which the consumer may still drain). Idempotent; concurrent callers wait for the first.
    /// Safe from any non-real-time thread, including a signal-handling thread (a
    /// `DispatchSourceSignal` handler or a `sigwait` loop) — but not from inside a raw signal
    /// handler: there, only set a flag. Also correct after the server has shut down.
    public func stop() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            if !counters.pointee.shutDown.load(ordering: .acquiring) {
                jack_deactivate(client)
            }
            jack_client_close(client)
            // No callback can run any more: everything may go.
            exchangeForJack.release()
            exchange.destroyAll()
            Self.freeContext(context)
        }
    }

    /// Replaces the analysis configuration while running: a new analyser is built here, off the
    /// real-time thread, and swapped in (its tempo and levels start afresh). Throws (and keeps
    /// the running analyser) when the configuration cannot run at the current sample rate.
    /// Not real-time safe; any thread.
    public func reconfigure(_ configuration: AnalysisConfiguration) throws(AnalysisConfigurationError) {
        try exchange.install(configuration: configuration)
    }

    /// Counters and flags for status lines and benchmarks. Frees retired analysers on the way.
    /// Not real-time safe.
    /// Forgets the learned tempo and beat grid and learns them again (a new song, a wrong
    /// octave). Takes effect in the next process cycle. Any thread.
    public func relearnTempo() {
        counters.pointee.relearnRequested.store(true, ordering: .releasing)
    }

    public func status() -> LiveStatus {
        exchange.reclaimIfRunning(closed: closed)
        let counters = self.counters
        let callbacks = counters.pointee.callbacksCompleted.load(ordering: .acquiring)
        let sampleRate = Double(counters.pointee.sampleRateHz.load(ordering: .relaxed))
        let latencyFrames = Int(counters.pointee.captureLatencyFrames.load(ordering: .relaxed))
        let shutDown = counters.pointee.shutDown.load(ordering: .acquiring)
        let (stopped, load, analysisRate): (Bool, Double, Double) = closed.withLock { isClosed in
            if isClosed { return (true, 0, 0) }
            return (false, shutDown ? 0 : Double(jack_cpu_load(client)), exchange.sampleRateHz)
        }
        let costTotal = Double(counters.pointee.costTotalMicroseconds.load(ordering: .relaxed))
        return LiveStatus(
            sampleRateHz: sampleRate,
            analysisSampleRateHz: analysisRate,
            periodFrames: Int(counters.pointee.periodFrames.load(ordering: .relaxed)),
            lastCycleFrames: Int(counters.pointee.lastFrameCount.load(ordering: .relaxed)),
            callbacks: callbacks,
            xruns: counters.pointee.xruns.load(ordering: .relaxed),
            framesPushed: counters.pointee.pushedFrames.load(ordering: .relaxed),
            framesDropped: counters.pointee.droppedFrames.load(ordering: .relaxed),
            chunkedCycles: counters.pointee.chunkedCycles.load(ordering: .relaxed),
            dspLoadPercent: load,
            callbackCostMeanMicroseconds: callbacks > 0 ? costTotal / Double(callbacks) : 0,
            callbackCostMaximumMicroseconds: Double(counters.pointee.costMaximumMicroseconds.load(ordering: .relaxed)),
            captureLatencyFrames: latencyFrames,
            captureLatencyMicroseconds: sampleRate > 0 ? Double(latencyFrames) * 1_000_000 / sampleRate : 0,
            isFreewheeling: counters.pointee.freewheeling.load(ordering: .relaxed),
            isShutDown: shutDown,
            isStopped: stopped,
            analyzerSwaps: exchange.swapCount.load(ordering: .relaxed),
            analysisError: exchange.lastFailure
        )
    }

    /// JACK's sample rate as last announced.
    public var sampleRateHz: Double { Double(counters.pointee.sampleRateHz.load(ordering: .relaxed)) }

    /// The analysis configuration in use (its `outputRateHz` sets the frame rate).
    public var analysisConfiguration: AnalysisConfiguration { exchange.configuration }

    /// Pops the oldest frame into `frame`; false when none is waiting. For the one consumer.
    public func popFrame(into frame: inout AnalysisFrame) -> Bool { frames.pop(into: &frame) }

    /// JACK's clock now, in microseconds (`jack_get_time()`): the clock of
    /// `AnalysisFrame.captureTimeMicroseconds`. `now − capture time` is how old a frame is;
    /// subtract it from the wall clock to get an OSC time tag. Any thread.
    public static func currentTimeMicroseconds() -> UInt64 { jack_get_time() }

    /// The source ports now connected to each of our input ports (in `portNames` order).
    /// Empty lists once stopped. Not real-time safe.
    public func connections() -> [[String]] {
        closed.withLock { isClosed in
            // Once stopped, the context is freed: read nothing from it.
            guard !isClosed else { return portNames.map { _ in [] } }
            return (0..<context.pointee.portCount).map { index in
                guard !counters.pointee.shutDown.load(ordering: .acquiring),
                      let list = jack_port_get_connections(context.pointee.ports[index]) else { return [] }
                defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
                return Self.strings(list)
            }
        }
    }

    // MARK: Internals

    /// Rebuilds the analyser at `sampleRateHz` and swaps it in while running, exactly as the
    /// sample-rate callback does. For tests and benchmarks.
    func replaceAnalyzer(sampleRateHz: Double) throws(AnalysisConfigurationError) {
        try exchange.install(sampleRateHz: sampleRateHz)
    }

    /// Retired analysers not yet freed (for tests).
    var retiredAnalyzerCount: Int { exchange.reclaim() }

    /// The longest client name JACK accepts, in bytes. `jack_client_name_size()` counts the
    /// terminating NUL, so the documented limit is size − 1; but jackd2 1.9.21 returns 65 and
    /// refuses names over 63 bytes ("Please use 63 characters or less", measured), so we keep
    /// one byte more in hand: size − 2.
    static var maximumClientNameBytes: Int { Int(jack_client_name_size()) - 2 }

    static func truncatedClientName(_ name: String, maximumBytes: Int) -> String {
        let bytes = Array(name.utf8)
        guard bytes.count > maximumBytes, maximumBytes >= 0 else { return name }
        var end = maximumBytes
        while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }  // never split a character
        return String(decoding: bytes[..<end], as: UTF8.self)
    }

    private static func openError(status: jack_status_t, serverName: String?, clientName: String) -> LiveClientError {
        let server = serverName.map { "JACK server '\($0)'" } ?? "the default JACK server"
        if status.rawValue & JackServerFailed.rawValue != 0 {
            return LiveClientError(.noServer, "cannot connect to \(server): is it running? Start jackd (or PipeWire's JACK), or pass --server NAME for another server")
        }
        if status.rawValue & JackVersionError.rawValue != 0 {
            return LiveClientError(.openFailed, "cannot open JACK client '\(clientName)': the server speaks another protocol version than this libjack")
        }
        return LiveClientError(.openFailed, "cannot open JACK client '\(clientName)' on \(server) (JACK status 0x\(String(status.rawValue, radix: 16)))")
    }

    private static func connectionPlan(_ connections: LiveConnections, client: OpaquePointer, destinations: [String]) throws(LiveClientError) -> [(source: String, destination: String)] {
        switch connections {
        case .none:
            return []
        case .physicalCapture:
            let physical = ports(client, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue))
            return zip(physical.prefix(destinations.count), destinations).map { ($0, $1) }
        case .ports(let sources):
            var plan: [(source: String, destination: String)] = []
            for (index, source) in sources.enumerated() {
                guard let port = jack_port_by_name(client, source) else {
                    let existing = ports(client, flags: UInt(JackPortIsOutput.rawValue))
                    let shown = existing.prefix(6).joined(separator: ", ")
                    let more = existing.count > 6 ? ", … (\(existing.count) in all)" : ""
                    let list = existing.isEmpty ? "the server has no audio output ports" : "audio outputs are: \(shown)\(more)"
                    throw LiveClientError(.missingPort, "no JACK port named '\(source)': \(list) (list them with `jack_lsp -p`)")
                }
                guard Int32(jack_port_flags(port)) & Int32(JackPortIsOutput.rawValue) != 0 else {
                    throw LiveClientError(.connectionFailed, "cannot connect from '\(source)': it is an input port; connect an output (list them with `jack_lsp -p`)")
                }
                plan.append((source, destinations[index % destinations.count]))
            }
            return plan
        }
    }

    private static func ports(_ client: OpaquePointer, flags: UInt) -> [String] {
        guard let list = jack_get_ports(client, nil, audioPortType, flags) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        return strings(list)
    }

    private static func strings(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>) -> [String] {
        var result: [String] = []
        var index = 0
        while let name = list[index] {
            result.append(String(cString: name))
            index += 1
        }
        return result
    }

    fileprivate static func freeContext(_ context: UnsafeMutablePointer<ProcessContext>) {
        let value = context.pointee
        value.mono.deallocate()
        value.portBuffers.deallocate()
        value.ports.deallocate()
        context.deinitialize(count: 1)
        context.deallocate()
    }

    /// What a failing `init` has built so far, torn down in reverse.
    private struct PartialCleanup {
        let client: OpaquePointer
        var active = false
        var counters: UnsafeMutablePointer<LiveCounters>?
        var exchange: AnalyzerExchange?
        var ports: UnsafeMutablePointer<OpaquePointer?>?
        var context: UnsafeMutablePointer<ProcessContext>?
        var exchangeForJack: Unmanaged<AnalyzerExchange>?

        func run() {
            if active { jack_deactivate(client) }
            jack_client_close(client)
            exchangeForJack?.release()
            exchange?.destroyAll()
            if let context {
                context.pointee.ring.deallocate()
                context.pointee.beats.deallocate()
                LiveClient.freeContext(context)
            } else {
                ports?.deallocate()
            }
            if let counters {
                counters.deinitialize(count: 1)
                counters.deallocate()
            }
        }
    }
}

extension AnalyzerExchange {
    /// Reclaims retired analysers while the client runs (after close, `destroyAll` did it).
    fileprivate func reclaimIfRunning(closed: borrowing Mutex<Bool>) {
        closed.withLock { isClosed in
            if !isClosed { reclaim() }
        }
    }
}
