import Testing
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// Silence, extreme and invalid input, and block-size invariance.
@Suite struct RobustnessTests {
    static func expectAllFiniteAndInRange(_ frames: [AnalysisFrame], _ label: String) {
        for frame in frames {
            for band in 0..<frame.bandCount {
                #expect((0...1).contains(frame.bands[band]), "\(label) band \(band)")
                #expect((0...1).contains(frame.peaks[band]), "\(label) peak \(band)")
            }
            let level = frame.level
            #expect((0...1).contains(level.rms) && (0...1).contains(level.peak) && (0...1).contains(level.vu), "\(label) level")
            #expect(level.rmsDecibels.isFinite && level.peakDecibels.isFinite, "\(label) dB")
            for point in 0..<512 { #expect(frame.waveform[point].isFinite, "\(label) waveform") }
        }
    }

    @Test func silenceGivesZeroBandsAndZeroVU() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let frames = OfflineDriver.frames(&analyzer, signal: TestSignals.silence(sampleRateHz: 48_000, seconds: 1))
        Self.expectAllFiniteAndInRange(frames, "silence")
        let last = frames.last!
        #expect((0..<last.bandCount).allSatisfy { last.bands[$0] == 0 && last.peaks[$0] == 0 })
        #expect(last.level.vu == 0 && last.level.rms == 0 && last.level.rmsDecibels == -120)
    }

    @Test func fullScaleSquareAndWhiteNoiseStayFiniteAndInRange() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let square = OfflineDriver.frames(&analyzer, signal: TestSignals.square(frequencyHz: 110, sampleRateHz: 48_000, seconds: 1))
        Self.expectAllFiniteAndInRange(square, "square")
        #expect(abs(square.last!.level.rms - 1) < 1e-3 && square.last!.level.peak == 1)
        analyzer.reset()
        Self.expectAllFiniteAndInRange(OfflineDriver.frames(&analyzer, signal: TestSignals.whiteNoise(sampleRateHz: 48_000, seconds: 1)), "noise")
    }

    @Test func nonFiniteInputIsTreatedAsSilenceAndCounted() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        var signal = TestSignals.sine(frequencyHz: 1_000, sampleRateHz: 48_000, seconds: 0.5)
        signal[1000] = .nan
        signal[2000] = .infinity
        signal[3000] = -.infinity
        let frames = OfflineDriver.frames(&analyzer, signal: signal)
        Self.expectAllFiniteAndInRange(frames, "nan")
        #expect(analyzer.nonFiniteSampleCount == 3)
        #expect(frames.last!.nonFiniteSampleCount == 3, "the count travels with the frames (to /status and the exit line)")
    }

    /// A finite input so loud that its float32 sum of squares overflows (1e30) is far beyond full
    /// scale: the level and the bands agree that it is full (not level 0 / −120 dB with every
    /// band at 1), and nothing is non-finite.
    @Test func aPowerThatOverflowsReadsFullScaleEverywhere() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let signal = TestSignals.sine(frequencyHz: 1_000, sampleRateHz: 48_000, seconds: 0.5).map { $0 * 1e30 }
        let frames = OfflineDriver.frames(&analyzer, signal: signal)
        Self.expectAllFiniteAndInRange(frames, "1e30")
        let last = frames.last!
        #expect(last.level.vu == 1 && last.level.rms == 1 && last.level.peak == 1, "\(last.level)")
        #expect(last.level.rmsDecibels > 0 && last.level.peakDecibels > 0, "over full scale in dB: \(last.level)")
        #expect((0..<last.bandCount).map { last.bands[$0] }.max()! > 0.99)
        #expect(analyzer.nonFiniteSampleCount == 0, "finite samples are not invalid")
    }

    @Test func levelMatchesTheSignal() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        // −20 dBFS peak sine: RMS −23.01 dBFS, VU (−23.01 + 60) / 60.
        let last = OfflineDriver.frames(&analyzer, signal: TestSignals.sine(frequencyHz: 1_000, sampleRateHz: 48_000, seconds: 0.5, amplitude: 0.1)).last!
        #expect(abs(last.level.rmsDecibels - (-23.01)) < 0.05)
        #expect(abs(last.level.peakDecibels - (-20)) < 0.05)
        #expect(abs(last.level.vu - Float((60 - 23.01) / 60)) < 0.002)
    }

    @Test func anyBlockSizeGivesExactlyTheFramesOfOnePass() throws {
        let signal = TestSignals.whiteNoise(sampleRateHz: 48_000, seconds: 0.7, amplitude: 0.3)
            + TestSignals.sine(frequencyHz: 55, sampleRateHz: 48_000, seconds: 0.7)
        var reference = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let expected = OfflineDriver.frames(&reference, signal: signal, blockSizes: [signal.count])
        #expect(expected.count == 84)
        for blockSizes in [[1], [63], [64], [1000], [4096], [0, 1, 63, 64, 1000, 4096, 0, 17]] {
            var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
            let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: blockSizes)
            #expect(frames.count == expected.count, "blocks \(blockSizes)")
            for (frame, reference) in zip(frames, expected) {
                #expect(frame.streamFrame == reference.streamFrame)
                #expect(frame.level == reference.level, "blocks \(blockSizes) at \(frame.streamFrame)")
                #expect((0..<frame.bandCount).allSatisfy { frame.bands[$0] == reference.bands[$0] && frame.peaks[$0] == reference.peaks[$0] },
                        "blocks \(blockSizes) at \(frame.streamFrame)")
                #expect((0..<512).allSatisfy { frame.waveform[$0] == reference.waveform[$0] })
            }
        }
    }

    @Test func unsupportedSampleRatesAreRejectedWithAClearMessage() {
        #expect(throws: AnalysisConfigurationError.self) { try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 22_050) }
        do {
            _ = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 8_000)
            Issue.record("8 kHz accepted")
        } catch {
            #expect(error.description.contains("8000 Hz is too low for bands up to 20000 Hz"))
        }
    }
}
