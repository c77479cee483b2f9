import Glibc
import SpectrumCore

/// Onsets from the main power spectrum: weighted log-magnitude spectral flux (half-wave
/// rectified), an adaptive threshold (running mean + k·σ), a minimum gap, and the onset's attack
/// located in the samples (`AttackLocator`).
///
/// The onset signal of hop n is
/// `flux[n] = Σ_k w_k · max(0, L_n[k] − L_{n−1}[k]) / Σ_k w_k`, with `L = ln(1 + γ·power)`
/// (a polynomial logarithm, `approximateNaturalLog`, so the bin loop needs no libm call),
/// γ = 10⁶ (−60 dB full-scale power reads ln 2: quieter changes count less and less, so silence
/// and hiss stay near 0), over the bins from `lowestFrequencyHz` to `highestFrequencyHz`, in two
/// bands of equal total weight: the seed's bass band (up to `emphasisCornerHz` = 200 Hz: kicks,
/// bass notes) and 200 Hz–5 kHz (snare crack, claps, chord and vocal attacks), each bin weighted
/// 1 / (bins in its band). Hi-hats (mostly above 6 kHz) barely count, which keeps eighth-note
/// hats from doubling the tempo; a bass-only flux misses the backbeat of syncopated patterns.
///
/// Two decisions share that flux: **grid onsets** (threshold k = `gridThresholdDeviations`),
/// which feed the beat grid, and **onset events** (the reported onsets; k =
/// `onsetThresholdDeviations`, and at least `eventMeanRatio` times the flux's running mean, so
/// that steady noise gives almost none), which also fire on high transients found in the samples
/// (`HatTransientDetector`, same k), so that hi-hats are reported without reaching the beat grid.
/// The hat band's spectral flux (5–16 kHz) gives the beat grid its **hat onsets** (k =
/// `hatGridThresholdDeviations`) and the tempo its hat cue; the bass band's (the flux's part up
/// to `emphasisCornerHz`, against its own threshold) its **bass onsets** (k =
/// `bassGridThresholdDeviations`): kicks, bass notes and snare bodies, for the grid's phase.
///
/// `init` allocates; `detect` is real-time safe.
struct OnsetDetector: ~Copyable {
    /// Bins [firstBin, lastBin] of the main spectrum.
    let firstBin: Int
    let lastBin: Int
    /// The last bin of the bass band (`emphasisCornerHz`).
    private let cornerBin: Int
    private let weights: RealtimeBuffer
    private let weightSum: Float
    /// Finds the onset's attack in the samples (the newest hop and a half).
    private let attackLocator: AttackLocator
    /// Bins of the hat band (above `highestFrequencyHz`), used for onset events only.
    private let hatFirstBin: Int
    private let hatLastBin: Int
    private let hatBinCount: Int
    private let previousLogPower: RealtimeBuffer
    private let logPower: RealtimeBuffer
    private let hopFrames: Int
    private let eventDeviations: Float
    private let minimumGapFrames: Double
    /// How many samples of history the detector reads (the history must hold them).
    var historyFrames: Int { attackLocator.historyFrames }

    /// Running statistics of the flux, of the hat band's flux and of the bass band's.
    private var fluxStatistics: RunningStatistics
    private var hatStatistics: RunningStatistics
    private var bassStatistics: RunningStatistics
    private var lastOnsetFrame: Double = -1e12
    private var lastEventFrame: Double = -1e12
    private var lastHatOnsetFrame: Double = -1e12
    /// The bass onset held for the minimum gap, in case a stronger one follows (strength 0: none).
    private var pendingBassStrength: Float = 0
    private var pendingBassFrame: Double = 0
    private var primed = false

