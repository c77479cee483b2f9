import CFFTW
import Glibc
import SpectrumCore

/// Fundamental frequency by normalised autocorrelation (seed 000's tuner; the correlation
/// itself is `NormalisedAutocorrelation`).
///
/// Each hop: gates (silence, the input's noise floor, a fast decay), the first key maximum of the correlation of the
/// long window (2.2 periods of the lowest note), the octave hold and the mutation check, the
/// period by parabolic interpolation, and above 150 Hz a refinement on the fundamental's phase
/// advance (a piano's stretched partials pull the autocorrelation sharp). A short window
/// (2.2 periods of 150 Hz, the newest 14.7 ms) answers when the long window finds no pitch — at
/// a note's start, where it still holds what came before — overrules a lower long-window
/// reading from 300 Hz up or a legato mixture's common period below, and tells the tracker
/// how closely it agrees with the long window (alike, a note is shown at once).
///
/// `init` allocates and plans; `detect` is real-time safe.
struct PitchDetector: ~Copyable {
    /// The long window: every note from the lowest to the highest searched.
    private let long: NormalisedAutocorrelation
    /// The short window: notes from `shortWindowLowestHz` up, at a note's start.
    private let short: NormalisedAutocorrelation
    private let sampleRateHz: Float
    private let confidenceThreshold: Float
    /// `silenceGateDecibels` as a mean square per sample: never a note below it, and the
    /// lowest the noise floor goes.
    private let silenceGateMeanSquare: Float
    /// `gateAboveNoiseFloorDecibels` as a power ratio.
    private let gateAboveNoiseFloorRatio: Float
    /// The input's noise floor, a mean square per sample: the quietest window, followed down
    /// at once and up by `noiseFloorRisePerHop` (minimum tracking).
    private var noiseFloorMeanSquare: Float
    private let noiseFloorRisePerHop: Float
    /// Energy ratio (this hop's window / the window `decayLookbackHops` hops earlier) below which
    /// the sound is decaying too fast to tune: a drum, or a note ending.
    private let percussiveEnergyRatio: Float
    /// ~50 ms of hops: a window's energy wobbles with the phase of a low note from hop to hop,
    /// a trend over several hops does not.
    private let decayLookbackHops: Int
    /// `establishedNoteSeconds` in hops.
    private let establishedHops: Int
    /// Window energies of the last `decayLookbackHops` hops, a ring (0 = none yet).
    private let recentEnergies: RealtimeBuffer
    private var recentEnergyIndex = 0
    /// The long window's spectra (before squaring) of the last `phaseSpanHops + 1` hops, a ring of
    /// `long.spectrum`-sized slots, for the fundamental's phase advance.
    private let pastSpectra: UnsafeMutablePointer<fftwf_complex>
    private var pastSpectrumIndex = 0
    /// The autocorrelation's frequency of the hop each slot of `pastSpectra` belongs to.
    private let pastFrequencies: RealtimeBuffer
    /// Consecutive hops stored in `pastSpectra` (a gated hop stores none and breaks the run).
    private var storedSpectra = 0
    /// Hops between the two spectra compared: ~50 ms, so the phase advance is unambiguous for
    /// a peak within ±10 Hz of its bin (bins are ~11.7 Hz).
    private let phaseSpanHops: Int
    private let phaseSpanFrames: Float
    /// The last `correctionCount` phase corrections in cents, newest at `correctionIndex − 1`,
    /// while the pitch stays within a semitone; `correctionsStored` of them valid.
    private let corrections: RealtimeBuffer
    private var correctionIndex = 0
    private var correctionsStored = 0
    /// Hann window over the long window, for the fundamental's power (step 4).
    private let hannWindow: RealtimeBuffer
    /// The previous hop's autocorrelation frequency (0 after an unvoiced hop).
    private var previousFrequencyHz: Float = 0
    /// The last period chosen (0 = none), held against an octave jump up (step 3).
    private var heldPeriodFrames: Float = 0
    /// Consecutive voiced hops whose period stayed within a semitone of the one before.
    private var heldHops = 0
    /// This hop's `fundamentalPowerRatio` and the period it was measured for (0 = none yet):
    /// the octave hold and the mutation check may ask for the same period.
    private var measuredRatioPeriod = 0
    private var measuredRatio: Float = 0
    private var hopsSinceVoiced = 0

