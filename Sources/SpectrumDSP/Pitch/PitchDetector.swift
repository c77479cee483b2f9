import CFFTW
import Glibc

/// Fundamental frequency by normalised autocorrelation (seed 000's tuner), computed with FFTs.
///
/// For each lag L the normalised correlation of the window with itself shifted by L is
/// `r[L] = Σ x[i]·x[i+L] / √(E_left(L) · E_right(L))`, where the energies of the two overlapping
/// segments are updated incrementally from lag to lag (the seed's O(1) per lag). The numerators
/// for all lags come from one zero-padded FFT pair (Wiener–Khinchin on the raw window, not on
/// the squared spectrum the seed abandoned): the same values as the seed's per-lag dot
/// products, in O(N log N) instead of O(N·lags) — the window here must hold more than two
/// periods of E1, where the direct method would cost ~40× more per hop.
///
/// The search takes the first local maximum, after the correlation has first dipped below
/// zero, that reaches both the confidence threshold and 90 % of the highest maximum (so a
/// strong second harmonic cannot pull the answer an octave up), refines it by parabolic
/// interpolation, and reports the peak's correlation as the confidence. The search runs on
/// the signed square `r·|r|` (same order, same maxima), so only the three lags around the
/// chosen peak need a square root. Above 150 Hz the frequency is then refined on the
/// fundamental's phase advance in the same FFT (a piano's stretched partials pull the
/// autocorrelation sharp).
///
/// `init` allocates and plans; `detect` is real-time safe.
struct PitchDetector: ~Copyable {
    let windowFrames: Int
    let minimumLag: Int
    let maximumLag: Int
    private let sampleRateHz: Float
    private let confidenceThreshold: Float
    private let silenceGateRms: Float
    /// Energy ratio (this hop's window / the window `decayLookbackHops` hops earlier) below which
    /// the sound is decaying too fast to tune: a drum, or a note ending.
    private let percussiveEnergyRatio: Float
    /// ~50 ms of hops: a window's energy wobbles with the phase of a low note from hop to hop,
    /// a trend over several hops does not.
    private let decayLookbackHops: Int
    /// Window energies of the last `decayLookbackHops` hops, a ring (0 = none yet).
    private let recentEnergies: RealtimeBuffer
    private var recentEnergyIndex = 0
    private let fftSize: Int
    private let input: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<fftwf_complex>
    private let forward: OpaquePointer
    private let inverse: OpaquePointer
    /// r·|r| per lag, for lags 1 ... maximumLag + 1.
    private let signedSquares: RealtimeBuffer
    /// E_left · E_right per lag (the squared denominator), kept for the final square roots.
    private let energyProducts: RealtimeBuffer
    /// The window's spectra (before squaring) of the last `phaseSpanHops + 1` hops, a ring of
    /// `spectrum`-sized slots, for the fundamental's phase advance.
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
    /// Hann window over the pitch window, for the fundamental's power (step 5).
    private let hannWindow: RealtimeBuffer
    /// The previous hop's autocorrelation frequency (0 after an unvoiced hop).
    private var previousFrequencyHz: Float = 0
    /// The last period chosen (0 = none), held against an octave jump up (step 5).
    private var heldPeriodFrames: Float = 0
    private var hopsSinceVoiced = 0

    /// Relative height a later maximum must reach against the highest one to be chosen first.
    static let keyMaximumRatio: Float = 0.9
    /// Above this pitch the allowed decay rate grows in proportion to the pitch: a piano's top
    /// octaves lose energy faster than 60 dB/s (C7 ≈ 100 dB/s), drum bodies sit lower.
    static let decayCornerHz: Float = 400
    /// r at half the held period must reach this share of r at the held period to take over:
    /// a decaying low guitar string drifts from 0.88 to 0.92 of it as its fundamental and odd
    /// harmonics fade (`keyMaximumRatio` alone flips it an octave up at 0.9).
    static let octaveHoldRatio: Float = 0.95
    /// Window-energy rise over ~50 ms (+1.5 dB) that ends the hold: a new note's attack, so a
    /// melody's leap up an octave is not held down.
    static let octaveHoldReleaseRatio: Float = 1.4
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
    /// Periods of the lowest note in the window: the longest lag still correlates over 1.2.
    static let windowPeriods = 2.2

