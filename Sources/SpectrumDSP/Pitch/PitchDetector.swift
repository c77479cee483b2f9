import CFFTW
import Glibc

/// Fundamental frequency by normalised autocorrelation (seed 000's tuner), computed with FFTs.
///
/// For each lag L the normalised correlation of the window with itself shifted by L is
/// `r[L] = Σ x[i]·x[i+L] / √(E_left(L) · E_right(L))`, where the energies of the two overlapping
/// segments come from one prefix sum (the seed's incremental energies, O(1) per lag). The
/// numerators for all lags come from one zero-padded FFT pair (Wiener–Khinchin on the raw
/// window, not on the squared spectrum the seed abandoned): the same values as the seed's
/// per-lag dot products, in O(N log N) instead of O(N·lags) — the window here must hold two
/// periods of E1, and the direct method would cost ~40× more per hop.
///
/// The search takes the first local maximum, after the correlation has first dipped below
/// zero, that reaches both the confidence threshold and 90 % of the highest maximum (so a
/// strong second harmonic cannot pull the answer an octave up), refines it by parabolic
/// interpolation, and reports the peak's correlation as the confidence.
///
/// `init` allocates and plans; `detect` is real-time safe.
struct PitchDetector: ~Copyable {
    let windowFrames: Int
    let minimumLag: Int
    let maximumLag: Int
    private let sampleRateHz: Float
    private let confidenceThreshold: Float
    private let silenceGateRms: Float
    /// Energy ratio (second half / first half of the window) below which the window is a decay.
    private let percussiveEnergyRatio: Double
    private let fftSize: Int
    private let input: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<fftwf_complex>
    private let forward: OpaquePointer
    private let inverse: OpaquePointer
    /// Prefix sums of squared samples (Double: the energies of long segments differ by tiny amounts).
    private let prefixEnergy: UnsafeMutablePointer<Double>
    /// Normalised correlation per lag, for lags 1 ... maximumLag + 1.
    private let correlation: RealtimeBuffer

    /// Relative height a later maximum must reach against the highest one to be chosen first.
    static let keyMaximumRatio: Float = 0.9

    init(configuration: PitchConfiguration, sampleRateHz: Double) {
        _ = fftwPlannerMadeThreadSafe
        self.sampleRateHz = Float(sampleRateHz)
        confidenceThreshold = Float(configuration.confidenceThreshold)
        silenceGateRms = Float(pow(10, configuration.silenceGateDecibels / 20))
        percussiveEnergyRatio = pow(10, -configuration.percussiveDecayDecibels / 10)
        minimumLag = max(2, Int((sampleRateHz / configuration.maximumFrequencyHz).rounded(.down)))
        maximumLag = Int((sampleRateHz / configuration.minimumFrequencyHz).rounded(.up))
        // Two and a half periods of the lowest note: the longest lag still correlates over
        // one and a half periods.
        windowFrames = Int((2.5 * Double(maximumLag)).rounded(.up))
        var size = 1
        while size < 2 * windowFrames { size <<= 1 }
        fftSize = size
        input = fftwf_alloc_real(size)
        spectrum = fftwf_alloc_complex(size / 2 + 1)
        forward = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrum, UInt32(FFTW_MEASURE))
        inverse = fftwf_plan_dft_c2r_1d(Int32(size), spectrum, input, UInt32(FFTW_MEASURE))
        input.initialize(repeating: 0, count: size)
        prefixEnergy = .allocate(capacity: windowFrames + 1)
        prefixEnergy.initialize(repeating: 0, count: windowFrames + 1)
        correlation = RealtimeBuffer(count: maximumLag + 2)
    }

    deinit {
        fftwf_destroy_plan(forward)
        fftwf_destroy_plan(inverse)
        fftwf_free(input)
        fftwf_free(spectrum)
        prefixEnergy.deallocate()
    }

    /// One raw estimate from the newest window of `history`. Real-time safe.
    @_noLocks
    func detect(history: borrowing SampleHistory) -> RawPitch {
        let count = windowFrames
        // 1) The window with its mean removed (Pearson), zero-padded; energies as prefix sums.
        let runs = history.latestRuns(count)
        var sum: Float = 0
        for index in 0..<runs.firstCount { sum += runs.first[index] }
        for index in 0..<runs.secondCount { sum += runs.second[index] }
        let mean = sum / Float(count)
        for index in 0..<runs.firstCount { input[index] = runs.first[index] - mean }
        for index in 0..<runs.secondCount { input[runs.firstCount + index] = runs.second[index] - mean }
        for index in count..<fftSize { input[index] = 0 }
        var energy = 0.0
        prefixEnergy[0] = 0
        for index in 0..<count {
            energy += Double(input[index]) * Double(input[index])
            prefixEnergy[index + 1] = energy
        }
        guard realtimeSquareRoot(Float(energy / Double(count))) >= silenceGateRms else { return .unvoiced }
        // A window that decays fast is a drum or a note ending, not something to tune.
        let firstHalfEnergy = prefixEnergy[count / 2]
        guard energy - firstHalfEnergy >= firstHalfEnergy * percussiveEnergyRatio else { return .unvoiced }

        // 2) Autocorrelation numerators for every lag: |FFT|², inverse FFT.
        let forward = self.forward, inverse = self.inverse
        _unsafePerformance { fftwf_execute(forward) }
        for bin in 0...(fftSize / 2) {
            let (real, imaginary) = spectrum[bin]
            spectrum[bin] = (real * real + imaginary * imaginary, 0)
        }
        _unsafePerformance { fftwf_execute(inverse) }

        // 3) Normalise: r[L] = acf[L] / √(E[0..<n−L] · E[L..<n]); acf carries a factor fftSize.
        let scale = 1 / Float(fftSize)
        var highest: Float = -1
        for lag in 1...(maximumLag + 1) {
            let left = prefixEnergy[count - lag]
            let right = energy - prefixEnergy[lag]
            let denominator = realtimeSquareRoot(Float(left * right))
            let value = denominator > 0 ? input[lag] * scale / denominator : 0
            correlation[lag] = value
            if lag >= minimumLag && lag <= maximumLag && value > highest { highest = value }
        }
        guard highest >= confidenceThreshold else { return .unvoiced }

        // 4) First key maximum (after a dip below zero) that is confident and near the highest.
        let required = max(confidenceThreshold, highest * Self.keyMaximumRatio)
        var dipped = false
        for lag in 1...maximumLag {
            let value = correlation[lag]
            if value < 0 { dipped = true }
            guard dipped, lag >= minimumLag, value >= required, value >= correlation[lag - 1], value > correlation[lag + 1] else { continue }
            // 5) Parabolic interpolation through the peak and its neighbours.
            let before = correlation[lag - 1], after = correlation[lag + 1]
            let curvature = before - 2 * value + after
            let offset = curvature < 0 ? 0.5 * (before - after) / curvature : 0
            let peak = value - 0.25 * (before - after) * offset
            let periodFrames = Float(lag) + offset
            return RawPitch(frequencyHz: sampleRateHz / periodFrames, confidence: min(peak, 1))
        }
        return .unvoiced
    }
}

/// One unsmoothed estimate; frequency 0 means no confident pitch.
struct RawPitch {
    var frequencyHz: Float
    var confidence: Float
    static var unvoiced: RawPitch { RawPitch(frequencyHz: 0, confidence: 0) }
}
