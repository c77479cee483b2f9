import CJack
import Foundation
import Glibc

/// An Ableton Link peer in Python (PyPI `LinkPython-extern`, Ableton's own Link through
/// pybind11) inside a `PrivateNetwork`, printing what it sees of the session every 50 ms: peers,
/// tempo, and the beat (quantum 4) at a moment on Link's clock. The virtual environment is made
/// on first use under the temporary directory (`python3 -m venv`, `pip install`). Stopped by
/// PID. For tests and benchmarks.
public final class LinkPythonPeer: @unchecked Sendable {
    /// One report of the peer.
    public struct Sample: Equatable, Sendable {
        public var peers: Int
        public var bpm: Double
        public var beat: Double
        /// JACK's clock now (`jack_get_time()`), µs.
    public static func jackClockMicroseconds() -> UInt64 { jack_get_time() }

    /// Link's clock (CLOCK_MONOTONIC_RAW) at which `beat` holds, µs.
        public var hostMicroseconds: Double
    }

    public static let package = "LinkPython-extern==1.3.0"
    private let peer: PeerProcess

    /// Starts a peer with its own session at `bpm` (it merges with any session it finds).
    public init(network: PrivateNetwork, bpm: Double) throws {
        let python = try Self.python()
        let script = """
            import json, sys, time, link
            peer = link.Link(float(sys.argv[1]))
            peer.enabled = True
            while True:
                now = peer.clock().micros()
                state = peer.captureSessionState()
                print(json.dumps({"peers": peer.numPeers(), "bpm": state.tempo(), "beat": state.beatAtTime(now, 4), "micros": now}), flush=True)
                time.sleep(0.05)
            """
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("link-peer-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log")
        peer = try PeerProcess(name: "link peer", argv: network.command([python, "-u", "-c", script, String(bpm)]),
                               environment: ProcessInfo.processInfo.environment, logURL: logURL)
    }

    deinit { stop() }

    /// What it printed so far.
    public var samples: [Sample] {
        let text = (try? String(contentsOf: peer.logURL, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let data = line.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  let peers = object["peers"] as? Int, let bpm = object["bpm"] as? Double,
                  let beat = object["beat"] as? Double, let micros = object["micros"] as? Double ?? (object["micros"] as? Int).map(Double.init)
            else { return nil }
            return Sample(peers: peers, bpm: bpm, beat: beat, hostMicroseconds: micros)
        }
    }

    public func checkRunning() throws { try peer.checkRunning(during: "the test") }

    public func stop() {
        peer.stop(graceSeconds: 2)
        try? FileManager.default.removeItem(at: peer.logURL)
    }

    /// JACK's clock now (`jack_get_time()`), µs.
    public static func jackClockMicroseconds() -> UInt64 { jack_get_time() }

    /// Link's clock (CLOCK_MONOTONIC_RAW, as its Linux platform reads it) minus JACK's clock
    /// (`jack_get_time()`), µs, read back to back.
    public static func linkMinusJackMicroseconds() -> Double {
        let before = Double(jack_get_time())
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_RAW, &time)
        let after = Double(jack_get_time())
        return Double(time.tv_sec) * 1_000_000 + Double(time.tv_nsec) / 1000 - (before + after) / 2
    }

    /// The venv's python with `link` importable, made once (`python3 -m venv`, then pip).
    public static func python() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-link-venv")
        let python = directory.appendingPathComponent("bin/python").path
        if run(python, ["-c", "import link"]) == 0 { return python }
        guard run("/usr/bin/python3", ["-m", "venv", "--clear", directory.path]) == 0,
              run(python, ["-m", "pip", "install", "--quiet", package]) == 0,
              run(python, ["-c", "import link"]) == 0 else {
            throw RigPeerError(description: "cannot make a Python venv with \(package) in \(directory.path) (python3-venv and PyPI needed)")
        }
        return python
    }

    private static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return -1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