    /// The noise floor before any window was quieter: the gate starts at the fixed −60 dBFS
    /// of old (−66 + 6 dB), so a hum or hiss present from the start is gated as before, and
    /// falls to the input's floor at its first quieter window (the silence before playing, a
    /// gap between notes).
    static let initialNoiseFloorDecibels: Float = -66
    /// How fast the floor may rise: slowly, so a note held for 20 s, 16 dB above the floor,
    /// still clears a 6 dB gate; a steady hum or hiss louder than the floor is reached within
    /// a minute and stays gated from then on.
    static let noiseFloorRiseDecibelsPerSecond = 0.5

    /// The short window's lowest note: 2.2 periods of it are 14.7 ms.
    static let shortWindowLowestHz = 150.0
    /// r the short window's estimate must reach: with fewer periods in it, noise and a note's
    /// transient correlate more by chance than in the long window.
    static let shortWindowConfidence: Float = 0.8
    /// Lowest short-window pitch that overrules a lower long-window reading: twice the short
    /// window's lowest note, so its lags reach the octave below (a window repeating there would
    /// have read it).
    static let shortWindowOverruleHz = Float(2 * shortWindowLowestHz)
    /// r of the long window at the short window's period below which the two windows hold
    /// different sounds (a legato note change).
    static let legatoMixtureCorrelation: Float = 0.5
    /// A period common to two notes of a melody within this share (1.5 %; equal temperament's
    /// fifth and fourth are 0.1 % off the 3/2 and 4/3 that repeat).
    static let legatoMultipleTolerance: Float = 0.015
    /// r at twice the first key maximum's lag, as a multiple of r there, from which the lower
    /// octave is considered (`lowerOctave`).
    static let lowerOctaveCorrelationRatio: Float = 1.05
    /// The lower octave's partial must have at least this share of the power at twice its
    /// frequency (−20 dB): a note's own fundamental, not leakage or noise (a missing-
    /// fundamental tone has none there and keeps its pitch).
    static let lowerOctavePowerRatio: Float = 0.01
    /// A semitone: the long window reads lower than the short window by more than this.
    static let semitoneRatio: Float = 1.0595
    /// Above this pitch the allowed decay rate grows in proportion to the pitch: a piano's top
    /// octaves lose energy faster than 60 dB/s (C7 ≈ 100 dB/s), drum bodies sit lower.
    static let decayCornerHz: Float = 400
    /// r at half the held period must reach this share of r at the held period to take over:
    /// a decaying low guitar string drifts from 0.88 to 0.92 of it as its fundamental and odd
    /// harmonics fade (the key-maximum rule alone flips it an octave up at 0.9).
    static let octaveHoldRatio: Float = 0.95
    /// Window-energy rise over ~50 ms (+1.5 dB) that ends the hold: a new note's attack, so a
    /// melody's leap up an octave is not held down.
    static let octaveHoldReleaseRatio: Float = 1.4
    /// Hops (~150 ms) a pitch must have lasted to be held for as long as its fundamental sounds
    /// (`heldFundamentalPowerRatio`), however periodic the half period: longer than the
    /// octave-below growl at a saxophone's attack (50–150 ms), which must not be held.
    static let establishedNoteSeconds = 0.15
    /// An established note's fundamental still sounds while its power is at least this share
    /// of the power at twice it (−30 dB). Measured in the FluidR3 corpus: steel guitar G2 at
    /// −24 dB, the organ's A2 at −14 to −22 dB when their half period takes over.
    static let heldFundamentalPowerRatio: Float = 1e-3
    /// An established note has ended when its fundamental's power fell below this share of
    /// its power ~50 ms before (−12 dB; a string decays by ~1 dB in that time, a released
    /// note by 20). The three bins of the rectangular-window spectrum swing by several dB from
    /// hop to hop when a strong partial lies near (−6 dB ended a held note at some hop phases).
    static let heldFundamentalFadeRatio: Float = 0.063
    /// r at half the chosen period, as a share of r at the period, from which the chosen
    /// period's fundamental is looked for (step 5). Below it the odd partials of the chosen
    /// pitch carry over a third of the energy: a missing-fundamental tone, not a mutation.
    static let absentFundamentalHalfRatio: Float = 0.5
    /// Power at the chosen pitch under this share of the power at twice it (−45 dB) counts as
    /// no fundamental. Measured in the FluidR3 corpus: the octave-down readings of the church
    /// organ's quint have −69 dB (median, p90 −54); real notes below 400 Hz never under −42.
    static let absentFundamentalPowerRatio: Float = 3.2e-5
    /// Lowest pitch refined on its fundamental: below it the fundamental's spectral peak is too
    /// close to its neighbours for a clean phase in a 58 ms window.
    static let refinementMinimumHz: Float = 150
    /// The fundamental's peak must be within 20 dB (power ratio 0.01) of the strongest of the
    /// first six harmonics to be refined on (a weak or missing fundamental is left alone).
    static let refinementPowerRatio: Float = 0.01
    /// Larger phase corrections are not believed (a neighbouring partial, a note change).
    static let refinementLimitCents: Float = 30
    /// Corrections averaged: ~67 ms, the phase noise averages out, vibrato stays with the
    /// autocorrelation.
    static let correctionCount = 4

