import CFFTW
import Glibc
import SpectrumCore

/// The normalised (Pearson) autocorrelation of the newest `windowFrames` samples, for every lag
/// up to `maximumLag + 1` (seed 000's tuner), computed with FFTs.
///
/// For each lag L, `r[L] = Σ x[i]·x[i+L] / √(E_left(L) · E_right(L))` on the window with its
/// mean removed, where the energies of the two overlapping segments are updated incrementally
/// from lag to lag (the seed's O(1) per lag). The numerators for all lags come from one
/// zero-padded FFT pair (Wiener–Khinchin on the raw window, not on the squared spectrum the
/// seed abandoned): the same values as the seed's per-lag dot products, in O(N log N) instead
/// of O(N·lags). Values are kept as signed squares `r·|r|` (same order, same maxima), so only
/// the lags around a chosen peak need a square root.
///
/// `init` allocates and plans; the other methods are real-time safe.
struct NormalisedAutocorrelation: ~Copyable {
    let windowFrames: Int
    let minimumLag: Int
    let maximumLag: Int
    let fftSize: Int
    /// The window (mean removed), zero-padded: the padding is written once, at `init`.
    private let input: UnsafeMutablePointer<Float>
    /// The correlation numerators per lag (× fftSize), from the inverse transform.
    private let numerators: UnsafeMutablePointer<Float>
    private let spectrum: UnsafeMutablePointer<fftwf_complex>
    private let forward: OpaquePointer
    private let inverse: OpaquePointer
    /// r·|r| per lag, for lags 1 ... maximumLag + 1.
    private let signedSquares: RealtimeBuffer
    /// E_left · E_right per lag (the squared denominator).
    private let energyProducts: RealtimeBuffer

    /// Periods of the longest lag in the window: at the longest lag the two overlapping
    /// segments still span 1.2 periods.
    static let windowPeriods = 2.2
    /// Relative height a later maximum must reach against the highest one to be chosen first.
    static let keyMaximumRatio: Float = 0.9

    /// Allocates and plans; not real-time safe.
    init(minimumLag: Int, maximumLag: Int) {
        _ = fftwPlannerMadeThreadSafe
        self.minimumLag = minimumLag
        self.maximumLag = maximumLag
        windowFrames = Int((Self.windowPeriods * Double(maximumLag)).rounded(.up))
        // Linear (not circular) correlation up to lag maximumLag + 1 needs window + lag points.
        let size = Self.fastFFTSize(atLeast: windowFrames + maximumLag + 2)
        fftSize = size
        input = fftwf_alloc_real(size)
        numerators = fftwf_alloc_real(size)
        spectrum = fftwf_alloc_complex(size / 2 + 1)
        // FFTW_PRESERVE_INPUT is already the default of an out-of-place r2c transform: `correlate`
        // relies on it.
        forward = fftwf_plan_dft_r2c_1d(Int32(size), input, spectrum, fftwPlanningFlags | UInt32(FFTW_PRESERVE_INPUT))
        inverse = fftwf_plan_dft_c2r_1d(Int32(size), spectrum, numerators, fftwPlanningFlags)
        input.initialize(repeating: 0, count: size)
        numerators.initialize(repeating: 0, count: size)
        spectrum.initialize(repeating: (0, 0), count: size / 2 + 1)
        signedSquares = RealtimeBuffer(count: maximumLag + 2)
        energyProducts = RealtimeBuffer(count: maximumLag + 2)
    }

    /// The smallest power of two, or nine times one, of at least `frames`: FFTW's estimated
    /// plans transform 9·2ᵏ points (radix 3 twice) in about half the time of the next power of
    /// two, so a window just over a power of two does not pay for twice the points (the short
    /// window at 48 kHz needs 1,026: both transforms of 1,152 points take ~2.2 µs, of 2,048
    /// ~4.4; 2,304 ~5.5 against ~9.5 for 4,096). Other sizes measured slower (3·2ᵏ, 1,280, and
    /// 5-smooth sizes such as 1,080 or 4,050). Any thread.
    static func fastFFTSize(atLeast frames: Int) -> Int {
        var power = 1
        while power < frames { power <<= 1 }
        var nineTimes = 9
        while nineTimes < frames { nineTimes <<= 1 }
        return min(power, nineTimes)
    }

    deinit {
        fftwf_destroy_plan(forward)
        fftwf_destroy_plan(inverse)
        fftwf_free(input)
        fftwf_free(numerators)
        fftwf_free(spectrum)
    }

    /// Takes the newest window of `history` with its mean removed; returns the mean and the
    /// window's energy (sum of squares). Real-time safe.
    @_noLocks
    func load(_ history: borrowing SampleHistory) -> (mean: Float, energy: Float) {
        let count = windowFrames
        let runs = history.latestRuns(count)
        let sum = Self.sum(runs.first, count: runs.firstCount) + Self.sum(runs.second, count: runs.secondCount)
        let mean = sum / Float(count)
        for index in 0..<runs.firstCount { input[index] = runs.first[index] - mean }
        for index in 0..<runs.secondCount { input[runs.firstCount + index] = runs.second[index] - mean }
        return (mean, realtimeDotProduct(input, input, count: count))
    }

