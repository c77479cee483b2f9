import CJack
import Foundation
import Glibc
import SpectrumCore
import SpectrumDSP
import Synchronization

/// One life of the JACK client: opened on a server, its ports registered, its callbacks set,
/// then activated. When the server goes away this life is over: `LiveClient`'s supervisor closes
/// it (with a time bound) and opens the next. What outlives it (the frame ring, the beat
/// mailbox, the counters, the analyser slot, the remembered connections) belongs to
/// `LiveClient`; this owns only the memory JACK's threads read during this life.
///
/// Not real-time safe (allocates); the process callback sees only `context`.
final class JackIncarnation: @unchecked Sendable {
    let client: OpaquePointer
    /// The name JACK gave (may differ from the one asked for).
    let name: String
    /// Full names of our input ports by flattened index (slot × channels + channel); nil for
    /// an empty slot. Changed by `registerPorts`/`unregisterPorts` (under the supervisor's lock).
    private(set) var portNamesByIndex: [String?]
    /// The registered ones, in order.
    var portNames: [String] { portNamesByIndex.compactMap { $0 } }
    /// Full name of the MIDI clock port, when there is one.
    let midiClockPortName: String?
    let sampleRateHz: UInt32
    let periodFrames: UInt32
    let context: UnsafeMutablePointer<ProcessContext>
    private let graphEvents: GraphEvents
    private var exchangeForJack: Unmanaged<AnalyzerExchange>?
    private var selfForJack: Unmanaged<JackIncarnation>?
    private var isActive = false

    /// Opens a client on the server, never starting one. `jack_client_open` with
    /// `JackNoStartServer`; throws one line when no server answers.
    static func openClient(_ configuration: LiveConfiguration) throws(LiveClientError) -> OpaquePointer {
        let requestedName = LiveClient.truncatedClientName(configuration.clientName, maximumBytes: LiveClient.maximumClientNameBytes)
        var status = jack_status_t(0)
        let opened: OpaquePointer? = requestedName.withCString { name in
            if let server = configuration.serverName {
                return server.withCString { spectrum_jack_client_open(name, JackNoStartServer, &status, $0) }
            }
            return spectrum_jack_client_open(name, JackNoStartServer, &status, nil)
        }
        guard let client = opened else {
            throw openError(status: status, serverName: configuration.serverName, clientName: requestedName)
        }
        return client
    }

    /// Registers the ports and callbacks of an open `client` (closed here if this throws).
    /// Activate with `activate()`.
    init(client: OpaquePointer, configuration: LiveConfiguration, processCallback: LiveProcessCallback, exchange: AnalyzerExchange,
         ring: FrameRing, beats: UnsafeMutablePointer<BeatMailbox>, counters: UnsafeMutablePointer<LiveCounters>, graphEvents: GraphEvents) throws(LiveClientError) {
        let actualName = String(cString: jack_get_client_name(client))
        let channelCount = configuration.channelCount
        let inputNames = exchange.inputNames
        let portCount = inputNames.count * channelCount
        let ports = UnsafeMutablePointer<Atomic<OpaquePointer?>>.allocate(capacity: portCount)
        for index in 0..<portCount { (ports + index).initialize(to: Atomic(nil)) }
        var portNames: [String?] = Array(repeating: nil, count: portCount)
        for (slot, inputName) in inputNames.enumerated() {
            guard let inputName else { continue }
            do {
                let registered = try Self.registerPorts(client: client, ports: ports, slot: slot, input: inputName, channelCount: channelCount)
                portNames.replaceSubrange(slot * channelCount ..< (slot + 1) * channelCount, with: registered)
            } catch {
                jack_client_close(client)
                ports.deinitialize(count: portCount)
                ports.deallocate()
                throw error
            }
        }
        var midiClockPort: OpaquePointer?
        var midiClock: UnsafeMutablePointer<MidiClockState>?
        if configuration.midiClock {
            guard let port = jack_port_register(client, LiveClient.midiClockPortShortName, LiveClient.midiPortType, UInt(JackPortIsOutput.rawValue), 0) else {
                jack_client_close(client)
                ports.deinitialize(count: portCount)
                ports.deallocate()
                throw LiveClientError(.portRegistrationFailed, "JACK refused to register port \(actualName):\(LiveClient.midiClockPortShortName)")
            }
            midiClockPort = port
            midiClock = .allocate(capacity: 1)
            midiClock?.initialize(to: MidiClockState(sampleRateHz: jack_get_sample_rate(client)))
        }
        self.midiClockPortName = midiClockPort.map { String(cString: jack_port_name($0)) }
        let period = jack_get_buffer_size(client)
        let mixFrames = max(configuration.mixBufferFrames > 0 ? configuration.mixBufferFrames : Int(period), 16)
        let mono = UnsafeMutablePointer<Float>.allocate(capacity: mixFrames)
        mono.initialize(repeating: 0, count: mixFrames)
        let portBuffers = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: portCount)
        portBuffers.initialize(repeating: nil, count: portCount)
        let context = UnsafeMutablePointer<ProcessContext>.allocate(capacity: 1)
        context.initialize(to: ProcessContext(
            client: client, ports: ports, portCount: portCount, channelsPerInput: channelCount, portBuffers: portBuffers,
            mono: mono, monoCapacity: mixFrames, analyzers: exchange.slots, beats: beats, inputCapacity: exchange.capacity,
            ring: ring, counters: counters, midiClockPort: midiClockPort, midiClock: midiClock))

