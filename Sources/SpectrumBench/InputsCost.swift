import CJack
import Foundation
import Glibc
import SpectrumLive
import SpectrumTestSupport
import Synchronization
import SpectrumCore

/// Several inputs in one client (`--input`), against as many separate `spectrum` processes:
/// the process callback's cost at 64 frames, the CPU of the whole thing, and the xruns of a
/// private jackd at 64 frames with and without spectrum. 48 kHz, a 220 Hz tone into every input.
enum InputsCost {
    /// The production callback with 1, 4 and 16 inputs in one `LiveClient` at 64 frames
    /// (`timedProcess` around it), `seconds` each after one second of warming up.
    static func callbackTable(seconds: Double) throws -> String {
        var rows = ["| inputs in one client | hops | callbacks | mean µs | p99 µs | max µs | max, % of the 1.33 ms period | most frames completed in one callback | xruns seen by the client |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for (inputCount, staggered) in [(1, true), (4, true), (4, false), (16, true), (16, false)] {
            CallbackTimings.count.store(0, ordering: .relaxed)
            let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 64)
            defer { server.stop() }
            let tone = try ToneClient(serverName: server.name, frequencyHz: 220, amplitude: 0.4)
            defer { tone.stop() }
            var configuration = LiveConfiguration()
            configuration.serverName = server.name
            configuration.connections = .none
            configuration.staggersInputHops = staggered
            if inputCount > 1 { configuration.inputs = (1...inputCount).map { LiveInput(name: "input\($0)", sources: [tone.outputPortName]) } }
            else { configuration.connections = .ports([tone.outputPortName]) }
            let client = try LiveClient(configuration: configuration, processCallback: timedProcess)
            defer { client.stop() }
            var frame = AnalysisFrame()
            usleep(1_000_000)
            while client.popFrame(into: &frame) {}
            let first = CallbackTimings.count.load(ordering: .acquiring)
            let xrunsBefore = client.status().xruns
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                usleep(100_000)
                while client.popFrame(into: &frame) {}
            }
            let status = client.status()
            client.stop()
            let last = CallbackTimings.count.load(ordering: .acquiring)
            let durations = Statistics(samples: (first..<last).map { Double(CallbackTimings.durations[$0]) / 1000 })
            let periodMicroseconds = 64.0 / 48_000 * 1_000_000
            rows.append("| \(inputCount) | \(inputCount == 1 ? "–" : staggered ? "staggered" : "not staggered") | \(durations.samples.count) | \(format(durations.mean)) | \(format(durations.percentile(0.99))) | \(format(durations.maximum)) | \(format(100 * durations.maximum / periodMicroseconds, 1)) % | \(status.mostFramesInOneCycle) | \(status.xruns - xrunsBefore) |")
        }
        return rows.joined(separator: "\n")
    }

    /// CPU (schedstat, % of one core) of N inputs in one `spectrum run` against N separate
    /// `spectrum run` processes, each with one `--osc` target on loopback, and of jackd itself,
    /// at `periodFrames`; `seconds` each after five seconds of start-up.
    static func cpuTable(spectrum: String, seconds: Double, periodFrames: Int = 256) throws -> String {
        var rows = ["| inputs | how | spectrum process(es), % of one core | jackd, % of one core | together | frames/s sent (all inputs) |",
                    "| --- | --- | --- | --- | --- | --- |"]
        for inputCount in [1, 4, 16] {
            for separate in [false, true] where !(separate && inputCount == 1) {
                let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: periodFrames)
                defer { server.stop() }
                let tone = try ToneClient(serverName: server.name, frequencyHz: 220, amplitude: 0.4)
                defer { tone.stop() }
                let receiver = try PublisherCost.Receivers(count: 1)
                defer { receiver.stop() }
                let osc = ["--osc", receiver.targets[0].description, "--quiet"]
                let commands: [[String]] = separate
                    ? (1...inputCount).map { ["run", "--server", server.name, "--name", "spectrum\($0)", "--prefix", "/input\($0)", "--connect", tone.outputPortName] + osc }
                    : [["run", "--server", server.name] + (inputCount == 1 ? ["--connect", tone.outputPortName]
                        : (1...inputCount).flatMap { ["--input", "input\($0)=\(tone.outputPortName)"] }) + osc]
                let processes = try commands.map { try launch(spectrum, $0) }
                defer { for process in processes { stop(process) } }
                usleep(5_000_000)
                guard processes.allSatisfy(\.isRunning) else { throw BenchError("a spectrum run exited during start-up") }
                let jackd = server.processIdentifier
                let pids = processes.map(\.processIdentifier)
                let before = pids.map { ThreadSample.all(pid: $0) }, jackBefore = ThreadSample.all(pid: jackd)
                let datagramsBefore = receiver.datagrams.load(ordering: .relaxed)
                let start = nowNanoseconds()
                usleep(UInt32(seconds * 1_000_000))
                let after = pids.map { ThreadSample.all(pid: $0) }, jackAfter = ThreadSample.all(pid: jackd)
                let elapsed = Double(nowNanoseconds() - start) / 1e9
                let datagrams = receiver.datagrams.load(ordering: .relaxed) - datagramsBefore
                var ours = ThreadUse(), jack = ThreadUse()
                for (begin, end) in zip(before, after) {
                    for (tid, sample) in end { if let first = begin[tid] { ours.add(before: first, after: sample, seconds: elapsed) } }
                }
                for (tid, sample) in jackAfter { if let first = jackBefore[tid] { jack.add(before: first, after: sample, seconds: elapsed) } }
                let how = separate ? "\(inputCount) separate processes" : (inputCount == 1 ? "one process, one input" : "one process, \(inputCount) inputs")
                rows.append("| \(inputCount) | \(how) | \(format(ours.percent, 2)) % | \(format(jack.percent, 2)) % | **\(format(ours.percent + jack.percent, 2)) %** | \(format(Double(datagrams) / elapsed, 0)) |")
            }
        }
        return rows.joined(separator: "\n")
    }

    /// Xruns of a private jackd at 64 frames over `seconds`, counted by an observer client
    /// (an xrun callback, no process callback): the server alone; with a JACK client that only
    /// writes a sine (the tone client); with two of them (as many clients in the graph as the
    /// next row, none doing any work); with the tone and one `spectrum run`; with the tone and
    /// one `spectrum run` of 4 inputs.
    static func xrunTable(spectrum: String, seconds: Double) throws -> String {
        var rows = ["| at 64 frames, \(format(seconds, 0)) s | xruns | per minute |", "| --- | --- | --- |"]
        for setup in ["jackd alone", "jackd + a sine client", "jackd + two sine clients", "jackd + a sine client + one spectrum run",
                      "jackd + a sine client + spectrum run with 4 inputs"] {
            let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 64)
            defer { server.stop() }
            let observer = try XrunObserver(serverName: server.name)
            defer { observer.stop() }
            let tone = setup == "jackd alone" ? nil : try ToneClient(serverName: server.name, frequencyHz: 220, amplitude: 0.4)
            defer { tone?.stop() }
            let second = setup.hasSuffix("two sine clients") ? try ToneClient(serverName: server.name, clientName: "tone2", frequencyHz: 330, amplitude: 0.4) : nil
            defer { second?.stop() }
            var arguments: [String]?
            if let tone, setup.hasSuffix("one spectrum run") { arguments = ["run", "--server", server.name, "--connect", tone.outputPortName, "--quiet"] }
            if let tone, setup.hasSuffix("4 inputs") {
                arguments = ["run", "--server", server.name, "--quiet"] + (1...4).flatMap { ["--input", "input\($0)=\(tone.outputPortName)"] }
            }
            let process = try arguments.map { try launch(spectrum, $0) }
            defer { process.map(stop) }
            usleep(3_000_000)
            let before = observer.xruns
            usleep(UInt32(seconds * 1_000_000))
            let xruns = observer.xruns - before
            if let process, !process.isRunning { throw BenchError("spectrum run exited while measured") }
            rows.append("| \(setup) | \(xruns) | \(format(Double(xruns) * 60 / seconds, 1)) |")
        }
        return rows.joined(separator: "\n")
    }

    private static func launch(_ spectrum: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: spectrum)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private static func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
    }
}