    static var logGain: Float { 1e6 }
    static var lowestFrequencyHz: Double { 20.0 }
    static var emphasisCornerHz: Double { 200.0 }
    static var highestFrequencyHz: Double { 5_000.0 }
    static var hatHighestFrequencyHz: Double { 16_000.0 }
    /// Every 4th bin of the hat band: hats are broadband noise, so a sample of the bins measures
    /// their rise as well, at a quarter of the cost.
    static var hatBinStride: Int { 4 }
    static var hatCompressionGain: Float { 10 }
    /// k of the grid onsets' threshold (the seed's 1.5): the beat grid wants the accents only.
    static var gridThresholdDeviations: Float { 1.5 }
    /// k of the hat band's spectral onsets given to the beat grid (its hat-parity check).
    static var hatGridThresholdDeviations: Float { 0.75 }
    /// k of the bass band's onsets given to the beat grid (its phase choice): against the bass
    /// band's own statistics a bass note or a snare's body counts beside the kicks, which the
    /// whole flux's threshold leaves out.
    static var bassGridThresholdDeviations: Float { 0.75 }
    /// The reported onsets' flux must also reach this multiple of its running mean: a drum hit
    /// stands far above the mean, a stationary signal's excursions do not (white noise at
    /// −25 dBFS: ~5 reported onsets a second without it, ~0.2 with it; onset F on the FluidR3
    /// grooves the same, 0.963, with 1.5, 2 or 3).
    static var eventMeanRatio: Float { 3 }
    static var upperBandWeight: Double { 1 }
    /// The onset signal must also exceed this (mean positive log change per bin, nats): a floor
    /// under the adaptive threshold so that digital silence and near-silence give no onsets.
    static var absoluteFloor: Float { 0.02 }

    init(configuration: RhythmConfiguration, sampleRateHz: Double, hopFrames: Int, binCount: Int, binSpacingHz: Double) {
        firstBin = max(1, Int((Self.lowestFrequencyHz / binSpacingHz).rounded(.up)))
        lastBin = max(firstBin, min(binCount - 1, Int((Self.highestFrequencyHz / binSpacingHz).rounded(.down))))
        weights = RealtimeBuffer(count: lastBin + 1, repeating: 0)
        // Two bands of equal total weight: the bass (kick) up to the corner, and everything
        // above it (snare crack, claps, chords), each bin weighted 1 / (bins in its band).
        let cornerBin = min(lastBin, max(firstBin, Int((Self.emphasisCornerHz / binSpacingHz).rounded(.down))))
        self.cornerBin = cornerBin
        let lowCount = Float(cornerBin - firstBin + 1), highCount = Float(max(1, lastBin - cornerBin))
        var sum: Float = 0
        for bin in firstBin...lastBin {
            let weight = bin <= cornerBin ? 1 / lowCount : Float(Self.upperBandWeight) / highCount
            weights[bin] = weight
            sum += weight
        }
        weightSum = sum
        hatFirstBin = min(lastBin + 1, binCount - 1)
        hatLastBin = max(hatFirstBin, min(binCount - 1, Int((Self.hatHighestFrequencyHz / binSpacingHz).rounded(.down))))
        hatBinCount = (hatLastBin - hatFirstBin) / Self.hatBinStride + 1
        previousLogPower = RealtimeBuffer(count: hatLastBin + 1, repeating: 0)
        logPower = RealtimeBuffer(count: hatLastBin + 1, repeating: 0)
        self.hopFrames = hopFrames
        eventDeviations = Float(configuration.onsetThresholdDeviations)
        fluxStatistics = RunningStatistics(intervalSeconds: Double(hopFrames) / sampleRateHz, timeConstantSeconds: configuration.onsetStatisticsSeconds)
        hatStatistics = fluxStatistics
        bassStatistics = fluxStatistics
        minimumGapFrames = configuration.onsetMinimumGapMilliseconds / 1000 * sampleRateHz
        attackLocator = AttackLocator(sampleRateHz: sampleRateHz, searchFrames: hopFrames + hopFrames / 2)
    }

