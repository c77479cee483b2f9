import Glibc

/// Onsets of hi-hats and other high transients, found in the samples at a few milliseconds'
/// resolution: the signal high-passed at `cornerFrequencyHz` (two cascaded second-order
/// Butterworth sections, 24 dB/octave), its energy in blocks of `blockMilliseconds`, and the
/// rise of each block's log energy over the loudest of the `contextBlocks` before it, against an
/// adaptive threshold (running mean + k·σ over the blocks, with an absolute floor).
///
/// Why not the spectrum: the main window is 42.7 ms long and hops every 16.7 ms, so a quiet
/// closed hat over the tail of an open hat or a kick changes the hat band's spectral flux by
/// little; in 4 ms blocks its attack is a clear step (house's 16th closed hats, trap and
/// hip-hop's 16ths: docs/accuracy.md, Tempo). Comparing with the loudest recent block, not the
/// previous one, keeps a decaying cymbal from counting as new hits. The onset's time is the
/// first of the block's four sub-blocks (~1 ms) whose energy rises clearly (by half the block's
/// log rise, `AttackLocator.attackRiseFraction`) above the loudest recent block's level.
///
/// The samples are observed one by one as they arrive (`observe`, in the analyser's sample
/// intake), so a JACK cycle pays only for its own samples; the analysis point takes the
/// strongest transient since the last (`take`).
///
/// `init` allocates nothing; `observe` and `take` are real-time safe.
struct HatTransientDetector {
    /// Biquad coefficients of one high-pass section (normalised: a0 = 1).
    private let b0: Float, b1: Float, b2: Float, a1: Float, a2: Float
    /// Transposed direct form II states of the two sections.
    private var firstState: (Float, Float) = (0, 0)
    private var secondState: (Float, Float) = (0, 0)
    private let blockFrames: Int
    /// A quarter of a block (~1 ms): the resolution of the onset's time.
    private let subBlockFrames: Int
    private var subBlockEnergies = InlineArray<4, Float>(repeating: 0)
    private let energyFloor: Float
    private let deviations: Float
    /// `AttackLocator.attackRiseFraction`: the one attack rule.
    private let attackRiseFraction = AttackLocator.attackRiseFraction
    private var statistics: RunningStatistics
    /// The sub-block being filled: its energy so far, its samples, its index in the block.
    private var subBlockEnergy: Float = 0
    private var subBlockFill = 0
    private var subBlockIndex = 0
    /// Log energies of the last `contextBlocks` blocks, and how many are valid.
    private var context = InlineArray<3, Float>(repeating: 0)
    private var contextCount = 0
    /// The strongest transient since the last `take` (strength 0: none).
    private var pending: (strength: Float, timeFrames: Double) = (0, 0)

    static var cornerFrequencyHz: Double { 6_000 }
    static var blockMilliseconds: Double { 4 }
    static var contextBlocks: Int { 3 }
    /// Blocks quieter than this mean square per sample (−70 dBFS) count as this loud, so that
    /// near-silence gives no rises.
    static var meanSquareFloor: Float { 1e-7 }
    /// The rise (nats of block energy; 0.3 ≈ 1.3 dB) below which nothing is an onset.
    static var absoluteFloor: Float { 0.3 }

    init(sampleRateHz: Double, thresholdDeviations: Double, statisticsSeconds: Double) {
        // Bilinear-transform Butterworth high-pass (Q = 1/√2), cascaded twice.
        let omega = 2 * Double.pi * min(Self.cornerFrequencyHz, 0.45 * sampleRateHz) / sampleRateHz
        let quality = 0.5.squareRoot()
        let alpha = sin(omega) / (2 * quality)
        let a0 = 1 + alpha
        b0 = Float((1 + cos(omega)) / 2 / a0)
        b1 = Float(-(1 + cos(omega)) / a0)
        b2 = Float((1 + cos(omega)) / 2 / a0)
        a1 = Float(-2 * cos(omega) / a0)
        a2 = Float((1 - alpha) / a0)
        subBlockFrames = max(1, Int((Self.blockMilliseconds / 4 / 1000 * sampleRateHz).rounded()))
        blockFrames = 4 * subBlockFrames
        energyFloor = Self.meanSquareFloor * Float(blockFrames)
        deviations = Float(thresholdDeviations)
        statistics = RunningStatistics(intervalSeconds: Double(blockFrames) / sampleRateHz, timeConstantSeconds: statisticsSeconds)
    }

