import Foundation
import CLo
import Glibc
import Synchronization

/// A WebSocket client as a browser connects, on a plain loopback socket: the HTTP upgrade, then
/// everything the server sends is read and counted (not parsed), or, for a stuck client, never
/// read at all. For tests and benchmarks of the web server. Thread-safe.
public final class RawWebSocketClient: @unchecked Sendable {
    public let descriptor: Int32
    /// Bytes read after the upgrade.
    public let bytes = Atomic<Int>(0)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Connects to 127.0.0.1:`port` and upgrades `path`; `receiveBufferBytes` shrinks the
    /// socket's receive window (a stuck phone).
    public init(port: Int, path: String = "/view", receiveBufferBytes: Int32? = nil) throws {
        descriptor = try connectToLoopback(port: UInt16(port)) { descriptor in
            if var size = receiveBufferBytes {
                _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        // The 101 response alone (the server sends nothing else before it).
        var response: [UInt8] = []
        var byte: UInt8 = 0
        while !response.suffix(4).elementsEqual([13, 10, 13, 10]), response.count < 4096, recv(descriptor, &byte, 1, 0) == 1 {
            response.append(byte)
        }
        guard String(decoding: response.prefix(12), as: UTF8.self) == "HTTP/1.1 101" else {
            throw Failure(description: "no 101 Switching Protocols: \(String(decoding: response, as: UTF8.self))")
        }
    }

    /// Reads and counts everything until the socket closes, on a thread of its own.
    public func drain() {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let length = recv(descriptor, &buffer, buffer.count, 0)
                guard length > 0 else { break }
                bytes.add(length, ordering: .relaxed)
            }
        }
        thread.start()
    }

    /// Reads one whole message the server sent (unmasked, unfragmented, as Spectrum sends):
    /// its opcode (1 text, 2 binary) and payload. Not with `drain()`. Throws when the socket
    /// closes or nothing arrives within `timeoutSeconds`.
    public func readMessage(timeoutSeconds: Int = 10) throws -> (opcode: UInt8, payload: [UInt8]) {
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let header = try read(2)
        var length = Int(header[1] & 0x7f)
        if length == 126 { length = try read(2).reduce(0) { $0 << 8 | Int($1) } }
        else if length == 127 { length = try read(8).reduce(0) { $0 << 8 | Int($1) } }
        return (header[0] & 0x0f, try read(length))
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let length = result.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + filled, count - filled, 0) }
            guard length > 0 else { throw Failure(description: "the WebSocket closed or timed out (errno \(errno))") }
            filled += length
            bytes.add(length, ordering: .relaxed)
        }
        return result
    }

    public func close() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }
}