    init(configuration: PitchConfiguration, sampleRateHz: Double, hopSeconds: Double) {
        self.sampleRateHz = Float(sampleRateHz)
        confidenceThreshold = Float(configuration.confidenceThreshold)
        silenceGateMeanSquare = Float(pow(10, configuration.silenceGateDecibels / 10))
        gateAboveNoiseFloorRatio = Float(pow(10, configuration.gateAboveNoiseFloorDecibels / 10))
        noiseFloorMeanSquare = max(silenceGateMeanSquare, powf(10, Self.initialNoiseFloorDecibels / 10))
        noiseFloorRisePerHop = Float(pow(10, Self.noiseFloorRiseDecibelsPerSecond * hopSeconds / 10))
        let minimumLag = max(2, Int((sampleRateHz / configuration.maximumFrequencyHz).rounded(.down)))
        long = NormalisedAutocorrelation(minimumLag: minimumLag,
                                         maximumLag: Int((sampleRateHz / configuration.minimumFrequencyHz).rounded(.up)))
        short = NormalisedAutocorrelation(minimumLag: minimumLag,
                                          maximumLag: max(minimumLag + 2, Int((sampleRateHz / Self.shortWindowLowestHz).rounded(.up))))
        decayLookbackHops = min(8, max(1, Int((0.05 / hopSeconds).rounded())))
        establishedHops = max(1, Int((Self.establishedNoteSeconds / hopSeconds).rounded()))
        recentEnergies = RealtimeBuffer(count: decayLookbackHops)
        percussiveEnergyRatio = Float(pow(10, -configuration.percussiveDecayDecibelsPerSecond * hopSeconds * Double(decayLookbackHops) / 10))
        phaseSpanHops = decayLookbackHops  // the same ~50 ms
        phaseSpanFrames = Float(Double(phaseSpanHops) * hopSeconds * sampleRateHz)
        let bins = long.fftSize / 2 + 1
        pastSpectra = fftwf_alloc_complex(bins * (phaseSpanHops + 1))
        pastSpectra.initialize(repeating: (0, 0), count: bins * (phaseSpanHops + 1))
        pastFrequencies = RealtimeBuffer(count: phaseSpanHops + 1)
        let windowFrames = long.windowFrames
        hannWindow = RealtimeBuffer(count: windowFrames)
        for index in 0..<windowFrames {
            hannWindow[index] = Float(0.5 - 0.5 * cos(2 * Double.pi * (Double(index) + 0.5) / Double(windowFrames)))
        }
        corrections = RealtimeBuffer(count: Self.correctionCount)
    }

    /// Samples of history `detect` reads.
    var windowFrames: Int { long.windowFrames }

