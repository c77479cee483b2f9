import Foundation
import Glibc
import SpectrumTestSupport

/// Ableton Link against the click that drives it: `spectrum run --link` (release binary) inside
/// a private network namespace with a 120 BPM click (`ToneClient`) on a private jackd, and a
/// Python Link peer (LinkPython-extern) reporting the session's tempo and beat every 50 ms. Each
/// report is compared with where the click is on JACK's clock at that moment (its loop start,
/// polled every 20 ms, since JACK skips cycles on a loaded machine and the click skips with
/// them). The first 10 s (lock, the peer joining) are left out.
enum LinkTiming {
    /// Where the first click of the looped click train falls, from the loop's start.
    static let firstClickSeconds = 0.137
    struct LinkError: Error, CustomStringConvertible { let description: String }

    static func table(spectrum: String, seconds: Double) throws -> String {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let click = try ToneClient(serverName: server.name, clientName: "click", amplitude: 1,
                                   loop: TestSignals.clickLoop(bpm: 120, sampleRateHz: 48_000, offsetSeconds: firstClickSeconds).samples)
        defer { click.stop() }
        _ = try LinkPythonPeer.python()
        let process = Process()
        let commandLine = network.command([spectrum, "run", "--server", server.name, "--connect", click.outputPortName, "--link", "--quiet"])
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = commandLine
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }
        usleep(6_000_000)
        let peer = try LinkPythonPeer(network: network, bpm: 100)
        defer { peer.stop() }
        var loopStarts: [(jackNow: Double, loopStart: Double)] = []
        let started = Date()
        while Date().timeIntervalSince(started) < seconds + 4 {
            loopStarts.append((Double(LinkPythonPeer.jackClockMicroseconds()), Double(click.loopStartMicroseconds)))
            usleep(20_000)
        }
        let offset = LinkPythonPeer.linkMinusJackMicroseconds()
        let measuredFrom = loopStarts[0].jackNow + 4_000_000
        let samples = peer.samples.filter { $0.peers >= 1 && $0.hostMicroseconds - offset >= measuredFrom }
        guard samples.count > 20 else { throw LinkError(description: "only \(samples.count) reports from the Link peer") }
        let errors = samples.map { sample -> Double in
            let jackTime = sample.hostMicroseconds - offset
            let origin = (loopStarts.last { $0.jackNow <= jackTime }?.loopStart ?? loopStarts[0].loopStart) + firstClickSeconds * 1_000_000
            let clickBeats = (jackTime - origin) / 500_000
            var difference = (sample.beat - sample.beat.rounded(.down)) - (clickBeats - clickBeats.rounded(.down))
            difference -= difference.rounded()
            return difference * 500
        }
        let magnitudes = Statistics(samples: errors.map(abs))
        let tempoErrors = Statistics(samples: samples.map { abs($0.bpm - 120) })
        return [
            "| reports | peer's beat − click: mean (ms) | median abs | p95 abs | max abs | share within 20 ms | tempo error: median / max (BPM) |",
            "| --- | --- | --- | --- | --- | --- | --- |",
            "| \(samples.count) over \(Int(seconds)) s | \(format(errors.reduce(0, +) / Double(errors.count), 2)) | \(format(magnitudes.percentile(0.5), 2)) "
                + "| \(format(magnitudes.percentile(0.95), 2)) | \(format(magnitudes.maximum, 2)) "
                + "| \(format(100 * Double(errors.filter { abs($0) <= 20 }.count) / Double(errors.count), 1)) % "
                + "| \(format(tempoErrors.percentile(0.5), 3)) / \(format(tempoErrors.maximum, 3)) |",
        ].joined(separator: "\n")
    }
}
