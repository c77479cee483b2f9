import Foundation
import Glibc
import SpectrumCore
import SpectrumDSP
import SpectrumOutput
import SpectrumPresets
import SpectrumTestSupport
import Synchronization

/// The publisher's cost per frame (render every rig, send every datagram) for a rig and four
/// loopback UDP targets, through the public `FramePublisher` only: a batch of real analysis
/// frames is pushed into the ring while the publisher is stopped, then the publisher is started
/// and drains it back to back; the frame observer (called on the publisher thread after each
/// frame's datagrams are sent) stamps the time, and the gaps between consecutive stamps are the
/// per-frame costs (pop + render + send). Hot caches (frame after frame), no sleeping.
enum PublisherCost {
    /// What each target receives: four sockets on 127.0.0.1 drained by one thread, so sends
    /// never fail for want of a listener.
    final class Receivers: @unchecked Sendable {
        let ports: [UInt16]
        private let sockets: [Int32]
        private let stopRequested = Atomic<Bool>(false)
        let datagrams = Atomic<Int>(0)
        let bytes = Atomic<Int>(0)
        private var thread: Thread?

        init(count: Int) throws {
            var sockets: [Int32] = [], ports: [UInt16] = []
            for _ in 0..<count {
                let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
                guard descriptor >= 0 else { throw BenchError("receiver: socket failed (errno \(errno))") }
                var size: Int32 = 4 << 20
                _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                address.sin_port = 0
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let bound = withUnsafeMutablePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                        bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
                    }
                }
                guard bound else { throw BenchError("receiver: bind failed (errno \(errno))") }
                sockets.append(descriptor)
                ports.append(UInt16(bigEndian: address.sin_port))
            }
            self.sockets = sockets
            self.ports = ports
            let thread = Thread { [self] in drain() }
            thread.start()
            self.thread = thread
        }

        var targets: [OSCTarget] { ports.map { OSCTarget(host: "127.0.0.1", port: $0) } }

        private func drain() {
            var polls = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !stopRequested.load(ordering: .relaxed) {
                guard poll(&polls, nfds_t(polls.count), 20) > 0 else { continue }
                for descriptor in sockets {
                    while true {
                        let length = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                        guard length >= 0 else { break }
                        datagrams.add(1, ordering: .relaxed)
                        bytes.add(length, ordering: .relaxed)
                    }
                }
            }
        }

        func stop() {
            stopRequested.store(true, ordering: .relaxed)
            while thread?.isFinished == false { usleep(1_000) }
            for descriptor in sockets { close(descriptor) }
        }
    }

    /// Observer stamps, written on the publisher thread into memory prepared in advance.
    final class Stamps: @unchecked Sendable {
        let times: UnsafeMutablePointer<UInt64>
        let capacity: Int
        let count = Atomic<Int>(0)
        init(capacity: Int) {
            self.capacity = capacity
            times = .allocate(capacity: capacity)
        }
        deinit { times.deallocate() }
        func record() {
            let index = count.load(ordering: .relaxed)
            guard index < capacity else { return }
            times[index] = nowNanoseconds()
            count.store(index + 1, ordering: .releasing)
        }
    }

    /// Real frames: 20 s of a rock groove at 120 BPM over a 220 Hz tone, through the analyser
    /// (bands, peaks, level, onsets, a locked tempo with beats, a pitch).
    static func frames() throws -> [AnalysisFrame] {
        let rate = 48_000.0
        let groove = TestSignals.rhythm(.rock, segments: [(bpm: 120, seconds: 20)], sampleRateHz: rate, noiseAmplitude: 0.05)
        let tone = TestSignals.sine(frequencyHz: 220, sampleRateHz: rate, seconds: 20, amplitude: 0.2)
        let samples = zip(groove.samples, tone).map { $0 + $1 }
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: rate)
        var frames: [AnalysisFrame] = []
        samples.withUnsafeBufferPointer { buffer in
            analyzer.process(buffer.baseAddress!, frameCount: buffer.count) { frames.append(copy $0) }
        }
        return frames
    }

    static let rigNames = ["spectrum", "ola", "qlcplus"]

    static func table(framesPerRig: Int) throws -> String {
        let source = try frames()
        var rows = ["| rig | targets | frames | datagrams per frame and target | bytes per frame and target | mean µs | p50 µs | p99 µs | max µs | mean, % of one core at 60 frames/s |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for name in rigNames {
            let receivers = try Receivers(count: 4)
            defer { receivers.stop() }
            var configuration = PublisherConfiguration(targets: receivers.targets)
            if name != Rig.spectrumName {
                configuration.rig = try RigLoader.load(path: "presets/rigs/\(name).yaml")
            }
            let batch = 1_000
            let ring = FrameRing(capacity: batch)
            defer { ring.deallocate() }
            let stamps = Stamps(capacity: (framesPerRig / (batch - 1) + 3) * batch)
            let publisher = try FramePublisher(configuration: configuration, ring: ring,
                                               status: { PublisherStatus(sampleRateHz: 48_000, periodFrames: 256, dspLoadPercent: 3, worstCallbackMicroseconds: 80) },
                                               frameObserver: { _ in stamps.record() })
            var gaps: [Double] = []
            var next = 0
            // The first batch warms up (allocator, caches, socket buffers) and is not counted.
            var warmUp = true
            while gaps.count < framesPerRig {
                let first = stamps.count.load(ordering: .acquiring)
                var frame = AnalysisFrame()
                for _ in 0..<batch {
                    frame = source[next % source.count]
                    next += 1
                    _ = withUnsafePointer(to: &frame) { ring.push($0) }
                }
                try publisher.start()
                while stamps.count.load(ordering: .acquiring) < first + batch { usleep(2_000) }
                publisher.stop()
                if warmUp { warmUp = false; continue }
                for index in (first + 1)..<(first + batch) {
                    gaps.append(Double(stamps.times[index] - stamps.times[index - 1]) / 1000)
                }
            }
            // Let the last datagrams reach the receivers before counting them.
            usleep(100_000)
            let statistics = publisher.statistics
            let sent = statistics.targets.reduce(0) { $0 + $1.datagramsSent }
            let errors = statistics.targets.reduce(0) { $0 + $1.sendErrors }
            guard errors == 0 else { throw BenchError("publisher \(name): \(errors) send errors") }
            let published = Double(statistics.framesPublished * 4)
            let costs = Statistics(samples: gaps)
            let receivedBytes = Double(receivers.bytes.load(ordering: .relaxed))
            rows.append("| \(name) | 4 | \(gaps.count) | \(format(Double(sent) / published, 2)) | \(format(receivedBytes / published, 0)) | \(format(costs.mean)) | \(format(costs.percentile(0.5))) | \(format(costs.percentile(0.99))) | \(format(costs.maximum)) | \(format(costs.mean * 60 / 10_000, 3)) % |")
        }
        return rows.joined(separator: "\n")
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
