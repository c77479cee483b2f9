import Foundation
import Glibc

/// `jack_midi_dump -r NAME` (jackd2's MIDI monitor) as a separate process on a private server:
/// every MIDI event reaching `NAME:input`, with the frames since the previous event. Stopped by
/// PID. For tests and benchmarks.
public final class JackMidiDump: @unchecked Sendable {
    /// The monitor's input port, e.g. `dump:input`.
    public let inputPortName: String
    private let peer: PeerProcess

    /// One MIDI event: its frame (counted from the first event, at 0) and its bytes.
    public struct Event: Equatable, Sendable {
        public var frame: Int
        public var bytes: [UInt8]
        public var status: UInt8 { bytes.first ?? 0 }
    }

    /// Starts it and waits (up to `readyTimeoutSeconds`) until its port exists.
    public init(server: PrivateJackServer, name: String = "dump", readyTimeoutSeconds: Double = 10) throws {
        inputPortName = "\(name):input"
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("\(server.name)-\(name)-\(UInt32.random(in: 0...UInt32.max)).log")
        // Line-buffered (coreutils' stdbuf): what it printed is in the log even if it must be
        // killed after its grace time on a loaded machine (stdio would lose a full buffer).
        peer = try PeerProcess(name: "jack_midi_dump", argv: ["/usr/bin/stdbuf", "-oL", PrivateJackServer.tool("jack_midi_dump"), "-r", name],
                               environment: PrivateJackServer.environment(serverName: server.name), logURL: logURL)
        try waitForPort(inputPortName, server: server, peer: peer, timeoutSeconds: readyTimeoutSeconds)
    }

    deinit { stop() }

    /// The events printed so far, while it runs (an unfinished last line left out). The monitor
    /// prints from a thread of its own, behind the JACK cycles, and `stop()` kills it without
    /// printing what it holds: poll this until the events expected are there, then stop it.
    public func events() -> [Event] {
        let text = (try? String(contentsOf: peer.logURL, encoding: .utf8)) ?? ""
        return Self.parse(String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)]))
    }

    /// Stops the monitor (so its output is complete) and returns every event it printed.
    public func stopAndReadEvents() -> [Event] {
        peer.stop(graceSeconds: 2)
        return Self.parse((try? String(contentsOf: peer.logURL, encoding: .utf8)) ?? "")
    }

    /// Lines like `+1000: f8` or `    +0: f2 00 00`; the first event sits at frame 0.
    static func parse(_ text: String) -> [Event] {
        var events: [Event] = []
        var frame = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let step = Int(parts[0].trimmingCharacters(in: .whitespaces).dropFirst()),
                  parts[0].trimmingCharacters(in: .whitespaces).hasPrefix("+") else { continue }
            let bytes = parts[1].split(separator: " ").compactMap { UInt8($0, radix: 16) }
            guard !bytes.isEmpty else { continue }
            frame = events.isEmpty ? 0 : frame + step
            events.append(Event(frame: frame, bytes: bytes))
        }
        return events
    }

    public func stop() {
        peer.stop(graceSeconds: 2)
        try? FileManager.default.removeItem(at: peer.logURL)
    }
}

/// `jack_mclk_dump -n` (Debian `jack-midi-clock`, by x42) as a separate process: a real MIDI
/// clock receiver that follows the ticks with a DLL and prints the tempo it measures. Its input
/// port is `jack_mclk_dump:mclk_in`. Stopped by PID. For tests and benchmarks.
public final class JackMidiClockDump: @unchecked Sendable {
    public let inputPortName = "jack_mclk_dump:mclk_in"
    private let peer: PeerProcess

    /// What it printed, in order.
    public enum Line: Equatable, Sendable {
        /// A tick: the tempo from the latest interval, and the DLL-filtered tempo.
        case tick(currentBpm: Double, filteredBpm: Double)
        /// A start (FA), continue (FB), stop (FC) or song position (F2).
        case event(String)
    }

    public init(server: PrivateJackServer, readyTimeoutSeconds: Double = 10) throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("\(server.name)-mclk-\(UInt32.random(in: 0...UInt32.max)).log")
        peer = try PeerProcess(name: "jack_mclk_dump", argv: [PrivateJackServer.tool("jack_mclk_dump"), "-n"],
                               environment: PrivateJackServer.environment(serverName: server.name), logURL: logURL)
        try waitForPort(inputPortName, server: server, peer: peer, timeoutSeconds: readyTimeoutSeconds)
    }

    deinit { stop() }

    /// Stops the receiver and returns what it printed.
    public func stopAndReadLines() -> [Line] {
        peer.stop(graceSeconds: 2)
        return Self.parse((try? String(contentsOf: peer.logURL, encoding: .utf8)) ?? "")
    }

    /// `CLK cur:  120.00[BPM] flt:  120.01[BPM]  dt: 1000[sm] …` and `EVENT (0xfa) start …`
    /// (ticks before it has a tempo print `??` and are skipped).
    static func parse(_ text: String) -> [Line] {
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).compactMap { line in
            let words = line.split(separator: " ")
            if words.first == "EVENT", words.count >= 3 { return .event(String(words[2])) }
            guard words.first == "CLK", let current = words.firstIndex(of: "cur:"), let filtered = words.firstIndex(of: "flt:"),
                  current + 1 < words.count, filtered + 1 < words.count,
                  let currentBpm = Double(words[current + 1].replacingOccurrences(of: "[BPM]", with: "")),
                  let filteredBpm = Double(words[filtered + 1].replacingOccurrences(of: "[BPM]", with: "")) else { return nil }
            return .tick(currentBpm: currentBpm, filteredBpm: filteredBpm)
        }
    }

    public func stop() {
        peer.stop(graceSeconds: 2)
        try? FileManager.default.removeItem(at: peer.logURL)
    }
}

private func waitForPort(_ port: String, server: PrivateJackServer, peer: PeerProcess, timeoutSeconds: Double) throws {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while (try? server.listPorts())?.contains(port) != true {
        try peer.checkRunning(during: "start-up")
        guard Date() < deadline else {
            peer.stop()
            throw RigPeerError(description: "\(peer.name): no port \(port) after \(timeoutSeconds) s: \(peer.logTail())")
        }
        usleep(20_000)
    }
}
