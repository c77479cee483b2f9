// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc

/// A plain HTTP/1.0 GET on 127.0.0.1 in the test's own network (for servers bound to loopback,
/// like `--http 127.0.0.1:PORT`; inside a `PrivateNetwork` use `httpGet(port:path:in:)`).
/// Blocks, at most 10 s per read; tests only.
public enum LoopbackHTTP {
    /// `GET path` over HTTP/1.0 on 127.0.0.1 (the server closes after its answer): the status
    /// code and the body.
    public static func get(port: Int, path: String) throws -> (status: Int, body: String) {
        let descriptor = try connectToLoopback(port: UInt16(port), receiveTimeoutSeconds: 10)
        defer { close(descriptor) }
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