    /// The energy (sum of squares) of samples `start ..< start + count` of the window `load`
    /// loaded, its mean removed (oldest first). Real-time safe.
    @_noLocks
    func loadedEnergy(from start: Int, count: Int) -> Float {
        realtimeDotProduct(input + start, input + start, count: count)
    }

    /// The sum of `count` values in eight lanes: a single running sum is one dependent add per
    /// sample (the compiler may not reorder float additions), which made this loop a sizeable
    /// share of the tuner's cost. Real-time safe.
    @inline(__always) @_noLocks
    private static func sum(_ values: UnsafePointer<Float>, count: Int) -> Float {
        var lanes = SIMD8<Float>(repeating: 0)
        var index = 0
        while index + 8 <= count {
            lanes += UnsafeRawPointer(values + index).loadUnaligned(as: SIMD8<Float>.self)
            index += 8
        }
        var total = lanes.sum()
        while index < count {
            total += values[index]
            index += 1
        }
        return total
    }

    /// The correlation of the loaded window (`energy` from `load`) at every lag; copies the
    /// forward spectrum (`fftSize / 2 + 1` bins) to `spectrumCopy` before it is squared.
    /// Returns the highest signed square in minimumLag...maximumLag. Real-time safe.
    @_noLocks
    func correlate(energy: Float, spectrumCopy: UnsafeMutablePointer<fftwf_complex>?) -> Float {
        transform(energy: energy, spectrumCopy: spectrumCopy)
        return correlatePowers(keptShare: 1)
    }

    /// `correlate`'s first half: the window's power spectrum, in `powers`, which the caller may
    /// weigh before `correlatePowers`. Real-time safe.
    @_noLocks
    func transform(energy: Float, spectrumCopy: UnsafeMutablePointer<fftwf_complex>?) {
        let count = windowFrames, lastLag = maximumLag + 1, lastBin = fftSize / 2
        // Numerators for every lag: |FFT|², inverse FFT (× fftSize). The forward transform keeps
        // `input` (FFTW_PRESERVE_INPUT), which the energies below still read.
        let forward = self.forward
        _unsafePerformance { fftwf_execute(forward) }
        if let spectrumCopy { for bin in 0...lastBin { spectrumCopy[bin] = spectrum[bin] } }
        // Energies of the overlapping segments per lag, updated incrementally (Double: for long
        // lags they differ by tiny amounts), in one loop with the first bins' powers: each
        // energy waits for the one before, and the powers fill those waits (lastLag < lastBin:
        // the size holds the window and the lags).
        var left = Double(energy), right = Double(energy)
        for lag in 1...lastLag {
            let leaving = Double(input[count - lag]), entering = Double(input[lag - 1])
            left -= leaving * leaving      // E[0 ..< n−L]
            right -= entering * entering   // E[L ..< n]
            energyProducts[lag] = Float(max(left, 0) * max(right, 0))
            let (real, imaginary) = spectrum[lag - 1]
            spectrum[lag - 1] = (real * real + imaginary * imaginary, 0)
        }
        // The other bins' powers, four bins at a time.
        var bin = lastLag
        while bin + 4 <= lastBin + 1 {
            let pairs = UnsafeMutableRawPointer(spectrum + bin)
            let squares = pairs.loadUnaligned(as: SIMD8<Float>.self) * pairs.loadUnaligned(as: SIMD8<Float>.self)
            let powers = squares.evenHalf + squares.oddHalf
            pairs.storeBytes(of: SIMD8(powers[0], 0, powers[1], 0, powers[2], 0, powers[3], 0), as: SIMD8<Float>.self)
            bin += 4
        }
        while bin <= lastBin {
            let (real, imaginary) = spectrum[bin]
            spectrum[bin] = (real * real + imaginary * imaginary, 0)
            bin += 1
        }
    }

    /// The power per bin (`.0`; `fftSize / 2 + 1` bins) between `transform` (or
    /// `loadPowers`) and `correlatePowers`. Real-time safe.
    var powers: UnsafeMutablePointer<fftwf_complex> { @_noLocks get { spectrum } }

    /// Puts the powers of `spectrumCopy` (the copy `transform` made of this window's
    /// spectrum) back into `powers`, for a second correlation of the same window (the inverse
    /// transform consumed them). Real-time safe.
    @_noLocks
    func loadPowers(of spectrumCopy: UnsafePointer<fftwf_complex>) {
        for bin in 0...(fftSize / 2) {
            let (real, imaginary) = spectrumCopy[bin]
            spectrum[bin] = (real * real + imaginary * imaginary, 0)
        }
    }

