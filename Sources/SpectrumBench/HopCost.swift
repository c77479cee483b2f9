import Foundation
import SpectrumDSP
import SpectrumTestSupport

/// Cost of one hop of the analysis, split the way a host sees it: taking in the hop's samples
/// (history, bass decimation, peak) and the two points where the analysis runs — the spectrum
/// point (`spectrumLeadFrames` before the hop's end: spectrum and rhythm) and the hop's end
/// (level, waveform, tuner; the frame completes). Each point is reached by a call that feeds
/// exactly one sample, so that call is the point's cost.
enum HopCost {
    struct Result {
        var intake: Statistics
        var spectrumPoint: Statistics
        var framePoint: Statistics
        /// Per hop: intake + both points.
        var whole: Statistics
    }

    /// Noise plus a 220 Hz tone, so the tuner finds a pitch.
    static func toneInNoise(sampleRateHz: Double) -> [Float] {
        zip(TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.1),
            TestSignals.sine(frequencyHz: 220, sampleRateHz: sampleRateHz, seconds: 5, amplitude: 0.4)).map { $0 + $1 }
    }

    /// A note in steady noise, where the tuner takes its second look (`NoiseWeighting`) on
    /// every hop: the noise alone for `noiseLeadSeconds`, so the band floors are learned, then A3
    /// (220 Hz, four harmonics) in the same pink noise at `signalToNoiseDecibels` (RMS against
    /// RMS) for `noteSeconds`. At −3 dB every hop of the note takes the second look and applies
    /// the weights; at 0 dB only ~13 % do (the plain correlation or the short window reads the
    /// rest; counted in a scratch build, docs/benchmarks.md). Fed in a loop, so each note follows
    /// the noise alone again; `noteStartFrame` is where it starts.
    static func noteInPinkNoise(sampleRateHz: Double, signalToNoiseDecibels: Float = -3, noiseLeadSeconds: Double = 2,
                                noteSeconds: Double = 3) -> (signal: [Float], noteStartFrame: Int) {
        let noteStartFrame = Int(noiseLeadSeconds * sampleRateHz)
        let note = TestSignals.harmonicTone(fundamentalHz: 220, harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05],
                                            sampleRateHz: sampleRateHz, seconds: noteSeconds)
        var signal = TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: noiseLeadSeconds + noteSeconds)
        func rms(_ samples: ArraySlice<Float>) -> Float { (samples.reduce(0) { $0 + $1 * $1 } / Float(samples.count)).squareRoot() }
        let noiseScale = rms(note[...]) / rms(signal[noteStartFrame...]) * powf(10, -signalToNoiseDecibels / 20)
        for index in signal.indices { signal[index] *= noiseScale }
        for index in note.indices { signal[noteStartFrame + index] += note[index] }
        return (signal, noteStartFrame)
    }

    /// Measures `hops` hops after a warm-up of 200, counting only hops that end after
    /// `measuredFromFrame` of `signal` (which is fed in a loop). `resetsEachLoop`: the analyser
    /// starts afresh (not timed) each time the signal starts over, so every loop is the same
    /// first hearing of it.
    static func measure(configuration: AnalysisConfiguration, sampleRateHz: Double, hops: Int,
                        signal: [Float]? = nil, measuredFromFrame: Int = 0, resetsEachLoop: Bool = false) throws -> Result {
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        let signal = signal ?? toneInNoise(sampleRateHz: sampleRateHz)
        let hop = analyzer.hopFrames, lead = analyzer.spectrumLeadFrames
        precondition(lead >= 2, "the hop is too short to separate the points")
        var intake = [Double](), spectrumPoint = [Double](), framePoint = [Double]()
        intake.reserveCapacity(hops)
        spectrumPoint.reserveCapacity(hops)
        framePoint.reserveCapacity(hops)
        signal.withUnsafeBufferPointer { samples in
            var position = 0
            /// Feeds `count` samples (one call) and returns its duration in µs.
            func feed(_ count: Int) -> (microseconds: Double, completed: Bool) {
                let start = nowNanoseconds()
                let step = analyzer.consume(samples.baseAddress! + position, frameCount: count)
                let end = nowNanoseconds()
                precondition(step.consumed == count)
                position += count
                return (Double(end - start) / 1000, step.frameCompleted)
            }
            var index = 0
            while intake.count < hops {
                if position + hop > samples.count {
                    position = 0
                    if resetsEachLoop { analyzer.reset() }
                }
                let before = feed(hop - lead - 1), spectrum = feed(1), between = feed(lead - 1), end = feed(1)
                precondition(!before.completed && !spectrum.completed && !between.completed && end.completed)
                index += 1
                guard index > 200, position > measuredFromFrame else { continue } // warm-up, and hops before the measured part
                intake.append(before.microseconds + between.microseconds)
                spectrumPoint.append(spectrum.microseconds)
                framePoint.append(end.microseconds)
            }
        }
        let whole = (0..<intake.count).map { intake[$0] + spectrumPoint[$0] + framePoint[$0] }
        return Result(intake: Statistics(samples: intake), spectrumPoint: Statistics(samples: spectrumPoint),
                      framePoint: Statistics(samples: framePoint), whole: Statistics(samples: whole))
    }

    /// Hops per block for the quietest-block rows: 400 hops are ~7 s of audio, long enough to
    /// average a hop's own variation, short enough that a quiet stretch of the shared host fits.
    static let quietBlockHops = 400

    /// Markdown rows: per sample rate, the spectrum stage alone (tuner and rhythm off), the
    /// rhythm's and the tuner's shares (also from the quietest blocks, closest to the host to
    /// itself), each point of the full analysis, and the whole hop.
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
            func row(_ part: String, _ statistics: Statistics, percentiles: Bool = true) -> String {
                let dash = "–"
                return "| \(format(sampleRateHz / 1000, 1)) kHz | \(part) | \(hops) | \(format(statistics.mean)) | "
                    + (percentiles ? "\(format(statistics.percentile(0.5))) | \(format(statistics.percentile(0.99))) | \(format(statistics.maximum))" : "\(dash) | \(dash) | \(dash)")
                    + " | \(format(100 * statistics.mean / hopMicroseconds, 3)) % |"
            }
            let spectrumStage = Statistics(samples: zip(plain.spectrumPoint.samples, plain.framePoint.samples).map { $0 + $1 })
            rows.append(row("spectrum stage: window, 2 FFTs, bands, dB, auto-level, smoothing, level, waveform (tuner and rhythm off)", spectrumStage))
            rows.append(row("onsets, tempo, beats (mean difference, rhythm on − off)", Statistics(samples: [rhythm.spectrumPoint.mean - plain.spectrumPoint.mean]), percentiles: false))
            rows.append(row("tuner (mean difference, tuner on − off)", Statistics(samples: [full.framePoint.mean - rhythm.framePoint.mean]), percentiles: false))
            rows.append(row("tuner (difference of the quietest \(quietBlockHops)-hop blocks' means, tuner on − off)",
                            Statistics(samples: [full.framePoint.quietestBlockMean(blockSize: quietBlockHops) - rhythm.framePoint.quietestBlockMean(blockSize: quietBlockHops)]),
                            percentiles: false))
            rows.append(row("sample intake: history, bass decimation, peak, hat transients", full.intake))
            rows.append(row("all analyses, at the spectrum point (spectrum, onsets, tempo, beats)", full.spectrumPoint))
            rows.append(row("all analyses, at the hop's end (level, waveform, tuner)", full.framePoint))
            rows.append(row("**whole hop** (intake + all analyses)", full.whole))
            if sampleRateHz == 48_000 {
                let held = try measure(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz, hops: hops,
                                       signal: TestSignals.lowStringWithFadedOddPartials(sampleRateHz: sampleRateHz, seconds: 5))
                rows.append(row("hop's end on a low string held against its octave (its fundamental measured every hop)", held.framePoint))
                // The steady organ of `PitchTests.anOrganWithAFourFootRankOverAWeakFundamentalIsTheNote`
                // at E2: where evidence for a weak fundamental would be gathered (docs/accuracy.md,
                // pitch finding 30: +20 µs a hop there).
                let organ = TestSignals.harmonicTone(fundamentalHz: 82.41, harmonicAmplitudes: [0.07, 1, 0.1, 0.6, 0.03, 0.3, 0, 0.2],
                                                     sampleRateHz: sampleRateHz, seconds: 5).map { 0.15 * $0 }
                let weakPipe = try measure(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz, hops: hops, signal: organ)
                rows.append(row("hop's end on an organ's weak 8' under its 4' (E2, steady)", weakPipe.framePoint))
                let noisy = noteInPinkNoise(sampleRateHz: sampleRateHz)
                let noisyWithout = try measure(configuration: withoutPitch, sampleRateHz: sampleRateHz, hops: hops,
                                               signal: noisy.signal, measuredFromFrame: noisy.noteStartFrame, resetsEachLoop: true)
                let noisyFull = try measure(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz, hops: hops,
                                            signal: noisy.signal, measuredFromFrame: noisy.noteStartFrame, resetsEachLoop: true)
                rows.append(row("tuner on a note in pink noise at −3 dB SNR after 2 s of the noise alone (the second look on every hop; mean difference, tuner on − off)",
                                Statistics(samples: [noisyFull.framePoint.mean - noisyWithout.framePoint.mean]), percentiles: false))
                rows.append(row("the same, the quietest \(quietBlockHops)-hop blocks' means, tuner on − off",
                                Statistics(samples: [noisyFull.framePoint.quietestBlockMean(blockSize: quietBlockHops) - noisyWithout.framePoint.quietestBlockMean(blockSize: quietBlockHops)]),
                                percentiles: false))
                rows.append(row("hop's end on that note in pink noise (level, waveform, tuner)", noisyFull.framePoint))
            }
        }
        return rows.joined(separator: "\n")
    }
}