    /// Onset signal of the newest hop and, if the hop holds an onset, its strength and exact
    /// time. `power` is the main spectrum; `hopEndFrame` the stream frame after the newest sample;
    /// `transient` the strongest high transient of the hop (`HatTransientDetector.take`).
    /// Real-time safe.
    @_noLocks
    mutating func detect(power: UnsafePointer<Float>, history: borrowing SampleHistory, hopEndFrame: Int64,
                         transient: (strength: Float, timeFrames: Double)) -> OnsetResult {
        // 1) Weighted, half-wave-rectified log-power flux; the hat band's mean flux apart.
        // (Simple loops rather than one, so that each vectorises.)
        for bin in firstBin...lastBin {
            logPower[bin] = approximateNaturalLog(1 + Self.logGain * power[bin])
        }
        for bin in stride(from: hatFirstBin, through: hatLastBin, by: Self.hatBinStride) {
            logPower[bin] = approximateNaturalLog(1 + Self.logGain * power[bin])
        }
        var lowFlux: Float = 0
        for bin in firstBin...cornerBin {
            lowFlux += weights[bin] * max(0, logPower[bin] - previousLogPower[bin])
        }
        var highFlux: Float = 0
        if cornerBin < lastBin {
            for bin in (cornerBin + 1)...lastBin {
                highFlux += weights[bin] * max(0, logPower[bin] - previousLogPower[bin])
            }
        }
        var hatFlux: Float = 0
        if lastBin < hatFirstBin {
            for bin in stride(from: hatFirstBin, through: hatLastBin, by: Self.hatBinStride) {
                hatFlux += max(0, logPower[bin] - previousLogPower[bin])
                previousLogPower[bin] = logPower[bin]
            }
        }
        for bin in firstBin...lastBin {
            previousLogPower[bin] = logPower[bin]
        }
        let flux = finiteOr((lowFlux + highFlux) / weightSum, 0)
        // The hat band's flux log-compressed (as the tempo's onset signal), so that open hats and
        // crashes do not raise its threshold far above quiet closed hats.
        hatFlux = lastBin < hatFirstBin ? realtimeLog1p(Self.hatCompressionGain * finiteOr(hatFlux / Float(hatBinCount), 0)) : 0
        let bassFlux = finiteOr(lowFlux, 0)
        let bandPower = realtimeSum(power + firstBin, count: lastBin - firstBin + 1)
        var result = OnsetResult(flux: flux, hatFlux: hatFlux, bandPower: finiteOr(bandPower, 0), strength: 0, timeFrames: 0, bassShare: 0,
                                 eventStrength: 0)
        guard primed else {
            // The first hop has no predecessor: its "rise" from nothing is not an onset.
            primed = true
            result.flux = 0
            result.hatFlux = 0
            return result
        }

        // 2) Adaptive thresholds from the statistics before this hop.
        let gridThreshold = fluxStatistics.threshold(deviations: Self.gridThresholdDeviations, floor: Self.absoluteFloor)
        let eventThreshold = max(fluxStatistics.threshold(deviations: eventDeviations, floor: Self.absoluteFloor),
                                 Self.eventMeanRatio * fluxStatistics.mean)
        let hatThreshold = hatStatistics.threshold(deviations: Self.hatGridThresholdDeviations, floor: Self.absoluteFloor)
        let bassThreshold = bassStatistics.threshold(deviations: Self.bassGridThresholdDeviations, floor: Self.absoluteFloor)
        fluxStatistics.add(flux)
        hatStatistics.add(hatFlux)
        bassStatistics.add(bassFlux)

        // 3) Decisions with the minimum gap (each its own), then the exact time.
        let hatStrength = Self.strength(hatFlux, above: hatThreshold)
        let fluxEventStrength = Self.strength(flux, above: eventThreshold)
        let gridStrength = Self.strength(flux, above: gridThreshold)
        let bassStrength = Self.strength(bassFlux, above: bassThreshold)
        if fluxEventStrength > 0 || gridStrength > 0 || hatStrength > 0 || bassStrength > 0 {
            result.timeFrames = attackLocator.locate(history: history, hopEndFrame: hopEndFrame)
        }
        // The reported onset: the flux's (at the exact time) or the transient's, the stronger.
        let event = fluxEventStrength >= transient.strength
            ? (strength: fluxEventStrength, timeFrames: result.timeFrames) : transient
        if event.strength > 0 && event.timeFrames - lastEventFrame >= minimumGapFrames {
            lastEventFrame = event.timeFrames
            result.eventStrength = event.strength
            result.eventTimeFrames = event.timeFrames
        }
        if hatStrength > 0 && result.timeFrames - lastHatOnsetFrame >= minimumGapFrames {
            lastHatOnsetFrame = result.timeFrames
            result.hatStrength = hatStrength
        }
        // A bass onset is the strongest within the minimum gap, given once the gap has passed:
        // with the low threshold, a weak rise just before a kick (a bass note's end) would
        // otherwise take the kick's place.
        let bassFrame = bassStrength > 0 ? result.timeFrames : Double(hopEndFrame)
        if pendingBassStrength > 0 && bassFrame - pendingBassFrame >= minimumGapFrames {
            result.bassStrength = pendingBassStrength
            result.bassTimeFrames = pendingBassFrame
            pendingBassStrength = 0
        }
        if bassStrength > pendingBassStrength {
            pendingBassStrength = bassStrength
            pendingBassFrame = result.timeFrames
        }
        if gridStrength > 0 && result.timeFrames - lastOnsetFrame >= minimumGapFrames {
            lastOnsetFrame = result.timeFrames
            result.strength = gridStrength
            result.bassShare = finiteOr(lowFlux + highFlux > 0 ? clampUnit(lowFlux / (lowFlux + highFlux)) : 0, 0)
        }
        return result
    }

