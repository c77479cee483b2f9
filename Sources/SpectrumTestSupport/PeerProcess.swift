// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc
import SpectrumSubprocess
import Synchronization

/// Why a rig peer (olad, qlcplus) could not start or answer: one line, with the end of its log.
public struct RigPeerError: Error, CustomStringConvertible {
    public let description: String
}

/// A peer program started for a test: its output in a log file, stopped by PID (never by name),
/// and stopped by a watchdog if the test process dies first, so a crashed run leaves no daemon
/// behind. Allocates, spawns processes; for tests only. Thread-safe.
final class PeerProcess: @unchecked Sendable {
    let name: String
    let processIdentifier: pid_t
    let logURL: URL
    private let process: Process
    private let stopped = Mutex<Bool>(false)

    /// Starts `argv` (already prefixed by `PrivateNetwork.command`) through `/usr/bin/env`, which
    /// searches PATH and execs, as do nsenter and setpriv: `processIdentifier` is the peer itself.
    init(name: String, argv: [String], environment: [String: String], logURL: URL) throws {
        self.name = name
        self.logURL = logURL
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil) else {
            throw RigPeerError(description: "\(name): cannot create its log \(logURL.path)")
        }
        let log = try FileHandle(forWritingTo: logURL)
        defer { try? log.close() }
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = argv
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        // Without: QLC+ started from a test's worker thread ignored `stop()`'s SIGTERM.
        try process.runWithNoSignalBlocked()
        processIdentifier = process.processIdentifier
        Self.watch(peer: processIdentifier)
    }

    deinit { stop() }

    /// Throws if the peer has exited, naming its status and the end of its log.
    func checkRunning(during phase: String) throws {
        guard !process.isRunning else { return }
        throw RigPeerError(description: "\(name) exited \(phase) (status \(process.terminationStatus)): \(logTail())")
    }

    /// SIGTERM, up to `graceSeconds` to exit, then SIGKILL. Idempotent.
    func stop(graceSeconds: Double = 5) {
        let first = stopped.withLock { isStopped in
            defer { isStopped = true }
            return !isStopped
        }
        guard first else { return }
        if process.isRunning { kill(processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(graceSeconds)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// The last lines of the peer's log, joined on one line for an error message.
    func logTail(lines: Int = 5) -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        let tail = text.split(separator: "\n").suffix(lines).joined(separator: " | ")
        return tail.isEmpty ? "(no output)" : tail
    }

    /// A detached shell that stops the peer by PID within half a second of the test process
    /// dying; it exits by itself once the peer is gone.
    private static func watch(peer: pid_t) {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \(getpid()) 2>/dev/null && kill -0 \(peer) 2>/dev/null; do sleep 0.5; done; kill -TERM \(peer) 2>/dev/null; exit 0"]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }
}

/// A port on 127.0.0.1 that nothing in `network` uses at the moment (bound to port 0 there, read,
/// closed), for a peer to listen on. `type` is `SOCK_STREAM` or `SOCK_DGRAM`.
func freeLoopbackPort(_ type: __socket_type, in network: PrivateNetwork) throws -> UInt16 {
    try network.run {
        let descriptor = socket(AF_INET, Int32(type.rawValue), 0)
        guard descriptor >= 0 else { throw RigPeerError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw RigPeerError(description: "no free loopback port in the private network: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// A fresh directory under the system temporary directory, named after `prefix`, this process
/// and a random number, so concurrent tests never share one.
func makeTemporaryDirectory(prefix: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("\(prefix)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    return url
}
