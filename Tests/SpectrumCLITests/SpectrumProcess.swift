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
