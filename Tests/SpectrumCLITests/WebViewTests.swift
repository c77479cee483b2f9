import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// `spectrum run --http` end to end, seen from outside: a private jackd plays a 440 Hz tone and
/// a click (jack_metro) into spectrum, which serves the web view and OSCQuery inside a private
/// network namespace; headless Chromium and python-oscquery (Tests/WebChecks/web_check.py, in the
/// venv of scripts/web-test-env) run in the same namespace, so nothing they do can leave the machine.
@Suite(.serialized, .enabled(if: PrivateNetwork.unavailableReason == nil, "needs root, unshare, nsenter and ip for a private network namespace"))
struct WebViewTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Any port: the namespace is private, nothing else listens there.
    static let httpPort = 18_480
    static let controlPort = 17_771
    /// A4: an octave under the click (jack_metro's 880 Hz), so the two never share a band, and a note for the tuner.
    static let toneHz = 440.0

    /// The venv's python (created on first use by scripts/web-test-env).
    static func python() throws -> String {
        let process = Process()
        process.executableURL = repository.appendingPathComponent("scripts/web-test-env")
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let path = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "scripts/web-test-env failed")
        return path
    }

    /// Runs web_check.py `arguments` against a fresh spectrum on a private jackd; returns its
    /// exit status and output. Without `namedInputs` spectrum hears the tone and a click on one
    /// unnamed input; with them, each named input hears its own tone (Hz) alone.
    static func check(_ arguments: [String], sampleRateHz: Int = 48_000,
                      namedInputs: [(name: String, toneHz: Double)] = []) throws -> (status: Int32, output: String) {
        let python = try python()
        let server = try PrivateJackServer(sampleRateHz: sampleRateHz, periodFrames: 256)
        defer { server.stop() }
        var sources: [String] = []
        var tones: [ToneClient] = []
        defer { tones.forEach { $0.stop() } }
        var metronome: JackMetronome?
        defer { metronome?.stop() }
        if namedInputs.isEmpty {
            tones.append(try ToneClient(serverName: server.name, frequencyHz: toneHz, amplitude: 0.4))
            let click = try JackMetronome(server: server, bpm: 120)
            metronome = click
            sources = ["--connect", tones[0].outputPortName, "--connect", click.portName]
        } else {
            for input in namedInputs {
                let tone = try ToneClient(serverName: server.name, clientName: "tone-\(input.name)", frequencyHz: input.toneHz, amplitude: 0.4)
                tones.append(tone)
                sources += ["--input", "\(input.name)=\(tone.outputPortName)"]
            }
        }
        let network = try PrivateNetwork()
        defer { network.stop() }
        let spectrum = try RunningSpectrum(["run", "--server", server.name] + sources
                                           + ["--http", "127.0.0.1:\(httpPort)", "--control", "127.0.0.1:\(controlPort)", "--duration", "120", "--quiet"],
                                           launcher: network.command)
        let checker = Process()
        let commandLine = network.command([python, repository.appendingPathComponent("Tests/WebChecks/web_check.py").path] + arguments)
        checker.executableURL = URL(fileURLWithPath: "/usr/bin/" + commandLine[0])
        checker.arguments = Array(commandLine.dropFirst())
        let output = Pipe()
        checker.standardOutput = output
        checker.standardError = output
        try checker.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        checker.waitUntilExit()
        spectrum.signal(SIGINT)
        let ending = spectrum.waitForExit(within: 15)
        #expect(ending?.status == 0, "spectrum: \(ending?.standardError ?? "did not exit")")
        return (checker.terminationStatus, text)
    }

    @Test func theWebViewDrawsEveryModeFromTheFramesAndRequestsNothingOutside() throws {
        // SPECTRUM_WEB_SHOTS=DIR keeps the screenshots there to look at; otherwise they stay
        // (in the temporary directory) only when the check failed.
        let kept = ProcessInfo.processInfo.environment["SPECTRUM_WEB_SHOTS"]
        let shots = kept.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-web-shots-\(getpid())")
        let result = try Self.check(["view", "http://127.0.0.1:\(Self.httpPort)/", "--tone-hz", String(Self.toneHz), "--shots", shots.path])
        if result.status == 0, kept == nil { try? FileManager.default.removeItem(at: shots) }
        #expect(result.status == 0, "\(result.output)\nscreenshots: \(shots.path)")
        #expect(result.output.contains("ok: bars: the tallest column"), "\(result.output)")
        #expect(result.output.contains("requests of the page went to the server"), "\(result.output)")
    }

    @Test func aPageAsksForANamedInputAndIsToldOfAnUnknownName() throws {
        let kept = ProcessInfo.processInfo.environment["SPECTRUM_WEB_SHOTS"]
        let shots = kept.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-web-input-shots-\(getpid())")
        // Two octaves apart: never one band.
        let result = try Self.check(["view-input", "http://127.0.0.1:\(Self.httpPort)/", "--input", "high", "--tone-hz", "1760",
                                     "--first-tone-hz", "220", "--shots", shots.path],
                                    namedInputs: [("low", 220), ("high", 1760)])
        if result.status == 0, kept == nil { try? FileManager.default.removeItem(at: shots) }
        #expect(result.status == 0, "\(result.output)\nscreenshots: \(shots.path)")
        #expect(result.output.contains("ok: ?input=high: the selector shows high"), "\(result.output)")
        #expect(result.output.contains("ok: ?input=no-such-input: the selector shows low"), "\(result.output)")
        #expect(result.output.contains("ok: picking low in the selector: the URL's query is ?input=low"), "\(result.output)")
        #expect(result.output.components(separatedBy: "ok: bars: the tallest column").count == 4, "\(result.output)")
    }

    @Test func oscQueryClientsReadTheTreeAndListenToTheBands() throws {
        let result = try Self.check(["oscquery", "http://127.0.0.1:\(Self.httpPort)/", "--control-port", String(Self.controlPort),
                                     "--spectrum", SpectrumProcess.executableURL.path])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("ok: LISTEN /spectrum/bands"), "\(result.output)")
        #expect(result.output.contains("ok: unknown paths are 404"), "\(result.output)")
    }

    @Test func aBadHttpValueIsOneLineNamingTheOption() throws {
        for value in ["0", "70000", "host:port", "127.0.0.1:"] {
            let result = try SpectrumProcess.run(["run", "--http", value])
            #expect(result.status != 0)
            #expect(result.standardErrorLines.first?.contains("--http \(value): expected [HOST:]PORT") == true, "\(result.standardError)")
        }
    }
}
