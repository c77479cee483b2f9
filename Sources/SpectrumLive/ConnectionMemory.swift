import Foundation
import Synchronization

/// The connections of our ports (the audio inputs and the MIDI clock output), remembered so
/// they can be made again when the JACK server comes back (it forgets them) or when the peer
/// port appears again (its client restarted). Fed by JACK's graph callbacks through
/// `GraphEvents`; only the supervisor thread mutates it. Not real-time code; allocates.
///
/// The rule: a connection is remembered when it is made (by `--connect`, `jack_connect`, a
/// patchbay, a session manager); it is forgotten only when someone removes it while its peer
/// port still exists. A disconnection because the peer port went away (its client quit, the
/// server is stopping) keeps it, like a patchbay would, so it comes back with the port.
struct ConnectionMemory: Equatable {
    /// One connection between one of our ports and another client's port.
    struct Connection: Hashable, Sendable {
        /// One of our ports, named so that it is the same port in every client life (the
        /// JACK port handles are not).
        enum Port: Hashable, Sendable {
            /// An input port by flattened index (slot × channels + channel; 0 = `in` or
            /// `in_1`); its peer is a source, an output port.
            case input(Int)
            /// The MIDI clock output `midi_clock`; its peer is a destination, an input port.
            case midiClock
        }

        var port: Port
        /// Full name of the other client's port, e.g. `system:capture_1` or `synth:midi_in`.
        var peer: String

        /// Source `source` (an output port) into our input port `inputIndex`.
        static func input(_ inputIndex: Int, from source: String) -> Connection { Connection(port: .input(inputIndex), peer: source) }
        /// Our MIDI clock into `destination` (an input port).
        static func midiClock(to destination: String) -> Connection { Connection(port: .midiClock, peer: destination) }

        /// The flattened index of our input port; nil for the MIDI clock.
        var inputIndex: Int? {
            if case .input(let index) = port { return index }
            return nil
        }
    }

    /// How long after a disconnection its peer port must still exist for the connection to
    /// be forgotten: a port being unregistered is disconnected first and removed just after.
    static let forgetDelaySeconds = 0.3

    /// Remembered connections, oldest first.
    private(set) var remembered: [Connection] = []
    /// Disconnections waiting for `forgetDelaySeconds` before they are judged.
    private(set) var pendingDisconnections: [(connection: Connection, dueSeconds: Double)] = []

    static func == (left: ConnectionMemory, right: ConnectionMemory) -> Bool {
        left.remembered == right.remembered && left.pendingDisconnections.map(\.connection) == right.pendingDisconnections.map(\.connection)
    }

    mutating func remember(_ connection: Connection) {
        if !remembered.contains(connection) { remembered.append(connection) }
        pendingDisconnections.removeAll { $0.connection == connection }
    }

    /// Forgets every connection of our input ports `indices` (an input removed or re-pointed).
    mutating func forget(inputIndices indices: Range<Int>) {
        func isForgotten(_ connection: Connection) -> Bool { connection.inputIndex.map(indices.contains) ?? false }
        remembered.removeAll(where: isForgotten)
        pendingDisconnections.removeAll { isForgotten($0.connection) }
    }

    /// Applies one graph event seen at `nowSeconds` (any monotonic clock); returns the remembered
    /// connections it asks to make now (a peer port that appeared).
    mutating func apply(_ event: GraphEvent, nowSeconds: Double) -> [Connection] {
        switch event {
        case .connected(let connection):
            remember(connection)
            return []
        case .disconnected(let connection):
            guard remembered.contains(connection) else { return [] }
            pendingDisconnections.append((connection, nowSeconds + Self.forgetDelaySeconds))
            return []
        case .appeared(let peer):
            return remembered.filter { $0.peer == peer }
        }
    }

    /// Judges the disconnections that are due: forgotten when the peer port still exists and
    /// is not connected again; kept when the port is gone. Call only while the server runs.
    mutating func judgeDisconnections(nowSeconds: Double, peerExists: (String) -> Bool, isConnected: (Connection) -> Bool) {
        let due = pendingDisconnections.filter { $0.dueSeconds <= nowSeconds }.map(\.connection)
        pendingDisconnections.removeAll { $0.dueSeconds <= nowSeconds }
        for connection in due where peerExists(connection.peer) && !isConnected(connection) {
            remembered.removeAll { $0 == connection }
        }
    }

    /// The server went away: pending judgements are void (every port vanished with it).
    mutating func serverLost() { pendingDisconnections.removeAll() }
}

/// What JACK's graph callbacks saw, queued for the supervisor thread.
enum GraphEvent: Equatable, Sendable {
    case connected(ConnectionMemory.Connection)
    case disconnected(ConnectionMemory.Connection)
    /// Another client's port was registered (a peer that may be remembered).
    case appeared(String)
}

/// The queue from JACK's notification thread (never the process thread) to the supervisor.
final class GraphEvents: Sendable {
    private let queue = Mutex<[GraphEvent]>([])

    func post(_ event: GraphEvent) { queue.withLock { $0.append(event) } }

    func takeAll() -> [GraphEvent] {
        queue.withLock { events in
            defer { events.removeAll(keepingCapacity: true) }
            return events
        }
    }
}
