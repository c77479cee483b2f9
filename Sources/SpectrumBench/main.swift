// Micro-benchmarks of the analysis core, run by scripts/bench in a release build.
// Prints Markdown table rows; scripts/bench assembles docs/benchmarks.md.
import Foundation
import SpectrumDSP
import SpectrumTestSupport

struct Statistics {
    var samples: [Double]
    var mean: Double { samples.reduce(0, +) / Double(samples.count) }
    func percentile(_ fraction: Double) -> Double {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
    var maximum: Double { samples.max() ?? 0 }
}

func nowNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Cost of one hop, split the way a host sees it: taking in the hop's samples (history,
/// bass decimation, peak), and the analysis that runs when the hop completes (window, two FFTs,
/// bands, dB, auto-level, smoothing, peaks, RMS, waveform).
struct HopCost {
    var intake: Statistics
    var analysis: Statistics
    var total: Statistics
}

func hopCost(sampleRateHz: Double, hops: Int, configuration: AnalysisConfiguration = AnalysisConfiguration(), signal given: [Float]? = nil) throws -> HopCost {
    var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
    let signal: [Float]
    if let given {
        signal = given
    } else {
        let noise = TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.2)
        let tone = TestSignals.sine(frequencyHz: 220, sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.3)
        signal = zip(noise, tone).map { $0 + $1 }
    }
    let hop = analyzer.hopFrames
    var intake = [Double](), analysis = [Double](), total = [Double]()
    for var series in [intake, analysis, total] { series.reserveCapacity(hops) }
    signal.withUnsafeBufferPointer { samples in
        var position = 0
        for index in 0..<(hops + 200) {
            if position + hop > samples.count { position = 0 }
            let start = nowNanoseconds()
            let first = analyzer.consume(samples.baseAddress! + position, frameCount: hop - 1)
            let middle = nowNanoseconds()
            let last = analyzer.consume(samples.baseAddress! + position + hop - 1, frameCount: 1)
            let end = nowNanoseconds()
            precondition(!first.frameCompleted && last.frameCompleted)
            position += hop
            guard index >= 200 else { continue } // warm-up
            intake.append(Double(middle - start) / 1000)
            analysis.append(Double(end - middle) / 1000)
            total.append(Double(end - start) / 1000)
        }
    }
    return HopCost(intake: Statistics(samples: intake), analysis: Statistics(samples: analysis), total: Statistics(samples: total))
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "rhythm-changes" {
    // Tempo changes, silence, tones and noise at every rate (a development aid).
    for rate in [44_100.0, 48_000, 96_000] {
        for pattern in [DrumPattern.clicks, .rock, .syncopated] {
            for change in [(120.0, 128.0), (100.0, 140.0), (140.0, 100.0)] {
                let signal = TestSignals.rhythm(pattern, segments: [(change.0, 8), (change.1, 8)], sampleRateHz: rate)
                report(try analyse(signal), signal: signal, label: "\(pattern.name) \(change) @ \(rate)", expected: [(0, change.0), (8, change.1)])
            }
        }
        for (name, samples) in [("silence", TestSignals.silence(sampleRateHz: rate, seconds: 8)),
                                ("tone", TestSignals.sine(frequencyHz: 220, sampleRateHz: rate, seconds: 8)),
                                ("bass tone", TestSignals.sine(frequencyHz: 55, sampleRateHz: rate, seconds: 8, amplitude: 0.8)),
                                ("pink", TestSignals.pinkNoise(sampleRateHz: rate, seconds: 12)),
                                ("white", TestSignals.whiteNoise(sampleRateHz: rate, seconds: 12, amplitude: 0.3))] {
            let signal = RhythmSignal(samples: samples, beatTimesSeconds: [0], sampleRateHz: rate)
            let frames = try analyse(signal)
            print(name, rate, "locked frames", frames.filter { $0.tempo.bpm > 0 }.count, "beats", frames.filter { $0.beat.isBeat }.count,
                  "max conf", frames.map { $0.tempo.confidence }.max()!, "onsets", frames.filter { $0.onset.isOnset }.count)
        }
    }
    exit(0)
}
if arguments.first == "rhythm" {
    let rates = arguments.count > 1 ? [Double(arguments[arguments.startIndex + 1])!] : [48_000.0]
    try rhythmDiagnostics(sampleRates: rates, tempos: [70, 100, 120, 128, 140, 174],
                          patterns: [.clicks, .rock, .fourOnTheFloor, .syncopated], seconds: 10)
    exit(0)
}
let hops = arguments.first.flatMap(Int.init) ?? 100_000
if arguments.first == "rhythm-cost" {
    // Cost of the rhythm stages (onsets, tempo, beats): a drum signal (rock pattern at 128 BPM
    // over pink noise, 20 s, looped, so the tempo locks and beats fire) fed to two analysers, one
    // with the rhythm stages and one without, hop by hop in turn (so machine noise hits both
    // alike); the per-hop difference of their analysis times is the cost of the rhythm stages.
    let count = arguments.count > 1 ? Int(arguments[arguments.startIndex + 1])! : 50_000
    for sampleRateHz in [44_100.0, 48_000, 96_000] {
        let drums = TestSignals.rhythm(.rock, segments: [(128, 20)], sampleRateHz: sampleRateHz, noiseAmplitude: 0.05).samples
        var off = AnalysisConfiguration()
        off.rhythm.enabled = false
        var with = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        var without = try Analyzer(configuration: off, sampleRateHz: sampleRateHz)
        let hop = with.hopFrames
        var withTimes = [Double](), withoutTimes = [Double](), differences = [Double]()
        drums.withUnsafeBufferPointer { samples in
            var position = 0
            for index in 0..<(count + 200) {
                if position + hop > samples.count { position = 0 }
                _ = with.consume(samples.baseAddress! + position, frameCount: hop - 1)
                _ = without.consume(samples.baseAddress! + position, frameCount: hop - 1)
                let start = nowNanoseconds()
                _ = with.consume(samples.baseAddress! + position + hop - 1, frameCount: 1)
                let middle = nowNanoseconds()
                _ = without.consume(samples.baseAddress! + position + hop - 1, frameCount: 1)
                let end = nowNanoseconds()
                position += hop
                guard index >= 200 else { continue }
                withTimes.append(Double(middle - start) / 1000)
                withoutTimes.append(Double(end - middle) / 1000)
                differences.append(Double(middle - start) / 1000 - Double(end - middle) / 1000)
            }
        }
        let hopMicroseconds = 1_000_000 / 60.0
        for (part, values) in [("analysis with onsets, tempo, beats", withTimes), ("analysis without them", withoutTimes),
                               ("difference per hop (the rhythm stages)", differences)] {
            let statistics = Statistics(samples: values)
            print(String(format: "| %.1f kHz | %@ | %d | %.2f | %.2f | %.2f | %.2f | %.3f %% |",
                         sampleRateHz / 1000, part, count, statistics.mean, statistics.percentile(0.5), statistics.percentile(0.99),
                         statistics.maximum, 100 * statistics.mean / hopMicroseconds))
        }
    }
    exit(0)
}
for sampleRateHz in [44_100.0, 48_000, 96_000] {
    let cost = try hopCost(sampleRateHz: sampleRateHz, hops: hops)
    let hopMicroseconds = 1_000_000 / 60.0
    for (part, statistics) in [("analysis (window, FFTs, bands, levelling, level, waveform)", cost.analysis),
                               ("intake (history, bass decimation, peak)", cost.intake),
                               ("whole hop", cost.total)] {
        print(String(format: "| %.1f kHz | %@ | %d | %.2f | %.2f | %.2f | %.2f | %.3f %% |",
                     sampleRateHz / 1000, part, hops, statistics.mean, statistics.percentile(0.5), statistics.percentile(0.99),
                     statistics.maximum, 100 * statistics.mean / hopMicroseconds))
    }
}