    deinit {
        fftwf_free(pastSpectra)
    }

    /// One raw estimate from the newest window of `history`; call once per hop. Real-time safe.
    @_noLocks
    mutating func detect(history: borrowing SampleHistory) -> RawPitch {
        // 1) The long window with its mean removed (Pearson), and its energy.
        let (mean, energy) = long.load(history)
        measuredRatioPeriod = 0
        let earlierEnergy = recentEnergies[recentEnergyIndex]
        let decaying = energy < earlierEnergy * percussiveEnergyRatio
        // The octave hold ends after ~50 ms without an estimate, or at a new note's attack.
        hopsSinceVoiced += 1
        if hopsSinceVoiced > decayLookbackHops || energy > earlierEnergy * Self.octaveHoldReleaseRatio { heldPeriodFrames = 0; heldHops = 0 }
        recentEnergies[recentEnergyIndex] = energy
        recentEnergyIndex = (recentEnergyIndex + 1) % decayLookbackHops
        // Gates: the fixed silence gate, and the gate relative to the input's noise floor.
        let meanSquare = energy / Float(long.windowFrames)
        noiseFloorMeanSquare = max(silenceGateMeanSquare, min(meanSquare, noiseFloorMeanSquare * noiseFloorRisePerHop))
        guard meanSquare >= silenceGateMeanSquare, meanSquare >= noiseFloorMeanSquare * gateAboveNoiseFloorRatio else { return unvoiced() }

        // 2) The correlation at every lag; the spectrum is kept for the fundamental's phase.
        pastSpectrumIndex = (pastSpectrumIndex + 1) % (phaseSpanHops + 1)
        storedSpectra += 1
        let bins = long.fftSize / 2 + 1, kept = pastSpectra + pastSpectrumIndex * bins
        let highest = long.correlate(energy: energy, spectrumCopy: kept)

        // 3) The first key maximum: confident, and near the highest. Octave hold: when the
        //    last period was twice this one, it stays unless this lag is clearly as periodic,
        //    or, for an established note, for as long as its fundamental sounds (a low string
        //    whose fundamental and odd harmonics die away first keeps its pitch).
        let energyRatio = decaying ? energy / earlierEnergy : 1
        guard highest >= confidenceThreshold * confidenceThreshold,
              let lag = long.firstKeyMaximum(threshold: confidenceThreshold, highest: highest) else {
            guard let estimate = shortWindowPitch(history: history) else { return unvoiced() }
            return shortWindowEstimate(estimate, energyRatio: energyRatio)
        }
        let chosen = heldOctave(of: lag, history: history, mean: mean) ?? lowerOctave(of: lag, history: history, mean: mean) ?? lag
        let (offset, top) = long.interpolatedPeak(at: chosen)
        // 4) Mutation check: a period whose own fundamental is absent, with little energy at
        //    its odd partials, is the octave below of a note plus a mutation (an organ's quint
        //    repeats at half the note's frequency): the note is at half the period, measured
        //    as half of this one (the wave repeats exactly here, not at the half).
        let notesPerPeriod: Float = isMutationOctave(period: chosen, history: history, mean: mean) ? 2 : 1
        let periodFrames = (Float(chosen) + offset) / notesPerPeriod
        let frequencyHz = sampleRateHz / periodFrames
        guard !decaysTooFast(frequencyHz: frequencyHz, energyRatio: energyRatio) else { return unvoiced() }
        // 5) The short window, the newest 14.7 ms: a confident reading high enough that its lags
        //    hold its octave below overrules a lower long-window reading (the long window still
        //    repeats at an earlier note's period, or at a period common to it and this one);
        //    lower, it overrules a long-window period that is a multiple of its own where the
        //    long window does not repeat at its period (a legato mixture). Otherwise the two
        //    windows' difference in cents goes to the tracker: a close one says the note has
        //    settled over the whole long window.
        var windowDifferenceCents = Float.infinity
        if let estimate = shortWindowPitch(history: history) {
            if estimate.frequencyHz >= Self.shortWindowOverruleHz && estimate.frequencyHz > frequencyHz * Self.semitoneRatio
                || isLegatoMixture(period: periodFrames, shortWindowPeriod: sampleRateHz / estimate.frequencyHz) {
                return shortWindowEstimate(estimate, energyRatio: energyRatio)
            }
            windowDifferenceCents = abs(1200 * _unsafePerformance { log2f(estimate.frequencyHz / frequencyHz) })
        }
        hold(periodFrames)
        // 6) The refinement on the fundamental's phase advance.
        return RawPitch(frequencyHz: refined(frequencyHz), confidence: min(top, 1), windowDifferenceCents: windowDifferenceCents)
    }

