import Foundation
import Glibc
import SpectrumTestSupport

/// `spectrum run` through RESTARTS restarts of its JACK server (SIGTERM and SIGKILL in turn,
/// down 1 s each time): how soon OSC frames resume, whether every connection comes back, and
/// whether memory stays flat. Issue 13's target: frames ≤ 2 s after the server is back,
/// connections restored, every time, over 20 restarts, flat memory.
enum ReconnectCost {
    struct ReconnectError: Error, CustomStringConvertible { let description: String }

    /// A moment set by the restarting thread, read by the receiving one.
    final class Moment: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Date?
        var date: Date? { lock.withLock { value } }
        func mark() { lock.withLock { value = Date() } }
    }

    static func residentKilobytes(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    static func table(spectrum: String, restarts: Int) throws -> String {
        let downSeconds = 1.0
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        var metronome = try JackMetronome(server: server)
        defer { metronome.stop() }
        let receiver = OSCReceiver()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: spectrum)
        process.arguments = ["run", "--server", server.name, "--connect", metronome.portName, "--osc", "127.0.0.1:\(receiver.port)", "--quiet"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }
        func firstBands(after moment: Date) -> OSCReceiver.Bundle? {
            receiver.bundles.first { $0.arrival > moment && $0.message("/spectrum/bands") != nil }
        }
        receiver.receive(timeoutSeconds: 10) { firstBands(after: .distantPast) != nil }
        guard firstBands(after: .distantPast) != nil else { throw ReconnectError(description: "spectrum sent no frames") }
        try server.connect("system:capture_1", "spectrum:in")
        // Warm up: a first restart, so the baseline memory includes what a reconnection keeps.
        var resumeAfterStart: [Double] = [], resumeAfterAnswer: [Double] = [], restored = 0, playersBack = 0, framesWhileDown = 0
        var memoryKilobytes: [Int] = []
        for index in 0...restarts {
            metronome.stop()
            let stoppedAt = Date()
            let launched = Moment(), ready = Moment()
            let restarting = Thread {
                try? server.restart(signal: index % 2 == 0 ? SIGTERM : SIGKILL, downSeconds: downSeconds, launched: { launched.mark() })
                ready.mark()
            }
            restarting.start()
            receiver.receive(timeoutSeconds: 20) { ready.date != nil && launched.date.flatMap(firstBands(after:)) != nil }
            guard let startedAt = launched.date, let answeredAt = ready.date, let resumed = firstBands(after: startedAt) else {
                throw ReconnectError(description: "restart \(index): no frames after the server came back")
            }
            let downUntil = stoppedAt.addingTimeInterval(downSeconds)
            framesWhileDown += receiver.bundles.filter { $0.arrival > stoppedAt.addingTimeInterval(0.2) && $0.arrival < downUntil && $0.message("/spectrum/bands") != nil }.count
            if index > 0 && server.connections(of: "spectrum:in") == ["system:capture_1"] { restored += 1 }
            metronome = try JackMetronome(server: server)
            let deadline = Date().addingTimeInterval(2)
            while Date() < deadline, Set(server.connections(of: "spectrum:in")) != ["system:capture_1", metronome.portName] { usleep(10_000) }
            receiver.drain(seconds: 0.5)
            guard index > 0 else {
                memoryKilobytes.append(residentKilobytes(process.processIdentifier))
                continue
            }
            if Set(server.connections(of: "spectrum:in")) == ["system:capture_1", metronome.portName] { playersBack += 1 }
            resumeAfterStart.append(resumed.arrival.timeIntervalSince(startedAt))
            resumeAfterAnswer.append(resumed.arrival.timeIntervalSince(answeredAt))
            memoryKilobytes.append(residentKilobytes(process.processIdentifier))
        }
        let start = Statistics(samples: resumeAfterStart), answer = Statistics(samples: resumeAfterAnswer)
        let growth = memoryKilobytes.last! - memoryKilobytes.first!
        var lines = ["| restarts (SIGTERM, SIGKILL in turn; down \(format(downSeconds, 1)) s) | frames resume after jackd is started: median / p90 / max | after jackd answers `jack_lsp`: median / max | frames while down | connection made by hand restored at once | returning player connected within 2 s | resident memory after the warm-up restart → after the last |",
                     "| --- | --- | --- | --- | --- | --- | --- |"]
        lines.append("| \(restarts) | \(format(start.percentile(0.5), 2)) / \(format(start.percentile(0.9), 2)) / \(format(start.maximum, 2)) s | \(format(answer.percentile(0.5), 2)) / \(format(answer.maximum, 2)) s | \(framesWhileDown) | \(restored) of \(restarts) | \(playersBack) of \(restarts) | \(memoryKilobytes.first!) → \(memoryKilobytes.last!) KiB (\(growth >= 0 ? "+" : "")\(growth) KiB) |")
        lines.append("")
        lines.append("Resident memory after each restart (KiB): " + memoryKilobytes.map(String.init).joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}
