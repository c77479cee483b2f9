import CFFTW
import Glibc
import SpectrumCore

/// Fundamental frequency by normalised autocorrelation (seed 000's tuner; the correlation
/// itself is `NormalisedAutocorrelation`).
///
/// Each hop: gates (silence, the input's noise floor, mains hum, a fast decay, a hit in the
/// window, an aperiodic stroke dying in it, a near-pure membrane whose other energy
/// does not repeat, a pitch falling since the last energy rise: a drum; and until the next
/// attack, what rings on after a drum was found), the first key
/// maximum of the correlation of the long window (2.2 periods of the lowest note) and the reading of a
/// short window (2.2 periods of 150 Hz, the newest 14.7 ms), one scored octave decision among
/// the first key maximum, its octave below (or the held note there), its octave above (a note
/// plus a mutation) and the short window's reading (`OctaveDecision`), the period by parabolic
/// interpolation, and above 150 Hz a refinement on the fundamental's phase advance (a piano's
/// stretched partials pull the autocorrelation sharp). The short window answers when the long
/// window finds no pitch (at a note's start, where it still holds what came before), wins
/// where the long window's readings are stale or a legato mixture, and tells the tracker how
/// closely it agrees with the long window (alike, a note is shown at once).
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
    /// `gateAboveNoiseFloorDecibels` as a power ratio: the least power a window holds above
    /// the noise floor, over the floor. nil: no gate relative to the floor (`noiseFloorGate` off).
    private let gateAboveNoiseFloorRatio: Float?
    /// The input's noise floor, a mean square per sample: the least noise a window held,
    /// followed down at once and up by `noiseFloorRisePerHop` (minimum tracking). A window's
    /// noise is the part of its mean square that the period the tuner reads does not explain
    /// (`noisePower`), so a steady tone is not its own floor; hum is told by its frequency.
    private var noiseFloorMeanSquare: Float
    private let noiseFloorRisePerHop: Float
    /// `mainsHumToleranceCents` as a frequency ratio (above 1).
    private let mainsHumRatio: Float
    /// The configured pitch range (`pitch.minimum_frequency_hz` … `maximum_frequency_hz`). The
    /// correlation's lags are whole (the shortest rounded down), so a reading can lie up to a
    /// lag beyond the range's top (2286 Hz for 2200 Hz at 48 kHz: a crash cymbal's ring); what
    /// lies outside the range the user asked for is no note.
    private let frequencyRangeHz: ClosedRange<Float>
    /// Energy ratio (this hop's window / the window `decayLookbackHops` hops earlier) below which
    /// the sound is decaying too fast to tune: a drum, or a note ending.
    private let percussiveEnergyRatio: Float
    /// `percussiveFundamentalDecayDecibelsPerSecond` as the same kind of ratio, of the power at
    /// the pitch's fundamental (nil = off: the window's energy alone decides).
    private let percussiveFundamentalRatio: Float?
    /// `hitDecayDecibelsPerSecond`: the fastest fall of energy from a window's oldest half to
    /// its newest that is still a note (`holdsHit`).
    private let hitDecayDecibelsPerSecond: Float
    /// `fallingPitchCents`, `fallingPitchCentsPerSecond` (0 = off) per hop and
    /// `fallingPitchDecayDecibelsPerSecond` as a ratio of window energies over the decay
    /// look-back: what makes a falling pitch a drum's body (`pitchFalls`).
    private let fallingPitchCents: Float
    private let fallingPitchCentsPerHop: Float
    private let fallingPitchEnergyRatio: Float
    /// `fallingPitchRiseCents` as a frequency ratio (0 = off): a pitch that turns back up.
    private let fallingPitchRiseRatio: Float
    /// `strokeMaximumCorrelation`, `strokeEnergyFallDecibels`, and `strokeArrivalFallDecibels`
    /// and `strokeArrivalSpreadDecibels` as power ratios (the spread 0 = off): what makes a
    /// window a stroke dying, or one dying as the next arrives (`isStroke`).
    private let strokeMaximumCorrelation: Float
    private let strokeEnergyFallDecibels: Float
    private let strokeArrivalFallRatio: Float
    private let strokeArrivalSpreadRatio: Float
    /// `membraneFundamentalShare`, `membraneAperiodicShare` and `membraneRiseDecibels`: what
    /// makes a window a struck membrane ringing (`isMembrane`).
    private let membraneFundamentalShare: Float
    private let membraneAperiodicShare: Float
    private let membraneRiseDecibels: Float
    /// `membraneGlideCentsPerSecond` per hop (0 = off).
    private let membraneGlideCentsPerHop: Float
    /// Half the width of the fundamental's main lobe in the long window's spectrum, in Hz: two
    /// resolution widths (sample rate / window frames) of its rectangular window, which hold
    /// 95 % of a steady sinusoid's energy (at most half the pitch: less).
    private let membraneLobeHalfWidthHz: Float
    /// The pitch read when the sound's energy last rose (or its pitch jumped), and on the hop
    /// before this one (0 = none: that hop read no pitch at all).
    private var glideStartHz: Float = 0
    private var glidePreviousHz: Float = 0
    /// Whether this hop read a pitch (gated or not), for `glidePreviousHz`.
    private var glideReadThisHop = false
    /// Hops since `glideStartHz` was read.
    private var glideHops = 0
    /// Whether this glide has been found to be a drum's body: it stays one until it starts again.
    private var glideIsDrum = false
    /// `drumRingSeconds` in hops (0 = off), and the hops left of the drum found last: until the
    /// next attack, or 0, what rings on is that drum (`ringsOnAfterDrum`).
    private let drumRingHops: Int
    private var drumRingHopsLeft = 0
    /// The period of the note read within `drumNoteMemoryHops` before the drum was found (0 =
    /// none): a note the drum was struck over, which goes on; and of the last note read on a hop
    /// without an attack, and the hops since. A reading during an attack is as likely the
    /// drum's stroke as the note (a snare's stroke pulled a held 110 Hz note's readings a
    /// semitone sharp before the drum was found, and the note was then refused as the drum's
    /// ring; pitch finding 49), so it never names the note a drum was struck over.
    private var noteUnderDrumPeriodFrames: Float = 0
    private var lastNotePeriodFrames: Float = 0
    private var hopsSinceLastNote = 0
    /// Whether this hop's window energy rose as at an attack (`octaveHoldReleaseRatio`).
    private var attackThisHop = false
    /// The lowest pitch read since the last attack (an energy rise of `octaveHoldReleaseRatio`
    /// over the decay look-back, a larger step or a hop without any pitch), and whether the
    /// pitch has since risen by more than `fallingPitchRiseRatio` above it: a vibrato.
    private var glideLowestHz: Float = 0
    private var glideTurnedUp = false
    /// ~50 ms of hops: a window's energy wobbles with the phase of a low note from hop to hop,
    /// a trend over several hops does not.
    private let decayLookbackHops: Int
    /// `establishedNoteSeconds` in hops.
    private let establishedHops: Int
    /// `drumNoteMemorySeconds` in hops.
    private let drumNoteMemoryHops: Int
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
    /// The same, voiced or not (`storedSpectra` restarts at every hop without an estimate; the
    /// decay gate compares spectra ~50 ms apart whatever the hops between read).
    private var spectraInARow = 0
    /// The pitch the octave decision chose on the hop each slot of `pastSpectra` belongs to,
    /// whether a gate then refused it or not (0: none).
    private let pastReadingsHz: RealtimeBuffer
    /// Hops between the two spectra compared: ~50 ms, so the phase advance is unambiguous for
    /// a peak within ±10 Hz of its bin (bins are ~11.7 Hz).
    private let phaseSpanHops: Int
    private let phaseSpanFrames: Float
    /// The last `correctionCount` phase corrections in cents, newest at `correctionIndex − 1`,
    /// while the pitch stays within a semitone; `correctionsStored` of them valid.
    private let corrections: RealtimeBuffer
    private var correctionIndex = 0
    private var correctionsStored = 0
    /// Hann window over the long window, for the octave decision's spectral evidence (`PartialPowers`).
    private let hannWindow: RealtimeBuffer
    /// The previous hop's autocorrelation frequency (0 after an unvoiced hop).
    private var previousFrequencyHz: Float = 0
    /// The last period chosen (0 = none): the octave decision's held period.
    private var heldPeriodFrames: Float = 0
    /// Consecutive voiced hops whose period stayed within a semitone of the one before.
    private var heldHops = 0
    /// The weights of the octave decision.
    private let octave: OctaveDecision.Parameters
    /// This hop's `PartialPowers`, newer first: the octave decision asks about at most two
    /// periods, maybe more than once.
    private var measuredPartials = (PartialPowers(), PartialPowers())
    private var hopsSinceVoiced = 0
    /// The last period read on two hops in a row (0 = none, or ~50 ms after, or at an attack),
    /// and the hops since: the note a hop in loud noise continues, though a hop between read
    /// something else.
    private var establishedPeriodFrames: Float = 0
    private var hopsSinceEstablished = 0
    /// The long window's spectrum weighed against the input's steady noise before its
    /// correlation (`NoiseWeighting`): a note in loud noise correlates as the note.
    private var noiseWeighting: NoiseWeighting
    /// Skips the short window's correlation while its newest samples stay the steady noise it
    /// last read nothing in (`ShortWindowRecheck`).
    private var shortWindowRecheck = ShortWindowRecheck()

    /// The noise floor before any window was quieter: the gate starts near −64 dBFS (a window
    /// holding −3 dB of the floor's power above it), so a hum or hiss quieter than that from
    /// the start is gated, and falls to the input's floor at its first quieter window (the
    /// silence before playing, a gap between notes).
    static let initialNoiseFloorDecibels: Float = -66
    /// How fast the floor may rise: slowly, so windows that are all noise to the tuner for a
    /// moment (an attack, a chord, a drum hit) do not lift it; a steady hiss 30 dB louder than
    /// the floor is reached within a minute, and from then on its windows, scattered about
    /// the floor, mostly end at the gate before the correlation.
    static let noiseFloorRiseDecibelsPerSecond = 0.5
    /// Mains hum is what a reading at a mains frequency is: 50 Hz (Europe, Asia, Africa,
    /// Australia) or 60 Hz (the Americas, part of Japan). A hum's wave repeats at the mains
    /// period, so it reads the mains frequency, or twice it when the buzz of a full-wave
    /// rectifier has only even harmonics (`mainsHumMultiples`). A steady tone is not noise
    /// (`noiseFloorMeanSquare`), so its frequency is all that tells hum from a held note.
    static let mainsFrequenciesHz: (Float, Float) = (50, 60)
    /// The mains frequency and twice it: at A4 = 440 Hz the nearest notes lie 35 cents (G1, G2)
    /// and 50 cents (A♯, B) away, and no note in tune at A4 = 430…446 Hz (or 415 Hz) lies within
    /// `mainsHumToleranceCents` of 50, 60, 100 or 120 Hz; from 150 Hz up the multiples lie near
    /// notes (250 Hz is B3 in tune at A4 = 443 Hz).
    static let mainsHumMultiples: Float = 2
    /// How far from a mains frequency (or twice it) a reading is still hum: the grid's frequency
    /// stays within ±0.2 Hz of 50 Hz in normal operation (±6.9 ¢), plus the reading's error
    /// (under a cent on a steady tone). The corpus's detuned notes (±7, ±23 ¢) lie ≥ 12 ¢ away.
    static let mainsHumToleranceCents: Float = 8

    /// The largest step between two hops' pitches a glide follows: a semitone, as the tracker's
    /// new note (`PitchTracker.Parameters.noteChangeSemitones`); a tom's body falls 15–120 cents
    /// per hop.
    static let glideStepLimitCents: Float = 100

    /// The shortest block of whole periods over which `isStroke` reads a window's energy
    /// spread: 5 ms, a snare's wires die with a ~15 ms time constant, so a block still sees them
    /// fall; shorter blocks of a high note would scatter with its phase and noise.
    static let strokeBlockMinimumSeconds: Float = 0.005

    /// ~100 ms of hops: a note read this recently before a drum was found is a note the drum was
    /// struck over.
    static let drumNoteMemorySeconds = 0.1

    /// The short window's lowest note: 2.2 periods of it are 14.7 ms.
    static let shortWindowLowestHz = 150.0
    /// r the short window's estimate must reach: with fewer periods in it, noise and a note's
    /// transient correlate more by chance than in the long window.
    static let shortWindowConfidence: Float = 0.8
    /// r at a held note's own period (within half a semitone) that continues it in steady noise
    /// when nothing passes `confidenceThreshold`: at 0 dB SNR a note correlates at r ≈ 0.5 and
    /// scatters about the threshold. Chosen on the tuning part (docs/accuracy.md, pitch finding
    /// 35: 0.5 / 0.45 / 0.4 / 0.35; 0.45 took the gain at pink 10 dB without adding octave
    /// errors outside pink 0 dB).
    static let heldNoteInNoiseConfidence: Float = 0.45
    /// A held note's fundamental (its strongest bin within half a semitone) at least this many
    /// times the noise floor per bin of its band (`NoiseWeighting.floorPerBin`: a minimum over
    /// the memory, ~0.4 of the noise's mean for 8 bins) continues the note where its
    /// correlation is lost under the noise. Chosen on the tuning part with the tones' ends as
    /// a guard (docs/accuracy.md, pitch finding 49: 8 and 16 read 0.18 and 0.07 points more of
    /// the list but went on reading tones 100 ms and more after they ended in noise; 24
    /// and 32 did not).
    static let heldNoteFundamentalAboveFloorRatio: Float = 24
    /// Above this pitch the allowed decay rate grows in proportion to the pitch: a piano's top
    /// octaves lose energy faster than 60 dB/s (C7 ≈ 100 dB/s), drum bodies sit lower.
    static let decayCornerHz: Float = 400
    /// A semitone as a frequency ratio.
    static let semitoneRatio: Float = 1.0594631
    /// Window-energy rise over ~50 ms (+1.5 dB) that ends the hold: a new note's attack, so a
    /// melody's leap up an octave is not held down.
    static let octaveHoldReleaseRatio: Float = 1.4
    /// The same rise where the window held steady noise a hop ago
    /// (`NoiseWeighting.heldSteadyNoiseLastHop`): ×2 (+3 dB), a note as loud as the noise
    /// arriving. Pink noise's own windows rise by 1.4–1.7 over ~50 ms now and then (its low
    /// bands hold few cycles in 58 ms), and each such "attack" forgot the note held under the
    /// noise (`establishedPeriodFrames`): a piano's or guitar's note decaying into the noise
    /// was lost half-way. 2 and 3 read the same on the tuning part (docs/accuracy.md, pitch
    /// finding 47).
    static let octaveHoldReleaseRatioInSteadyNoise: Float = 2
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

    init(configuration: PitchConfiguration, sampleRateHz: Double, hopSeconds: Double,
         octave: OctaveDecision.Parameters = OctaveDecision.Parameters()) {
        self.sampleRateHz = Float(sampleRateHz)
        self.octave = octave
        confidenceThreshold = Float(configuration.confidenceThreshold)
        silenceGateMeanSquare = Float(pow(10, configuration.silenceGateDecibels / 10))
        gateAboveNoiseFloorRatio = configuration.noiseFloorGate ? Float(pow(10, configuration.gateAboveNoiseFloorDecibels / 10)) : nil
        noiseFloorMeanSquare = max(silenceGateMeanSquare, powf(10, Self.initialNoiseFloorDecibels / 10))
        noiseFloorRisePerHop = Float(pow(10, Self.noiseFloorRiseDecibelsPerSecond * hopSeconds / 10))
        mainsHumRatio = powf(2, Self.mainsHumToleranceCents / 1200)
        frequencyRangeHz = Float(configuration.minimumFrequencyHz)...Float(configuration.maximumFrequencyHz)
        let minimumLag = max(2, Int((sampleRateHz / configuration.maximumFrequencyHz).rounded(.down)))
        long = NormalisedAutocorrelation(minimumLag: minimumLag,
                                         maximumLag: Int((sampleRateHz / configuration.minimumFrequencyHz).rounded(.up)))
        short = NormalisedAutocorrelation(minimumLag: minimumLag,
                                          maximumLag: max(minimumLag + 2, Int((sampleRateHz / Self.shortWindowLowestHz).rounded(.up))))
        decayLookbackHops = min(8, max(1, Int((0.05 / hopSeconds).rounded())))
        establishedHops = max(1, Int((octave.establishedNoteSeconds / hopSeconds).rounded()))
        recentEnergies = RealtimeBuffer(count: decayLookbackHops)
        percussiveEnergyRatio = Float(pow(10, -configuration.percussiveDecayDecibelsPerSecond * hopSeconds * Double(decayLookbackHops) / 10))
        percussiveFundamentalRatio = configuration.percussiveFundamentalDecayDecibelsPerSecond > 0
            ? Float(pow(10, -configuration.percussiveFundamentalDecayDecibelsPerSecond * hopSeconds * Double(decayLookbackHops) / 10)) : nil
        hitDecayDecibelsPerSecond = Float(configuration.hitDecayDecibelsPerSecond)
        fallingPitchCents = Float(configuration.fallingPitchCents)
        fallingPitchCentsPerHop = Float(configuration.fallingPitchCentsPerSecond * hopSeconds)
        fallingPitchEnergyRatio = Float(pow(10, -configuration.fallingPitchDecayDecibelsPerSecond * hopSeconds * Double(decayLookbackHops) / 10))
        fallingPitchRiseRatio = configuration.fallingPitchRiseCents > 0 ? Float(pow(2, configuration.fallingPitchRiseCents / 1200)) : 0
        strokeMaximumCorrelation = Float(configuration.strokeMaximumCorrelation)
        strokeEnergyFallDecibels = Float(configuration.strokeEnergyFallDecibels)
        strokeArrivalFallRatio = Float(pow(10, configuration.strokeArrivalFallDecibels / 10))
        strokeArrivalSpreadRatio = configuration.strokeArrivalSpreadDecibels > 0 ? Float(pow(10, configuration.strokeArrivalSpreadDecibels / 10)) : 0
        membraneFundamentalShare = Float(configuration.membraneFundamentalShare)
        membraneAperiodicShare = Float(configuration.membraneAperiodicShare)
        membraneRiseDecibels = Float(configuration.membraneRiseDecibels)
        membraneGlideCentsPerHop = Float(configuration.membraneGlideCentsPerSecond * hopSeconds)
        drumRingHops = Int((configuration.drumRingSeconds / hopSeconds).rounded())
        drumNoteMemoryHops = max(1, Int((Self.drumNoteMemorySeconds / hopSeconds).rounded()))
        phaseSpanHops = decayLookbackHops  // the same ~50 ms
        phaseSpanFrames = Float(Double(phaseSpanHops) * hopSeconds * sampleRateHz)
        let bins = long.fftSize / 2 + 1
        noiseWeighting = NoiseWeighting(bins: bins, hopSeconds: hopSeconds, windowSeconds: Double(long.windowFrames) / sampleRateHz)
        pastSpectra = fftwf_alloc_complex(bins * (phaseSpanHops + 1))
        pastSpectra.initialize(repeating: (0, 0), count: bins * (phaseSpanHops + 1))
        pastFrequencies = RealtimeBuffer(count: phaseSpanHops + 1)
        pastReadingsHz = RealtimeBuffer(count: phaseSpanHops + 1)
        let windowFrames = long.windowFrames
        membraneLobeHalfWidthHz = 2 * Float(sampleRateHz) / Float(windowFrames)
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
        #if SPECTRUM_PITCH_TRACE
        _unsafePerformance { PitchGateTrace.startHop() }
        #endif
        let estimate = estimate(history: history)
        noiseWeighting.endHop(noteRead: estimate.frequencyHz > 0)
        return estimate
    }

    /// `detect`'s estimate.
    @_noLocks
    private mutating func estimate(history: borrowing SampleHistory) -> RawPitch {
        // 1) The long window with its mean removed (Pearson), and its energy.
        let (mean, energy) = long.load(history)
        let spectraBefore = spectraInARow
        spectraInARow = 0
        if !glideReadThisHop { glidePreviousHz = 0 }
        glideReadThisHop = false
        measuredPartials = (PartialPowers(), PartialPowers())
        let earlierEnergy = recentEnergies[recentEnergyIndex]
        let decaying = energy < earlierEnergy * percussiveEnergyRatio
        // The octave hold ends after ~50 ms without an estimate, or at a new note's attack.
        hopsSinceVoiced += 1
        hopsSinceEstablished += 1
        let attack = energy > earlierEnergy * (noiseWeighting.heldSteadyNoiseLastHop ? Self.octaveHoldReleaseRatioInSteadyNoise : Self.octaveHoldReleaseRatio)
        attackThisHop = attack
        hopsSinceLastNote += 1
        if hopsSinceVoiced > decayLookbackHops || attack { heldPeriodFrames = 0; heldHops = 0 }
        drumRingHopsLeft = attack ? 0 : max(0, drumRingHopsLeft - 1)
        if hopsSinceEstablished > decayLookbackHops || attack { establishedPeriodFrames = 0 }
        recentEnergies[recentEnergyIndex] = energy
        recentEnergyIndex = (recentEnergyIndex + 1) % decayLookbackHops
        // Gates: the fixed silence gate, and the gate relative to the input's noise floor on
        // what could be a note: the window's power above the floor (its mean square less the
        // floor), against the floor. Not the window's whole power: once the floor has reached
        // a steady noise, a note as loud as the noise doubles the window's power (+3 dB) and
        // stands as high above the floor as the noise itself (0 dB). Windows at the floor
        // (steady noise, hum, hiss, silence) end here, before the correlation. The floor then
        // follows this window's noise: all of it unless a period explains part.
        let meanSquare = energy / Float(long.windowFrames)
        let risenFloor = noiseFloorMeanSquare * noiseFloorRisePerHop
        var noisePower = meanSquare
        defer { noiseFloorMeanSquare = max(silenceGateMeanSquare, min(noisePower, risenFloor)) }
        guard meanSquare >= silenceGateMeanSquare else { return unvoiced() }
        if let gateAboveNoiseFloorRatio {
            let floor = max(silenceGateMeanSquare, min(meanSquare, risenFloor))
            guard meanSquare - floor >= floor * gateAboveNoiseFloorRatio else { return unvoiced() }
        }

        // 2) The correlation at every lag; the spectrum is kept for the fundamental's phase.
        pastSpectrumIndex = (pastSpectrumIndex + 1) % (phaseSpanHops + 1)
        storedSpectra += 1
        spectraInARow = spectraBefore + 1
        pastReadingsHz[pastSpectrumIndex] = 0
        let bins = long.fftSize / 2 + 1, kept = pastSpectra + pastSpectrumIndex * bins
        long.transform(energy: energy, spectrumCopy: kept)
        var highest = long.correlatePowers(keptShare: 1)

        // 3) The first key maximum (confident, and near the highest) and the short window's
        //    reading; where neither is there, the long window once more with its spectrum
        //    weighed against the input's steady noise (`NoiseWeighting`: a note in loud noise
        //    correlates as the note). Then the one octave decision among the candidate periods:
        //    the first key maximum, its octave below (or the held period there), its octave
        //    above (a note plus a mutation) and the short window's reading (`OctaveDecision`).
        let energyRatio = decaying ? energy / earlierEnergy : 1
        var lag = highest >= confidenceThreshold * confidenceThreshold
            ? long.firstKeyMaximum(threshold: confidenceThreshold, highest: highest) : nil
        // In steady noise (the last hop took the second look in a window the noise filled) the
        // short window is read again only when its newest samples change.
        let shortEstimate = shortWindowPitch(history: history, inSteadyNoise: lag == nil && noiseWeighting.heldSteadyNoiseLastHop)
        var keptShare: Float = 1
        // Not when the short window reads a note: its newest 14.7 ms are then a clean note
        // after something else (noise that has just stopped), not a note in steady noise.
        if lag == nil, shortEstimate == nil {
            if let share = noiseWeighting.weigh(long.powers) {
                keptShare = share
                highest = long.correlatePowers(keptShare: share)
                // A note read within the last ~50 ms (the octave hold), in steady noise: the
                // weights leave the bands of its partials, mostly its lowest ones, whose lobe
                // about lag 0 stands above the period's peak and would take it as the key
                // maximum's reference; its period is measured against the periods alone.
                if noiseWeighting.holdsSteadyNoise && heldPeriodFrames > 0 { highest = long.highestAfterFirstDip() }
                lag = highest >= confidenceThreshold * confidenceThreshold
                    ? long.firstKeyMaximum(threshold: confidenceThreshold, highest: highest) : nil
            }
        }
        // A note read on two hops in a row within the last ~50 ms (`establishedPeriodFrames`),
        // whose window the input's steady noise fills (`NoiseWeighting.holdsSteadyNoise`),
        // continues at its own period while r there stays at `heldNoteInNoiseConfidence`: the
        // noise, not the note, lowered r (a drum's ring over the quiet between strokes is no
        // steady noise, and keeps the gate). A one-hop reading is not continued: in loud noise
        // that is as often an octave off as the note (pitch finding 35); nor does one break the
        // note it interrupts (finding 36). It is continued also where the weighted second look
        // found a key maximum elsewhere (narrow bands of noise left by the weights repeat at
        // any lag), and it is read at its own period, not offered to the octave decision, whose
        // fundamental's test cannot tell a fundamental under the noise from an absent one and
        // flipped decaying notes an octave up (finding 47). A peak more than half a semitone
        // from the established period is not the note: at a short period the search spans
        // whole lags (±2 at least, about ±75 cents at C6), and such peaks walked the reading off
        // the note by a lag a hop. Where r there has fallen under that too (a decaying note
        // sinks under the noise while its fundamental still stands clear of the noise in its
        // own bins), a note established for `establishedHops` continues at its fundamental's
        // spectral peak while that stands `heldNoteFundamentalAboveFloorRatio` over its band's
        // noise floor (finding 49).
        var heldNotePeriodFrames: Float = 0
        if lag == nil || keptShare < 1, shortEstimate == nil, establishedPeriodFrames > 0, noiseWeighting.holdsSteadyNoise {
            let halfSemitone = (Self.semitoneRatio - 1) / 2
            let reach = max(2, Int(establishedPeriodFrames * halfSemitone))
            if let near = long.localMaximum(from: Int(establishedPeriodFrames + 0.5) - reach, through: Int(establishedPeriodFrames + 0.5) + reach),
               long[near] >= Self.heldNoteInNoiseConfidence * Self.heldNoteInNoiseConfidence {
                let period = Float(near) + long.interpolatedPeak(at: near).offset
                if abs(period / establishedPeriodFrames - 1) <= halfSemitone {
                    lag = near
                    heldNotePeriodFrames = period
                }
            }
            if heldNotePeriodFrames == 0, heldHops >= establishedHops,
               let period = fundamentalAboveNoise(periodFrames: establishedPeriodFrames, spectrum: kept) {
                lag = Int(period + 0.5)
                heldNotePeriodFrames = period
            }
        }
        var decided: OctaveDecision.Candidate?
        if heldNotePeriodFrames > 0, let lag {
            decided = heldNoteReading(lag: lag, periodFrames: heldNotePeriodFrames)
        } else {
            decided = decideOctave(firstKeyMaximum: lag, shortEstimate: shortEstimate, history: history, mean: mean, spectrum: kept)
        }
        guard let winner = decided else {
            return unvoiced()
        }
        pastReadingsHz[pastSpectrumIndex] = winner.kind == OctaveDecision.Kind.shortWindow ? shortEstimate?.frequencyHz ?? 0 : sampleRateHz / winner.periodFrames
        if winner.kind == OctaveDecision.Kind.shortWindow, let shortEstimate {
            guard !pitchFalls(shortEstimate.frequencyHz, energy: energy, earlierEnergy: earlierEnergy) else {
                foundDrum()
                return unvoiced()
            }
            guard frequencyRangeHz.contains(shortEstimate.frequencyHz), !ringsOnAfterDrum(shortEstimate.frequencyHz) else { return unvoiced() }
            return shortWindowEstimate(shortEstimate, energyRatio: energyRatio)
        }
        let top = long.interpolatedPeak(at: winner.lag).height
        let periodFrames = winner.periodFrames
        let frequencyHz = sampleRateHz / periodFrames
        // The glide follows every pitch read, hum included (a tom's body may pass 120 Hz).
        let fallen = pitchFalls(frequencyHz, energy: energy, earlierEnergy: earlierEnergy)
        // Hum is noise, all of it; of any other wave, the part r at its period does not
        // explain (Pearson: r = S / (S + N) for a periodic S in noise N, so (1 − r)·(S + N) = N).
        // So is a reading outside the configured range.
        guard !isMainsHum(frequencyHz), frequencyRangeHz.contains(frequencyHz) else { return unvoiced() }
        noisePower = meanSquare * (1 - min(max(top * keptShare, 0), 1))
        let halvesStep = halvesStepDecibels(periodFrames: periodFrames)
        #if SPECTRUM_PITCH_TRACE
        let share = fundamentalShare(frequencyHz: frequencyHz, spectrum: kept, energy: energy)
        let evidence = PitchGateTrace.Evidence(
            frequencyHz: frequencyHz, correlation: top, energyRatio: energy / earlierEnergy,
            decayEvidence: decayEvidence(frequencyHz: frequencyHz, energyRatio: energyRatio),
            continuesPreviousReading: continuesPreviousReading(frequencyHz),
            hitEvidence: hitEvidence(halvesStepDecibels: halvesStep, periodFrames: periodFrames), halvesStepDecibels: halvesStep,
            isStroke: isStroke(correlation: top, halvesStepDecibels: halvesStep, periodFrames: periodFrames), fundamentalShare: share,
            membraneEvidence: membraneEvidence(correlation: top, frequencyHz: frequencyHz, spectrum: kept,
                                               energy: energy, earlierEnergy: earlierEnergy),
            pitchFalls: fallen, ringsOnAfterDrum: ringsOnAfterDrum(frequencyHz))
        _unsafePerformance { PitchGateTrace.write(evidence) }
        #endif
        guard !ringsOnAfterDrum(frequencyHz) else { return unvoiced() }
        // A stroke or hit first: found whatever else refuses the hop, it marks the drum.
        guard !holdsHit(halvesStepDecibels: halvesStep, periodFrames: periodFrames),
              !isStroke(correlation: top, halvesStepDecibels: halvesStep, periodFrames: periodFrames) else {
            foundDrum()
            _ = unvoiced()
            return .stroke
        }
        guard !fallen else {
            foundDrum()
            return unvoiced()
        }
        guard !decaysTooFast(frequencyHz: frequencyHz, energyRatio: energyRatio) else { return unvoiced() }
        guard !isMembrane(correlation: top, frequencyHz: frequencyHz, spectrum: kept, energy: energy, earlierEnergy: earlierEnergy) else {
            return unvoiced()
        }
        // 4) The two windows' difference in cents goes to the tracker: a close one says the
        //    note has settled over the whole long window.
        var windowDifferenceCents = Float.infinity
        if let shortEstimate {
            windowDifferenceCents = abs(1200 * _unsafePerformance { log2f(shortEstimate.frequencyHz / frequencyHz) })
        }
        hold(periodFrames, continued: heldNotePeriodFrames > 0)
        // 5) The refinement on the fundamental's phase advance.
        return RawPitch(frequencyHz: refined(frequencyHz, acrossAttack: attack), confidence: min(max(top, 0), 1), windowDifferenceCents: windowDifferenceCents)
    }

    /// The period of a held note's fundamental where it stands `heldNoteFundamentalAboveFloorRatio`
    /// over the input's steady noise, or nil: the strongest bin within half a semitone of the
    /// note at `periodFrames` in the long window's spectrum (`spectrum`, before squaring),
    /// against the noise floor per bin of its band; its frequency interpolated on the log
    /// powers of the bins either side.
    @_noLocks
    private func fundamentalAboveNoise(periodFrames: Float, spectrum: UnsafePointer<fftwf_complex>) -> Float? {
        let centre = Float(long.fftSize) / periodFrames, halfSemitone = (Self.semitoneRatio - 1) / 2
        let reach = max(1, Int(centre * halfSemitone + 0.5)), middle = Int(centre + 0.5)
        guard middle - reach >= 2, middle + reach < long.fftSize / 2 - 1,
              let floor = noiseWeighting.floorPerBin(at: middle) else { return nil }
        let peak = strongestBin(from: middle - reach, through: middle + reach, spectrum: spectrum)
        let top = power(spectrum[peak])
        guard top >= Self.heldNoteFundamentalAboveFloorRatio * floor else { return nil }
        let below = power(spectrum[peak - 1]), above = power(spectrum[peak + 1])
        var offset: Float = 0
        if below > 0, above > 0 {
            let (left, centreLog, right) = _unsafePerformance { (logf(below), logf(top), logf(above)) }
            offset = max(-0.5, min(0.5, parabolicPeakOffset(before: left, peak: centreLog, after: right)))
        }
        return Float(long.fftSize) / (Float(peak) + offset)
    }

    /// A held note continued in steady noise at `lag` (interpolated: `periodFrames`), as the
    /// octave decision's first key maximum.
    @_noLocks
    private func heldNoteReading(lag: Int, periodFrames: Float) -> OctaveDecision.Candidate {
        var candidate = OctaveDecision.Candidate(kind: OctaveDecision.Kind.firstKeyMaximum)
        candidate.exists = true
        candidate.lag = lag
        candidate.periodFrames = periodFrames
        return candidate
    }

    /// The octave decision (`OctaveDecision`): the candidates' scores from the correlation
    /// and the short window, then, best first, the spectral evidence of the leader only while
    /// another candidate could still beat it. nil when there is no candidate at all.
    /// `spectrum` is the long window's (`NormalisedAutocorrelation.transform`).
    @_noLocks
    private mutating func decideOctave(firstKeyMaximum lag: Int?, shortEstimate: RawPitch?, history: borrowing SampleHistory,
                                       mean: Float, spectrum: UnsafePointer<fftwf_complex>) -> OctaveDecision.Candidate? {
        var candidates = OctaveDecision.Candidates()
        var belowIsHeld = false, belowHasOddPartials = false
        if let lag, let logR = OctaveDecision.logCorrelation(signedSquare: long[lag]) {
            var first = OctaveDecision.Candidate(kind: OctaveDecision.Kind.firstKeyMaximum)
            first.exists = true
            first.lag = lag
            first.periodFrames = Float(lag) + long.interpolatedPeak(at: lag).offset
            first.score = logR
            // The octave above: r at P/2 must reach a share of r at P (else P's odd partials
            // carry too much: a missing-fundamental tone); then P's fundamental decides.
            let centre = lag / 2, share = octave.octaveAboveMinimumShare
            if let half = long.localMaximum(from: max(centre - 2, long.minimumLag), through: centre + 2),
               long[half] >= long[lag] * share * share, let halfLogR = OctaveDecision.logCorrelation(signedSquare: long[half]) {
                var above = OctaveDecision.Candidate(kind: OctaveDecision.Kind.octaveAbove)
                above.exists = true
                above.lag = lag
                above.periodFrames = first.periodFrames / 2
                above.score = halfLogR - octave.octaveAboveCost
                candidates[OctaveDecision.Kind.octaveAbove] = above
                first.downside = octave.absentFundamentalCost
            }
            candidates[OctaveDecision.Kind.firstKeyMaximum] = first
            // The octave below: about the held period when that is near 2P, else about 2P.
            let heldCentre = Int(heldPeriodFrames + 0.5), reach = max(5, heldCentre / 32)
            var below: Int?
            if heldCentre > reach + 1, heldCentre + reach + 1 <= long.maximumLag, abs(heldPeriodFrames - Float(2 * lag)) < 0.06 * Float(2 * lag) {
                below = long.localMaximum(from: heldCentre - reach, through: heldCentre + reach)
                belowIsHeld = below != nil
            }
            if below == nil { below = long.localMaximum(from: 2 * lag - 2, through: 2 * lag + 2) }
            if let below, let belowLogR = OctaveDecision.logCorrelation(signedSquare: long[below]) {
                var candidate = OctaveDecision.Candidate(kind: OctaveDecision.Kind.octaveBelow)
                candidate.exists = true
                candidate.lag = below
                candidate.periodFrames = Float(below) + long.interpolatedPeak(at: below).offset
                candidate.score = belowLogR - octave.octaveBelowCost
                if !belowIsHeld { candidate.downside = octave.unsupportedOctaveBelowCost }
                // P without a partial leaves the octave below without its second one.
                if candidates[OctaveDecision.Kind.octaveAbove].exists { candidate.downside += octave.absentFundamentalCost }
                if belowIsHeld, heldHops >= establishedHops, long[below] >= confidenceThreshold * confidenceThreshold {
                    candidate.upside = octave.establishedBonus
                }
                candidates[OctaveDecision.Kind.octaveBelow] = candidate
            }
        }
        if let shortEstimate {
            var candidate = OctaveDecision.Candidate(kind: OctaveDecision.Kind.shortWindow)
            candidate.exists = true
            candidate.periodFrames = sampleRateHz / shortEstimate.frequencyHz
            candidate.score = _unsafePerformance { logf(max(shortEstimate.confidence, 1e-3)) } - octave.shortWindowCost
            candidates[OctaveDecision.Kind.shortWindow] = candidate
            // Long-window readings the short window shows to be stale or a legato mixture.
            for kind in OctaveDecision.Kind.firstKeyMaximum...OctaveDecision.Kind.octaveAbove where candidates[kind].exists {
                candidates[kind].score -= shortWindowCost(periodFrames: candidates[kind].periodFrames, shortEstimate: shortEstimate)
            }
        }
        // The octave below's odd partials, where they could make it the note: its score
        // without the margin beats the first key maximum's worst. The cheapest evidence first.
        let belowKind = OctaveDecision.Kind.octaveBelow, firstKind = OctaveDecision.Kind.firstKeyMaximum
        if !belowIsHeld, candidates[belowKind].exists, candidates[firstKind].exists {
            var candidate = candidates[belowKind]
            let least = octave.oddPartialsMinimumCorrelation
            if long[candidate.lag] >= least * least,
               candidate.score + octave.octaveBelowCost > candidates[firstKind].pessimistic,
               unwindowedOddPartialsPowerRatio(periodFrames: candidate.periodFrames, spectrum: spectrum) >= octave.oddPartialsPowerRatio,
               oddPartialsPowerRatio(period: candidate.lag, history: history, mean: mean) >= octave.oddPartialsPowerRatio,
               fundamentalPowerRatio(period: candidate.lag, history: history, mean: mean) >= octave.oddPartialsFundamentalPowerRatio {
                candidate.score += octave.octaveBelowCost
                // Only P's own fundamental is left to ask (its octave below's second partial).
                candidate.downside = candidates[OctaveDecision.Kind.octaveAbove].exists ? octave.absentFundamentalCost : 0
                candidates[belowKind] = candidate
                belowHasOddPartials = true
            }
        }
        // Best first: measure the leader's evidence while another could still beat it.
        while let leader = candidates.leader() {
            guard !candidates[leader].resolved, candidates.isContested(leader) else { return candidates[leader] }
            var candidate = candidates[leader]
            // Negative: no partial standing out of the noise there (absent, whatever the ratio).
            let measured = fundamentalPowerRatio(period: candidate.lag, history: history, mean: mean), ratio = abs(measured)
            if leader == OctaveDecision.Kind.firstKeyMaximum {
                if measured < octave.absentFundamentalPowerRatio { candidate.score -= octave.absentFundamentalCost }
            } else if leader == OctaveDecision.Kind.octaveBelow {
                if !belowIsHeld && !belowHasOddPartials
                    && (ratio < octave.octaveBelowPowerRatio || isBuriedInSteadyNoise(periodFrames: candidate.periodFrames, spectrum: spectrum)) {
                    candidate.score -= octave.unsupportedOctaveBelowCost
                }
                if candidates[OctaveDecision.Kind.octaveAbove].exists,
                   fundamentalPowerRatio(period: lag ?? 0, history: history, mean: mean) < octave.absentFundamentalPowerRatio {
                    candidate.score -= octave.absentFundamentalCost
                }
                if candidate.upside > 0 && ratio >= octave.establishedPowerRatio && !fundamentalFades(period: candidate.lag) {
                    candidate.score += octave.establishedBonus
                }
            }
            candidate.upside = 0
            candidate.downside = 0
            candidates[leader] = candidate
        }
        return nil
    }

    /// Whether the partial at the frequency of `periodFrames` lies under
    /// `octaveBelowOverSteadyNoiseRatio` times the input's steady noise floor per bin there
    /// (`NoiseWeighting.steadyFloorPerBin`): its strongest bin of the three nearest in the long
    /// window's spectrum (the unweighted window's main lobe, zero-padded to `fftSize`). False where
    /// the noise there is not steady or not known.
    @_noLocks
    private func isBuriedInSteadyNoise(periodFrames: Float, spectrum: UnsafePointer<fftwf_complex>) -> Bool {
        let middle = Int(Float(long.fftSize) / periodFrames + 0.5)
        guard middle >= 2, middle + 1 < long.fftSize / 2, let floor = noiseWeighting.steadyFloorPerBin(at: middle) else { return false }
        let strongest = power(spectrum[strongestBin(from: middle - 1, through: middle + 1, spectrum: spectrum)])
        return strongest < octave.octaveBelowOverSteadyNoiseRatio * floor
    }

    /// The bin of `spectrum` with the highest power in `first ... last` (the lowest of equals).
    @inline(__always) @_noLocks
    private func strongestBin(from first: Int, through last: Int, spectrum: UnsafePointer<fftwf_complex>) -> Int {
        var strongest = first
        for bin in first...last where power(spectrum[bin]) > power(spectrum[strongest]) { strongest = bin }
        return strongest
    }

    /// Nats a long-window reading at `periodFrames` pays against the short window's confident
    /// reading: stale (more than a semitone under a reading high enough that the short window
    /// would have seen its octave below) or a legato mixture (a multiple of the short window's
    /// period where the long window does not repeat at that period at all).
    @_noLocks
    private func shortWindowCost(periodFrames: Float, shortEstimate: RawPitch) -> Float {
        var cost: Float = 0
        let frequencyHz = sampleRateHz / periodFrames
        if shortEstimate.frequencyHz >= octave.staleOverruleHz && shortEstimate.frequencyHz > frequencyHz * octave.staleSemitoneRatio {
            cost += octave.staleWindowCost
        }
        let shortPeriod = sampleRateHz / shortEstimate.frequencyHz
        let multiple = periodFrames / shortPeriod, nearest = _unsafePerformance { rintf(multiple) }
        let shortLag = Int(shortPeriod + 0.5), correlation = octave.legatoMixtureCorrelation
        if nearest >= 2 && abs(multiple / nearest - 1) < octave.legatoMultipleTolerance
            && shortLag <= long.maximumLag && long[shortLag] < correlation * correlation {
            cost += octave.legatoMixtureCost
        }
        return cost
    }

    /// The short window's estimate, taken when the long window has none. `energyRatio` is the
    /// long window's energy over the decay look-back (1 when not falling fast). Not refined:
    /// the long window takes over within a few hops.
    @_noLocks
    private mutating func shortWindowEstimate(_ estimate: RawPitch, energyRatio: Float) -> RawPitch {
        _ = unvoiced()
        let periodFrames = sampleRateHz / estimate.frequencyHz
        guard !decaysTooFast(frequencyHz: estimate.frequencyHz, energyRatio: energyRatio) else { return .unvoiced }
        guard !holdsHit(halvesStepDecibels: halvesStepDecibels(periodFrames: periodFrames), periodFrames: periodFrames) else {
            foundDrum()
            return .stroke
        }
        hold(sampleRateHz / estimate.frequencyHz, continued: false)
        return estimate
    }

    /// The short window's first key maximum at `shortWindowConfidence`, interpolated; nil if
    /// none. `inSteadyNoise`: not computed (nil) while the window stays what it was on the last
    /// hop it read nothing in steady noise (`ShortWindowRecheck`).
    @_noLocks
    private mutating func shortWindowPitch(history: borrowing SampleHistory, inSteadyNoise: Bool) -> RawPitch? {
        let (_, energy) = short.load(history)
        guard inSteadyNoise else {
            shortWindowRecheck.forget()
            return shortWindowReading(energy: energy)
        }
        let slopeEnergy = ShortWindowRecheck.slopeEnergy(energy: energy, lagOneProduct: short.loadedProduct(from: 1, lag: 1, count: short.windowFrames - 1))
        guard !shortWindowRecheck.isUnchanged(energy: energy, slopeEnergy: slopeEnergy) else { return nil }
        let reading = shortWindowReading(energy: energy)
        if reading == nil {
            shortWindowRecheck.remember(energy: energy, slopeEnergy: slopeEnergy)
        } else {
            shortWindowRecheck.forget()
        }
        return reading
    }

    /// `shortWindowPitch`'s correlation of the loaded window (`energy` from `load`).
    @_noLocks
    private func shortWindowReading(energy: Float) -> RawPitch? {
        let highest = short.correlate(energy: energy, spectrumCopy: nil)
        guard highest >= Self.shortWindowConfidence * Self.shortWindowConfidence,
              let lag = short.firstKeyMaximum(threshold: Self.shortWindowConfidence, highest: highest) else { return nil }
        let (offset, top) = short.interpolatedPeak(at: lag)
        return RawPitch(frequencyHz: sampleRateHz / (Float(lag) + offset), confidence: min(top, 1))
    }

    /// Whether `frequencyHz` is a mains frequency or twice it, within `mainsHumToleranceCents`
    /// (`mainsFrequenciesHz`). The short window never reads that low (`shortWindowLowestHz`).
    @_noLocks
    private func isMainsHum(_ frequencyHz: Float) -> Bool {
        isMainsHum(frequencyHz, mainsHz: Self.mainsFrequenciesHz.0) || isMainsHum(frequencyHz, mainsHz: Self.mainsFrequenciesHz.1)
    }

    @_noLocks
    private func isMainsHum(_ frequencyHz: Float, mainsHz: Float) -> Bool {
        let multiple = _unsafePerformance { rintf(frequencyHz / mainsHz) }
        guard multiple >= 1, multiple <= Self.mainsHumMultiples else { return false }
        let ratio = frequencyHz / (multiple * mainsHz)
        return ratio < mainsHumRatio && ratio * mainsHumRatio > 1
    }

    /// A sound that decays fast is a drum or a note ending, not something to tune; high notes
    /// may decay faster (a piano's top octaves), proportionally to their pitch. `energyRatio`
    /// is the window's energy over the decay look-back (1 when not falling fast). A note read
    /// on the hop before (within a semitone) whose fundamental decays slower than
    /// `percussiveFundamentalRatio` allows is still a note: the window's fall is then its
    /// attack's transient and high partials dying, or the last note fading under it; a drum's
    /// body is its fundamental. Only a note being read continues so: a drum's first estimates
    /// have no reading before them.
    @_noLocks
    private func decaysTooFast(frequencyHz: Float, energyRatio: Float) -> Bool {
        decayEvidence(frequencyHz: frequencyHz, energyRatio: energyRatio) > 1
    }

    /// `decaysTooFast`'s evidence against its limit: the decay (in dB) over the decay allowed
    /// at this pitch, so 1 is the limit; for a note read on the hop before whose fundamental is
    /// measured, the lesser of the window's and the fundamental's. 0 when the window's energy
    /// does not fall as fast as the base rate allows at any pitch.
    @_noLocks
    private func decayEvidence(frequencyHz: Float, energyRatio: Float) -> Float {
        guard energyRatio < percussiveEnergyRatio else { return 0 }
        let base = percussiveEnergyRatio, exponent = max(1, frequencyHz / Self.decayCornerHz)
        // ln(ratio) / ln(base^exponent): both logarithms negative (base < 1).
        let window = _unsafePerformance { logf(energyRatio) / (exponent * logf(base)) }
        // The fundamental decays as fast (a drum's body), or the window's fall is something
        // else's: an attack's transient, the high partials, the last note fading.
        guard window > 1, continuesPreviousReading(frequencyHz), let fundamentalBase = percussiveFundamentalRatio,
              let fundamentalRatio = fundamentalDecayRatio(frequencyHz: frequencyHz) else { return window }
        let fundamental = _unsafePerformance { logf(fundamentalRatio) / (exponent * logf(fundamentalBase)) }
        return min(window, fundamental)
    }

    /// Whether `frequencyHz` lies within a semitone of the previous hop's reading.
    @_noLocks
    private func continuesPreviousReading(_ frequencyHz: Float) -> Bool {
        previousFrequencyHz > 0 && frequencyHz < previousFrequencyHz * Self.semitoneRatio
            && previousFrequencyHz < frequencyHz * Self.semitoneRatio
    }

    /// The power at `frequencyHz` (the bin nearest it and its neighbours in the long window's
    /// stored spectra) now over `phaseSpanHops` hops ago, the decay look-back; nil when the
    /// spectra of those hops are not all stored (a gated hop between).
    @_noLocks
    private func fundamentalDecayRatio(frequencyHz: Float) -> Float? {
        let fftSize = long.fftSize, bins = fftSize / 2 + 1
        guard spectraInARow > phaseSpanHops else { return nil }
        let oldest = (pastSpectrumIndex + 1) % (phaseSpanHops + 1), thenHz = pastReadingsHz[oldest]
        guard thenHz > 0, frequencyHz < thenHz * Self.semitoneRatio, thenHz < frequencyHz * Self.semitoneRatio else { return nil }
        let now = pastSpectra + pastSpectrumIndex * bins, then = pastSpectra + oldest * bins
        let centreNow = Int(frequencyHz * Float(fftSize) / sampleRateHz + 0.5)
        let centreThen = Int(thenHz * Float(fftSize) / sampleRateHz + 0.5)
        guard min(centreNow, centreThen) >= 1, max(centreNow, centreThen) + 1 < bins else { return nil }
        var powerNow: Float = 0, powerThen: Float = 0
        for offset in -1...1 {
            powerNow += power(now[centreNow + offset])
            powerThen += power(then[centreThen + offset])
        }
        return powerThen > 0 ? powerNow / powerThen : nil
    }

    /// The energy of the long window's newest whole periods (as many as fit in half the window)
    /// over that of its oldest ones, in dB (0 when either is empty): whole periods, so a low
    /// note's phase does not move the halves' energies.
    @_noLocks
    private func halvesStepDecibels(periodFrames: Float) -> Float {
        let count = long.windowFrames
        let span = halvesSpanFrames(periodFrames: periodFrames)
        let older = long.loadedEnergy(from: 0, count: span), newer = long.loadedEnergy(from: count - span, count: span)
        guard newer > 0, older > 0 else { return 0 }
        return 10 * _unsafePerformance { log10f(newer / older) }
    }

    /// Frames in each of the window's halves compared by `halvesStepDecibels`.
    @_noLocks
    private func halvesSpanFrames(periodFrames: Float) -> Int {
        let count = long.windowFrames
        let periods = max(1, Int(Float(count / 2) / periodFrames))
        return min(count / 2, Int(Float(periods) * periodFrames + 0.5))
    }

    /// Whether the long window holds a hit: its newest whole periods hold less energy than its
    /// oldest ones (`halvesStepDecibels`) by more than `hitDecayDecibelsPerSecond` over the time
    /// between them (growing above `decayCornerHz` as in `decaysTooFast`). A snare's ~220 Hz body
    /// reads as a note for the ~60 ms its hit stays in the window, where the energy of the window
    /// as a whole, and so the look-back of `decaysTooFast`, has not fallen yet.
    @_noLocks
    private func holdsHit(halvesStepDecibels step: Float, periodFrames: Float) -> Bool {
        hitEvidence(halvesStepDecibels: step, periodFrames: periodFrames) > 1
    }

    /// `holdsHit`'s evidence against its limit: the fall from the oldest half to the newest
    /// over the fall allowed between them (1 = the limit; negative for a rise).
    @_noLocks
    private func hitEvidence(halvesStepDecibels step: Float, periodFrames: Float) -> Float {
        let seconds = Float(long.windowFrames - halvesSpanFrames(periodFrames: periodFrames)) / sampleRateHz
        let limit = hitDecayDecibelsPerSecond * max(1, sampleRateHz / periodFrames / Self.decayCornerHz)
        return -step / (limit * seconds)
    }

    /// Whether the window holds a stroke rather than a note: it repeats at its period no better
    /// than `strokeMaximumCorrelation` (r, `correlation`) and a broadband burst dies within it.
    /// Alone: the energy of its newest half lies more than `strokeEnergyFallDecibels` under its
    /// oldest (`step`). As the next arrives (a snare roll, whose halves then hold alike): in
    /// blocks of whole periods (`strokeBlockMinimumSeconds`), the energy falls from the oldest
    /// block to the quietest by more than `strokeArrivalFallRatio` and spreads more than
    /// `strokeArrivalSpreadRatio` between the quietest and the loudest, while the newest samples
    /// (the short window's 14.7 ms, or a period if longer) do not repeat at the period either. A
    /// snare's wires, a stick's click or a cymbal over a drum's body is such a burst; a note in a
    /// noisy room is as aperiodic but holds its energy within the window, a note that fades that
    /// fast repeats well while it does, and a note's attack rises from its oldest block (silence
    /// or the last note's end) and repeats over its newest samples, which hold the note.
    @_noLocks
    private func isStroke(correlation: Float, halvesStepDecibels step: Float, periodFrames: Float) -> Bool {
        guard correlation < strokeMaximumCorrelation else { return false }
        if -step > strokeEnergyFallDecibels { return true }
        guard strokeArrivalSpreadRatio > 0 else { return false }
        let count = long.windowFrames
        let blockPeriods = Self.strokeBlockMinimumSeconds * sampleRateHz / periodFrames
        let periods = max(1, Int(_unsafePerformance { ceilf(blockPeriods) }))
        let blockFrames = max(1, Int(Float(periods) * periodFrames + 0.5))
        let blocks = count / blockFrames
        guard blocks >= 2 else { return false }
        var loudest: Float = 0, quietest = Float.greatestFiniteMagnitude
        for block in 1..<blocks {
            let blockEnergy = long.loadedEnergy(from: count - block * blockFrames, count: blockFrames)
            loudest = max(loudest, blockEnergy)
            quietest = min(quietest, blockEnergy)
        }
        let oldest = long.loadedEnergy(from: count - blocks * blockFrames, count: blockFrames)
        loudest = max(loudest, oldest)
        guard oldest > quietest * strokeArrivalFallRatio, loudest > quietest * strokeArrivalSpreadRatio else { return false }
        let lag = Int(periodFrames + 0.5), newest = min(count - lag, max(short.windowFrames, lag))
        guard newest > 0 else { return false }
        let start = count - newest
        let product = long.loadedProduct(from: start, lag: lag, count: newest)
        let energies = long.loadedEnergy(from: start, count: newest) * long.loadedEnergy(from: start - lag, count: newest)
        let limit = strokeMaximumCorrelation
        // r < limit, without the square root: the product's sign, then its square.
        return product <= 0 || product * product < limit * limit * energies
    }

    /// Whether the window is a struck membrane ringing (a tom's body) rather than a note: its
    /// fundamental holds more than `membraneFundamentalShare` of its energy, and one score of
    /// three terms exceeds 1: the share of the rest that does not repeat at the period (1 − r,
    /// `correlation`, is the window's aperiodic share) over `membraneAperiodicShare`, plus the
    /// pitch's mean glide down since the glide started over `membraneGlideCentsPerHop`, less the
    /// window's energy rise over the decay look-back (`energy` against `earlierEnergy`) in dB
    /// over `membraneRiseDecibels`. A tom's body is a near-pure tone whose other modes are
    /// inharmonic (a membrane's: 1.59, 2.14, 2.30 × f0) and whose stick noise does not repeat; a
    /// plucked or struck string's energy beyond its fundamental lies at harmonics, which repeat
    /// at the period. The fundamental's share is read from the long window's spectrum
    /// (`spectrum`, before squaring; `energy` its window's sum of squares): the bins within
    /// `membraneLobeHalfWidthHz` (at most half the pitch) of `frequencyHz`. The rectangular
    /// window's leakage leaves a pure tone's share at ≤ 0.95, so the energy beyond the
    /// fundamental never reads under ~5 %: a pure note's vibrato or decay does not make it a
    /// membrane. Once its modes have died a tom's body repeats as well as a string, but its
    /// pitch still falls: the glide. A new note rises: a singer's legato step (the last note
    /// still in the window, a second tone that does not repeat at the new period) pays for its
    /// rise, while a drum's window that still fills with its stroke rises little.
    @_noLocks
    private func isMembrane(correlation: Float, frequencyHz: Float, spectrum: UnsafePointer<fftwf_complex>,
                            energy: Float, earlierEnergy: Float) -> Bool {
        membraneEvidence(correlation: correlation, frequencyHz: frequencyHz, spectrum: spectrum,
                         energy: energy, earlierEnergy: earlierEnergy) > 1
    }

    /// `isMembrane`'s score (above 1: a membrane); 0 where the fundamental's share is too small
    /// or the term is off.
    @_noLocks
    private func membraneEvidence(correlation: Float, frequencyHz: Float, spectrum: UnsafePointer<fftwf_complex>,
                                  energy: Float, earlierEnergy: Float) -> Float {
        guard membraneFundamentalShare > 0, energy > 0, earlierEnergy > 0, correlation < 1 else { return 0 }
        // Any rise at all vetoes when the rise term is off (0).
        guard membraneRiseDecibels > 0 || energy < earlierEnergy else { return 0 }
        let share = fundamentalShare(frequencyHz: frequencyHz, spectrum: spectrum, energy: energy)
        guard share > membraneFundamentalShare else { return 0 }
        // One score: the share of the energy beyond the fundamental that does not repeat, the
        // body's mean glide down since the glide started (`pitchFalls`: the energy's last rise)
        // and the window's energy rise, each against its own limit.
        var score = (1 - correlation) / (membraneAperiodicShare * (1 - share))
        let startHz = glideStartHz
        if membraneGlideCentsPerHop > 0, glideHops > 0, !glideTurnedUp, startHz > frequencyHz {
            let fallCents = 1200 * _unsafePerformance { log2f(startHz / frequencyHz) }
            score += fallCents / (membraneGlideCentsPerHop * Float(glideHops))
        }
        if membraneRiseDecibels > 0, energy > earlierEnergy {
            score -= 10 * _unsafePerformance { log10f(energy / earlierEnergy) } / membraneRiseDecibels
        }
        return score
    }

    /// The share of the long window's energy (`energy`, its sum of squares; `spectrum` its
    /// transform before squaring) in the bins within `membraneLobeHalfWidthHz` (at most half
    /// the pitch) of `frequencyHz`: the fundamental's main lobe. 0 when no bin lies there.
    @_noLocks
    private func fundamentalShare(frequencyHz: Float, spectrum: UnsafePointer<fftwf_complex>, energy: Float) -> Float {
        let binHz = sampleRateHz / Float(long.fftSize), lastBin = long.fftSize / 2 - 1
        let halfWidthHz = min(membraneLobeHalfWidthHz, frequencyHz / 2)
        let lowest = max(1, Int(_unsafePerformance { ceilf((frequencyHz - halfWidthHz) / binHz) }))
        let highest = min(lastBin, Int((frequencyHz + halfWidthHz) / binHz))
        guard lowest <= highest, energy > 0 else { return 0 }
        var fundamental: Float = 0
        for bin in lowest...highest { fundamental += power(spectrum[bin]) }
        // Parseval for the unnormalised real transform: the bins between DC and Nyquist count twice.
        return min(1, 2 * fundamental / (Float(long.fftSize) * energy))
    }

    /// Whether the pitch read this hop, `frequencyHz`, is a drum's body gliding down as it rings:
    /// one decision on the glide since the sound's energy last rose. A tom's body falls from its
    /// stroke on, fast (FluidR3's toms 900–3,800 cents/s over their first 17–50 ms read) and while
    /// it decays, but rings and repeats as a plucked string does. A player's glide is slower (a
    /// peg turned: tens of cents/s), or starts after the note has sounded steady (a bend
    /// released, a whammy dive: their mean fall since the pluck stays slower), or keeps its
    /// energy (a singer's portamento). So a glide is a drum's body once it has fallen more than
    /// `fallingPitchCents` since its start at a mean rate above `fallingPitchCentsPerSecond`
    /// over all the time since, while the window's energy falls faster than
    /// `fallingPitchDecayDecibelsPerSecond` over the decay look-back; it stays one until it
    /// starts again (a tom's slower tail is the same drum). The glide is followed over
    /// consecutive hops that read a pitch, gated or not, in steps of at most
    /// `glideStepLimitCents`; a larger step, a hop without any pitch or an energy rise over the
    /// decay look-back (a new note, a new syllable, a new stroke) starts it again. A pitch that
    /// has turned back up by more than `fallingPitchRiseRatio` since the last attack (a rise of
    /// `octaveHoldReleaseRatio`: a vibrato's swell is smaller) is a singer's vibrato, whose every
    /// swing down would otherwise be a glide: its falls count for neither this term nor the
    /// membrane score. Called once per hop that reads a pitch.
    @_noLocks
    private mutating func pitchFalls(_ frequencyHz: Float, energy: Float, earlierEnergy: Float) -> Bool {
        glideReadThisHop = true
        let previous = glidePreviousHz, limit = Self.glideStepLimitCents
        let jumps = previous <= 0 || abs(1200 * _unsafePerformance { log2f(frequencyHz / previous) }) > limit
        if jumps || energy > earlierEnergy {
            glideStartHz = frequencyHz
            glideHops = 0
            glideIsDrum = false
        } else {
            glideHops += 1
        }
        if jumps || energy > earlierEnergy * Self.octaveHoldReleaseRatio {
            glideLowestHz = frequencyHz
            glideTurnedUp = false
        } else {
            glideLowestHz = min(glideLowestHz, frequencyHz)
            glideTurnedUp = glideTurnedUp || (fallingPitchRiseRatio > 0 && frequencyHz > glideLowestHz * fallingPitchRiseRatio)
        }
        glidePreviousHz = frequencyHz
        guard !glideIsDrum else { return true }
        guard fallingPitchCentsPerHop > 0, glideHops > 0, !glideTurnedUp, energy < earlierEnergy * fallingPitchEnergyRatio else { return false }
        let start = glideStartHz
        let fallCents = 1200 * _unsafePerformance { log2f(start / frequencyHz) }
        glideIsDrum = fallCents > fallingPitchCents && fallCents > fallingPitchCentsPerHop * Float(glideHops)
        return glideIsDrum
    }

    /// `periodFrames` is this hop's pitch: it is held against an octave jump up, and counted as
    /// established when it continues the last one. A note `continued` in steady noise keeps the
    /// period it was established at: each continued peak lies within half a semitone of the
    /// last, and one after another they walked off the note into the noise after it ended.
    @_noLocks
    private mutating func hold(_ periodFrames: Float, continued: Bool) {
        let continues = heldPeriodFrames > 0 && abs(periodFrames / heldPeriodFrames - 1) < 0.06
        heldHops = continues ? heldHops + 1 : 0
        heldPeriodFrames = periodFrames
        if !attackThisHop {
            lastNotePeriodFrames = periodFrames
            hopsSinceLastNote = 0
        }
        if continues {
            if !continued { establishedPeriodFrames = periodFrames }
            hopsSinceEstablished = 0
        }
        hopsSinceVoiced = 0
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
        return powerNow < powerThen * octave.establishedFadeRatio
    }

    /// The window's power at the frequency f of `period` over its power at 2 f (`PartialPowers`).
    /// Negative (the ratio, negated) when the power at f does not stand
    /// `partialOverReferenceRatio` above the median power at 0.75, 1.25 and 1.75 f, where
    /// neither that pitch nor its octave above has a partial (noise and leakage only): in pink
    /// noise at 10 dB SNR the noise alone reaches the −45 dB of `absentFundamentalPowerRatio`
    /// at an organ's missing half-pitch. Only where a quarter of the frequency spans
    /// `partialReferenceMinimumBins` of the window's resolution (below, the partial's own main
    /// lobe reaches the references).
    @_noLocks
    private mutating func fundamentalPowerRatio(period: Int, history: borrowing SampleHistory, mean: Float) -> Float {
        let measured = partialPowers(period: period, withFundamental: true, history: history, mean: mean)
        guard let partials = measured.partials, let fundamentalAndReferences = measured.fundamentalAndReferences else { return 0 }
        let fundamentalPower = fundamentalAndReferences[0], octavePower = partials[0]
        let below = fundamentalAndReferences[1], lower = fundamentalAndReferences[2], upper = fundamentalAndReferences[3]
        // The median: one bin's noise power scatters exponentially, so a single reference (or
        // the lowest of two) let noise at f pass for a partial on every sixth hop; the median of
        // three on one in thirty, and a previous note ringing on one of them does not move it.
        let referencePower = max(min(below, lower), min(max(below, lower), upper))
        let ratio = octavePower > 0 ? fundamentalPower / octavePower : 1
        // A quarter of f must span `partialReferenceMinimumBins` resolutions (rate / count).
        let resolvable = Float(long.windowFrames) / (4 * Float(period)) >= octave.partialReferenceMinimumBins
        return resolvable && fundamentalPower < referencePower * octave.partialOverReferenceRatio ? -ratio : ratio
    }

    /// This hop's `PartialPowers` of `period`: its partials, and with `withFundamental` its
    /// fundamental and references too, each set measured now if not yet (Hann-windowed DFTs of
    /// the window, its `mean` removed: ~2.8 k samples at 48 kHz a set, so only where the octave
    /// decision asks). At most two periods are kept; a third replaces the older. None for
    /// period 0 (no period: the ratios read 0).
    @_noLocks
    private mutating func partialPowers(period: Int, withFundamental: Bool, history: borrowing SampleHistory,
                                        mean: Float) -> PartialPowers {
        guard period > 0 else { return PartialPowers() }  // none: nothing measured
        let isNewer = measuredPartials.0.period == period
        var measured = isNewer ? measuredPartials.0
            : measuredPartials.1.period == period ? measuredPartials.1 : PartialPowers(period: period)
        if measured.partials == nil {
            measured.partials = windowPowers(at: PartialPowers.partialMultiples, period: period, history: history, mean: mean)
        }
        if withFundamental, measured.fundamentalAndReferences == nil {
            measured.fundamentalAndReferences = windowPowers(at: PartialPowers.fundamentalMultiples, period: period,
                                                             history: history, mean: mean)
        }
        if isNewer {
            measuredPartials.0 = measured
        } else if measuredPartials.1.period == period {
            measuredPartials.1 = measured
        } else {
            measuredPartials = (measured, measuredPartials.0)
        }
        return measured
    }

    /// The Hann-windowed long window's (its `mean` removed) powers at `multiples` of the
    /// frequency of `period`.
    @_noLocks
    private func windowPowers(at multiples: SIMD4<Double>, period: Int, history: borrowing SampleHistory,
                              mean: Float) -> SIMD4<Float> {
        let count = long.windowFrames
        var dft = FourFrequencyDFT(anglesRadians: multiples * (-2 * Double.pi / Double(period)))
        var index = 0
        while index + 1 < count {
            dft.add((history.latest(count, at: index) - mean) * hannWindow[index],
                    (history.latest(count, at: index + 1) - mean) * hannWindow[index + 1])
            index += 2
        }
        if index < count { dft.add((history.latest(count, at: index) - mean) * hannWindow[index]) }
        return dft.powers
    }

    /// `oddPartialsPowerRatio` read off the long window's spectrum (`spectrum`, unwindowed,
    /// before squaring; the strongest of the three nearest bins at each partial), at almost no
    /// cost: a first look. The unwindowed window's leakage from the even partials fills the
    /// odd ones' bins, so a window under the ratio here is under it in the Hann measurement too
    /// nearly always (asking this first read 3 of the pitch corpus's 99,390 tuning frames
    /// otherwise; it keeps a clean tone's hop at main's cost, 15 µs instead of 18).
    @_noLocks
    private func unwindowedOddPartialsPowerRatio(periodFrames: Float, spectrum: UnsafePointer<fftwf_complex>) -> Float {
        var odd: Float = 0, even: Float = 0
        for harmonic in 2...5 {
            let middle = Int(Float(harmonic * long.fftSize) / periodFrames + 0.5)
            guard middle >= 2, middle + 1 < long.fftSize / 2 else { break }
            let strongest = power(spectrum[strongestBin(from: middle - 1, through: middle + 1, spectrum: spectrum)])
            if harmonic % 2 == 0 { even += strongest } else { odd += strongest }
        }
        return even > 0 ? odd / even : 0
    }

    /// The power at 3 f and 5 f over that at 2 f and 4 f, f the frequency of `period`
    /// (`PartialPowers`): the odd partials of a note at f against its even ones, which a wave
    /// repeating at half the period lacks (`OctaveDecision.Parameters.oddPartialsPowerRatio`).
    @_noLocks
    private mutating func oddPartialsPowerRatio(period: Int, history: borrowing SampleHistory, mean: Float) -> Float {
        guard let powers = partialPowers(period: period, withFundamental: false, history: history, mean: mean).partials else { return 0 }
        let even = powers[0] + powers[2]
        return even > 0 ? (powers[1] + powers[3]) / even : 0
    }

    /// A drum was found this hop (a stroke or hit in the window, its body gliding down): what
    /// rings on is that drum until the next attack, for at most `drumRingHops`. The note read
    /// just before it, if any, is one the drum was struck over.
    @_noLocks
    private mutating func foundDrum() {
        if drumRingHopsLeft == 0 {
            noteUnderDrumPeriodFrames = hopsSinceLastNote <= drumNoteMemoryHops ? lastNotePeriodFrames : 0
        }
        drumRingHopsLeft = drumRingHops
    }

    /// Whether `frequencyHz` is the ring of the drum found last (`foundDrum`): no attack since,
    /// not the note read just before the drum (within a semitone), and no steady noise, where a
    /// new note's attack may not rise above the noise. "No steady noise" is the verdict of the
    /// last hop that took the second look (`NoiseWeighting.holdsSteadyNoise` is measured only
    /// there), which may be hops or seconds old; finding 43 chose the ring with it so (measured
    /// afresh on each hop of a ring, tried: drums 96.45 → 96.39 %, docs/dsp.md).
    @_noLocks
    private func ringsOnAfterDrum(_ frequencyHz: Float) -> Bool {
        guard drumRingHopsLeft > 0, !noiseWeighting.holdsSteadyNoise else { return false }
        let underPeriod = noteUnderDrumPeriodFrames, period = sampleRateHz / frequencyHz
        return !(underPeriod > 0 && period < underPeriod * Self.semitoneRatio && underPeriod < period * Self.semitoneRatio)
    }

    /// No estimate this hop: the stored spectra and corrections no longer run on.
    @_noLocks
    private mutating func unvoiced() -> RawPitch {
        storedSpectra = 0
        correctionsStored = 0
        previousFrequencyHz = 0
        return .unvoiced
    }

    /// 5) The autocorrelation's frequency moved by the mean of the last few phase corrections:
    ///    the fundamental's frequency from its phase advance over `phaseSpanHops` hops (phase
    ///    vocoder), against the autocorrelation's. Autocorrelation follows all partials, so a
    ///    piano's stretched upper partials pull it sharp; the fundamental does not. No
    ///    correction is measured `acrossAttack` (the window's energy rose over the span): the
    ///    older window still held the silence or sound before, and its phase is no note's
    ///    (a tone from silence wobbled by up to 15 cents over its first ~100 ms).
    @_noLocks
    private mutating func refined(_ frequencyHz: Float, acrossAttack: Bool) -> Float {
        pastFrequencies[pastSpectrumIndex] = frequencyHz
        let previous = previousFrequencyHz
        previousFrequencyHz = frequencyHz
        if previous <= 0 || abs(frequencyHz / previous - 1) > 0.06 { correctionsStored = 0 }
        if !acrossAttack, let cents = phaseCorrectionCents(frequencyHz) {
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
        establishedPeriodFrames = 0
        hopsSinceEstablished = 0
        glideStartHz = 0
        glidePreviousHz = 0
        glideReadThisHop = false
        glideHops = 0
        glideIsDrum = false
        drumRingHopsLeft = 0
        noteUnderDrumPeriodFrames = 0
        lastNotePeriodFrames = 0
        hopsSinceLastNote = 0
        attackThisHop = false
        glideLowestHz = 0
        glideTurnedUp = false
        spectraInARow = 0
        noiseWeighting.reset()
        shortWindowRecheck.forget()
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
    /// No estimate because the window holds a drum's hit or a stroke dying in it (`holdsHit`,
    /// `isStroke`: broadband, aperiodic energy that falls within the window), not because a
    /// note dropped out for a hop: what was shown has ended (`PitchTracker`).
    var struck = false
    static var unvoiced: RawPitch { RawPitch(frequencyHz: 0, confidence: 0) }
    static var stroke: RawPitch { RawPitch(frequencyHz: 0, confidence: 0, struck: true) }
}
