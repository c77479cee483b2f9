import Testing
@testable import SpectrumDSP
import SpectrumTestSupport

/// The tempo estimator's metrical-level decisions on onset signals built hop by hop (60 hops a
/// second), where every lag is exact.
@Suite struct TempoEstimatorTests {
    /// Feeds `seconds` of an onset signal and a hat-band signal, both functions of the hop,
    /// each with its own uniform noise (a hat band's texture: ±0.15 there); returns the agreed
    /// tempo at the end.
    static func agreedBpm(seconds: Double, flux: (Int) -> Float, hatFlux: (Int) -> Float) -> Float {
        var estimator = TempoEstimator(configuration: RhythmConfiguration(), frameRateHz: 60)
        var generator = SeededGenerator(seed: 7)
        for hop in 0..<Int(seconds * 60) {
            let fluxNoise = Float.random(in: 0...0.04, using: &generator), hatNoise = Float.random(in: 0...0.3, using: &generator)
            estimator.update(flux: flux(hop) + fluxNoise, hatFlux: hatFlux(hop) + hatNoise, grid: GridOctaveEvidence())
        }
        return estimator.agreedBpm
    }

    /// Onsets on every beat of 144 BPM (25 hops), accented on every other one: the onset signal
    /// alone reads 144. Hats on each of those beats and never between make them the eighths of
    /// 72, a duple metre (r at 2 beats above r at 3): 72.
    @Test func hatsOnEveryBeatAndNeverBetweenHalveTheTempo() {
        let flux: (Int) -> Float = { hop in hop % 50 == 0 ? 1 : (hop % 25 == 0 ? 0.5 : 0) }
        let withoutHats = Self.agreedBpm(seconds: 12, flux: flux) { _ in 0 }
        let hatsOnBeats = Self.agreedBpm(seconds: 12, flux: flux) { hop in hop % 25 == 0 ? 0.5 : 0 }
        #expect(abs(withoutHats - 144) < 1, "without hats: \(withoutHats)")
        #expect(abs(hatsOnBeats - 72) < 1, "hats on every beat: \(hatsOnBeats)")
    }

    /// Hats that also fall between the beats subdivide them: the tempo stays (150, 24 hops).
    /// Hats that are the onsets themselves (a click track: the hat band hears every click)
    /// say nothing: the tempo stays (144).
    @Test func subdividingHatsAndClicksKeepTheTempo() {
        let subdividing = Self.agreedBpm(seconds: 12, flux: { hop in hop % 48 == 0 ? 1 : (hop % 24 == 0 ? 0.5 : 0) },
                                         hatFlux: { hop in hop % 12 == 0 ? 0.5 : 0 })
        #expect(abs(subdividing - 150) < 1, "hats on the eighths: \(subdividing)")
        let click: (Int) -> Float = { hop in hop % 50 == 0 ? 1 : (hop % 25 == 0 ? 0.5 : 0) }
        var estimator = TempoEstimator(configuration: RhythmConfiguration(), frameRateHz: 60)
        for hop in 0..<(12 * 60) { estimator.update(flux: click(hop), hatFlux: click(hop), grid: GridOctaveEvidence()) }
        let clicks = estimator.agreedBpm
        #expect(abs(clicks - 144) < 1, "hat band = onset signal: \(clicks)")
    }

    /// Off-beat hats (four on the floor: a kick on every beat, an open hat between) pulse with
    /// the beat without subdividing it, but between the onsets, not on them: the tempo stays.
    @Test func offBeatHatsKeepTheTempo() {
        let offBeat = Self.agreedBpm(seconds: 12, flux: { hop in hop % 50 == 0 ? 1 : (hop % 25 == 0 ? 0.5 : 0) },
                                     hatFlux: { hop in hop % 25 == 12 ? 0.5 : 0 })
        #expect(abs(offBeat - 144) < 1, "off-beat hats: \(offBeat)")
    }

    /// A waltz's hats fall on every beat and nowhere between too, but its bar is three beats:
    /// 150 BPM stays 150, not 75.
    @Test func aWaltzKeepsItsTempo() {
        let flux: (Int) -> Float = { hop in hop % 72 == 0 ? 1 : (hop % 24 == 0 ? 0.5 : 0) }
        let withoutHats = Self.agreedBpm(seconds: 12, flux: flux) { _ in 0 }
        let waltz = Self.agreedBpm(seconds: 12, flux: flux) { hop in hop % 24 == 0 ? 0.5 : 0 }
        #expect(abs(withoutHats - 150) < 1, "3/4 at 150 without hats: \(withoutHats)")
        #expect(abs(waltz - 150) < 1, "3/4 at 150: \(waltz)")
    }

