// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc

/// A TCP connection to a port on 127.0.0.1 inside a `PrivateNetwork`. The socket is created on
/// the network's thread and stays in its namespace whichever thread then reads or writes, which
/// is why the harnesses speak HTTP and WebSocket over this instead of URLSession (whose sockets
/// are opened on its own threads, outside the namespace). Every read is bounded by a deadline.
/// Allocates and blocks; for tests only; not thread-safe.
final class LoopbackConnection {
    private let descriptor: Int32
    /// Bytes read from the socket and not yet consumed.
    private var pending: [UInt8] = []

    init(port: UInt16, in network: PrivateNetwork) throws {
        descriptor = try network.run { try connectToLoopback(port: port) }
    }

    deinit { close(descriptor) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw RigPeerError(description: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Exactly `count` bytes.
    func read(count: Int, deadline: Date) throws -> [UInt8] {
        while pending.count < count {
            guard try receive(deadline: deadline) else { throw RigPeerError(description: "connection closed after \(pending.count) of \(count) bytes") }
        }
        defer { pending.removeFirst(count) }
        return Array(pending.prefix(count))
    }

    /// Up to and including the first `terminator`.
    func read(through terminator: [UInt8], deadline: Date) throws -> [UInt8] {
        var searchStart = 0
        while true {
            if let end = Self.index(of: terminator, in: pending, from: searchStart) {
                let count = end + terminator.count
                defer { pending.removeFirst(count) }
                return Array(pending.prefix(count))
            }
            searchStart = max(0, pending.count - terminator.count + 1)
            guard try receive(deadline: deadline) else { throw RigPeerError(description: "connection closed before the end of a header") }
        }
    }

    /// Everything until the peer closes the connection.
    func readToEnd(deadline: Date) throws -> [UInt8] {
        while try receive(deadline: deadline) {}
        defer { pending.removeAll() }
        return pending
    }

    /// Appends what the socket holds to `pending`; false when the peer has closed.
    private func receive(deadline: Date) throws -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let remainingMilliseconds = Int32(max(0, deadline.timeIntervalSinceNow * 1000).rounded(.up))
            let ready = poll(&poller, 1, remainingMilliseconds)
            if ready > 0 { break }
            if ready < 0 && errno == EINTR { continue }
            throw RigPeerError(description: ready == 0 ? "no answer before the deadline" : "poll: \(String(cString: strerror(errno)))")
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw RigPeerError(description: "recv: \(String(cString: strerror(errno)))") }
        pending += buffer.prefix(count)
        return count > 0
    }

    private static func index(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        return (start...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

/// `GET path` over HTTP/1.0 (the server closes the connection after its answer): the body of a
/// 200 response, or an error naming the status line.
func httpGet(port: UInt16, path: String, in network: PrivateNetwork, timeoutSeconds: Double) throws -> String {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    let response: String
    do {
        let connection = try LoopbackConnection(port: port, in: network)
        try connection.send(Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
        response = String(decoding: try connection.readToEnd(deadline: deadline), as: UTF8.self)
    } catch {
        throw RigPeerError(description: "GET \(path) from 127.0.0.1:\(port): \(error)")
    }
    guard let headerEnd = response.range(of: "\r\n\r\n") else {
        throw RigPeerError(description: "GET \(path): no HTTP header in \(response.prefix(80).debugDescription)")
    }
    let statusLine = response[..<headerEnd.lowerBound].prefix { $0 != "\r" }
    guard statusLine.split(separator: " ").dropFirst().first == "200" else {
        throw RigPeerError(description: "GET \(path): \(statusLine)")
    }
    return String(response[headerEnd.upperBound...])
}

/// The client side of a WebSocket (RFC 6455) for text messages: the upgrade handshake, masked
/// text frames out, unfragmented frames in. Enough for QLC+'s web API, without a WebSocket
/// dependency. The handshake's Sec-WebSocket-Accept is not checked: the peer is a local test
/// program, not a proxy that could answer from a cache. Not thread-safe.
final class WebSocketConnection {
    private let connection: LoopbackConnection

    init(port: UInt16, path: String, in network: PrivateNetwork, deadline: Date) throws {
        connection = try LoopbackConnection(port: port, in: network)
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        try connection.send(Array(("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        let header = String(decoding: try connection.read(through: Array("\r\n\r\n".utf8), deadline: deadline), as: UTF8.self)
        let statusLine = header.prefix { $0 != "\r" }
        guard statusLine.split(separator: " ").dropFirst().first == "101" else {
            throw RigPeerError(description: "WebSocket upgrade of \(path) refused: \(statusLine)")
        }
    }

    func send(text: String) throws {
        let payload = Array(text.utf8)
        var frame: [UInt8] = [0x81]  // FIN, text
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame.append(0x80 | 127); frame += (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        // A client must mask every frame it sends (RFC 6455 §5.3).
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try connection.send(frame)
    }

    /// The next text message; other frames (binary, ping, pong) are skipped.
    func receiveText(deadline: Date) throws -> String {
        while true {
            let head = try connection.read(count: 2, deadline: deadline)
            let opcode = head[0] & 0x0F
            var length = Int(head[1] & 0x7F)
            if length == 126 {
                length = try connection.read(count: 2, deadline: deadline).reduce(0) { $0 << 8 | Int($1) }
            } else if length == 127 {
                length = try connection.read(count: 8, deadline: deadline).reduce(0) { $0 << 8 | Int($1) }
            }
            let mask = head[1] & 0x80 != 0 ? try connection.read(count: 4, deadline: deadline) : []
            var payload = try connection.read(count: length, deadline: deadline)
            if !mask.isEmpty { payload = payload.enumerated().map { $0.element ^ mask[$0.offset % 4] } }
            switch opcode {
            case 0x1: return String(decoding: payload, as: UTF8.self)
            case 0x8: throw RigPeerError(description: "the WebSocket peer closed the connection")
            default: continue
            }
        }
    }
}

/// A connected TCP socket to 127.0.0.1:`port` in the calling thread's network namespace; each
/// read bounded by `receiveTimeoutSeconds` when given; `configure` runs before the connection
/// (socket options). The caller closes it. Tests only.
func connectToLoopback(port: UInt16, receiveTimeoutSeconds: Int? = nil, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw RigPeerError(description: "socket: \(String(cString: strerror(errno)))") }
    if let receiveTimeoutSeconds {
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
    configure(descriptor)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw RigPeerError(description: "connect to 127.0.0.1:\(port): \(reason)")
    }
    return descriptor
}
