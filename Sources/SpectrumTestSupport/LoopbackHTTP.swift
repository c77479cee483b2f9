// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc

/// A plain HTTP/1.0 GET on 127.0.0.1 in the test's own network (for servers bound to loopback,
/// like `--http 127.0.0.1:PORT`; inside a `PrivateNetwork` use `httpGet(port:path:in:)`).
/// Blocks, at most 10 s per read; tests only.
public enum LoopbackHTTP {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `GET path` over HTTP/1.0 on 127.0.0.1 (the server closes after its answer): the status
    /// code and the body.
    public static func get(port: Int, path: String) throws -> (status: Int, body: String) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(description: "connect to 127.0.0.1:\(port) failed (errno \(errno))") }
        _ = "GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".withCString { send(descriptor, $0, strlen($0), 0) }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            response += buffer[0..<count]
        }
        let text = String(decoding: response, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = Int(parts[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
