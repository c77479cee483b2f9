import Foundation
import Synchronization

/// A private, headless JACK server for tests: `jackd -n NAME -d dummy -r RATE -p PERIOD`, with
/// a unique name so parallel tests never share a server, stopped by PID (never by process name).
///
/// The dummy driver runs process() at real pace with silent `system:capture_1/2` and
/// `system:playback_1/2`. Allocates, spawns processes; for tests and benchmarks only.
/// Thread-safe.
public final class PrivateJackServer: @unchecked Sendable {
    /// The server name: pass it as `serverName` to clients, or `JACK_DEFAULT_SERVER` to tools.
    public let name: String
    public let sampleRateHz: Int
    public let processIdentifier: pid_t
    /// jackd's stdout and stderr (for failure messages).
    public let logURL: URL
    private let process: Process
    private let stopped = Mutex<Bool>(false)

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    private static let counter = Atomic<Int>(0)

    /// Starts the server and waits until `jack_lsp` can talk to it (polled every 20 ms).
    public init(sampleRateHz: Int = 48_000, periodFrames: Int = 256, readyTimeoutSeconds: Double = 10) throws {
        let serial = Self.counter.add(1, ordering: .relaxed).newValue
        name = "spectrum-test-\(getpid())-\(serial)-\(UInt32.random(in: 0...UInt32.max))"
        self.sampleRateHz = sampleRateHz
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("\(name).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.tool("jackd"))
        // `-r` after `-d dummy` is the sample rate (before `-d` it would mean "no realtime").
        process.arguments = ["-n", name, "-d", "dummy", "-r", String(sampleRateHz), "-p", String(periodFrames)]
        process.environment = Self.environment(serverName: name)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        processIdentifier = process.processIdentifier
        try? log.close()
        Self.watch(server: processIdentifier)

        let deadline = Date().addingTimeInterval(readyTimeoutSeconds)
        while true {
            if !process.isRunning {
                throw StartError(description: "jackd exited during start-up (status \(process.terminationStatus)): \(logTail())")
            }
            if (try? Self.runTool("jack_lsp", [], serverName: name)) != nil { break }
            if Date() > deadline {
                stop()
                throw StartError(description: "jackd '\(name)' not ready after \(readyTimeoutSeconds) s: \(logTail())")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// Changes the period while running (`jack_bufsize`).
    public func setBufferSize(_ frames: Int) throws {
        _ = try Self.runTool("jack_bufsize", [String(frames)], serverName: name)
    }

    /// Output of `jack_lsp ARGUMENTS` against this server.
    public func listPorts(_ arguments: [String] = []) throws -> String {
        try Self.runTool("jack_lsp", arguments, serverName: name)
    }

    /// Stops the server by PID: `signal` (SIGTERM by default), wait up to 5 s, then SIGKILL.
    /// Idempotent.
    public func stop(signal: Int32 = SIGTERM) {
        let first = stopped.withLock { isStopped in
            defer { isStopped = true }
            return !isStopped
        }
        guard first else { return }
        if process.isRunning { kill(processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL {
            reclaimRegistrySlot()
        }
        try? FileManager.default.removeItem(at: logURL)
    }

    /// A jackd that dies by SIGKILL keeps its slot in JACK's shared server registry (8 slots per
    /// machine), so killed test servers would soon stop every later server from starting. jackd
    /// reclaims a dead server's slot when a server of the same name starts: start one and stop
    /// it cleanly.
    private func reclaimRegistrySlot() {
        let successor = Process()
        successor.executableURL = URL(fileURLWithPath: Self.tool("jackd"))
        successor.arguments = ["-n", name, "-d", "dummy", "-r", String(sampleRateHz), "-p", "256"]
        successor.environment = Self.environment(serverName: name)
        successor.standardInput = FileHandle.nullDevice
        successor.standardOutput = FileHandle.nullDevice
        successor.standardError = FileHandle.nullDevice
        guard (try? successor.run()) != nil else { return }
        let deadline = Date().addingTimeInterval(5)
        while successor.isRunning && Date() < deadline && (try? Self.runTool("jack_lsp", [], serverName: name)) == nil {
            usleep(20_000)
        }
        if successor.isRunning { kill(successor.processIdentifier, SIGTERM) }
        successor.waitUntilExit()
    }

    public var isRunning: Bool { process.isRunning }

    /// If the test process dies without `stop()` (a crash), a detached shell stops the server
    /// by PID within half a second, so crashed runs leave no servers behind (JACK2 allows only
    /// 8 per machine). It exits by itself once the server is gone.
    private static func watch(server: pid_t) {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \(getpid()) 2>/dev/null && kill -0 \(server) 2>/dev/null; do sleep 0.5; done; kill -TERM \(server) 2>/dev/null; exit 0"]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }

    private func logTail() -> String {
        let text = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }

    /// Environment for JACK tools: this server, and never auto-start another one.
    static func environment(serverName: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["JACK_DEFAULT_SERVER"] = serverName
        environment["JACK_NO_START_SERVER"] = "1"
        return environment
    }

    static func tool(_ name: String) -> String {
        for directory in ["/usr/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        return "/usr/bin/\(name)"
    }

    /// Runs a JACK tool against `serverName`; its stdout, or an error when it exits non-zero.
    @discardableResult
    static func runTool(_ name: String, _ arguments: [String], serverName: String) throws -> String {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: Self.tool(name))
        child.arguments = arguments
        child.environment = environment(serverName: serverName)
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        child.standardInput = FileHandle.nullDevice
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        guard child.terminationStatus == 0 else {
            throw StartError(description: "\(name) \(arguments.joined(separator: " ")) exited with \(child.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