    /// The short window's estimate, taken when the long window has none. `energyRatio` is the
    /// long window's energy over the decay look-back (1 when not falling fast). Not refined:
    /// the long window takes over within a few hops.
    @_noLocks
    private mutating func shortWindowEstimate(_ estimate: RawPitch, energyRatio: Float) -> RawPitch {
        _ = unvoiced()
        guard !decaysTooFast(frequencyHz: estimate.frequencyHz, energyRatio: energyRatio) else { return .unvoiced }
        hold(sampleRateHz / estimate.frequencyHz)
        return estimate
    }

    /// The short window's first key maximum at `shortWindowConfidence`, interpolated; nil if
    /// none.
    @_noLocks
    private func shortWindowPitch(history: borrowing SampleHistory) -> RawPitch? {
        let (_, energy) = short.load(history)
        let highest = short.correlate(energy: energy, spectrumCopy: nil)
        guard highest >= Self.shortWindowConfidence * Self.shortWindowConfidence,
              let lag = short.firstKeyMaximum(threshold: Self.shortWindowConfidence, highest: highest) else { return nil }
        let (offset, top) = short.interpolatedPeak(at: lag)
        return RawPitch(frequencyHz: sampleRateHz / (Float(lag) + offset), confidence: min(top, 1))
    }

    /// A sound that decays fast is a drum or a note ending, not something to tune; high notes
    /// may decay faster (a piano's top octaves), proportionally to their pitch. `energyRatio`
    /// is the window's energy over the decay look-back (1 when not falling fast).
    @_noLocks
    private func decaysTooFast(frequencyHz: Float, energyRatio: Float) -> Bool {
        guard energyRatio < percussiveEnergyRatio else { return false }
        let base = percussiveEnergyRatio, exponent = max(1, frequencyHz / Self.decayCornerHz)
        let allowedRatio = _unsafePerformance { powf(base, exponent) }
        return energyRatio < allowedRatio
    }

    /// `periodFrames` is this hop's pitch: it is held against an octave jump up, and counted as
    /// established when it continues the last one.
    @_noLocks
    private mutating func hold(_ periodFrames: Float) {
        let continues = heldPeriodFrames > 0 && abs(periodFrames / heldPeriodFrames - 1) < 0.06
        heldHops = continues ? heldHops + 1 : 0
        heldPeriodFrames = periodFrames
        hopsSinceVoiced = 0
    }

    /// The local maximum near the held period when that is near twice `lag` (within a
    /// semitone) and r at `lag` is below `octaveHoldRatio` of r there, or the held note is
    /// established and its fundamental still sounds (a decaying string's or an organ pipe's
    /// odd partials fade first, and the half period then repeats as well); nil otherwise. The
    /// search spans ±3 % (at least ±5 lags) about the held period, not about twice `lag`: the
    /// half period's peak is itself a few lags off (steel G2: 248 for a held 487), and a flat
    /// peak at the held period wanders by several lags.
    @_noLocks
    private mutating func heldOctave(of lag: Int, history: borrowing SampleHistory, mean: Float) -> Int? {
        let centre = Int(heldPeriodFrames + 0.5), reach = max(5, centre / 32)
        guard centre > reach + 1, centre + reach + 1 <= long.maximumLag, abs(heldPeriodFrames - Float(2 * lag)) < 0.06 * Float(2 * lag),
              let best = long.localMaximum(from: centre - reach, through: centre + reach) else { return nil }
        if long[lag] < long[best] * Self.octaveHoldRatio * Self.octaveHoldRatio { return best }
        guard long[best] >= confidenceThreshold * confidenceThreshold, establishedNoteSounds(period: best, history: history, mean: mean) else { return nil }
        return best
    }

