import SpectrumCore

/// The attack of an onset in the samples: where, in the newest hop and a half, the signal's
/// level first rises clearly above what came before.
///
/// The level is the peak magnitude per ~1 ms block (`blockMilliseconds`). A block's rise is the
/// log of the loudest of it and the next `lookaheadBlocks` (a tone's first waveform peak can
/// come a few milliseconds after its attack) over the loudest of the `contextBlocks` before it
/// (~25 ms: longer than one period of a 41 Hz low E, so that a held or decaying tone's own
/// waveform does not count as rises). The largest rise wins; the attack is the first sample
/// after the context whose magnitude exceeds the context's level by `attackRiseFraction` of that
/// rise (in log terms: the geometric middle of before and after). The same rule places the
/// high transients of `HatTransientDetector` within their block.
///
/// Why not the loudest energy step: a plucked or struck tone's energy keeps rising for
/// milliseconds after its attack and a low tone's 1 ms energies swing with its waveform, so the
/// largest step lies up to ~17 ms after the attack (the synthetic test
/// `OnsetTimingTests.pluckedTonesAtRandomHopPhasesAreTimedToTheirAttack`).
///
/// `init` allocates; `locate` is real-time safe (bounded: one pass over ~2400 samples at 48 kHz).
struct AttackLocator: ~Copyable {
    /// The samples searched (context first), copied contiguously, and their block peaks.
    private let samples: RealtimeBuffer
    private let blockLogPeaks: RealtimeBuffer
    private let blockFrames: Int
    private let contextBlocks: Int

    /// Block length (ms): the resolution of the search before the sample step.
    static var blockMilliseconds: Double { 1.0 }
    /// Context before each block (ms): longer than the period of the lowest bass note (41 Hz).
    static var contextMilliseconds: Double { 25.0 }
    /// Blocks after a block that count as its new level: a 82 Hz tone's first peak can come
    /// ~3 ms after its attack.
    static var lookaheadBlocks: Int { 4 }
    /// Where between the level before and the level after the attack lies (fraction of the
    /// log rise; 0.5: the geometric middle, robust to a slow or fast rise alike).
    static var attackRiseFraction: Float { 0.5 }
    /// Magnitudes below this (−70 dBFS) count as this loud, so that near-silence has no rises.
    static var magnitudeFloor: Float { 3e-4 }

    /// Searches the newest `searchFrames` samples (plus the context before them).
    init(sampleRateHz: Double, searchFrames: Int) {
        blockFrames = max(1, Int((Self.blockMilliseconds / 1000 * sampleRateHz).rounded()))
        contextBlocks = max(1, Int((Self.contextMilliseconds / Self.blockMilliseconds).rounded()))
        let searchBlocks = (searchFrames + blockFrames - 1) / blockFrames
        let blockCount = contextBlocks + searchBlocks + Self.lookaheadBlocks
        samples = RealtimeBuffer(count: blockCount * blockFrames, repeating: 0)
        blockLogPeaks = RealtimeBuffer(count: blockCount, repeating: 0)
    }

    /// How many samples of history `locate` reads.
    var historyFrames: Int { samples.count }

    /// The stream frame of the attack in the newest hop and a half; `hopEndFrame` is the frame
    /// after the newest sample. Real-time safe.
    @_noLocks
    func locate(history: borrowing SampleHistory, hopEndFrame: Int64) -> Double {
        // 1) The region, oldest first, in one contiguous run; its block peaks (log).
        let total = samples.count
        let runs = history.latestRuns(total)
        for index in 0..<runs.firstCount { samples[index] = runs.first[index] }
        // Through a pointer to the second run's start (an offset index is overflow-checked per
        // sample, which keeps the loop from being vectorised).
        let secondSamples = samples.base + runs.firstCount
        for index in 0..<runs.secondCount { secondSamples[index] = runs.second[index] }
        let blockCount = blockLogPeaks.count
        for block in 0..<blockCount {
            var peak = Self.magnitudeFloor
            for index in (block * blockFrames)..<((block + 1) * blockFrames) { peak = max(peak, abs(samples[index])) }
            blockLogPeaks[block] = approximateNaturalLog(peak)
        }
        // 2) The largest rise: the next few blocks' peak over the context's.
        var bestRise: Float = -.infinity
        var bestBlock = contextBlocks
        var bestContext: Float = 0
        for block in contextBlocks..<(blockCount - Self.lookaheadBlocks) {
            var before = blockLogPeaks[block - contextBlocks]
            for previous in (block - contextBlocks + 1)..<block { before = max(before, blockLogPeaks[previous]) }
            var after = blockLogPeaks[block]
            for next in (block + 1)..<(block + Self.lookaheadBlocks) { after = max(after, blockLogPeaks[next]) }
            if after - before > bestRise {
                bestRise = after - before
                bestBlock = block
                bestContext = before
            }
        }
        // 3) The first sample from there above the middle level.
        let level = Float(realtimeExp(Double(bestContext + Self.attackRiseFraction * max(0, bestRise))))
        let end = (bestBlock + Self.lookaheadBlocks) * blockFrames
        var attackIndex = end - 1
        for index in (bestBlock * blockFrames)..<end where abs(samples[index]) >= level {
            attackIndex = index
            break
        }
        // Element `index` of the region is `total − 1 − index` samples old.
        return Double(hopEndFrame - Int64(total - attackIndex))
    }
}
