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
    /// The rate of the running server (a restart may change it).
    public var sampleRateHz: Int { current.withLock { $0.sampleRateHz } }
    public var processIdentifier: pid_t { current.withLock { $0.process.processIdentifier } }
    /// jackd's stdout and stderr (for failure messages).
    public let logURL: URL
    private let current: Mutex<(process: Process, sampleRateHz: Int)>
    private var process: Process { current.withLock { $0.process } }
    private let stopped = Mutex<Bool>(false)

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    private static let counter = Atomic<Int>(0)

    /// Starts the server and waits until `jack_lsp` can talk to it (polled every 20 ms).
    public init(sampleRateHz: Int = 48_000, periodFrames: Int = 256, readyTimeoutSeconds: Double = 10) throws {
        let serial = Self.counter.add(1, ordering: .relaxed).newValue
        name = "spectrum-test-\(getpid())-\(serial)-\(UInt32.random(in: 0...UInt32.max))"
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("\(name).log")
        current = Mutex((try Self.launch(name: name, sampleRateHz: sampleRateHz, periodFrames: periodFrames, logURL: logURL), sampleRateHz))
        try waitUntilReady(timeoutSeconds: readyTimeoutSeconds)
    }

    /// Stops the server with `signal` (as a crash or a restart by hand would), leaves it down
    /// `downSeconds`, then starts a server of the same name, possibly at another rate and period,
    /// and waits until it answers. `launched` is called just after the new jackd is spawned.
    /// `pollsUntilReady: false` returns once it is spawned, for a caller that waits on its own
    /// client's reconnection instead: a `jack_lsp` closing while a client of this process
    /// opens leaves libjack's stale wake-up entry (jack2 issue 721, docs/live.md), which stalls
    /// a client of another process started later downstream of ours.
    public func restart(signal: Int32 = SIGTERM, downSeconds: Double = 0, sampleRateHz: Int? = nil, periodFrames: Int = 256,
                        readyTimeoutSeconds: Double = 10, pollsUntilReady: Bool = true, launched: () -> Void = {}) throws {
        let (old, oldRate) = current.withLock { ($0.process, $0.sampleRateHz) }
        if old.isRunning { kill(old.processIdentifier, signal) }
        old.waitUntilExit()
        if downSeconds > 0 { usleep(UInt32(downSeconds * 1_000_000)) }
        let rate = sampleRateHz ?? oldRate
        let fresh = try Self.launch(name: name, sampleRateHz: rate, periodFrames: periodFrames, logURL: logURL)
        launched()
        current.withLock { $0 = (fresh, rate) }
        if pollsUntilReady { try waitUntilReady(timeoutSeconds: readyTimeoutSeconds) }
    }

    private static func launch(name: String, sampleRateHz: Int, periodFrames: Int, logURL: URL) throws -> Process {
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.tool("jackd"))
        // `-r` after `-d dummy` is the sample rate (before `-d` it would mean "no realtime").
        process.arguments = ["-n", name, "-d", "dummy", "-r", String(sampleRateHz), "-p", String(periodFrames)]
        process.environment = Self.environment(serverName: name)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? log.close()
        Self.watch(server: process.processIdentifier)
        return process
    }

    private func waitUntilReady(timeoutSeconds readyTimeoutSeconds: Double) throws {
        let process = self.process
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

    /// `jack_connect SOURCE DESTINATION` from outside (as a patchbay would).
    public func connect(_ source: String, _ destination: String) throws {
        try Self.runTool("jack_connect", [source, destination], serverName: name)
    }

    /// `jack_disconnect SOURCE DESTINATION` from outside.
    public func disconnect(_ source: String, _ destination: String) throws {
        try Self.runTool("jack_disconnect", [source, destination], serverName: name)
    }

    /// The ports connected to `port` (`jack_lsp -c`), [] when it has none or does not exist.
    public func connections(of port: String) -> [String] {
        guard let text = try? listPorts(["-c", port]) else { return [] }
        return text.split(separator: "\n").filter { $0.hasPrefix(" ") || $0.hasPrefix("\t") }.map { $0.trimmingCharacters(in: .whitespaces) }
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
        let process = self.process
        if process.isRunning { kill(process.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
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
        successor.arguments = ["-n", name, "-d", "dummy", "-p", "256"]
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

/// `jack_metro` (jackd2's click generator) as a separate process on a private server: a source
/// that dies with the server and comes back when started again, as a real player would.
/// Stopped by PID. For tests and benchmarks.
public final class JackMetronome: @unchecked Sendable {
    /// `NAME:BPM_bpm`, e.g. `metro:120_bpm`.
    public let portName: String
    private let peer: PeerProcess

    /// Starts it and waits (up to `readyTimeoutSeconds`) until its port exists.
    public init(server: PrivateJackServer, bpm: Int = 120, name: String = "metro", readyTimeoutSeconds: Double = 10) throws {
        portName = "\(name):\(bpm)_bpm"
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("\(server.name)-\(name)-\(UInt32.random(in: 0...UInt32.max)).log")
        peer = try PeerProcess(name: "jack_metro", argv: [PrivateJackServer.tool("jack_metro"), "-b", String(bpm), "-n", name],
                               environment: PrivateJackServer.environment(serverName: server.name), logURL: logURL)
        let deadline = Date().addingTimeInterval(readyTimeoutSeconds)
        while (try? server.listPorts())?.contains(portName) != true {
            try peer.checkRunning(during: "start-up")
            guard Date() < deadline else {
                peer.stop()
                throw RigPeerError(description: "jack_metro: no port \(portName) after \(readyTimeoutSeconds) s: \(peer.logTail())")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    public func stop() {
        peer.stop(graceSeconds: 2)
        try? FileManager.default.removeItem(at: peer.logURL)
    }
}
