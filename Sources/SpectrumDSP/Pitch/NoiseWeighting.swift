import Glibc
import SpectrumCore

/// Weighs the long window's power spectrum against the input's steady noise before the
/// normalised autocorrelation, for a second look at a window whose plain correlation has no
/// confident peak: each band (a third of an octave, at least `minimumBandBins` bins wide) by
/// its Wiener gain `max(0, 1 − overSubtraction · floor / power)`, where the band's floor is the
/// least power it held on a hop that read no note over the last `noiseMemorySeconds` (minimum
/// statistics). A note's partials stand above the noise in their bands and keep their weight;
/// bands of noise alone lose theirs. In pink noise at 0 dB SNR the unweighted window is half
/// noise, so a perfectly periodic note correlates at r ≈ 0.5, under the tuner's 0.55; most of
/// that noise lies in bands without a partial (pink noise has as much power in 20–200 Hz as
/// in 2–20 kHz). The correlation's segment energies are scaled by the share of the window's
/// power the weights keep (`NormalisedAutocorrelation.correlatePowers`), so r is the weighted
/// window's Pearson correlation for a spectrum steady across the window. Weights that keep
/// less than `minimumKeptShare` of the window are not applied (noise alone: they would leave
/// a narrow band of noise, which repeats like a tone). docs/dsp.md, Tuner, step 4.
///
/// `init` allocates; `weigh`, `endHop` and `reset` are real-time safe.
struct NoiseWeighting: ~Copyable {
    struct Parameters {
        /// Bands per octave: narrow enough that the bands between a note's first partials
        /// (and below its fundamental) hold no partial, wide enough to average many bins
        /// (weighting every hop, an earlier variant: 2 per octave read 1.8 points fewer frames
        /// in pink noise at 0 dB, 6 per octave 0.4 more with 0.3 points more octave errors).
        var bandsPerOctave = 3.0
        /// Fewest bins per band (~83 Hz at 48 kHz): a band's power then scatters by ±35 %
        /// over noise alone instead of ±100 % for a single bin, so its minimum is a steady floor.
        var minimumBandBins = 8
        /// How far back a band's minimum power reaches: longer than a sustained note (the
        /// corpus's 1.2 s, a tuner's held note of a few seconds), so the floor is noise, not
        /// the note; a change of room noise is followed within this time (1.5 s read 0.5
        /// points more frames at 0 dB SNR, with 0.7 points more octave errors).
        var noiseMemorySeconds = 3.0
        /// The floor is the least of many noisy band powers, under the noise's mean power
        /// (for 8 bins ~0.4 of it): the gain subtracts this many floors. Chosen on the tuning
        /// part (docs/accuracy.md, pitch finding 18).
        var overSubtraction: Float = 2
        /// Least share of the window's power the weights may keep and still be applied: at 0.1
        /// (weighting every hop) the tuning part's GM drum kit lost 2 points of no-note
        /// frames; at 0.35 pink 0 dB lost 1 point. Pink noise alone keeps 0.1–0.35 (its floors
        /// are minima, under its mean), and where the weights kept 0.2–0.3 of it the narrow
        /// bands left correlated as a low note now and then: 2 frames of 33 noise files at 0.2,
        /// none at 0.25 (docs/accuracy.md, pitch finding 49).
        var minimumKeptShare: Float = 0.25
        /// Least share of the window's power the band floors hold for the window to be a note
        /// in steady noise (`holdsSteadyNoise`): at 0 dB SNR they hold 0.1–0.3 of it (5th to
        /// 25th percentile of the tuning part's read windows), a drum's ring over the quiet
        /// between strokes 0.02 (median). Chosen on the tuning part (docs/accuracy.md, pitch
        /// finding 31).
        var steadyNoiseFloorShare: Float = 0.1
        /// Sub-windows of the memory (of `subWindowCount`) in which a band's floor must have
        /// been measured to count as steady noise (`steadyFloorPerBin`): half of them. On the
        /// tuning part, 2 read a clean choir melody worse (3 frames in each of the clean, quiet
        /// and 44.1 kHz conditions), 4 and 5 gained less at pink 0 dB (docs/accuracy.md, pitch
        /// finding 50).
        var steadyFloorSubWindows = 3
    }

