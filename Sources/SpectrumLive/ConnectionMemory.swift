import Foundation
import Synchronization

/// The connections of our input ports, remembered so they can be made again when the JACK
/// server comes back (it forgets them) or when a source port appears again (its client
/// restarted). Fed by JACK's graph callbacks through `GraphEvents`; only the supervisor thread
/// mutates it. Not real-time code; allocates.
///
/// The rule: a connection is remembered when it is made (by `--connect`, `jack_connect`, a
/// patchbay, a session manager); it is forgotten only when someone removes it while its source
/// port still exists. A disconnection because the source port went away (its client quit, the
/// server is stopping) keeps it, like a patchbay would, so it comes back with the port.
struct ConnectionMemory: Equatable {
    struct Connection: Hashable, Sendable {
        /// Full name of the source (output) port, e.g. `system:capture_1`.
        var source: String
        /// Which of our input ports (0 = `in` or `in_1`).
        var inputIndex: Int
    }

    /// How long after a disconnection its source port must still exist for the connection to
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

    /// Forgets every connection of our ports `indices` (an input removed or re-pointed).
    mutating func forget(inputIndices indices: Range<Int>) {
        remembered.removeAll { indices.contains($0.inputIndex) }
        pendingDisconnections.removeAll { indices.contains($0.connection.inputIndex) }
    }

    /// Applies one graph event seen at `nowSeconds` (any monotonic clock); returns the remembered
    /// connections it asks to make now (a source port that appeared).
    mutating func apply(_ event: GraphEvent, nowSeconds: Double) -> [Connection] {
        switch event {
        case .connected(let connection):
            remember(connection)
            return []
        case .disconnected(let connection):
            guard remembered.contains(connection) else { return [] }
            pendingDisconnections.append((connection, nowSeconds + Self.forgetDelaySeconds))
            return []
        case .appeared(let source):
            return remembered.filter { $0.source == source }
        }
    }

    /// Judges the disconnections that are due: forgotten when the source port still exists and
    /// is not connected again; kept when the port is gone. Call only while the server runs.
    mutating func judgeDisconnections(nowSeconds: Double, sourceExists: (String) -> Bool, isConnected: (Connection) -> Bool) {
        let due = pendingDisconnections.filter { $0.dueSeconds <= nowSeconds }.map(\.connection)
        pendingDisconnections.removeAll { $0.dueSeconds <= nowSeconds }
        for connection in due where sourceExists(connection.source) && !isConnected(connection) {
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
    /// An output port was registered (a source that may be remembered).
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
