import CJack
import Foundation
import Glibc
import SpectrumDSP
import Synchronization
import SpectrumCore

/// The JACK client: opens, registers ports and callbacks, activates, connects, and hands the
/// analysed frames to one consumer through `frames`. When the server goes away it comes back
/// by itself (`LiveConfiguration.reconnects`, see `JackSupervisor`).
///
/// The control side (this class) never runs on the process thread; the real-time work is in
/// ProcessCallback.swift, on memory prepared in advance (`ProcessContext`). Lifecycle, as in
/// JACK's example clients: open → register ports → set callbacks → activate → connect → run →
/// `stop()` (deactivate, close).
///
/// Thread-safety: every member may be called from any non-real-time thread, concurrently.
/// `frames` has exactly one consumer. Call `stop()` before dropping the last reference (deinit
/// stops too). `frames` stays valid until this object is deinitialised.
public final class LiveClient: @unchecked Sendable {
    /// The client name JACK gave us at start (may differ from the requested one; after a
    /// reconnection `LiveStatus.currentClientName` is the one in use).
    public let clientName: String
    /// True when JACK changed the requested name (another client had it, or it was too long).
    public let clientNameWasChanged: Bool
    /// Full names of our input ports now, e.g. `spectrum:in` or `spectrum:in_1`, `spectrum:in_2`;
    /// with named inputs `spectrum:kick`, `spectrum:bass` (input by input, in slot order).
    /// Any non-real-time thread.
    public var portNames: [String] {
        let client = supervisor.currentClientName ?? clientName
        return exchange.inputNames.compactMap { $0 }.flatMap { input in
            (0..<channelCount).map { "\(client):" + Self.portShortName(input: input, channel: $0, channelCount: channelCount) }
        }
    }
    /// The inputs by slot (`AnalysisFrame.inputIndex`): `[""]` for the one unnamed input; with
    /// named inputs, `maximumInputCount` slots, nil where no input is. Any non-real-time thread.
    public var inputSlots: [String?] { exchange.inputNames }
    /// The inputs now, in slot order (`[""]`: the one unnamed input).
    public var inputNames: [String] { inputSlots.compactMap { $0 } }
    private let channelCount: Int
    /// The input that drives the tempo outputs (nil: the first): `LiveConfiguration.tempoInput`,
    /// then the latest `setTempoInput`. Any non-real-time thread.
    public var tempoInput: String? { tempoSelection.withLock { $0 } }
    /// Its slot (`AnalysisFrame.inputIndex`); 0 without one. Any non-real-time thread.
    public var tempoSlot: Int { counters.pointee.tempoSlot.load(ordering: .relaxed) }
    /// The tempo input's name; held while it is checked and changed, and while an input is
    /// removed (so the one being chosen cannot go meanwhile).
    private let tempoSelection: Mutex<String?>
    /// Full name of the MIDI clock output port (e.g. `spectrum:midi_clock`), nil without
    /// `LiveConfiguration.midiClock`.
    public let midiClockPortName: String?
    /// The source ports connected at start (`[]` with `.none` or no physical capture port).
    public let connectedSources: [String]
    /// Analysed frames, oldest first. Exactly one consumer thread pops. Real-time safe to pop.
    /// The same ring across server restarts.
    public let frames: FrameRing
    /// Each beat event of input 0 as soon as the JACK cycle holding it is analysed, ahead of its
    /// frame (which carries it too). One reader; valid until this object is deinitialised.
    public var beats: BeatMailbox { beatMailboxes[0] }
    /// The same for every input, by slot.
    public var beatMailboxes: [BeatMailbox] { (0..<exchange.capacity).map { beatStorage[$0] } }
    private let beatStorage: UnsafeMutablePointer<BeatMailbox>

    private let counters: UnsafeMutablePointer<LiveCounters>
    private let exchange: AnalyzerExchange
    private let supervisor: JackSupervisor