    private let parameters: Parameters
    /// Band b covers bins `bandEdges[b] ..< bandEdges[b + 1]`.
    private let bandEdges: UnsafeMutablePointer<Int>
    let bandCount: Int
    /// This hop's power per band, and its weight.
    private let bandPowers: RealtimeBuffer
    private let bandWeights: RealtimeBuffer
    /// Minimum statistics: the least power of each band in each of `subWindowCount` past
    /// sub-windows of `subWindowHops` hops (band-major), and in the current one.
    private let subWindowMinima: RealtimeBuffer
    private let currentMinima: RealtimeBuffer
    private let subWindowCount: Int
    private let subWindowHops: Int
    private var hopInSubWindow = 0
    private var subWindowIndex = 0
    /// The hops after a reset whose window still holds the zeros that preceded the stream: their
    /// band powers are no noise floor (they kept the floors low for the whole memory, pitch
    /// finding 49); and how many of them are left.
    private let partialWindowHops: Int
    private var partialWindowHopsLeft: Int
    /// Whether `weigh` measured `bandPowers` this hop.
    private var measured = false
    /// Whether the band floors held `steadyNoiseFloorShare` of the power `weigh` measured last:
    /// the window is a note in steady noise, not a sound over quiet.
    private(set) var holdsSteadyNoise = false
    /// Whether the last hop ended (`endHop`) having measured `holdsSteadyNoise` true: the
    /// window held steady noise one hop ago, not some older hop's verdict.
    private(set) var heldSteadyNoiseLastHop = false

    /// Sub-windows of the memory: the floor forgets a sub-window at a time.
    static let subWindowCount = 6

    /// Allocates; not real-time safe. `bins` is the spectrum's bin count (fftSize / 2 + 1);
    /// `windowSeconds` the span of the window `weigh` is given.
    init(bins: Int, hopSeconds: Double, windowSeconds: Double, parameters: Parameters = Parameters()) {
        self.parameters = parameters
        partialWindowHops = max(0, Int((windowSeconds / hopSeconds).rounded(.up)) - 1)
        partialWindowHopsLeft = partialWindowHops
        var edges = [1]
        let ratio = pow(2, 1 / parameters.bandsPerOctave)
        while edges.last! < bins {
            let last = edges.last!
            edges.append(min(bins, max(last + parameters.minimumBandBins, Int((Double(last) * ratio).rounded(.up)))))
        }
        bandCount = edges.count - 1
        bandEdges = .allocate(capacity: edges.count)
        bandEdges.initialize(from: edges, count: edges.count)
        bandPowers = RealtimeBuffer(count: bandCount)
        bandWeights = RealtimeBuffer(count: bandCount, repeating: 1)
        subWindowCount = Self.subWindowCount
        subWindowHops = max(1, Int((parameters.noiseMemorySeconds / hopSeconds / Double(Self.subWindowCount)).rounded()))
        subWindowMinima = RealtimeBuffer(count: bandCount * Self.subWindowCount, repeating: .infinity)
        currentMinima = RealtimeBuffer(count: bandCount, repeating: .infinity)
    }

    deinit { bandEdges.deallocate() }

    /// Weighs `powers` (bin k's power in `powers[k]`, as `NormalisedAutocorrelation.powers`
    /// holds them) in place against the floors, and returns the share of their sum the weights
    /// kept, or nil when they were not applied. Real-time safe.
    @_noLocks
    mutating func weigh(_ powers: UnsafeMutablePointer<Float>) -> Float? {
        // 1) Band powers, and each band's floor: its least power over the memory.
        var total: Float = 0, kept: Float = 0, floors: Float = 0
        for band in 0..<bandCount {
            let sum = realtimeSum(powers + bandEdges[band], count: bandEdges[band + 1] - bandEdges[band])
            bandPowers[band] = sum
            let floor = bandFloor(band)
            // 2) The band's Wiener gain against its floor (none known: no weight).
            let weight = sum > 0 && floor < .infinity ? max(0, 1 - parameters.overSubtraction * floor / sum) : 0
            bandWeights[band] = weight
            total += sum
            kept += weight * sum
            if floor < .infinity { floors += floor }
        }
        holdsSteadyNoise = total > 0 && floors >= parameters.steadyNoiseFloorShare * total
        measured = true
        guard total > 0 else { return nil }
        let share = kept / total
        guard share >= parameters.minimumKeptShare else { return nil }
        // 3) Each band's weight over its bins, eight at a time.
        for band in 0..<bandCount {
            let weight = bandWeights[band], end = bandEdges[band + 1]
            var bin = bandEdges[band]
            while bin + 8 <= end {
                let values = UnsafeMutableRawPointer(powers + bin)
                values.storeBytes(of: values.loadUnaligned(as: SIMD8<Float>.self) * weight, as: SIMD8<Float>.self)
                bin += 8
            }
            while bin < end {
                powers[bin] *= weight
                bin += 1
            }
        }
        return share
    }