    /// The local maximum near twice `lag` when the wave repeats clearly better there (r 5 %
    /// higher, `lowerOctaveCorrelationRatio`) and the window holds a partial at its
    /// frequency (within 20 dB of the power at twice it, `lowerOctavePowerRatio`): `lag` is
    /// then the period of the note's second partial, not of the note (the key-maximum rule
    /// takes a lag within 10 % of the highest). An organ's attack, where its upper ranks speak
    /// first, and a choir's ensemble, whose fundamental beats, read an octave up without it.
    /// nil otherwise.
    @_noLocks
    private mutating func lowerOctave(of lag: Int, history: borrowing SampleHistory, mean: Float) -> Int? {
        let ratio = Self.lowerOctaveCorrelationRatio
        guard let double = long.localMaximum(from: 2 * lag - 2, through: 2 * lag + 2),
              long[double] > long[lag] * ratio * ratio,
              fundamentalPowerRatio(period: double, history: history, mean: mean) >= Self.lowerOctavePowerRatio else { return nil }
        return double
    }

    /// Whether the long window's `period` is a multiple (2 or more) of the short window's
    /// confident `shortWindowPeriod` while the long window does not repeat at that period at
    /// all (r < `legatoMixtureCorrelation`): it holds the end of one note and the start of the
    /// next, and repeats at a period common to both, a note nobody played (G3 → D4 legato
    /// repeats at G2). A note whose short window reads an octave up repeats there in the long
    /// window too.
    @_noLocks
    private func isLegatoMixture(period: Float, shortWindowPeriod: Float) -> Bool {
        let multiple = period / shortWindowPeriod, nearest = _unsafePerformance { rintf(multiple) }
        let shortLag = Int(shortWindowPeriod + 0.5)
        return nearest >= 2 && abs(multiple / nearest - 1) < Self.legatoMultipleTolerance
            && shortLag <= long.maximumLag && long[shortLag] < Self.legatoMixtureCorrelation * Self.legatoMixtureCorrelation
    }

    /// Whether the held note, at `period`, has lasted `establishedHops` and still has its
    /// fundamental: within `heldFundamentalPowerRatio` of the power at twice it, and not
    /// fading (`fundamentalFades`).
    @_noLocks
    private mutating func establishedNoteSounds(period: Int, history: borrowing SampleHistory, mean: Float) -> Bool {
        heldHops >= establishedHops && !fundamentalFades(period: period)
            && fundamentalPowerRatio(period: period, history: history, mean: mean) >= Self.heldFundamentalPowerRatio
    }

    /// Whether the power at the frequency of `period` fell by `heldFundamentalFadeRatio` or more
    /// over the last `phaseSpanHops` hops (the long window's stored spectra, the bin nearest
    /// it and its neighbours): the held note has ended (a bass's B1 → B2 legato, where the new
    /// note brings no energy rise), not a string or pipe whose odd partials fade.
    @_noLocks
    private func fundamentalFades(period: Int) -> Bool {
        let fftSize = long.fftSize, bins = fftSize / 2 + 1
        guard storedSpectra > phaseSpanHops else { return true }
        let now = pastSpectra + pastSpectrumIndex * bins
        let then = pastSpectra + ((pastSpectrumIndex + 1) % (phaseSpanHops + 1)) * bins
        let centre = Int(Float(fftSize) / Float(period) + 0.5)
        guard centre >= 1, centre + 1 < bins else { return true }
        var powerNow: Float = 0, powerThen: Float = 0
        for bin in (centre - 1)...(centre + 1) {
            powerNow += power(now[bin])
            powerThen += power(then[bin])
        }
        return powerNow < powerThen * Self.heldFundamentalFadeRatio
    }