    /// `1 − threshold / value` when the value exceeds the threshold, else 0.
    @inline(__always) @_noLocks
    private static func strength(_ value: Float, above threshold: Float) -> Float {
        value > threshold ? clampUnit(1 - threshold / value) : 0
    }

    @_noLocks
    mutating func reset() {
        previousLogPower.fill(with: 0)
        fluxStatistics.reset()
        hatStatistics.reset()
        bassStatistics.reset()
        lastOnsetFrame = -1e12
        lastEventFrame = -1e12
        lastHatOnsetFrame = -1e12
        pendingBassStrength = 0
        primed = false
    }
}

/// Running mean and mean square of a signal (one-pole, time constant τ), and the adaptive
/// threshold from them. They start as plain averages (step 1/n) until n reaches the one-pole
/// step's reciprocal, so the first values are not weighed against zeros.
struct RunningStatistics {
    private(set) var mean: Float = 0
    private var meanSquare: Float = 0
    /// Per-value step of the one-pole averages (1 − exp(−interval/τ)).
    private let step: Float
    /// Values seen (saturates).
    private var count: Float = 0

    /// For values that arrive every `intervalSeconds`, averaged over `timeConstantSeconds`.
    init(intervalSeconds: Double, timeConstantSeconds: Double) {
        step = Float(1 - exp(-intervalSeconds / timeConstantSeconds))
    }

    /// `max(mean + deviations·σ, floor)`. Real-time safe.
    @inline(__always) @_noLocks
    func threshold(deviations: Float, floor: Float) -> Float {
        max(mean + deviations * realtimeSquareRoot(max(0, meanSquare - mean * mean)), floor)
    }

    @inline(__always) @_noLocks
    mutating func reset() {
        mean = 0
        meanSquare = 0
        count = 0
    }

    @inline(__always) @_noLocks
    mutating func add(_ value: Float) {
        count = min(count + 1, 1e6)
        let step = max(self.step, 1 / count)
        mean += step * (value - mean)
        meanSquare += step * (value * value - meanSquare)
    }
}

/// The onset signal of one hop; when `strength > 0`, a grid onset; when `eventStrength > 0`,
/// an onset event (both at `timeFrames`).
struct OnsetResult {
    /// Weighted mean positive log-power change per bin (nats), ≥ 0.
    var flux: Float
    /// The hat band's mean positive log-power change per bin, compressed as `ln(1 + 10x)`.
    var hatFlux: Float
    /// The onset bands' power (the sum of the main spectrum's bins the flux reads): whether the
    /// music still plays (`TempoEstimator.followMusicLevel`).
    var bandPower: Float
    /// Strength of the grid onset (0: none).
    var strength: Float
    var timeFrames: Double
    /// The bass band's (≤ `emphasisCornerHz`) share of the onset's flux, 0…1: near 1 for kicks
    /// and bass notes, near 0 for hats, claps and chord attacks.
    var bassShare: Float
    /// Strength of the onset event (0: none): the flux's or the high transient's, whichever is larger.
    var eventStrength: Float
    /// Time of the onset event in stream frames (the exact time, or the transient's block).
    var eventTimeFrames: Double = 0
    /// Strength of the hat band's spectral onset for the beat grid (0: none), at `timeFrames`.
    var hatStrength: Float = 0
    /// Strength of the bass band's onset for the beat grid (0: none), at `bassTimeFrames` (at
    /// least the minimum gap before this hop: the strongest within the gap).
    var bassStrength: Float = 0
    var bassTimeFrames: Double = 0
}
