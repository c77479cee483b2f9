import Testing
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// Spectrum stage: band placement, resolution in the bass, sample-rate independence.
@Suite struct SpectrumAnalysisTests {
    static let sampleRates: [Double] = [44_100, 48_000, 96_000]

    /// Runs a steady tone long enough for the bass window and the smoothing to settle.
    static func settledFrame(_ analyzer: inout Analyzer, _ signal: [Float]) -> AnalysisFrame {
        analyzer.reset()
        return OfflineDriver.frames(&analyzer, signal: signal).last!
    }

    @Test(arguments: sampleRates)
    func sinesPeakInTheBandContainingTheirFrequency(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        // Every 7th band's centre, from the first band to the last.
        for band in stride(from: 0, to: analyzer.bandCount, by: 7) + [analyzer.bandCount - 1] {
            let frequencyHz = analyzer.bandCentreFrequenciesHz[band]
            let frame = Self.settledFrame(&analyzer, TestSignals.sine(frequencyHz: frequencyHz, sampleRateHz: sampleRateHz, seconds: 0.5))
            #expect(OfflineDriver.loudestBand(frame) == band, "\(frequencyHz) Hz at \(sampleRateHz) Hz")
        }
    }

    @Test func chromaticSweepPeaksInNonDecreasingBands() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        var previousBand = -1
        var bandsSeen = Set<Int>()
        // MIDI 16 (20.6 Hz) to 135 (19.9 kHz), one semitone apart.
        for note in 16...135 {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let frame = Self.settledFrame(&analyzer, TestSignals.sine(frequencyHz: frequencyHz, sampleRateHz: 48_000, seconds: 0.4))
            let band = OfflineDriver.loudestBand(frame)
            #expect(band >= previousBand, "MIDI \(note) (\(frequencyHz) Hz) peaked in band \(band) after \(previousBand)")
            #expect(abs(band - analyzer.band(containingFrequencyHz: frequencyHz)!) <= 1, "MIDI \(note)")
            previousBand = band
            bandsSeen.insert(band)
        }
        // A semitone is ~1.1 bands wide: distinct notes must land in distinct bands.
        #expect(bandsSeen.count == 120)
    }

    @Test(arguments: sampleRates)
    func thirtyAndThirtySixHertzPeakInDifferentBands(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let low = OfflineDriver.loudestBand(Self.settledFrame(&analyzer, TestSignals.sine(frequencyHz: 30, sampleRateHz: sampleRateHz, seconds: 0.6)))
        let high = OfflineDriver.loudestBand(Self.settledFrame(&analyzer, TestSignals.sine(frequencyHz: 36, sampleRateHz: sampleRateHz, seconds: 0.6)))
        #expect(low == analyzer.band(containingFrequencyHz: 30))
        #expect(high > low + 1)
    }

    @Test func noBandIsEmptyOrACopyOfItsNeighbour() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        _ = OfflineDriver.frames(&analyzer, signal: TestSignals.whiteNoise(sampleRateHz: 48_000, seconds: 0.5, amplitude: 0.5))
        let levels = analyzer.bandLevelsDecibels
        for band in levels.indices {
            #expect(levels[band] > -100, "band \(band) is empty: \(levels[band]) dB")
            if band > 0 { #expect(levels[band] != levels[band - 1], "band \(band) copies band \(band - 1)") }
        }
        // A sine inside one narrow bass band: the bands either side get distinct, lower values.
        analyzer.reset()
        let band = 6
        _ = OfflineDriver.frames(&analyzer, signal: TestSignals.sine(frequencyHz: analyzer.bandCentreFrequenciesHz[band], sampleRateHz: 48_000, seconds: 0.6))
        let toneLevels = analyzer.bandLevelsDecibels
        #expect(toneLevels[band] > toneLevels[band - 1] && toneLevels[band] > toneLevels[band + 1])
        #expect(toneLevels[band - 1] != toneLevels[band - 2] && toneLevels[band + 1] != toneLevels[band + 2])
    }

    @Test func aToneInsideAWideBandReadsItsOwnPower() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let band = analyzer.band(containingFrequencyHz: 3_000)!
        // Amplitude 0.5: −6.02 dB relative to a full-scale sine.
        _ = OfflineDriver.frames(&analyzer, signal: TestSignals.sine(frequencyHz: analyzer.bandCentreFrequenciesHz[band], sampleRateHz: 48_000, seconds: 0.3))
        #expect(abs(analyzer.bandLevelsDecibels[band] - (-6.02)) < 0.5)
    }

    @Test(arguments: sampleRates)
    func frameRateAndHopFollowTheSampleRate(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let frames = OfflineDriver.frames(&analyzer, signal: TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 2))
        #expect(frames.count == 120)
        #expect(abs(analyzer.frameRateHz - 60) < 0.01)
        #expect(abs(Double(analyzer.windowFrames) / sampleRateHz - 2048.0 / 48_000) < 1e-4)
    }
}