    /// A waltz at 180 BPM (beat 20 hops) has its bar at 60 BPM, the range's floor. Its downbeat
    /// differs from beats 2 and 3 (kick and bass: an onset over two hops), so the onset signal
    /// correlates a little more at the bar than at one beat, and not at all at half the bar:
    /// the octave check alone kept the bar rate (60). The same check for a third of the period
    /// reads the beat, with or without hats on every beat (eighths say nothing about thirds).
    @Test func aFastWaltzIsNotReadAtItsBarRate() {
        let flux: (Int) -> Float = { hop in
            switch hop % 60 {
            case 0: 1
            case 1: 0.6
            case 20, 40: 0.7
            default: 0
            }
        }
        let withoutHats = Self.agreedBpm(seconds: 12, flux: flux) { _ in 0 }
        let hatsOnBeats = Self.agreedBpm(seconds: 12, flux: flux) { hop in hop % 20 == 0 ? 0.5 : 0 }
        #expect(abs(withoutHats - 180) < 1, "3/4 at 180 without hats: \(withoutHats)")
        #expect(abs(hatsOnBeats - 180) < 1, "3/4 at 180 with hats on the beats: \(hatsOnBeats)")
    }

    /// The beat grid's octave evidence moves the tempo, and the pair's memory holds it once the
    /// grid has nothing more to say: clicks at 180 BPM (20 hops) read 180; a grid at 180 whose
    /// every other beat is nearly empty and whose accent repeats every four beats (both octaves
    /// preferred) moves it to 90; a grid at 90, which sees nothing to halve or double, then
    /// leaves it at 90 for 8 s. Without the memory (`octaveMemoryWeight` 0) the estimates return
    /// to 180, the old rules' latch (`octaveLowered`) that the memory replaces.
    @Test func theGridsOctaveOpinionIsRemembered() {
        for memoryWeight in [TempoEstimator.Parameters().octaveMemoryWeight, 0] {
            var parameters = TempoEstimator.Parameters()
            parameters.octaveMemoryWeight = memoryWeight
            var estimator = TempoEstimator(configuration: RhythmConfiguration(), frameRateHz: 60, parameters: parameters)
            var readings: [Float] = []
            for hop in 0..<(22 * 60) {
                let agreed = estimator.agreedBpm
                var grid = GridOctaveEvidence()
                if agreed > 0 && hop >= 6 * 60 {
                    grid.bpm = agreed
                    // 6–10 s: every other beat of a grid at 180 nearly empty, the accent every four.
                    if hop < 10 * 60 && agreed > 135 { (grid.weakParityShare, grid.fourBeatAccentShare) = (0.2, 0.2) }
                }
                estimator.update(flux: hop % 20 == 0 ? 1 : 0, hatFlux: 0, grid: grid)
                if hop % 60 == 59 { readings.append(estimator.agreedBpm) }
            }
            #expect(abs(readings[5] - 180) < 1, "weight \(memoryWeight), clicks at 180 before the grid's opinion: \(readings)")
            if memoryWeight > 0 {
                #expect(readings[9...].allSatisfy { abs($0 - 90) < 1 }, "weight \(memoryWeight), after the grid's opinion: \(readings)")
            } else {
                #expect(abs(readings.last! - 180) < 1, "without the memory: \(readings)")
            }
        }
    }

    /// A move the memory made is not undone by one contrary opinion: clicks at 171.4 BPM (21
    /// hops) move to 85.7 on one opinion of the grid for the half (6 s); at 12 s the grid,
    /// now at 85.7, says for one moment that its off-beats are as strong as its beats (an
    /// opinion for the double). The tempo stays at 85.7 (with a memory that each opinion moves
    /// half way, that one opinion took it back to 171.4 at once and kept it there).
    @Test func oneContraryOpinionDoesNotUndoTheMemorysMove() {
        var estimator = TempoEstimator(configuration: RhythmConfiguration(), frameRateHz: 60)
        var readings: [Float] = []
        for hop in 0..<(20 * 60) {
            let agreed = estimator.agreedBpm
            var grid = GridOctaveEvidence()
            if agreed > 0 && hop >= 6 * 60 {
                grid.bpm = agreed
                // 6–6.1 s: every other beat of a grid at 171.4 nearly empty, the accent every four.
                if hop < 6 * 60 + 6 && agreed > 135 { (grid.weakParityShare, grid.fourBeatAccentShare) = (0.2, 0.2) }
                // 12–12.1 s: the off-beats of a grid at 85.7 as strong as its beats.
                if hop >= 12 * 60 && hop < 12 * 60 + 6 && agreed < 100 { grid.offBeatShare = 1 }
            }
            estimator.update(flux: hop % 21 == 0 ? 1 : 0, hatFlux: 0, grid: grid)
            if hop % 30 == 29 { readings.append(estimator.agreedBpm) }
        }
        #expect(abs(readings[10] - 171.4) < 1, "clicks at 171.4 before the grid's opinion: \(readings)")
        #expect(readings[14...].allSatisfy { abs($0 - 85.7) < 1 }, "after the grid's opinion for the half, and one for the double at 12 s: \(readings)")
    }
}
