import Foundation
import Testing

/// The built `spectrum` executable, run as a subprocess. It sits next to the test bundle in the
/// build products directory (SpectrumCLI is a dependency of this test target, so it is built
/// first); `SPECTRUM_BINARY` overrides the location.
enum SpectrumProcess {
    struct Result {
        var status: Int32
        var standardOutput: String
        var standardError: String
        var standardErrorLines: [Substring] { standardError.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
    }

    static var executableURL: URL {
        if let override = ProcessInfo.processInfo.environment["SPECTRUM_BINARY"] { return URL(fileURLWithPath: override) }
        let testBinary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent("spectrum")
    }

    /// Runs `spectrum arguments…` in `directory` with `environment` added, and waits for it.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> Result {
        let executable = executableURL
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "no spectrum binary at \(executable.path)")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var processEnvironment = ProcessInfo.processInfo.environment
        processEnvironment["SPECTRUM_PRESETS_DIR"] = nil
        processEnvironment.merge(environment) { $1 }
        process.environment = processEnvironment
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Drain both pipes concurrently so a large output cannot block the child.
        nonisolated(unsafe) var errorData = Data()
        let errorReader = Thread { errorData = error.fileHandleForReading.readDataToEndOfFile() }
        errorReader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorReader.isFinished { usleep(1000) }
        return Result(status: process.terminationStatus,
                      standardOutput: String(decoding: outputData, as: UTF8.self),
                      standardError: String(decoding: errorData, as: UTF8.self))
    }
}

/// A `spectrum` process left running while the test drives it (live commands).
final class RunningSpectrum {
    let process = Process()
    private let output = Pipe()
    private let error = Pipe()
    private let collected = CollectedOutput()
    private var readers: [Thread] = []

    /// `launcher` turns the full command line into the one to run (e.g.
    /// `PrivateNetwork.command`, so that spectrum runs inside a private network namespace).
    /// `environment` is added to this process's own.
    init(_ arguments: [String], environment: [String: String] = [:], launcher: ([String]) -> [String] = { $0 }) throws {
        let executable = SpectrumProcess.executableURL
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "no spectrum binary at \(executable.path)")
        let commandLine = launcher([executable.path] + arguments)
        process.executableURL = URL(fileURLWithPath: commandLine[0].hasPrefix("/") ? commandLine[0] : "/usr/bin/" + commandLine[0])
        process.arguments = Array(commandLine.dropFirst())
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let output = self.output, error = self.error, collected = self.collected
        readers = [
            Thread { collected.read(output.fileHandleForReading, into: \.output) },
            Thread { collected.read(error.fileHandleForReading, into: \.error) },
        ]
        try process.run()
        for reader in readers { reader.start() }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits until its standard error so far contains `text` (e.g. the line saying a socket is
    /// bound: what it receives before then is lost); false if not within `seconds`.
    func waitForStandardError(containing text: String, within seconds: Double = 10) -> Bool {
        eventually(within: seconds) { String(decoding: collected.snapshot(\.error), as: UTF8.self).contains(text) }
    }

    /// Waits for the exit; nil if it did not exit within `seconds` (then it is killed).
    func waitForExit(within seconds: Double) -> SpectrumProcess.Result? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        while readers.contains(where: { !$0.isFinished }) { usleep(1000) }
        return SpectrumProcess.Result(status: process.terminationStatus,
                                      standardOutput: String(decoding: collected.snapshot(\.output), as: UTF8.self),
                                      standardError: String(decoding: collected.snapshot(\.error), as: UTF8.self))
    }
}

/// What the reader threads collected so far, under a lock (read while they run).
private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    fileprivate var output = Data()
    fileprivate var error = Data()

    /// Appends what `handle` gives, as it comes, until its end.
    func read(_ handle: FileHandle, into stream: ReferenceWritableKeyPath<CollectedOutput, Data>) {
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { return }
            lock.withLock { self[keyPath: stream].append(chunk) }
        }
    }

    func snapshot(_ stream: KeyPath<CollectedOutput, Data>) -> Data { lock.withLock { self[keyPath: stream] } }
}

/// A temporary directory, removed when the value is released.
final class ScratchDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-cli-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func write(_ name: String, _ text: String) throws -> String {
        let path = path(name)
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
func eventually(within seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(20_000)
    }
    return true
}
