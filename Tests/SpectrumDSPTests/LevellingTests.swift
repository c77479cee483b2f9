import Testing
import SpectrumDSP
import SpectrumTestSupport

/// Auto-levelling, tilt, smoothing and peak-hold, checked against their configured constants.
@Suite struct LevellingTests {
    @Test func autoLevelRisesAtOnceAndFallsAtTheConfiguredRate() throws {
        var configuration = AnalysisConfiguration()
        configuration.autoLevel.decayDecibelsPerSecond = 12
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: 48_000)
        #expect(analyzer.ceilingDecibels == -60)
        // A loud tone: the first hop that holds it sets the ceiling to its loudest band at once.
        let tone = TestSignals.sine(frequencyHz: 1_000, sampleRateHz: 48_000, seconds: 0.1, amplitude: 0.5)
        _ = OfflineDriver.frames(&analyzer, signal: Array(tone.prefix(analyzer.hopFrames)))
        #expect(analyzer.ceilingDecibels == analyzer.bandLevelsDecibels.max()!)
        #expect(analyzer.ceilingDecibels > -30)
        // With the window full of the tone, the ceiling sits at the tone's level (−6 dB for a
        // half-scale sine), within one hop's decay (0.2 dB) of the loudest band.
        _ = OfflineDriver.frames(&analyzer, signal: Array(tone.dropFirst(analyzer.hopFrames)))
        let loudest = analyzer.bandLevelsDecibels.max()!
        #expect(analyzer.ceilingDecibels >= loudest - 0.2001 && analyzer.ceilingDecibels <= loudest + 0.5)
        #expect(abs(analyzer.ceilingDecibels - (-6.02)) < 0.75)
        // Silence: the ceiling falls by 12 dB per second of audio (0.2 dB per 1/60 s hop).
        let start = analyzer.ceilingDecibels
        _ = OfflineDriver.frames(&analyzer, signal: TestSignals.silence(sampleRateHz: 48_000, seconds: 2))
        #expect(abs((start - analyzer.ceilingDecibels) - 24) < 0.01)
        // ...and stops at the minimum.
        _ = OfflineDriver.frames(&analyzer, signal: TestSignals.silence(sampleRateHz: 48_000, seconds: 5))
        #expect(analyzer.ceilingDecibels == -60)
    }

    @Test(arguments: [(400.0, 5.0), (1_600.0, 5.0 * 2.1577), (6_400.0, 5.0 * 9.5183)])
    func tiltAddsTheExpectedDecibels(frequencyHz: Double, expectedBoostDecibels: Double) throws {
        var tilted = AnalysisConfiguration()
        tilted.tilt.enabled = true
        // rate × octaves^power with octaves = 1, 3, 5 above 200 Hz: 5 × {1, 3^1.4, 5^1.4}.
        let expected = tilted.tilt.boostDecibels(atFrequencyHz: frequencyHz)
        #expect(abs(expected - [400.0: 5.0, 1_600: 5 * 4.6555, 6_400: 5 * 9.5183][frequencyHz]!) < 0.01)
        _ = expectedBoostDecibels
        var plain = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        var boosted = try Analyzer(configuration: tilted, sampleRateHz: 48_000)
        let tone = TestSignals.sine(frequencyHz: frequencyHz, sampleRateHz: 48_000, seconds: 0.3, amplitude: 0.01)
        _ = OfflineDriver.frames(&plain, signal: tone)
        _ = OfflineDriver.frames(&boosted, signal: tone)
        let band = plain.band(containingFrequencyHz: frequencyHz)!
        let boost = Double(boosted.bandLevelsDecibels[band] - plain.bandLevelsDecibels[band])
        // The boost is applied at the band's centre, within half a band (≤ 0.04 octave) of the tone.
        #expect(abs(boost - expected) < 0.6, "\(frequencyHz) Hz: +\(boost) dB, expected +\(expected)")
        #expect(plain.band(containingFrequencyHz: 150).map { boosted.bandLevelsDecibels[$0] == plain.bandLevelsDecibels[$0] } == true)
    }

    @Test func smoothingAndPeakHoldFollowTheirTimeConstantsAtAnyRate() throws {
        // The seed's per-frame coefficients at 60 frames/s, and the same time behaviour at 30.
        for rateHz in [60.0, 30.0] {
            var configuration = AnalysisConfiguration()
            configuration.outputRateHz = rateHz
            var analyzer = try Analyzer(configuration: configuration, sampleRateHz: 48_000)
            let band = analyzer.band(containingFrequencyHz: 1_000)!
            let tone = TestSignals.sine(frequencyHz: analyzer.bandCentreFrequenciesHz[band], sampleRateHz: 48_000, seconds: 1)
            let attack = OfflineDriver.frames(&analyzer, signal: tone)
            // Attack: 90 % within ~88 ms of the window filling (seed: 5.3 frames at 60 fps).
            let full = attack.last!.bands[band]
            #expect(full > 0.8)
            let release = OfflineDriver.frames(&analyzer, signal: TestSignals.silence(sampleRateHz: 48_000, seconds: 3))
            // Release: 0.12 per frame at 60 fps → down to 10 % in ~300 ms once the window is empty.
            let windowEmptySeconds = 2048.0 / 48_000
            func value(atSeconds seconds: Double) -> Float { release[Int((seconds * rateHz).rounded()) - 1].bands[band] }
            #expect(value(atSeconds: windowEmptySeconds + 0.1) > 0.1 * full, "rate \(rateHz)")
            #expect(value(atSeconds: windowEmptySeconds + 0.4) < 0.1 * full, "rate \(rateHz)")
            // Peak-hold falls 0.36 per second: after 1 s of silence the peak is ~full − 0.36.
            let peak = release[Int(rateHz) - 1].peaks[band]
            #expect(abs(peak - (full - 0.36 * Float(Int(rateHz) - 1) / Float(rateHz) - 0.36 / Float(rateHz))) < 0.02, "rate \(rateHz): \(peak)")
        }
    }
}