        self.client = client
        self.name = actualName
        self.portNamesByIndex = portNames
        self.sampleRateHz = jack_get_sample_rate(client)
        self.periodFrames = period
        self.context = context
        self.graphEvents = graphEvents

        // The process callback and its small siblings get the raw context; the sample-rate
        // callback (which allocates) a retained AnalyzerExchange; the graph callbacks this object.
        let exchangeForJack = Unmanaged.passRetained(exchange)
        let selfForJack = Unmanaged.passRetained(self)
        self.exchangeForJack = exchangeForJack
        self.selfForJack = selfForJack
        let raw = UnsafeMutableRawPointer(context)
        var result = jack_set_process_callback(client, processCallback, raw)
        result |= jack_set_buffer_size_callback(client, liveBufferSizeChanged, raw)
        result |= jack_set_sample_rate_callback(client, liveSampleRateChanged, exchangeForJack.toOpaque())
        result |= jack_set_xrun_callback(client, liveXrun, raw)
        result |= jack_set_latency_callback(client, liveLatency, raw)
        result |= jack_set_freewheel_callback(client, liveFreewheel, raw)
        result |= jack_set_port_connect_callback(client, liveGraphPortConnected, selfForJack.toOpaque())
        result |= jack_set_port_registration_callback(client, liveGraphPortRegistered, selfForJack.toOpaque())
        jack_on_info_shutdown(client, liveShutdown, raw)
        guard result == 0 else {
            close()
            throw LiveClientError(.activationFailed, "JACK refused the callbacks of client \(actualName)")
        }
    }

    func activate() throws(LiveClientError) {
        guard jack_activate(client) == 0 else {
            close()
            throw LiveClientError(.activationFailed, "cannot activate JACK client \(name)")
        }
        isActive = true
        updateCaptureLatency(context)
        updatePlaybackLatency(context)
    }

    /// Registers input `slot`'s ports (named after `input`) and publishes them in `ports`;
    /// returns their full names. On failure nothing stays registered.
    private static func registerPorts(client: OpaquePointer, ports: UnsafeMutablePointer<Atomic<OpaquePointer?>>, slot: Int, input: String,
                                      channelCount: Int) throws(LiveClientError) -> [String?] {
        var registered: [OpaquePointer] = []
        for channel in 0..<channelCount {
            let shortName = LiveClient.portShortName(input: input, channel: channel, channelCount: channelCount)
            guard let port = jack_port_register(client, shortName, LiveClient.audioPortType, UInt(JackPortIsInput.rawValue), 0) else {
                for port in registered { jack_port_unregister(client, port) }
                throw LiveClientError(.portRegistrationFailed, "JACK refused to register port \(String(cString: jack_get_client_name(client))):\(shortName)")
            }
            registered.append(port)
        }
        for (channel, port) in registered.enumerated() { ports[slot * channelCount + channel].store(port, ordering: .releasing) }
        return registered.map { String(cString: jack_port_name($0)) }
    }

    /// Registers the ports of an input added at run time (before its analyser goes in).
    func registerPorts(slot: Int, input: String) throws(LiveClientError) {
        let channels = context.pointee.channelsPerInput
        let names = try Self.registerPorts(client: client, ports: context.pointee.ports, slot: slot, input: input, channelCount: channels)
        portNamesByIndex.replaceSubrange(slot * channels ..< (slot + 1) * channels, with: names)
    }

    /// Unregisters input `slot`'s ports. Only once no process cycle can use them: its analyser
    /// is out and the cycles that could hold it have completed.
    func unregisterPorts(slot: Int) {
        let channels = context.pointee.channelsPerInput
        for index in slot * channels ..< (slot + 1) * channels {
            guard let port = context.pointee.ports[index].exchange(nil, ordering: .acquiringAndReleasing) else { continue }
            jack_port_unregister(client, port)
            portNamesByIndex[index] = nil
        }
    }

    /// Removes every connection to input `slot`'s ports; returns them (as remembered).
    func disconnectAll(slot: Int) -> [ConnectionMemory.Connection] {
        let channels = context.pointee.channelsPerInput
        var removed: [ConnectionMemory.Connection] = []
        for index in slot * channels ..< (slot + 1) * channels {
            guard let port = context.pointee.ports[index].load(ordering: .acquiring), let list = jack_port_get_connections(port) else { continue }
            defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
            for source in LiveClient.strings(list) {
                jack_disconnect(client, source, jack_port_name(port))
                removed.append(.input(index, from: source))
            }
        }
        return removed
    }

    /// `jack_connect` in the connection's direction (peer → our input port, our MIDI clock →
    /// peer); 0 or EEXIST is success, else JACK's code (EINVAL for a port we do not have: an
    /// empty slot, no MIDI clock).
    @discardableResult
    func connect(_ connection: ConnectionMemory.Connection) -> Int32 {
        guard let ours = portName(connection.port) else { return EINVAL }
        let code = switch connection.port {
        case .input: jack_connect(client, connection.peer, ours)
        case .midiClock: jack_connect(client, ours, connection.peer)
        }
        return code == EEXIST ? 0 : code
    }

    /// Full name of our port `port` in this life; nil when it is not registered.
    func portName(_ port: ConnectionMemory.Connection.Port) -> String? {
        switch port {
        case .input(let index): portNamesByIndex.indices.contains(index) ? portNamesByIndex[index] : nil
        case .midiClock: midiClockPortName
        }
    }

    func peerExists(_ peer: String) -> Bool { jack_port_by_name(client, peer) != nil }

    func isConnected(_ connection: ConnectionMemory.Connection) -> Bool {
        guard let port = portHandle(connection.port) else { return false }
        return jack_port_connected_to(port, connection.peer) != 0
    }

    /// This life's handle of our port `port` (nil when it is not registered).
    private func portHandle(_ port: ConnectionMemory.Connection.Port) -> OpaquePointer? {
        switch port {
        case .input(let index):
            (0..<context.pointee.portCount).contains(index) ? context.pointee.ports[index].load(ordering: .acquiring) : nil
        case .midiClock:
            context.pointee.midiClockPort
        }
    }

    /// The source ports connected to each of our registered ports (in `portNames` order).
    func connections() -> [[String]] {
        (0..<context.pointee.portCount).compactMap { index in
            guard let port = context.pointee.ports[index].load(ordering: .acquiring) else { return nil }
            guard let list = jack_port_get_connections(port) else { return [] }
            defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
            return LiveClient.strings(list)
        }
    }

    /// Deactivates (unless the server is gone) and closes, then frees this life's memory. After
    /// it returns no callback of this client runs. May block (jack2 #395): the supervisor calls
    /// it with a time bound, see `LiveClient`.
    func close(serverGone: Bool = false) {
        if isActive && !serverGone { jack_deactivate(client) }
        isActive = false
        jack_client_close(client)
        exchangeForJack?.release()
        exchangeForJack = nil
        let value = context.pointee
        value.mono.deallocate()
        value.portBuffers.deallocate()
        value.ports.deinitialize(count: value.portCount)
        value.ports.deallocate()
        value.midiClock?.deinitialize(count: 1)
        value.midiClock?.deallocate()
        context.deinitialize(count: 1)
        context.deallocate()
        // Last: this may free the object.
        let retained = selfForJack
        selfForJack = nil
        retained?.release()
    }

    // MARK: Graph callbacks (JACK's notification thread; locks allowed, no server calls)

    fileprivate func portConnectionChanged(_ first: jack_port_id_t, _ second: jack_port_id_t, connected: Bool) {
        guard let portA = jack_port_by_id(client, first), let portB = jack_port_by_id(client, second) else { return }
        let ours: OpaquePointer, other: OpaquePointer
        if jack_port_is_mine(client, portB) != 0 { (ours, other) = (portB, portA) }
        else if jack_port_is_mine(client, portA) != 0 { (ours, other) = (portA, portB) }
        else { return }
        let port: ConnectionMemory.Connection.Port
        if ours == context.pointee.midiClockPort {
            port = .midiClock
        } else if let inputIndex = (0..<context.pointee.portCount).first(where: { context.pointee.ports[$0].load(ordering: .acquiring) == ours }) {
            port = .input(inputIndex)
        } else {
            return
        }
        let connection = ConnectionMemory.Connection(port: port, peer: String(cString: jack_port_name(other)))
        graphEvents.post(connected ? .connected(connection) : .disconnected(connection))
    }

    /// Any other client's port, of either direction: outputs may be sources of our inputs,
    /// inputs destinations of our MIDI clock.
    fileprivate func portRegistered(_ id: jack_port_id_t) {
        guard let port = jack_port_by_id(client, id), jack_port_is_mine(client, port) == 0 else { return }
        graphEvents.post(.appeared(String(cString: jack_port_name(port))))
    }

    static func openError(status: jack_status_t, serverName: String?, clientName: String) -> LiveClientError {
        let server = serverName.map { "JACK server '\($0)'" } ?? "the default JACK server"
        if status.rawValue & JackServerFailed.rawValue != 0 {
            return LiveClientError(.noServer, "cannot connect to \(server): is it running? Start jackd (or PipeWire's JACK), or pass --server NAME for another server")
        }
        if status.rawValue & JackVersionError.rawValue != 0 {
            return LiveClientError(.openFailed, "cannot open JACK client '\(clientName)': the server speaks another protocol version than this libjack")
        }
        return LiveClientError(.openFailed, "cannot open JACK client '\(clientName)' on \(server) (JACK status 0x\(String(status.rawValue, radix: 16)))")
    }
}

/// `jack_set_port_connect_callback`: queues the change for the supervisor.
private func liveGraphPortConnected(_ first: jack_port_id_t, _ second: jack_port_id_t, _ connect: Int32, _ argument: UnsafeMutableRawPointer?) {
    guard let argument else { return }
    Unmanaged<JackIncarnation>.fromOpaque(argument).takeUnretainedValue().portConnectionChanged(first, second, connected: connect != 0)
}

/// `jack_set_port_registration_callback`: a peer port that appears may be remembered.
private func liveGraphPortRegistered(_ id: jack_port_id_t, _ registered: Int32, _ argument: UnsafeMutableRawPointer?) {
    guard let argument, registered != 0 else { return }
    Unmanaged<JackIncarnation>.fromOpaque(argument).takeUnretainedValue().portRegistered(id)
}
