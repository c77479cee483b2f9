import Testing
@testable import SpectrumDSP

/// The tuner's second look in noise (`NoiseWeighting`, docs/dsp.md, Tuner, step 4): bands of
/// steady noise lose their weight and a note's partials keep theirs.
@Suite struct NoiseWeightingTests {
    static let bins = 2049
    /// A hop of 800 frames at 48 kHz and a window of four hops.
    static let hopSeconds = 800.0 / 48_000
    static let windowSeconds = 4 * hopSeconds
    static let partialBins = [40, 80, 120, 160, 200]

    /// A spectrum of `floor` in every bin and `partial` in the partials' bins (nil: none).
    static func powers(floor: Float, partial: Float?) -> UnsafeMutablePointer<Float> {
        let powers = UnsafeMutablePointer<Float>.allocate(capacity: bins)
        powers.initialize(repeating: floor, count: bins)
        if let partial { for bin in partialBins { powers[bin] = partial } }
        return powers
    }

    /// Learns `floor` in every bin over a second of hops that read no note.
    static func weighting(learning floor: Float) -> NoiseWeighting {
        var weighting = NoiseWeighting(bins: bins, hopSeconds: hopSeconds, windowSeconds: windowSeconds)
        for _ in 0..<60 {
            let noise = powers(floor: floor, partial: nil)  // weighed in place: a fresh one each hop
            _ = weighting.weigh(noise)
            noise.deallocate()
            weighting.endHop(noteRead: false)
        }
        return weighting
    }

    @Test func aNoteInTheSteadyNoiseKeepsItsPartialsAndLosesTheNoise() throws {
        var weighting = Self.weighting(learning: 1)
        let note = Self.powers(floor: 1, partial: 1_000)
        defer { note.deallocate() }
        let weighed = weighting.weigh(note)
        let share = try #require(weighed, "the second look is taken in steady noise")
        #expect(share > 0.6 && share < 0.75, "kept share \(share): the partials hold ~0.71 of the window")
        for bin in Self.partialBins { #expect(note[bin] > 900, "partial at bin \(bin): \(note[bin])") }
        #expect(note[1_000] == 0, "a bin of noise alone keeps \(note[1_000])")
    }

    /// The first windows after a reset still hold the zeros before the stream, so their band
    /// powers are far under the noise; taken as floors they were kept for the whole memory
    /// (3 s), and the weights then left the noise in place (docs/accuracy.md, pitch finding 49).
    @Test func theWindowsBeforeTheStreamFillsThemAreNoFloor() {
        var weighting = NoiseWeighting(bins: Self.bins, hopSeconds: Self.hopSeconds, windowSeconds: Self.windowSeconds)
        for hop in 0..<30 {
            // Three hops while the window fills (a quarter, a half, three quarters of the
            // noise's power), then the noise alone.
            let noise = Self.powers(floor: hop < 3 ? Float(hop + 1) / 4 : 1, partial: nil)
            _ = weighting.weigh(noise)
            noise.deallocate()
            weighting.endHop(noteRead: false)
        }
        let note = Self.powers(floor: 1, partial: 1_000)
        defer { note.deallocate() }
        let weighed = weighting.weigh(note)
        #expect(weighed != nil, "the second look is taken in steady noise")
        #expect(note[1_000] == 0, "a bin of noise alone keeps \(note[1_000]): a partial window's power became the floor")
    }

    /// Steady noise is measured between notes all through the memory; in a clean recording the
    /// hops that read no note (a note's tail or attack) fall in one or two sub-windows, and
    /// that "floor" is the instrument's own sound, against which the octave decision must not
    /// weigh a partial (docs/accuracy.md, pitch finding 50).
    @Test func aFloorMeasuredInOneSubWindowIsNoSteadyNoise() {
        let bin = 1_000
        var tail = NoiseWeighting(bins: Self.bins, hopSeconds: Self.hopSeconds, windowSeconds: Self.windowSeconds)
        // The window fills (3 hops), a note's tail is read as no note for 10 hops, then notes
        // are read for 2 s.
        for hop in 0..<(3 + 10 + 120) {
            let sound = Self.powers(floor: 1, partial: nil)
            _ = tail.weigh(sound)
            sound.deallocate()
            tail.endHop(noteRead: hop >= 13)
        }
        let tailFloor = tail.floorPerBin(at: bin), tailSteadyFloor = tail.steadyFloorPerBin(at: bin)
        #expect(tailFloor != nil, "the tail is the band's least power")
        #expect(tailSteadyFloor == nil, "a floor from one sub-window of the memory is no steady noise")
        // Noise alone for 2 s: measured in four of the memory's six sub-windows.
        var noise = NoiseWeighting(bins: Self.bins, hopSeconds: Self.hopSeconds, windowSeconds: Self.windowSeconds)
        for _ in 0..<120 {
            let sound = Self.powers(floor: 1, partial: nil)
            _ = noise.weigh(sound)
            sound.deallocate()
            noise.endHop(noteRead: false)
        }
        let noiseFloor = noise.floorPerBin(at: bin), noiseSteadyFloor = noise.steadyFloorPerBin(at: bin)
        #expect(noiseSteadyFloor != nil, "noise measured through most of the memory is steady")
        #expect(noiseSteadyFloor == noiseFloor)
    }
}
