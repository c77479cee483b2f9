import Foundation
import SpectrumDSP
import SpectrumTestSupport

/// Cost of one hop of the analysis, split the way a host sees it: taking in the hop's samples
/// (history, bass decimation, peak) and the analysis that runs when the hop completes. Each
/// hop is fed as `hop − 1` samples then 1 sample, so the second call is exactly one analysis.
enum HopCost {
    struct Result {
        var intake: Statistics
        var analysis: Statistics
    }

    static func measure(configuration: AnalysisConfiguration, sampleRateHz: Double, hops: Int) throws -> Result {
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        // Noise plus a 220 Hz tone, so the tuner finds a pitch.
        let signal = zip(TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.1),
                         TestSignals.sine(frequencyHz: 220, sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.4)).map { $0 + $1 }
        let hop = analyzer.hopFrames
        var intake = [Double](), analysis = [Double]()
        intake.reserveCapacity(hops)
        analysis.reserveCapacity(hops)
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
            }
        }
        return Result(intake: Statistics(samples: intake), analysis: Statistics(samples: analysis))
    }

    /// Markdown rows: per sample rate, the spectrum stage alone (tuner off), the tuner's
    /// share, and the whole hop.
    static func table(hops: Int) throws -> String {
        var rows = ["| rate | part | hops | mean µs | p50 µs | p99 µs | max µs | mean, % of one core |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        var spectrumOnly = AnalysisConfiguration()
        spectrumOnly.pitch.enabled = false
        spectrumOnly.rhythm.enabled = false
        var withoutPitch = AnalysisConfiguration()
        withoutPitch.pitch.enabled = false
        for sampleRateHz in [44_100.0, 48_000, 96_000] {
            let hopMicroseconds = 1_000_000 / AnalysisConfiguration().outputRateHz
            let plain = try measure(configuration: spectrumOnly, sampleRateHz: sampleRateHz, hops: hops)
            let rhythm = try measure(configuration: withoutPitch, sampleRateHz: sampleRateHz, hops: hops)
            let full = try measure(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz, hops: hops)
            let whole = Statistics(samples: zip(full.intake.samples, full.analysis.samples).map { $0 + $1 })
            func row(_ part: String, _ statistics: Statistics, percentiles: Bool = true) -> String {
                let dash = "–"
                return "| \(format(sampleRateHz / 1000, 1)) kHz | \(part) | \(hops) | \(format(statistics.mean)) | "
                    + (percentiles ? "\(format(statistics.percentile(0.5))) | \(format(statistics.percentile(0.99))) | \(format(statistics.maximum))" : "\(dash) | \(dash) | \(dash)")
                    + " | \(format(100 * statistics.mean / hopMicroseconds, 3)) % |"
            }
            rows.append(row("spectrum stage: window, 2 FFTs, bands, dB, auto-level, smoothing, level, waveform (tuner and rhythm off)", plain.analysis))
            rows.append(row("onsets, tempo, beats (mean difference, rhythm on − off)", Statistics(samples: [rhythm.analysis.mean - plain.analysis.mean]), percentiles: false))
            rows.append(row("tuner (mean difference, tuner on − off)", Statistics(samples: [full.analysis.mean - rhythm.analysis.mean]), percentiles: false))
            rows.append(row("sample intake: history, bass decimation, peak", full.intake))
            rows.append(row("**whole hop** (intake + all analyses)", whole))
        }
        return rows.joined(separator: "\n")
    }
}
