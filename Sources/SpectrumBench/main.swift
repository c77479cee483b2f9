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

func hopCost(sampleRateHz: Double, hops: Int) throws -> HopCost {
    var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
    let signal = TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.2)
        .enumerated().map { $0.element + Float(0.3 * sin(2 * Double.pi * 220 * Double($0.offset) / sampleRateHz)) }
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
if arguments.first == "acf" {
    let bpm = Double(arguments[arguments.startIndex + 1])!
    let signal = TestSignals.rhythm(.syncopated, segments: [(bpm, 8)], sampleRateHz: 48_000)
    var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
    let frames = OfflineDriver.frames(&analyzer, signal: signal.samples)
    print(analyzer.tempoAutocorrelation.enumerated().map { String(format: "%d:%.2f", $0.offset, $0.element) }.joined(separator: " "))
    print(frames.filter { $0.onset.isOnset }.map { String(format: "%.3f/%.2f", $0.onset.timeFrames / 48000, $0.onset.strength) }.joined(separator: " "))
    exit(0)
}
if arguments.first == "rhythm" {
    let rates = arguments.count > 1 ? [Double(arguments[arguments.startIndex + 1])!] : [48_000.0]
    try rhythmDiagnostics(sampleRates: rates, tempos: [70, 100, 120, 128, 140, 174],
                          patterns: [.clicks, .rock, .fourOnTheFloor, .syncopated], seconds: 10)
    exit(0)
}
let hops = arguments.first.flatMap(Int.init) ?? 100_000
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
