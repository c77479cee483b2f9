import Foundation
import Testing
import SpectrumDSP
import SpectrumTestSupport

/// When the stages of a hop run: the spectrum and rhythm an eighth of a hop before the hop's end,
/// the level, waveform and tuner at the end (so a host with 64-frame blocks never runs the whole
/// hop in one block), the same for any block size.
@Suite struct HopScheduleTests {
    static let sampleRateHz = 48_000.0

    @Test func theSpectrumRunsAnEighthOfAHopBeforeTheFrameAndTheLevelAtItsEnd() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: Self.sampleRateHz)
        #expect(analyzer.spectrumLeadFrames == 100)
        let hop = analyzer.hopFrames
        // A loud tone that starts 50 frames before the end of hop 30: after that hop's spectrum.
        let start = 30 * hop - 50
        let tone = TestSignals.sine(frequencyHz: 1_000, sampleRateHz: Self.sampleRateHz, seconds: 0.5)
        let signal = TestSignals.silence(sampleRateHz: Self.sampleRateHz, seconds: Double(start) / Self.sampleRateHz) + tone
        let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [64])
        let (before, frame30, after) = (frames[28], frames[29], frames[30])
        #expect(frame30.streamFrame == Int64(30 * hop))
        #expect(frame30.level.rmsDecibels > -60, "the level at the hop's end sees the tone's first 50 frames")
        let toneBand = analyzer.band(containingFrequencyHz: 1_000)
        let band = try #require(toneBand)
        #expect(frame30.bands[band] == before.bands[band], "the spectrum ran before the tone began")
        #expect(after.bands[band] > frame30.bands[band] + 0.2, "and sees it one hop later")
    }

    @Test func resultsDoNotDependOnTheBlockSize() throws {
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
            #expect(zip(frames, expected).allSatisfy { $0.pitch == $1.pitch && $0.level == $1.level && $0.tempo == $1.tempo && $0.onset == $1.onset }, "blocks \(blockSizes)")
        }
    }
}

/// Legato: the window that holds the old note's tail and the new note's start repeats at a
/// common sub-multiple of both; the tuner must not flash that up as a note. From 300 Hz the
/// short window overrules the long one; below, the long window's period is recognised as a
/// multiple of the short window's where the long window does not repeat at the short one's.
/// An octave down from an established note is shown although the old note is held against
/// an octave up (its fundamental fades with it).
@Suite struct LegatoTests {
    static func shownNotes(from firstHz: Double, to secondHz: Double) throws -> (shown: Set<Int32>, expected: Set<Int32>) {
        let partials = [1, 0.6, 0.3, 0.2]
        let signal = TestSignals.harmonicTone(fundamentalHz: firstHz, harmonicAmplitudes: partials, sampleRateHz: 48_000, seconds: 0.6)
            + TestSignals.harmonicTone(fundamentalHz: secondHz, harmonicAmplitudes: partials, sampleRateHz: 48_000, seconds: 0.6)
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let shown = Set(OfflineDriver.frames(&analyzer, signal: signal).filter { $0.pitch.hasNote }.map(\.pitch.noteNumber))
        let expected = Set([firstHz, secondHz].map { Int32((69 + 12 * log2($0 / 440)).rounded()) })
        return (shown, expected)
    }

    @Test func anOctaveUpShowsOnlyTheTwoNotes() throws {
        let notes = try Self.shownNotes(from: 261.63, to: 523.25)
        #expect(notes.shown == notes.expected, "C4 → C5 showed MIDI \(notes.shown.sorted())")
    }

    @Test(arguments: [(293.66, 440.0), (220.0, 329.63), (196.0, 293.66), (130.81, 196.0), (146.83, 196.0)])
    func aFifthOrFourthUpShowsOnlyTheTwoNotes(from firstHz: Double, to secondHz: Double) throws {
        let notes = try Self.shownNotes(from: firstHz, to: secondHz)
        #expect(notes.shown == notes.expected, "\(firstHz) → \(secondHz) Hz showed MIDI \(notes.shown.sorted())")
    }

    @Test(arguments: [(123.47, 61.74), (196.0, 98.0)])
    func anOctaveDownShowsOnlyTheTwoNotes(from firstHz: Double, to secondHz: Double) throws {
        let notes = try Self.shownNotes(from: firstHz, to: secondHz)
        #expect(notes.shown == notes.expected, "\(firstHz) → \(secondHz) Hz showed MIDI \(notes.shown.sorted())")
    }
}