    /// Band `band`'s floor: its least power over the memory (infinity while none is known).
    @inline(__always) @_noLocks
    private func bandFloor(_ band: Int) -> Float {
        var floor = currentMinima[band]
        for slot in 0..<subWindowCount { floor = min(floor, subWindowMinima[band * subWindowCount + slot]) }
        return floor
    }

    /// The band holding `bin`, or nil outside the bands.
    @inline(__always) @_noLocks
    private func band(holding bin: Int) -> Int? {
        guard bin >= bandEdges[0], bin < bandEdges[bandCount] else { return nil }
        var band = 0
        while bandEdges[band + 1] <= bin { band += 1 }
        return band
    }

    /// The floor per bin of the band holding `bin`: its least power over the memory spread over
    /// its bins, or nil while none is known. Real-time safe.
    @_noLocks
    func floorPerBin(at bin: Int) -> Float? {
        guard let band = band(holding: bin) else { return nil }
        let floor = bandFloor(band)
        guard floor < .infinity else { return nil }
        return floor / Float(bandEdges[band + 1] - bandEdges[band])
    }

    /// `floorPerBin`, only where the band's noise is steady: its floor was measured in at least
    /// `steadyFloorSubWindows` of the memory's sub-windows (half the memory). Noise that lasts
    /// is measured between notes throughout; in a clean recording the hops that read no note
    /// are a note's tail or attack now and then, one or two sub-windows, and such a "floor" is
    /// the instrument's own sound, not noise (docs/accuracy.md, pitch findings 24 and 50).
    /// Real-time safe.
    @_noLocks
    func steadyFloorPerBin(at bin: Int) -> Float? {
        guard let band = band(holding: bin) else { return nil }
        var measuredSubWindows = 0
        for slot in 0..<subWindowCount where subWindowMinima[band * subWindowCount + slot] < .infinity { measuredSubWindows += 1 }
        guard measuredSubWindows >= parameters.steadyFloorSubWindows else { return nil }
        return floorPerBin(at: bin)
    }

    /// Ends the hop: when `noteRead` is false, the band powers `weigh` measured this hop (if it
    /// ran, and the window held only the stream) join the floors — the noise is what the input
    /// holds while no note is read, so a note held or a melody played legato is never its own
    /// floor; every `subWindowHops` the current sub-window's minima join the memory and the
    /// oldest leave. Call once per hop. Real-time safe.
    @_noLocks
    mutating func endHop(noteRead: Bool) {
        heldSteadyNoiseLastHop = measured && holdsSteadyNoise
        let windowFilled = partialWindowHopsLeft == 0
        partialWindowHopsLeft = max(0, partialWindowHopsLeft - 1)
        if measured && !noteRead && windowFilled {
            for band in 0..<bandCount { currentMinima[band] = min(currentMinima[band], bandPowers[band]) }
        }
        measured = false
        hopInSubWindow += 1
        if hopInSubWindow >= subWindowHops {
            hopInSubWindow = 0
            for band in 0..<bandCount {
                subWindowMinima[band * subWindowCount + subWindowIndex] = currentMinima[band]
                currentMinima[band] = .infinity
            }
            subWindowIndex = (subWindowIndex + 1) % subWindowCount
        }
    }

    /// Forgets the floors. Real-time safe.
    @_noLocks
    mutating func reset() {
        subWindowMinima.fill(with: .infinity)
        currentMinima.fill(with: .infinity)
        hopInSubWindow = 0
        subWindowIndex = 0
        partialWindowHopsLeft = partialWindowHops
        measured = false
        holdsSteadyNoise = false
        heldSteadyNoiseLastHop = false
    }
}
