import Foundation
import Glibc
import SpectrumCore
import SpectrumOutput
import SpectrumTestSupport
import SpectrumWeb
import Synchronization

/// The web output under load (`SpectrumBench web`): real analysis frames pushed into the ring at
/// 60 a second by a feeder thread that plays the JACK side (each frame's capture time is the
/// moment it is pushed, on CLOCK_MONOTONIC, which is also the publisher's capture clock), the
/// publisher sending every frame to 4 loopback OSC targets and handing it to the web server, which
/// streams it to 10 WebSocket clients on loopback (each a socket drained by one thread) and to one
/// stuck client that never reads. Measured: CPU of the publisher thread (`spectrum-osc`) and the
/// web server's event-loop thread (`spectrum-web`) from /proc/self/task/*/schedstat, and, for
/// every frame written to a reading client's socket, the time from its push (leaving the JACK
/// side) to the completion of the write (`WebServer.sentObserver`).
enum WebCost {
    /// Latencies in µs, appended on the event-loop thread.
    final class Latencies: @unchecked Sendable {
        let values = Mutex<[Double]>([])
    }

    static func microsecondsNow() -> UInt64 { nowNanoseconds() / 1000 }

    struct Row {
        var clients: Int
        var seconds: Double
        var framesPushed: Int
        var publisherPercent: Double
        var webPercent: Double
        var latencies: Statistics
        var framesSent: Int
        var dropped: Int
        var stuckDropped: Int
        var received: Int
    }

    static func run(clients clientCount: Int, stuck: Bool, seconds: Double, frames source: [AnalysisFrame]) throws -> Row {
        let receivers = try PublisherCost.Receivers(count: 4)
        defer { receivers.stop() }
        let ring = FrameRing(capacity: 64)
        defer { ring.deallocate() }
        var configuration = PublisherConfiguration(targets: receivers.targets)
        configuration.outputRateHz = 60
        let web = try WebServer(configuration: WebServerConfiguration(
            host: "127.0.0.1", port: 0, name: "bench", addressSpace: configuration.addressSpace(bandCount: 128), control: nil,
            sampleRateHz: 48_000, bandCentreFrequenciesHz: []))
        defer { web.stop() }
        let latencies = Latencies()
        let measuring = Atomic<Bool>(false)
        web.sentObserver = { captureMicroseconds in
            guard measuring.load(ordering: .relaxed) else { return }
            let latency = Double(microsecondsNow() &- captureMicroseconds)
            latencies.values.withLock { $0.append(latency) }
        }
        let publisher = try FramePublisher(configuration: configuration, ring: ring, captureClock: CaptureClock { microsecondsNow() },
                                           frameObserver: { web.publish($0) })
        try publisher.start()
        defer { publisher.stop() }

        var clients: [RawWebSocketClient] = []
        for _ in 0..<clientCount {
            let client = try RawWebSocketClient(port: web.boundPort)
            client.drain()
            clients.append(client)
        }
        // Stuck: reads nothing, with a small receive window (a phone that went to sleep).
        let stuckClient = stuck ? try RawWebSocketClient(port: web.boundPort, receiveBufferBytes: 4096) : nil
        defer {
            for client in clients { client.close() }
            stuckClient?.close()
        }
        // Every client is registered before the first frame.
        let deadline = Date().addingTimeInterval(5)
        while web.statistics.viewClients < clientCount + (stuck ? 1 : 0), Date() < deadline { usleep(10_000) }

        // The JACK side: a frame every 1/60 s, stamped as it is pushed.
        let stop = Atomic<Bool>(false)
        let pushed = Atomic<Int>(0)
        let feeder = Thread {
            var frame = AnalysisFrame()
            var next = nowNanoseconds()
            var index = 0
            while !stop.load(ordering: .relaxed) {
                frame = source[index % source.count]
                frame.captureTimeMicroseconds = microsecondsNow()
                _ = withUnsafePointer(to: &frame) { ring.push($0) }
                pushed.add(1, ordering: .relaxed)
                index += 1
                next += 16_666_667
                let now = nowNanoseconds()
                if next > now {
                    var pause = timespec(tv_sec: Int((next - now) / 1_000_000_000), tv_nsec: Int((next - now) % 1_000_000_000))
                    nanosleep(&pause, nil)
                }
            }
        }
        feeder.start()
        usleep(2_000_000)   // warm up: not counted
        let before = ThreadSample.all(pid: getpid())
        let startStatistics = web.statistics
        let startPushed = pushed.load(ordering: .relaxed)
        measuring.store(true, ordering: .relaxed)
        let start = nowNanoseconds()
        usleep(UInt32(seconds * 1_000_000))
        measuring.store(false, ordering: .relaxed)
        let elapsed = Double(nowNanoseconds() - start) / 1e9
        let after = ThreadSample.all(pid: getpid())
        let endStatistics = web.statistics
        let endPushed = pushed.load(ordering: .relaxed)
        stop.store(true, ordering: .relaxed)
        while !feeder.isFinished { usleep(1_000) }

        func percent(_ name: String) -> Double {
            var use = ThreadUse()
            for (id, sample) in after where sample.name == name {
                if let earlier = before[id] { use.add(before: earlier, after: sample, seconds: elapsed) }
            }
            return use.percent
        }
        let pushedFrames = endPushed - startPushed
        return Row(clients: clientCount, seconds: elapsed, framesPushed: pushedFrames,
                   publisherPercent: percent(FramePublisher.threadName), webPercent: percent(WebServer.threadName),
                   latencies: Statistics(samples: latencies.values.withLock { $0 }),
                   framesSent: endStatistics.framesSent - startStatistics.framesSent,
                   dropped: endStatistics.framesDropped - startStatistics.framesDropped,
                   stuckDropped: stuck ? (endStatistics.framesDropped - startStatistics.framesDropped) : 0,
                   received: clients.reduce(0) { $0 + $1.bytes.load(ordering: .relaxed) })
    }

    static func table(seconds: Double) throws -> String {
        let source = try PublisherCost.frames()
        var rows = ["| WebSocket clients | OSC targets | seconds | frames | publisher thread | web thread | **both** | frames written | frames dropped | push → WebSocket write, median ms | p99 ms | max ms |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for (clients, stuck) in [(0, false), (10, true)] {
            let row = try run(clients: clients, stuck: stuck, seconds: seconds, frames: source)
            let label = clients == 0 ? "none" : "\(clients) reading + 1 stuck"
            let latency = row.latencies.samples.isEmpty
                ? ["–", "–", "–"]
                : [format(row.latencies.percentile(0.5) / 1000, 2), format(row.latencies.percentile(0.99) / 1000, 2), format(row.latencies.maximum / 1000, 2)]
            rows.append("| \(label) | 4 | \(format(row.seconds, 1)) | \(row.framesPushed) | \(format(row.publisherPercent, 3)) % | \(format(row.webPercent, 3)) % | **\(format(row.publisherPercent + row.webPercent, 3)) %** | \(row.framesSent) | \(row.dropped) | " + latency.joined(separator: " | ") + " |")
        }
        return rows.joined(separator: "\n")
    }
}