    /// Whether `period` is the octave below of a note plus a mutation: r has a maximum near
    /// half `period` that reaches `absentFundamentalHalfRatio` of r at `period`, and the window
    /// (its `mean` removed) holds no partial at the frequency of `period` (power under
    /// `absentFundamentalPowerRatio` of that at twice the frequency).
    @_noLocks
    private mutating func isMutationOctave(period: Int, history: borrowing SampleHistory, mean: Float) -> Bool {
        let centre = period / 2, ratio = Self.absentFundamentalHalfRatio
        guard let half = long.localMaximum(from: max(centre - 2, long.minimumLag), through: centre + 2),
              long[half] >= long[period] * ratio * ratio else { return false }
        return fundamentalPowerRatio(period: period, history: history, mean: mean) < Self.absentFundamentalPowerRatio
    }

    /// The window's power at the frequency of `period` over its power at twice that
    /// frequency: Hann-windowed single-frequency DFTs of the window (its `mean` removed), ~2.8 k
    /// complex steps at 48 kHz, so only computed where the correlation leaves the octave open,
    /// and once per hop and period.
    @_noLocks
    private mutating func fundamentalPowerRatio(period: Int, history: borrowing SampleHistory, mean: Float) -> Float {
        if measuredRatioPeriod != period {
            measuredRatio = measureFundamentalPowerRatio(period: period, history: history, mean: mean)
            measuredRatioPeriod = period
        }
        return measuredRatio
    }

    /// `fundamentalPowerRatio`, measured.
    @_noLocks
    private func measureFundamentalPowerRatio(period: Int, history: borrowing SampleHistory, mean: Float) -> Float {
        // Power at the period's frequency and at twice it; the second phasor is the square of
        // the first. Double: the rotation runs for thousands of steps.
        let count = long.windowFrames
        let angle = -2 * Double.pi / Double(period)
        let stepReal = _unsafePerformance { cos(angle) }, stepImaginary = _unsafePerformance { sin(angle) }
        var phasorReal = 1.0, phasorImaginary = 0.0
        var fundamentalReal = 0.0, fundamentalImaginary = 0.0, octaveReal = 0.0, octaveImaginary = 0.0
        for index in 0..<count {
            let value = Double((history.latest(count, at: index) - mean) * hannWindow[index])
            fundamentalReal += value * phasorReal
            fundamentalImaginary += value * phasorImaginary
            octaveReal += value * (phasorReal * phasorReal - phasorImaginary * phasorImaginary)
            octaveImaginary += value * 2 * phasorReal * phasorImaginary
            let real = phasorReal * stepReal - phasorImaginary * stepImaginary
            phasorImaginary = phasorReal * stepImaginary + phasorImaginary * stepReal
            phasorReal = real
        }
        let fundamentalPower = fundamentalReal * fundamentalReal + fundamentalImaginary * fundamentalImaginary
        let octavePower = octaveReal * octaveReal + octaveImaginary * octaveImaginary
        return octavePower > 0 ? Float(fundamentalPower / octavePower) : 1
    }

    /// No estimate this hop: the stored spectra and corrections no longer run on.
    @_noLocks
    private mutating func unvoiced() -> RawPitch {
        storedSpectra = 0
        correctionsStored = 0
        previousFrequencyHz = 0
        return .unvoiced
    }

    /// 7) The autocorrelation's frequency moved by the mean of the last few phase corrections:
    ///    the fundamental's frequency from its phase advance over `phaseSpanHops` hops (phase
    ///    vocoder), against the autocorrelation's. Autocorrelation follows all partials, so a
    ///    piano's stretched upper partials pull it sharp; the fundamental does not.
    @_noLocks
    private mutating func refined(_ frequencyHz: Float) -> Float {
        pastFrequencies[pastSpectrumIndex] = frequencyHz
        let previous = previousFrequencyHz
        previousFrequencyHz = frequencyHz
        if previous <= 0 || abs(frequencyHz / previous - 1) > 0.06 { correctionsStored = 0 }
        if let cents = phaseCorrectionCents(frequencyHz) {
            corrections[correctionIndex] = cents
            correctionIndex = (correctionIndex + 1) % Self.correctionCount
            correctionsStored = min(correctionsStored + 1, Self.correctionCount)
        }
        guard correctionsStored > 0 else { return frequencyHz }
        var sum: Float = 0
        for back in 1...correctionsStored {
            sum += corrections[(correctionIndex - back + Self.correctionCount) % Self.correctionCount]
        }
        let exponent = sum / Float(correctionsStored) / 1200
        return frequencyHz * _unsafePerformance { exp2f(exponent) }
    }