    /// `correlate`'s second half, on `powers` as the caller left them: `keptShare` is the share
    /// of the window's power that weights kept (1 = unweighted), by which the segments'
    /// energies are scaled, so r is the weighted window's correlation when its spectrum is
    /// steady across the window (`NoiseWeighting`). Returns the highest signed square in
    /// minimumLag...maximumLag. Real-time safe.
    @_noLocks
    func correlatePowers(keptShare: Float) -> Float {
        let lastLag = maximumLag + 1
        let inverse = self.inverse
        _unsafePerformance { fftwf_execute(inverse) }
        // Signed squares r·|r| = acf·|acf| / (E_left·E_right), eight lags at a time (a division
        // per lag was a sizeable share of the tuner's cost; each lane rounds as one lag alone).
        // Weighted: acf / keptShare over the unweighted energies.
        let scale = 1 / (Float(fftSize) * keptShare)
        var lag = 1
        while lag + 8 <= lastLag + 1 {
            let numerator = UnsafeRawPointer(numerators + lag).loadUnaligned(as: SIMD8<Float>.self) * scale
            let product = UnsafeRawPointer(energyProducts.base + lag).loadUnaligned(as: SIMD8<Float>.self)
            let magnitude = numerator.replacing(with: -numerator, where: numerator .< 0)
            // Lanes without energy divide by zero and are then replaced by 0.
            let value = (numerator * magnitude / product).replacing(with: 0, where: .!(product .> 0))
            UnsafeMutableRawPointer(signedSquares.base + lag).storeBytes(of: value, as: SIMD8<Float>.self)
            lag += 8
        }
        while lag <= lastLag {
            let numerator = numerators[lag] * scale
            let product = energyProducts[lag]
            signedSquares[lag] = product > 0 ? numerator * abs(numerator) / product : 0
            lag += 1
        }
        return highestSignedSquare()
    }

    /// The highest signed square in minimumLag...maximumLag (−1 if all are lower), eight lags at a time.
    @inline(__always) @_noLocks
    private func highestSignedSquare() -> Float {
        var lanes = SIMD8<Float>(repeating: -1)
        var lag = minimumLag
        while lag + 8 <= maximumLag + 1 {
            let values = UnsafeRawPointer(signedSquares.base + lag).loadUnaligned(as: SIMD8<Float>.self)
            lanes.replace(with: values, where: values .> lanes)
            lag += 8
        }
        var highest = lanes.max()
        while lag <= maximumLag {
            highest = max(highest, signedSquares[lag])
            lag += 1
        }
        return highest
    }

    /// The first local maximum, after the correlation has once dipped below zero, whose r
    /// reaches both `threshold` and `keyMaximumRatio` of the highest (`highest` from
    /// `correlate`, a signed square), so a strong second harmonic cannot pull the answer an
    /// octave up; nil if none. Real-time safe.
    @_noLocks
    func firstKeyMaximum(threshold: Float, highest: Float) -> Int? {
        let required = max(threshold * threshold, highest * Self.keyMaximumRatio * Self.keyMaximumRatio)
        var dipped = false
        for lag in 1...maximumLag {
            let value = signedSquares[lag]
            if value < 0 { dipped = true }
            if dipped, lag >= minimumLag, value >= required, value >= signedSquares[lag - 1], value > signedSquares[lag + 1] {
                return lag
            }
        }
        return nil
    }

    /// The signed square r·|r| at `lag` (1 ... maximumLag + 1). Real-time safe.
    @inline(__always) @_noLocks
    subscript(lag: Int) -> Float { signedSquares[lag] }

    /// The local maximum of r in lags `first...last` (clamped to the lags computed; none if
    /// empty), or nil when the highest value there is at the range's edge. Real-time safe.
    @_noLocks
    func localMaximum(from first: Int, through last: Int) -> Int? {
        let lowest = max(first, 1), top = min(last, maximumLag + 1)
        guard top > lowest else { return nil }
        var best = lowest
        for candidate in (lowest + 1)...top where signedSquares[candidate] > signedSquares[best] { best = candidate }
        guard best > 1, best <= maximumLag, signedSquares[best] >= signedSquares[best - 1],
              signedSquares[best] > signedSquares[best + 1] else { return nil }
        return best
    }

    /// Parabolic interpolation through r at `lag` and its neighbours: the peak's offset from
    /// `lag` in frames, and its height. Real-time safe.
    @_noLocks
    func interpolatedPeak(at lag: Int) -> (offset: Float, height: Float) {
        let before = correlation(lag - 1), peak = correlation(lag), after = correlation(lag + 1)
        let curvature = before - 2 * peak + after
        let offset = curvature < 0 ? 0.5 * (before - after) / curvature : 0
        return (offset, peak - 0.25 * (before - after) * offset)
    }

    /// r at `lag` from its signed square.
    @inline(__always) @_noLocks
    private func correlation(_ lag: Int) -> Float {
        let value = signedSquares[lag]
        let magnitude = realtimeSquareRoot(abs(value))
        return value < 0 ? -magnitude : magnitude
    }
}