    init(configuration: PitchConfiguration, sampleRateHz: Double, hopSeconds: Double) {
        _ = fftwPlannerMadeThreadSafe
        self.sampleRateHz = Float(sampleRateHz)
        confidenceThreshold = Float(configuration.confidenceThreshold)
        silenceGateRms = Float(pow(10, configuration.silenceGateDecibels / 20))
        minimumLag = max(2, Int((sampleRateHz / configuration.maximumFrequencyHz).rounded(.down)))
        maximumLag = Int((sampleRateHz / configuration.minimumFrequencyHz).rounded(.up))
        windowFrames = Int((Self.windowPeriods * Double(maximumLag)).rounded(.up))
        decayLookbackHops = min(8, max(1, Int((0.05 / hopSeconds).rounded())))
        recentEnergies = RealtimeBuffer(count: decayLookbackHops)
        percussiveEnergyRatio = Float(pow(10, -configuration.percussiveDecayDecibelsPerSecond * hopSeconds * Double(decayLookbackHops) / 10))
        // Linear (not circular) correlation up to lag maximumLag + 1 needs window + lag points.
        var size = 1
        while size < windowFrames + maximumLag + 2 { size <<= 1 }
        fftSize = size
        input = fftwf_alloc_real(size)
        spectrum = fftwf_alloc_complex(size / 2 + 1)
        forward = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrum, UInt32(FFTW_MEASURE))
        inverse = fftwf_plan_dft_c2r_1d(Int32(size), spectrum, input, UInt32(FFTW_MEASURE))
        input.initialize(repeating: 0, count: size)
        signedSquares = RealtimeBuffer(count: maximumLag + 2)
        energyProducts = RealtimeBuffer(count: maximumLag + 2)
        phaseSpanHops = decayLookbackHops  // the same ~50 ms
        phaseSpanFrames = Float(Double(phaseSpanHops) * hopSeconds * sampleRateHz)
        pastSpectra = fftwf_alloc_complex((size / 2 + 1) * (phaseSpanHops + 1))
        pastSpectra.initialize(repeating: (0, 0), count: (size / 2 + 1) * (phaseSpanHops + 1))
        pastFrequencies = RealtimeBuffer(count: phaseSpanHops + 1)
        hannWindow = RealtimeBuffer(count: windowFrames)
        for index in 0..<windowFrames {
            hannWindow[index] = Float(0.5 - 0.5 * cos(2 * Double.pi * (Double(index) + 0.5) / Double(windowFrames)))
        }
        corrections = RealtimeBuffer(count: Self.correctionCount)
    }

    deinit {
        fftwf_destroy_plan(forward)
        fftwf_destroy_plan(inverse)
        fftwf_free(input)
        fftwf_free(spectrum)
        fftwf_free(pastSpectra)
    }

    /// One raw estimate from the newest window of `history`; call once per hop. Real-time safe.
    @_noLocks
    mutating func detect(history: borrowing SampleHistory) -> RawPitch {
        let count = windowFrames
        // 1) The window with its mean removed (Pearson), zero-padded, and its energy.
        let runs = history.latestRuns(count)
        var sum: Float = 0
        for index in 0..<runs.firstCount { sum += runs.first[index] }
        for index in 0..<runs.secondCount { sum += runs.second[index] }
        let mean = sum / Float(count)
        for index in 0..<runs.firstCount { input[index] = runs.first[index] - mean }
        for index in 0..<runs.secondCount { input[runs.firstCount + index] = runs.second[index] - mean }
        for index in count..<fftSize { input[index] = 0 }
        let energy = realtimeDotProduct(input, input, count: count)
        let earlierEnergy = recentEnergies[recentEnergyIndex]
        let decaying = energy < earlierEnergy * percussiveEnergyRatio
        // The octave hold ends after ~50 ms without an estimate, or at a new note's attack.
        hopsSinceVoiced += 1
        if hopsSinceVoiced > decayLookbackHops || energy > earlierEnergy * Self.octaveHoldReleaseRatio { heldPeriodFrames = 0 }
        recentEnergies[recentEnergyIndex] = energy
        recentEnergyIndex = (recentEnergyIndex + 1) % decayLookbackHops
        guard realtimeSquareRoot(energy / Float(count)) >= silenceGateRms else { return unvoiced() }

        // 2) Energies of the overlapping segments per lag, updated incrementally (Double: for
        //    long lags they differ by tiny amounts). Done before the FFT overwrites `input`.
        var left = Double(energy), right = Double(energy)
        for lag in 1...(maximumLag + 1) {
            let leaving = Double(input[count - lag]), entering = Double(input[lag - 1])
            left -= leaving * leaving      // E[0 ..< n−L]
            right -= entering * entering   // E[L ..< n]
            energyProducts[lag] = Float(max(left, 0) * max(right, 0))
        }

        // 3) Autocorrelation numerators for every lag: |FFT|², inverse FFT (× fftSize). The
        //    spectrum is kept first for the fundamental's phase (step 7).
        let forward = self.forward, inverse = self.inverse
        _unsafePerformance { fftwf_execute(forward) }
        let bins = fftSize / 2 + 1
        pastSpectrumIndex = (pastSpectrumIndex + 1) % (phaseSpanHops + 1)
        let kept = pastSpectra + pastSpectrumIndex * bins
        storedSpectra += 1
        for bin in 0...(fftSize / 2) {
            kept[bin] = spectrum[bin]
            let (real, imaginary) = spectrum[bin]
            spectrum[bin] = (real * real + imaginary * imaginary, 0)
        }
        _unsafePerformance { fftwf_execute(inverse) }

        // 4) Signed squares r·|r| = acf·|acf| / (E_left·E_right), and the highest maximum.
        let scale = 1 / Float(fftSize)
        var highest: Float = -1
        for lag in 1...(maximumLag + 1) {
            let numerator = input[lag] * scale
            let product = energyProducts[lag]
            let value = product > 0 ? numerator * abs(numerator) / product : 0
            signedSquares[lag] = value
            if lag >= minimumLag && lag <= maximumLag && value > highest { highest = value }
        }
        let threshold = confidenceThreshold * confidenceThreshold
        guard highest >= threshold else { return unvoiced() }

        // 5) First key maximum (after a dip below zero) that is confident and near the highest.
        let required = max(threshold, highest * Self.keyMaximumRatio * Self.keyMaximumRatio)
        var dipped = false
        for lag in 1...maximumLag {
            let value = signedSquares[lag]
            if value < 0 { dipped = true }
            guard dipped, lag >= minimumLag, value >= required,
                  value >= signedSquares[lag - 1], value > signedSquares[lag + 1] else { continue }
            // Octave hold: when the last period was twice this one, it stays unless this lag
            // is clearly as periodic (a low string whose fundamental and odd harmonics die
            // away first keeps its pitch).
            let chosen = heldOctave(of: lag) ?? lag
            // 6) Parabolic interpolation through r at the peak and its neighbours.
            let before = correlation(chosen - 1), peak = correlation(chosen), after = correlation(chosen + 1)
            let curvature = before - 2 * peak + after
            let offset = curvature < 0 ? 0.5 * (before - after) / curvature : 0
            let top = peak - 0.25 * (before - after) * offset
            // Mutation check: a period whose own fundamental is absent, with little energy at
            // its odd partials, is the octave below of a note plus a mutation (an organ's quint
            // repeats at half the note's frequency): the note is at half the period, measured
            // as half of this one (the wave repeats exactly here, not at the half).
            let notesPerPeriod: Float = isMutationOctave(period: chosen, history: history, mean: mean) ? 2 : 1
            let periodFrames = (Float(chosen) + offset) / notesPerPeriod
            let frequencyHz = sampleRateHz / periodFrames
            // A sound that decays fast is a drum or a note ending, not something to tune; high
            // notes may decay faster (a piano's top octaves), proportionally to their pitch.
            if decaying {
                let base = percussiveEnergyRatio, exponent = max(1, frequencyHz / Self.decayCornerHz)
                let allowedRatio = _unsafePerformance { powf(base, exponent) }
                guard energy >= earlierEnergy * allowedRatio else { return unvoiced() }
            }
            heldPeriodFrames = periodFrames
            hopsSinceVoiced = 0
            return RawPitch(frequencyHz: refined(frequencyHz), confidence: min(top, 1))
        }
        return unvoiced()
    }

    /// The local maximum near the held period when that is near twice `lag` (within a
    /// semitone) and r at `lag` is below `octaveHoldRatio` of r there; nil otherwise. The
    /// search spans ±5 lags about the held period, not about twice `lag`: the half period's
    /// peak is itself a few lags off (steel G2: 248 for a held 487).
    @_noLocks
    private func heldOctave(of lag: Int) -> Int? {
        let centre = Int(heldPeriodFrames + 0.5)
        guard centre > 6, centre + 6 <= maximumLag, abs(heldPeriodFrames - Float(2 * lag)) < 0.06 * Float(2 * lag) else { return nil }
        var best = centre - 5
        for candidate in (centre - 4)...(centre + 5) where signedSquares[candidate] > signedSquares[best] { best = candidate }
        let height = signedSquares[best]
        guard height >= signedSquares[best - 1], height > signedSquares[best + 1],
              signedSquares[lag] < height * Self.octaveHoldRatio * Self.octaveHoldRatio else { return nil }
        return best
    }

    /// Whether `period` is the octave below of a note plus a mutation: r has a maximum near
    /// half `period` that reaches `absentFundamentalHalfRatio` of r at `period`, and the window
    /// (its `mean` removed) holds no partial at the frequency of `period` (power under
    /// `absentFundamentalPowerRatio` of that at twice the frequency).
    @_noLocks
    private func isMutationOctave(period: Int, history: borrowing SampleHistory, mean: Float) -> Bool {
        let centre = period / 2, lowest = max(centre - 2, minimumLag)
        guard centre + 2 > lowest else { return false }
        var best = lowest
        for candidate in (lowest + 1)...(centre + 2) where signedSquares[candidate] > signedSquares[best] { best = candidate }
        let ratio = Self.absentFundamentalHalfRatio
        guard signedSquares[best] >= signedSquares[best - 1], signedSquares[best] > signedSquares[best + 1],
              signedSquares[best] >= signedSquares[period] * ratio * ratio else { return false }
        return fundamentalPowerRatio(period: period, history: history, mean: mean) < Self.absentFundamentalPowerRatio
    }

    /// The window's power at the frequency of `period` over its power at twice that
    /// frequency: Hann-windowed single-frequency DFTs of the window (its `mean` removed), ~2.8 k
    /// complex steps at 48 kHz, so only computed where the correlation leaves the octave open.
    @_noLocks
    private func fundamentalPowerRatio(period: Int, history: borrowing SampleHistory, mean: Float) -> Float {
        // Power at the period's frequency and at twice it; the second phasor is the square of
        // the first. Double: the rotation runs for thousands of steps.
        let count = windowFrames
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
        let bins = fftSize / 2 + 1
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
        heldPeriodFrames = 0
        _ = unvoiced()
    }

    /// r at `lag` from its signed square.
    @inline(__always) @_noLocks
    private func correlation(_ lag: Int) -> Float {
        let value = signedSquares[lag]
        let magnitude = realtimeSquareRoot(abs(value))
        return value < 0 ? -magnitude : magnitude
    }
}

/// One unsmoothed estimate; frequency 0 means no confident pitch.
struct RawPitch {
    var frequencyHz: Float
    var confidence: Float
    static var unvoiced: RawPitch { RawPitch(frequencyHz: 0, confidence: 0) }
}