/// A JACK client with only an xrun callback (no process callback, no ports): counts the
/// server's xruns.
final class XrunObserver: @unchecked Sendable {
    private let client: OpaquePointer
    private let counter: UnsafeMutablePointer<Atomic<UInt64>>

    init(serverName: String) throws {
        var status = jack_status_t(0)
        guard let client = serverName.withCString({ spectrum_jack_client_open("xrun-observer", JackNoStartServer, &status, $0) }) else {
            throw BenchError("xrun observer: cannot open a JACK client (status 0x\(String(status.rawValue, radix: 16)))")
        }
        counter = .allocate(capacity: 1)
        counter.initialize(to: Atomic(0))
        jack_set_xrun_callback(client, observerXrun, counter)
        guard jack_activate(client) == 0 else {
            jack_client_close(client)
            throw BenchError("xrun observer: cannot activate")
        }
        self.client = client
    }

    var xruns: UInt64 { counter.pointee.load(ordering: .relaxed) }

    /// Closes the client, then frees the counter (no callback can run any more). Once.
    func stop() {
        jack_deactivate(client)
        jack_client_close(client)
        counter.deinitialize(count: 1)
        counter.deallocate()
    }
}

private func observerXrun(_ argument: UnsafeMutableRawPointer?) -> Int32 {
    argument?.assumingMemoryBound(to: Atomic<UInt64>.self).pointee.add(1, ordering: .relaxed)
    return 0
}