    /// Takes the sample at stream frame `frame` (finite). Real-time safe.
    @inline(__always) @_noLocks
    mutating func observe(_ sample: Float, frame: Int64) {
        // 1) High-pass, two sections.
        let first = b0 * sample + firstState.0
        firstState = (b1 * sample - a1 * first + firstState.1, b2 * sample - a2 * first)
        let second = b0 * first + secondState.0
        secondState = (b1 * first - a1 * second + secondState.1, b2 * first - a2 * second)
        // 2) Energy per sub-block (for the onset's time); four make a block.
        subBlockEnergy += second * second
        subBlockFill += 1
        guard subBlockFill == subBlockFrames else { return }
        subBlockEnergies[subBlockIndex] = subBlockEnergy
        subBlockEnergy = 0
        subBlockFill = 0
        subBlockIndex += 1
        if subBlockIndex == 4 {
            subBlockIndex = 0
            completeBlock(endFrame: frame + 1)
        }
    }

    /// 3) The block's rise over the loudest recent block, against the threshold from the blocks
    /// before it; the strongest transient is kept for `take`. Real-time safe.
    @_noLocks
    private mutating func completeBlock(endFrame: Int64) {
        let blockEnergy = subBlockEnergies[0] + subBlockEnergies[1] + subBlockEnergies[2] + subBlockEnergies[3]
        let logEnergy = approximateNaturalLog(blockEnergy + energyFloor)
        if contextCount == Self.contextBlocks {
            let rise = max(0, logEnergy - max(context[0], max(context[1], context[2])))
            let threshold = statistics.threshold(deviations: deviations, floor: Self.absoluteFloor)
            statistics.add(rise)
            if rise > threshold {
                let strength = clampUnit(1 - threshold / rise)
                let startFrame = endFrame - Int64(blockFrames - onsetSubBlock(rise: rise) * subBlockFrames)
                if strength > pending.strength { pending = (strength, Double(startFrame)) }
            }
        } else {
            contextCount += 1
        }
        context[0] = context[1]
        context[1] = context[2]
        context[2] = logEnergy
        // Finite but huge input (±1e38) can overflow the filter: start afresh rather than keep NaN.
        if !(abs(firstState.0) + abs(firstState.1) + abs(secondState.0) + abs(secondState.1)).isFinite {
            firstState = (0, 0)
            secondState = (0, 0)
        }
    }

    /// The strongest transient since the last call: its strength `1 − threshold / rise` (0: none)
    /// and the stream frame where it starts; then forgets it. Real-time safe.
    @_noLocks
    mutating func take() -> (strength: Float, timeFrames: Double) {
        defer { pending = (0, 0) }
        return pending
    }

    /// The first sub-block of the newest block whose energy exceeds the loudest recent block's
    /// level per sub-block by `AttackLocator.attackRiseFraction` of the block's log rise (the
    /// last one if none does): the attack rule of every reported onset.
    @_noLocks
    private func onsetSubBlock(rise: Float) -> Int {
        let recentLogEnergy = max(context[0], max(context[1], context[2]))
        let level = 0.25 * Float(realtimeExp(Double(recentLogEnergy + attackRiseFraction * rise)))
        for index in 0..<4 where subBlockEnergies[index] + 0.25 * energyFloor > level { return index }
        return 3
    }

    @_noLocks
    mutating func reset() {
        firstState = (0, 0)
        secondState = (0, 0)
        statistics.reset()
        subBlockEnergy = 0
        subBlockFill = 0
        subBlockIndex = 0
        for index in 0..<Self.contextBlocks { context[index] = 0 }
        for index in 0..<4 { subBlockEnergies[index] = 0 }
        contextCount = 0
        pending = (0, 0)
    }
}