    /// Cents from `frequencyHz` to the fundamental's frequency measured by its phase advance,
    /// or nil when the fundamental is too low, too weak, or the spectra do not run back far
    /// enough.
    @_noLocks
    private func phaseCorrectionCents(_ frequencyHz: Float) -> Float? {
        let fftSize = long.fftSize, bins = fftSize / 2 + 1
        guard frequencyHz >= Self.refinementMinimumHz, storedSpectra > phaseSpanHops else { return nil }
        let now = pastSpectra + pastSpectrumIndex * bins
        let then = pastSpectra + ((pastSpectrumIndex + 1) % (phaseSpanHops + 1)) * bins
        let binsPerHz = Float(fftSize) / sampleRateHz
        let centre = frequencyHz * binsPerHz
        // The fundamental's peak bin, and the strongest of the first six harmonics.
        var peakBin = max(1, Int(centre) - 1)
        for bin in peakBin...min(Int(centre) + 2, bins - 1) where power(now[bin]) > power(now[peakBin]) { peakBin = bin }
        var strongest: Float = 0
        for harmonic in 1...6 {
            let bin = Int(Float(harmonic) * centre + 0.5)
            if bin < bins { strongest = max(strongest, power(now[bin])) }
        }
        guard power(now[peakBin]) >= strongest * Self.refinementPowerRatio else { return nil }
        // Phase advance beyond the bin's own, wrapped to ±π: the offset from the bin frequency.
        let (nowReal, nowImaginary) = now[peakBin], (thenReal, thenImaginary) = then[peakBin]
        let advance = _unsafePerformance { atan2f(nowImaginary, nowReal) - atan2f(thenImaginary, thenReal) }
        let expected = 2 * Float.pi * Float(peakBin) * phaseSpanFrames / Float(fftSize)
        var deviation = advance - expected
        deviation -= 2 * Float.pi * _unsafePerformance { rintf(deviation / (2 * Float.pi)) }
        let measuredHz = (Float(peakBin) / Float(fftSize) + deviation / (2 * Float.pi * phaseSpanFrames)) * sampleRateHz
        // The phase advance measures the span between the two windows, so it is compared with
        // the autocorrelation over the same span (the mean, in cents, of its two ends): a
        // vibrato's movement over the span is then not mistaken for the partials' bias.
        let spanFrequencyHz = realtimeSquareRoot(frequencyHz * pastFrequencies[(pastSpectrumIndex + 1) % (phaseSpanHops + 1)])
        guard measuredHz > 0, spanFrequencyHz > 0 else { return nil }
        let cents = 1200 * _unsafePerformance { log2f(measuredHz / spanFrequencyHz) }
        return abs(cents) < Self.refinementLimitCents ? cents : nil
    }

    @inline(__always) @_noLocks
    private func power(_ value: fftwf_complex) -> Float { value.0 * value.0 + value.1 * value.1 }

    @_noLocks
    mutating func reset() {
        recentEnergies.fill(with: 0)
        recentEnergyIndex = 0
        noiseFloorMeanSquare = max(silenceGateMeanSquare, _unsafePerformance { powf(10, Self.initialNoiseFloorDecibels / 10) })
        heldPeriodFrames = 0
        heldHops = 0
        _ = unvoiced()
    }
}

/// One unsmoothed estimate; frequency 0 means no confident pitch.
struct RawPitch {
    var frequencyHz: Float
    var confidence: Float
    /// |cents| between the long window's reading and the short window's (infinity when the
    /// short window has none): both windows reading alike says the note has settled.
    var windowDifferenceCents = Float.infinity
    static var unvoiced: RawPitch { RawPitch(frequencyHz: 0, confidence: 0) }
}
