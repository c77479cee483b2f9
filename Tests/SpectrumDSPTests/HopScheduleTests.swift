import Testing
import SpectrumDSP
import SpectrumTestSupport

/// When the stages of a hop run: the tuner an eighth of a hop before the hop's end (so a host
/// with 64-frame blocks never runs it in the same block as the rest of the hop), the same for
/// any block size.
@Suite struct HopScheduleTests {
    static let sampleRateHz = 48_000.0

    @Test func theTunerReadsTheWindowEndingAnEighthOfAHopBeforeTheFrame() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: Self.sampleRateHz)
        #expect(analyzer.tunerLeadFrames == 100)
        let hop = analyzer.hopFrames
        // An A3 that starts 50 frames before the end of hop 30: after the tuner's run for that hop.
        let start = 30 * hop - 50
        let tone = TestSignals.harmonicTone(fundamentalHz: 220, harmonicAmplitudes: [1, 0.5, 0.3], sampleRateHz: Self.sampleRateHz, seconds: 1)
        let signal = TestSignals.silence(sampleRateHz: Self.sampleRateHz, seconds: Double(start) / Self.sampleRateHz) + tone
        let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [64])
        let frame30 = frames[29], later = frames[29 + 10]
        #expect(frame30.streamFrame == Int64(30 * hop))
        #expect(frame30.level.rmsDecibels > -60, "the spectrum and level see the tone's first 50 frames")
        #expect(!frame30.pitch.hasNote && frame30.pitch.confidence == 0, "the tuner ran before the tone began")
        #expect(later.pitch.noteNumber == 57, "A3 once the tone has sounded")
    }

    @Test func pitchDoesNotDependOnTheBlockSize() throws {
        // Three notes of a harmonic tone.
        let signal = [196.0, 293.66, 440.0].flatMap {
            TestSignals.harmonicTone(fundamentalHz: $0, harmonicAmplitudes: [1, 0.6, 0.3, 0.2], sampleRateHz: Self.sampleRateHz, seconds: 0.5)
        }
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: Self.sampleRateHz)
        let expected = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [signal.count])
        #expect(Set(expected.filter { $0.pitch.hasNote }.map(\.pitch.noteNumber)).isSuperset(of: [55, 62, 69]))
        for blockSizes in [[1], [64], [99, 100, 101], [4096], [0, 1, 63, 64, 1000, 4096, 0, 17]] {
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: blockSizes)
            #expect(frames.count == expected.count)
            #expect(zip(frames, expected).allSatisfy { $0.pitch == $1.pitch }, "blocks \(blockSizes)")
        }
    }
}
