import CJack
import Foundation
import SpectrumDSP
import SpectrumLive
import SpectrumOutput
import SpectrumTestSupport
import Synchronization
import SpectrumCore

/// Durations of the production process callback, recorded by `timedProcess` on the JACK thread
/// into memory prepared in advance (the benchmark harness, not production code).
struct CallbackTimings {
    static let capacity = 1 << 20
    nonisolated(unsafe) static let durations: UnsafeMutablePointer<UInt32> = .allocate(capacity: capacity)
    static let count = Atomic<Int>(0)
}

/// The production callback between two CLOCK_MONOTONIC reads. A global function in a
/// non-main file, so it is safe as a C callback.
func timedProcess(_ frameCount: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    let start = nowNanoseconds()
    let result = spectrumLiveProcess(frameCount, argument)
    let elapsed = nowNanoseconds() - start
    let index = CallbackTimings.count.load(ordering: .relaxed)
    if index < CallbackTimings.capacity {
        CallbackTimings.durations[index] = UInt32(clamping: elapsed)
        CallbackTimings.count.store(index + 1, ordering: .releasing)
    }
    return result
}

/// A private jackd (dummy driver, 48 kHz), our tone client (a sine, or a loop), and a
/// `LiveClient` fed by it.
struct LiveRig {
    let server: PrivateJackServer
    let tone: ToneClient
    let client: LiveClient

    init(periodFrames: Int, toneHz: Double = 1_000, amplitude: Double, loop: [Float]? = nil,
         processCallback: @escaping LiveProcessCallback = spectrumLiveProcess) throws {
        server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: periodFrames)
        tone = try ToneClient(serverName: server.name, frequencyHz: toneHz, amplitude: amplitude, loop: loop)
        var configuration = LiveConfiguration()
        configuration.serverName = server.name
        configuration.connections = .ports([tone.outputPortName])
        client = try LiveClient(configuration: configuration, processCallback: processCallback)
    }

    func stop() {
        client.stop()
        tone.stop()
        server.stop()
    }
}

/// The process callback under a real jackd (dummy driver, 48 kHz) at several periods, with a
/// 220 Hz tone playing in (so every analysis, the tuner included, does its full work).
enum LiveCost {
    static func table(seconds: Double) throws -> String {
        var rows = ["| period | callbacks | mean µs | p99 µs | max µs | mean, % of one core | max, % of the period | JACK DSP load (mean of 0.5 s samples) | xruns |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for period in [64, 256, 1024] {
            CallbackTimings.count.store(0, ordering: .relaxed)
            let rig = try LiveRig(periodFrames: period, toneHz: 220, amplitude: 0.4, processCallback: timedProcess)
            defer { rig.stop() }
            let client = rig.client
            var loads: [Double] = []
            var frame = AnalysisFrame()
            let deadline = Date().addingTimeInterval(seconds)
            // Skip the first second (FFTW and caches warming up).
            usleep(1_000_000)
            let first = CallbackTimings.count.load(ordering: .acquiring)
            while Date() < deadline {
                usleep(500_000)
                while client.popFrame(into: &frame) {}
                loads.append(client.status().dspLoadPercent)
            }
            let status = client.status()
            client.stop()
            let last = CallbackTimings.count.load(ordering: .acquiring)
            let durations = Statistics(samples: (first..<last).map { Double(CallbackTimings.durations[$0]) / 1000 })
            let periodMicroseconds = Double(period) / 48_000 * 1_000_000
            rows.append("| \(period) frames (\(format(periodMicroseconds / 1000, 2)) ms) | \(durations.samples.count) | \(format(durations.mean)) | \(format(durations.percentile(0.99))) | \(format(durations.maximum)) | \(format(100 * durations.mean / periodMicroseconds, 3)) % | \(format(100 * durations.maximum / periodMicroseconds, 1)) % | \(format(Statistics(samples: loads).mean, 2)) % | \(status.xruns) |")
        }
        return rows.joined(separator: "\n")
    }
}