    /// The JACK audio port type (`JACK_DEFAULT_AUDIO_TYPE`).
    public static let audioPortType = "32 bit float mono audio"
    /// The JACK MIDI port type (`JACK_DEFAULT_MIDI_TYPE`).
    public static let midiPortType = "8 bit raw midi"
    /// The MIDI clock output port's short name.
    public static let midiClockPortShortName = "midi_clock"

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
        try LiveInput.validate(configuration.inputs)
        if let name = configuration.tempoInput, !configuration.inputs.contains(where: { $0.name == name }) {
            let known = configuration.inputs.map(\.name)
            throw LiveClientError(.invalidConfiguration, "--tempo-input \(name): expected the name of an input, "
                + (known.isEmpty ? "got no named inputs (give them with --input NAME)" : "got none of \(known.joined(separator: ", "))"))
        }
        let inputSlots = configuration.inputSlots
        if configuration.quietJackLibrary {
            jack_set_error_function(liveQuietJackMessage)
            jack_set_info_function(liveQuietJackMessage)
        }

        // 2) Open, never starting a server; the analyser at the server's rate.
        let client = try JackIncarnation.openClient(configuration)
        let sampleRate = jack_get_sample_rate(client)
        let counters = UnsafeMutablePointer<LiveCounters>.allocate(capacity: 1)
        counters.initialize(to: LiveCounters())
        counters.pointee.tempoSlot.store(configuration.tempoSlot, ordering: .relaxed)
        counters.pointee.sampleRateHz.store(sampleRate, ordering: .relaxed)
        counters.pointee.periodFrames.store(jack_get_buffer_size(client), ordering: .relaxed)
        let exchange: AnalyzerExchange
        do {
            exchange = try AnalyzerExchange(configuration: configuration.analysis, inputNames: inputSlots, inputAnalysis: configuration.inputSlotAnalysis,
                                           sampleRateHz: Double(sampleRate),
                                           staggersHops: configuration.staggersInputHops, counters: counters)
        } catch {
            jack_client_close(client)
            Self.free(counters)
            throw LiveClientError(.analysis, "cannot analyse at the JACK server's sample rate: \(error.description)")
        }
        // The ring holds the same backlog in time for the inputs given at start (inputs added
        // later share it).
        let ring = FrameRing(capacity: configuration.ringCapacity * max(1, configuration.inputs.count))
        let beats = UnsafeMutablePointer<BeatMailbox>.allocate(capacity: inputSlots.count)
        beats.initialize(from: inputSlots.map { _ in BeatMailbox() }, count: inputSlots.count)
        let graphEvents = GraphEvents()
        func abandon() {
            exchange.destroyAll()
            ring.deallocate()
            Self.free(beats, count: inputSlots.count)
            Self.free(counters)
        }

        // 3) Ports and callbacks; the sources resolved before activation, so a typo fails with
        //    nothing half-connected.
        let incarnation: JackIncarnation
        do {
            incarnation = try JackIncarnation(client: client, configuration: configuration, processCallback: processCallback, exchange: exchange,
                                              ring: ring, beats: beats, counters: counters, graphEvents: graphEvents)
        } catch {
            abandon()
            throw error
        }
        let plan: [ConnectionMemory.Connection], awaited: [ConnectionMemory.Connection]
        do {
            (plan, awaited) = try Self.connectionPlan(configuration, client: client)
            // 4) Activate, then connect (only after activation, as JACK requires).
            try incarnation.activate()
        } catch {
            incarnation.close()
            abandon()
            throw error
        }
        for connection in plan {
            let code = incarnation.connect(connection)
            guard code == 0 else {
                incarnation.close()
                abandon()
                let ours = incarnation.portName(connection.port) ?? "\(connection.port)"
                throw LiveClientError(.connectionFailed, connection.port == .midiClock
                    ? "cannot connect \(ours) to \(connection.peer) (JACK error \(code)): the destination must be a MIDI input port (list them with `jack_lsp -t -p`)"
                    : "cannot connect \(connection.peer) to \(ours) (JACK error \(code)): the source must be an audio output port (list them with `jack_lsp -t -p`)")
            }
        }

