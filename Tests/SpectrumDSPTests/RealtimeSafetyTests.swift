import Foundation
import Testing
import CAllocationCounter
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// The real-time verb allocates nothing: counted by the test binary's own malloc/free.
/// (The JACK-thread version of this test lives in SpectrumLiveTests.)
@Suite(.serialized) struct RealtimeSafetyTests {
    /// With and without the tuner's notation (transposition, temperament, string mode).
    @Test(arguments: [false, true])
    func processAllocatesNothingOverTenThousandHops(withNotation: Bool) throws {
        var configuration = AnalysisConfiguration()
        if withNotation {
            configuration.pitch.transposeSemitones = 2
            configuration.pitch.temperamentCents = [5.9, -3.9, 2, 3.9, -2, 7.8, -2, 3.9, -2, 0, 5.9, -2]
            configuration.pitch.stringNotes = [40, 45, 50, 55, 59, 64]
        }
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: 48_000)
        let ring = FrameRing(capacity: 16)
        defer { ring.deallocate() }
        // Noise, a low sine, and the tuner's other paths: a low string held against its octave
        // (a DFT of the fundamental every hop), a weak fundamental read an octave lower, and a
        // legato fifth whose mixed window repeats at a period common to both notes; a note in
        // pink noise as loud as it, after the noise alone (the correlation weighed against the
        // noise's band floors: `NoiseWeighting`, and the octave below's support against the
        // steady floors); a note 10 dB over pink noise decaying 20 dB/s under it (followed at
        // its fundamental's spectral peak once its correlation is lost, pitch finding 49); an
        // organ's low note whose odd partials sound over a weak fundamental (the octave below
        // supported by its odd partials, finding 53: the note is read only through that path).
        var decayingTone = TestSignals.harmonicTone(fundamentalHz: 440, harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05], sampleRateHz: 48_000, seconds: 1.5)
        for sample in decayingTone.indices { decayingTone[sample] *= powf(10, -20 * Float(sample) / 48_000 / 20) }
        let decayingInNoise = PitchTests.toneInPinkNoiseAsLoud(decayingTone, afterSeconds: 1.5, sampleRateHz: 48_000, seed: 300,
                                                               noiseAboveToneDecibels: -10, trailingSeconds: 1)
        let pinkNoise = TestSignals.pinkNoise(sampleRateHz: 48_000, seconds: 2, amplitude: 0.9, seed: 5)
        let noteInNoise = zip(pinkNoise[48_000...], TestSignals.harmonicTone(fundamentalHz: 146.8, harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05],
                                                                            sampleRateHz: 48_000, seconds: 1)).map { $0 + $1 }
        let signal = TestSignals.whiteNoise(sampleRateHz: 48_000, seconds: 1, amplitude: 0.3)
            + TestSignals.sine(frequencyHz: 82.4, sampleRateHz: 48_000, seconds: 1)
            + TestSignals.lowStringWithFadedOddPartials(sampleRateHz: 48_000, seconds: 1)
            + TestSignals.harmonicTone(fundamentalHz: 110, harmonicAmplitudes: [0.16, 1, 0.25, 1, 0, 0.3], sampleRateHz: 48_000, seconds: 0.5).map { 0.15 * $0 }
            + TestSignals.harmonicTone(fundamentalHz: 82.4, harmonicAmplitudes: [0.056, 1, 0.2, 0.6, 0.05, 0.3, 0, 0.2], sampleRateHz: 48_000,
                                       seconds: 0.5).map { 0.15 * $0 }
            + TestSignals.harmonicTone(fundamentalHz: 196, harmonicAmplitudes: [1, 0.6, 0.3, 0.2], sampleRateHz: 48_000, seconds: 0.5).map { 0.3 * $0 }
            + TestSignals.harmonicTone(fundamentalHz: 293.66, harmonicAmplitudes: [1, 0.6, 0.3, 0.2], sampleRateHz: 48_000, seconds: 0.5).map { 0.3 * $0 }
            + Array(pinkNoise[..<48_000]) + noteInNoise + decayingInNoise
        let blockSizes = [0, 1, 63, 64, 1000, 4096, 17, 256]
        var hops = 0, position = 0, blockIndex = 0, dropped = 0
        var frame = AnalysisFrame()
        // The C side keeps the tally's address between enter and exit: it must not move.
        let tally = UnsafeMutablePointer<allocation_tally>.allocate(capacity: 1)
        tally.initialize(to: allocation_tally(allocations: 0, frees: 0))
        defer { tally.deallocate() }
        signal.withUnsafeBufferPointer { samples in
            while hops < 10_000 {
                let size = min(blockSizes[blockIndex % blockSizes.count], samples.count - position)
                blockIndex += 1
                allocation_counter_enter(tally)
                dropped += analyzer.process(samples.baseAddress! + position, frameCount: size, into: ring)
                allocation_counter_exit()
                while ring.pop(into: &frame) { hops += 1 }
                position = (position + size) % (samples.count - 4096)
            }
        }
        #expect(allocation_tally_allocations(tally) == 0)
        #expect(allocation_tally_frees(tally) == 0)
        #expect(dropped == 0)
        #expect(hops >= 10_000)
    }

    @Test func lockedTempoAndBeatEventsAllocateNothing() throws {
        // A drum pattern, so onsets fire, the tempo locks, the grid is seeded and refitted and
        // beat events are emitted inside the counted region; then a bar of silence (a break:
        // its hops marked absent, the review when the music resumes) and a new tempo (the
        // fading evidence's faster estimates).
        var configuration = AnalysisConfiguration()
        configuration.rhythm.leadMilliseconds = 30
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: 48_000)
        let ring = FrameRing(capacity: 64)
        defer { ring.deallocate() }
        let silent = DrumPattern(name: "silent", events: [])
        let signal = TestSignals.rhythm(sections: [(.rock, 128, 5.7), (silent, 128, 1.875), (.rock, 140, 4)], sampleRateHz: 48_000).samples
        let blockSizes = [0, 1, 63, 64, 1000, 4096, 17, 256]
        var position = 0, blockIndex = 0, beats = 0, onsets = 0
        var frame = AnalysisFrame()
        let tally = UnsafeMutablePointer<allocation_tally>.allocate(capacity: 1)
        tally.initialize(to: allocation_tally(allocations: 0, frees: 0))
        defer { tally.deallocate() }
        signal.withUnsafeBufferPointer { samples in
            while position < samples.count {
                let size = min(blockSizes[blockIndex % blockSizes.count], samples.count - position)
                blockIndex += 1
                allocation_counter_enter(tally)
                _ = analyzer.process(samples.baseAddress! + position, frameCount: size, into: ring)
                allocation_counter_exit()
                while ring.pop(into: &frame) {
                    if frame.beat.isBeat { beats += 1 }
                    if frame.onset.isOnset { onsets += 1 }
                }
                position += size
            }
        }
        allocation_counter_enter(tally)
        analyzer.relearnTempo()
        allocation_counter_exit()
        #expect(allocation_tally_allocations(tally) == 0)
        #expect(allocation_tally_frees(tally) == 0)
        #expect(beats >= 5 && onsets >= 10)
    }

    @Test func theCounterSeesAnAllocation() {
        // Guards the guard: a deliberate allocation inside enter/exit is counted.
        let tally = UnsafeMutablePointer<allocation_tally>.allocate(capacity: 1)
        tally.initialize(to: allocation_tally(allocations: 0, frees: 0))
        defer { tally.deallocate() }
        allocation_counter_enter(tally)
        let array = [Int](repeating: 7, count: 1000)
        allocation_counter_exit()
        #expect(array.count == 1000)
        #expect(allocation_tally_allocations(tally) >= 1)
    }

    @Test func aFullRingDropsAndCountsInsteadOfWaiting() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let ring = FrameRing(capacity: 4)
        defer { ring.deallocate() }
        let signal = TestSignals.silence(sampleRateHz: 48_000, seconds: 0.2) // 12 hops
        let dropped = signal.withUnsafeBufferPointer { analyzer.process($0.baseAddress!, frameCount: $0.count, into: ring) }
        #expect(dropped == 8)
        #expect(ring.count == 4)
        var frame = AnalysisFrame()
        #expect(ring.pop(into: &frame) && frame.streamFrame == 800)
    }
}