/// Audio in → OSC out: a tone burst starts in the tone client (its first sample's JACK time is
/// recorded there); the analysis runs in the JACK callback, the publisher sends, and a liblo
/// receiver in this process notes the JACK time when the first bundle with the burst's level
/// arrives. Repeated bursts, 48 kHz.
enum Latency {
    static func table(period: Int, bursts: Int) throws -> String {
        let rig = try LiveRig(periodFrames: period, toneHz: 1_000, amplitude: 0)
        defer { rig.stop() }
        let client = rig.client, tone = rig.tone
        let receiver = OSCReceiver()
        let publisher = try FramePublisher(configuration: PublisherConfiguration(targets: [receiver.target]), ring: client.frames,
                                         captureClock: CaptureClock { LiveClient.currentTimeMicroseconds() })
        try publisher.start()
        defer { publisher.stop() }
        var latencies: [Double] = []
        for _ in 0..<bursts {
            tone.amplitude = 0
            // The 42.7 ms level window empties; the random part spreads the burst starts over
            // the hop (this loop wakes just after a frame arrives, so a fixed wait would always
            // start bursts at the same point of the hop and bias the result).
            usleep(UInt32(300_000 + Int.random(in: 0..<17_000)))
            receiver.drain(seconds: 0.01)
            let seen = receiver.bundles.count
            tone.amplitude = 0.5
            var arrival: UInt64 = 0
            let deadline = Date().addingTimeInterval(1)
            while arrival == 0, Date() < deadline {
                receiver.receive(timeoutSeconds: 0.001) { false }
                if receiver.bundles.dropFirst(seen).contains(where: { ($0.message("/spectrum/level/db")?.floats.first ?? -120) > -80 }) {
                    arrival = LiveClient.currentTimeMicroseconds()
                }
            }
            let start = tone.burstStartMicroseconds
            if arrival > start, start > 0 { latencies.append(Double(arrival - start) / 1000) }
        }
        let statistics = Statistics(samples: latencies)
        let hopMilliseconds = 800.0 / 48
        let bound = hopMilliseconds + Double(period) / 48 + 2
        return """
            | period | bursts | median ms | p90 ms | max ms | target: hop + period + 2 ms |
            | --- | --- | --- | --- | --- | --- |
            | \(period) frames | \(latencies.count) | \(format(statistics.percentile(0.5))) | \(format(statistics.percentile(0.9))) | \(format(statistics.maximum)) | \(format(bound)) ms |
            """
    }
}

/// Beat → OSC: a 120 BPM click loop plays into the client; for every `/beat` that arrives, the
/// delay from the click it marks (its JACK time, known from the loop's start) to the arrival
/// (on JACK's clock). Once with the beat mailbox (as `spectrum run` sends beats: alone, as soon
/// as the cycle holding the beat is analysed) and once without (beats only in their frame's
/// bundle, at the end of the hop), at the same period.
enum BeatDelay {
    static func table(periods: [Int], seconds: Double) throws -> String {
        var rows = ["| period | beats sent | beats | median ms | p90 ms | max ms | bound: period + 2 ms (mailbox), hop + period + 2 ms (frame) |",
                    "| --- | --- | --- | --- | --- | --- | --- |"]
        let clicks = TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 2)
        let clickOffsetsMicroseconds = clicks.beatTimesSeconds.map { $0 * 1_000_000 }
        for period in periods {
            for useMailbox in [true, false] {
                let rig = try LiveRig(periodFrames: period, amplitude: 1, loop: clicks.samples)
                defer { rig.stop() }
                let receiver = OSCReceiver()
                let publisher = try FramePublisher(configuration: PublisherConfiguration(targets: [receiver.target]), ring: rig.client.frames,
                                                 beats: useMailbox ? [rig.client.beats] : [],
                                                 captureClock: CaptureClock { LiveClient.currentTimeMicroseconds() })
                try publisher.start()
                defer { publisher.stop() }
                var delays: [Double] = []
                var seen = 0
                let start = Date()
                while Date().timeIntervalSince(start) < seconds {
                    receiver.receive(timeoutSeconds: 0.001) { false }
                    let bundles = receiver.bundles
                    guard bundles.count > seen else { continue }
                    let arrival = LiveClient.currentTimeMicroseconds()
                    let beats = bundles[seen...].filter { $0.message("/spectrum/beat") != nil }.count
                    seen = bundles.count
                    // After 5 s (locked), the click each beat marks: the nearest one (a predicted
                    // beat may go out a little before its click is heard).
                    guard beats > 0, Date().timeIntervalSince(start) > 5 else { continue }
                    let loopStart = Double(rig.tone.loopStartMicroseconds)
                    let candidates = clickOffsetsMicroseconds.flatMap { [loopStart + $0, loopStart + $0 - 2_000_000] }
                    guard let click = candidates.min(by: { abs(Double(arrival) - $0) < abs(Double(arrival) - $1) }) else { continue }
                    delays.append((Double(arrival) - click) / 1000)
                }
                let statistics = Statistics(samples: delays)
                let bound = Double(period) / 48 + 2 + (useMailbox ? 0 : 800.0 / 48)
                rows.append("| \(period) frames | \(useMailbox ? "alone, at once (mailbox)" : "in the frame's bundle") | \(delays.count) | \(format(statistics.percentile(0.5))) | \(format(statistics.percentile(0.9))) | \(format(statistics.maximum)) | \(format(bound)) ms |")
            }
        }
        return rows.joined(separator: "\n")
    }
}