        self.clientName = incarnation.name
        self.clientNameWasChanged = incarnation.name != configuration.clientName
        self.channelCount = configuration.channelCount
        self.tempoSelection = Mutex(configuration.tempoInput)
        self.midiClockPortName = incarnation.midiClockPortName
        self.connectedSources = plan.filter { $0.inputIndex != nil }.map(\.peer)
        self.frames = ring
        self.beatStorage = beats
        self.counters = counters
        self.exchange = exchange
        supervisor = JackSupervisor(configuration: configuration, processCallback: processCallback, counters: counters, exchange: exchange,
                                    ring: ring, beats: beats, graphEvents: graphEvents, incarnation: incarnation, remembering: plan + awaited)
        supervisor.start()
    }

    deinit {
        stop()
        frames.deallocate()
        Self.free(beatStorage, count: exchange.capacity)
        Self.free(counters)
    }

    private static func free(_ beats: UnsafeMutablePointer<BeatMailbox>, count: Int) {
        for slot in 0..<count { beats[slot].deallocate() }
        beats.deinitialize(count: count)
        beats.deallocate()
    }

    private static func free(_ counters: UnsafeMutablePointer<LiveCounters>) {
        counters.deinitialize(count: 1)
        counters.deallocate()
    }

    /// Deactivates and closes the client, then frees the real-time state (not `frames`,
    /// `beats`, which the consumer may still drain). Idempotent; concurrent callers wait for the first.
    /// Safe from any non-real-time thread, including a signal-handling thread (a
    /// `DispatchSourceSignal` handler or a `sigwait` loop) — but not from inside a raw signal
    /// handler: there, only set a flag. Also correct after the server has shut down, and while
    /// it is lost (it waits for the supervisor, at most its close time bound).
    public func stop() {
        stopMidiClock()
        supervisor.stop()
    }

    /// A running MIDI clock sends FC before the client goes (receivers stop rather than wait
    /// for ticks that never come): hold it, and give the process thread a few cycles to send
    /// it (at most `midiClockStopWaitSeconds`, e.g. when the server is gone).
    private func stopMidiClock() {
        guard midiClockPortName != nil, counters.pointee.midiClockRunning.load(ordering: .relaxed) else { return }
        counters.pointee.midiClockHold.store(true, ordering: .relaxed)
        let deadline = Date().addingTimeInterval(Self.midiClockStopWaitSeconds)
        while counters.pointee.midiClockRunning.load(ordering: .relaxed) && Date() < deadline { usleep(2000) }
    }

    /// Ten periods of 1024 frames at 48 kHz.
    static let midiClockStopWaitSeconds = 0.2

    /// Replaces the analysis configuration while running: a new analyser is built here, off the
    /// real-time thread, and swapped in (its tempo and levels start afresh). Throws (and keeps
    /// the running analyser) when the configuration cannot run at the current sample rate.
    /// Not real-time safe; any thread.
    public func reconfigure(_ configuration: AnalysisConfiguration) throws(AnalysisConfigurationError) {
        try exchange.install(configuration: configuration)
    }

    /// Adds a named input while running (with its own settings, `input.analysis`, kept for
    /// every later rebuild), or re-points it when one of that name exists (its connections
    /// replaced by `input.sources`; its settings stay as they were). Its analyser is built here, off the real-time
    /// thread, and handed to the process callback by an atomic store; its ports are registered
    /// first. Returns its slot (`AnalysisFrame.inputIndex`). Throws one line: a bad name, the
    /// client started with one unnamed input, every slot taken, JACK refusing the port.
    /// Not real-time safe; any thread.
    @discardableResult
    public func addInput(_ input: LiveInput) throws(LiveClientError) -> Int {
        if let problem = input.nameProblem { throw LiveClientError(.invalidConfiguration, "input \(input.name): \(problem)") }
        guard exchange.inputNames != [""] else {
            throw LiveClientError(.invalidConfiguration, "input \(input.name): this client analyses one unnamed input; start it with --input NAME to add inputs at run time")
        }
        if let slot = exchange.inputNames.firstIndex(of: input.name) {
            supervisor.repointInput(slot: slot, to: input.sources)
            return slot
        }
        return try supervisor.addInput(input)
    }

    /// Removes the named input while running: the process callback drops its analyser from the
    /// next cycle, its connections are forgotten, its ports unregistered once no cycle can use
    /// them, and the analyser freed off the real-time thread. Returns its former slot.
    /// Not real-time safe; any thread.
    @discardableResult
    public func removeInput(named name: String) throws(LiveClientError) -> Int {
        guard exchange.inputNames != [""], let slot = exchange.inputNames.firstIndex(of: name) else {
            let known = inputNames.filter { !$0.isEmpty }
            throw LiveClientError(.invalidConfiguration, "input \(name): no such input" + (known.isEmpty ? "" : " (inputs: \(known.joined(separator: ", ")))"))
        }
        // The MIDI clock reads the tempo slot: its input stays (switch it first).
        try tempoSelection.withLock { (tempoInput: inout String?) throws(LiveClientError) in
            guard name != tempoInput else {
                throw LiveClientError(.invalidConfiguration, "input \(name): it drives the tempo outputs (--tempo-input), expected another input")
            }
            try supervisor.removeInput(slot: slot)
        }
        return slot
    }

    /// Switches the input that drives the tempo outputs while running (OSC
    /// `/control/tempo_input`): the process callback reads the new slot from its next cycle
    /// (one atomic store here, one load there per cycle). The MIDI clock keeps the former beat
    /// grid until the new input completes a frame, then glides to its tempo and re-phases with
    /// its bounded slew (no FC/FA, unless the new input has no tempo yet: then it stops as a
    /// lost tempo does). Returns the slot. Throws one line naming the value and the inputs there
    /// are. Not real-time safe; any thread.
    @discardableResult
    public func setTempoInput(named name: String) throws(LiveClientError) -> Int {
        try tempoSelection.withLock { (tempoInput: inout String?) throws(LiveClientError) -> Int in
            let known = inputNames.filter { !$0.isEmpty }
            guard !known.isEmpty, let slot = exchange.inputNames.firstIndex(of: name) else {
                throw LiveClientError(.invalidConfiguration, "tempo input \(name): expected the name of an input, "
                    + (known.isEmpty ? "got no named inputs (start with --input NAME)" : "got none of \(known.joined(separator: ", "))"))
            }
            tempoInput = name
            counters.pointee.tempoSlot.store(slot, ordering: .relaxed)
            return slot
        }
    }

    /// Forgets the learned tempo and beat grid and learns them again (a new song, a wrong
    /// octave). Takes effect in the next process cycle. Any thread.
    public func relearnTempo() {
        counters.pointee.relearnRequested.store(true, ordering: .releasing)
    }

    /// Holds the MIDI clock stopped (blackout: FC now, FA again on the first downbeat after
    /// release). Takes effect in the next process cycle. Any thread.
    public func holdMidiClock(_ hold: Bool) {
        counters.pointee.midiClockHold.store(hold, ordering: .relaxed)
    }

    /// Counters and flags for status lines and benchmarks. Frees retired analysers on the way.
    /// Not real-time safe.
    public func status() -> LiveStatus {
        let counters = self.counters
        let callbacks = counters.pointee.callbacksCompleted.load(ordering: .acquiring)
        let sampleRate = Double(counters.pointee.sampleRateHz.load(ordering: .relaxed))
        let latencyFrames = Int(counters.pointee.captureLatencyFrames.load(ordering: .relaxed))
        let life = supervisor.lifeStatus()
        let costTotal = Double(counters.pointee.costTotalMicroseconds.load(ordering: .relaxed))
        return LiveStatus(
            sampleRateHz: sampleRate,
            analysisSampleRateHz: life.isStopped ? 0 : exchange.sampleRateHz,
            periodFrames: Int(counters.pointee.periodFrames.load(ordering: .relaxed)),
            lastCycleFrames: Int(counters.pointee.lastFrameCount.load(ordering: .relaxed)),
            callbacks: callbacks,
            xruns: counters.pointee.xruns.load(ordering: .relaxed),
            framesPushed: counters.pointee.pushedFrames.load(ordering: .relaxed),
            framesDropped: counters.pointee.droppedFrames.load(ordering: .relaxed),
            chunkedCycles: counters.pointee.chunkedCycles.load(ordering: .relaxed),
            dspLoadPercent: life.dspLoadPercent,
            callbackCostMeanMicroseconds: callbacks > 0 ? costTotal / Double(callbacks) : 0,
            callbackCostMaximumMicroseconds: Double(counters.pointee.costMaximumMicroseconds.load(ordering: .relaxed)),
            captureLatencyFrames: latencyFrames,
            captureLatencyMicroseconds: sampleRate > 0 ? Double(latencyFrames) * 1_000_000 / sampleRate : 0,
            isFreewheeling: counters.pointee.freewheeling.load(ordering: .relaxed),
            isShutDown: life.isShutDown,
            isStopped: life.isStopped,
            analyzerSwaps: exchange.swapCount.load(ordering: .relaxed),
            mostFramesInOneCycle: Int(counters.pointee.mostFramesInOneCycle.load(ordering: .relaxed)),
            analysisError: exchange.lastFailure,
            serverLostSeconds: life.serverLostSeconds,
            reconnections: life.reconnections,
            abandonedClients: life.abandonedClients,
            stallRecoveries: life.stallRecoveries,
            currentClientName: life.clientName ?? clientName,
            lastReconnectError: life.lastReconnectError,
            midiClock: midiClockPortName.map { portName in
                let tickPeriod = Double(bitPattern: counters.pointee.midiClockTickPeriodBits.load(ordering: .relaxed))
                let running = counters.pointee.midiClockRunning.load(ordering: .relaxed)
                let phaseTicks = Double(bitPattern: counters.pointee.midiClockPhaseErrorBits.load(ordering: .relaxed))
                return MidiClockStatus(
                    portName: portName, isRunning: running,
                    bpm: running && tickPeriod > 0 && sampleRate > 0 ? 60 * sampleRate / (tickPeriod * Double(MidiClockScheduler.ticksPerBeat)) : 0,
                    phaseErrorMilliseconds: running && sampleRate > 0 ? phaseTicks * tickPeriod * 1000 / sampleRate : 0,
                    ticks: counters.pointee.midiClockTicks.load(ordering: .relaxed),
                    starts: counters.pointee.midiClockStarts.load(ordering: .relaxed),
                    stops: counters.pointee.midiClockStops.load(ordering: .relaxed),
                    writeFailures: counters.pointee.midiClockWriteFailures.load(ordering: .relaxed),
                    playbackLatencyFrames: Int(counters.pointee.playbackLatencyFrames.load(ordering: .relaxed)))
            }
        )
    }

    /// JACK's sample rate as last announced.
    public var sampleRateHz: Double { Double(counters.pointee.sampleRateHz.load(ordering: .relaxed)) }

    /// The analysis configuration in use (its `outputRateHz` sets the frame rate): the shared
    /// one, which inputs with settings of their own (`LiveInput.analysis`) override. Any thread.
    public var analysisConfiguration: AnalysisConfiguration { exchange.configuration }

    /// What input `name` analyses with (the shared configuration with its own settings), nil
    /// when there is no such input. Any thread.
    public func analysisConfiguration(input name: String) -> AnalysisConfiguration? {
        exchange.inputNames.firstIndex(of: name).map { exchange.configuration(slot: $0) }
    }

    /// Pops the oldest frame into `frame`; false when none is waiting. For the one consumer.
    public func popFrame(into frame: inout AnalysisFrame) -> Bool { frames.pop(into: &frame) }

    /// JACK's clock now, in microseconds (`jack_get_time()`): the clock of
    /// `AnalysisFrame.captureTimeMicroseconds`. `now − capture time` is how old a frame is;
    /// subtract it from the wall clock to get an OSC time tag. Any thread.
    public static func currentTimeMicroseconds() -> UInt64 { jack_get_time() }

    /// The source ports now connected to each of our input ports (in `portNames` order).
    /// Empty lists once stopped and while the server is lost. Not real-time safe.
    public func connections() -> [[String]] {
        supervisor.withLiveIncarnation { $0.connections() } ?? portNames.map { _ in [] }
    }

    /// The input connections made again after a server restart, or when their source port
    /// appears: (source port, index of our input port), oldest first. Not real-time safe.
    public func rememberedConnections() -> [(source: String, inputIndex: Int)] {
        supervisor.rememberedConnections().compactMap { connection in connection.inputIndex.map { (connection.peer, $0) } }
    }

    /// The named inputs now, in slot order, as they would be started again: each with its own
    /// settings and, as its sources, its remembered connections (made at start, by
    /// `addInput`, or by anyone since, e.g. `jack_connect`) in the order `LiveInput.sources`
    /// connects them (source k → channel k mod N: the channels' first sources, then their
    /// second …). Empty for the one unnamed input. For a session save. Not real-time safe.
    public var namedInputs: [LiveInput] {
        let remembered = rememberedConnections()
        return exchange.slotInputList.enumerated().compactMap { slot, input in
            guard let input, !input.name.isEmpty else { return nil }
            let byChannel = (0..<channelCount).map { channel in
                remembered.filter { $0.inputIndex == slot * channelCount + channel }.map(\.source)
            }
            let rounds = byChannel.map(\.count).max() ?? 0
            let sources = (0..<rounds).flatMap { round in byChannel.compactMap { round < $0.count ? $0[round] : nil } }
            return LiveInput(name: input.name, sources: sources, analysis: input.analysis)
        }
    }

    /// The MIDI clock's destination ports, remembered like the input connections (made again
    /// after a server restart, or when the port appears), oldest first. Not real-time safe.
    public func rememberedMidiClockDestinations() -> [String] {
        supervisor.rememberedConnections().filter { $0.port == .midiClock }.map(\.peer)
    }

    // MARK: Internals

    /// Rebuilds the analyser at `sampleRateHz` and swaps it in while running, exactly as the
    /// sample-rate callback does. For tests and benchmarks.
    func replaceAnalyzer(sampleRateHz: Double) throws(AnalysisConfigurationError) {
        try exchange.install(sampleRateHz: sampleRateHz)
    }

    /// Runs `body` with the JACK client of the current life (nil while the server is lost or
    /// once stopped). For tests that act on the client behind the supervisor's back.
    func withJackClient<Result>(_ body: (OpaquePointer) -> Result) -> Result? {
        supervisor.withLiveIncarnation { body($0.client) }
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

    /// The short name of an input's port: `in`/`in_k` for the unnamed input, `NAME`/`NAME_k`.
    static func portShortName(input: String, channel: Int, channelCount: Int) -> String {
        let base = input.isEmpty ? "in" : input
        return channelCount == 1 ? base : "\(base)_\(channel + 1)"
    }

    /// The connections to make at start (by flattened port index): `connections` over the
    /// inputs' ports in order, then each named input's own sources, then the MIDI clock's
    /// destinations; and, with `awaitsMissingSources`, the named inputs' sources that do not
    /// exist yet, only remembered (made when their port appears).
    private static func connectionPlan(_ configuration: LiveConfiguration, client: OpaquePointer) throws(LiveClientError)
        -> (now: [ConnectionMemory.Connection], awaited: [ConnectionMemory.Connection]) {
        let channels = configuration.channelCount
        // The ports of the inputs there are (flattened indices), in order.
        let portIndices = configuration.inputSlots.enumerated().filter { $0.element != nil }
            .flatMap { slot, _ in (slot * channels) ..< ((slot + 1) * channels) }
        var plan: [ConnectionMemory.Connection] = []
        switch configuration.connections {
        case .none:
            break
        case .physicalCapture:
            let physical = ports(client, flags: UInt(JackPortIsPhysical.rawValue | JackPortIsOutput.rawValue))
            plan = zip(physical, portIndices).map { ConnectionMemory.Connection.input($1, from: $0) }
        case .ports(let sources):
            for (index, source) in sources.enumerated() {
                try checkSource(source, client: client)
                plan.append(.input(portIndices[index % portIndices.count], from: source))
            }
        }
        var awaited: [ConnectionMemory.Connection] = []
        for (slot, input) in configuration.inputs.enumerated() {
            for (index, source) in input.sources.enumerated() {
                let connection = ConnectionMemory.Connection.input(slot * channels + index % channels, from: source)
                if configuration.awaitsMissingSources && jack_port_by_name(client, source) == nil {
                    if !awaited.contains(connection) { awaited.append(connection) }
                    continue
                }
                try checkSource(source, client: client)
                if !plan.contains(connection) { plan.append(connection) }
            }
        }
        if !configuration.midiClockDestinations.isEmpty && !configuration.midiClock {
            throw LiveClientError(.invalidConfiguration, "MIDI clock destinations given without the MIDI clock (--midi-clock-connect needs --midi-clock)")
        }
        for destination in configuration.midiClockDestinations {
            try checkMidiClockDestination(destination, client: client)
            let connection = ConnectionMemory.Connection.midiClock(to: destination)
            if !plan.contains(connection) { plan.append(connection) }
        }
        return (plan, awaited)
    }

    /// Throws one line when `source` is not an output port of the server.
    private static func checkSource(_ source: String, client: OpaquePointer) throws(LiveClientError) {
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
    }

    /// Throws one line when `destination` is not a MIDI input port of the server.
    private static func checkMidiClockDestination(_ destination: String, client: OpaquePointer) throws(LiveClientError) {
        let port = jack_port_by_name(client, destination)
        let isMidiInput = port.map { Int32(jack_port_flags($0)) & Int32(JackPortIsInput.rawValue) != 0 && String(cString: jack_port_type($0)) == midiPortType } ?? false
        guard !isMidiInput else { return }
        let existing = ports(client, type: midiPortType, flags: UInt(JackPortIsInput.rawValue))
        let shown = existing.prefix(6).joined(separator: ", ")
        let more = existing.count > 6 ? ", … (\(existing.count) in all)" : ""
        let list = existing.isEmpty ? "the server has no MIDI input ports" : "MIDI inputs are: \(shown)\(more)"
        let problem = port == nil ? "no JACK port named '\(destination)'" : "'\(destination)' is not a MIDI input port"
        throw LiveClientError(port == nil ? .missingPort : .connectionFailed, "MIDI clock destination: \(problem): \(list) (list them with `jack_lsp -t -p`)")
    }

    private static func ports(_ client: OpaquePointer, type: String = audioPortType, flags: UInt) -> [String] {
        guard let list = jack_get_ports(client, nil, type, flags) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
        return strings(list)
    }

    static func strings(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>) -> [String] {
        var result: [String] = []
        var index = 0
        while let name = list[index] {
            result.append(String(cString: name))
            index += 1
        }
        return result
    }

}
