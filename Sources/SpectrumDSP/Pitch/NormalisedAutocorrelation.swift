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
/// Each real transform of `fftSize` points is FFTW's complex transform of half as many (the
/// window's even samples as real parts, its odd ones as imaginary parts) and one pass that
/// splits or joins the two halves' spectra: FFTW's estimated plans for a real transform of
/// 4,096 points take ~4.7 µs here, its complex one of 2,048 ~1.7 (docs/accuracy.md, pitch
/// finding 20). The powers stay in their own buffer, so a second correlation of the same
/// window (`NoiseWeighting`) weighs them in place without recomputing them.
///
/// `init` allocates and plans; the other methods are real-time safe.
struct NormalisedAutocorrelation: ~Copyable {
    let windowFrames: Int
    let minimumLag: Int
    let maximumLag: Int
    let fftSize: Int
    /// The window (mean removed), zero-padded: the padding is written once, at `init`. The
    /// forward transform reads it as `fftSize / 2` complex points.
    private let input: UnsafeMutablePointer<Float>
    /// The correlation numerators per lag (× fftSize), from the inverse transform, which writes
    /// them as `fftSize / 2` complex points.
    private let numerators: UnsafeMutablePointer<Float>
    /// The half-size transforms' spectrum (`fftSize / 2` points): the forward one's output,
    /// the inverse one's input.
    private let halfSpectrum: UnsafeMutablePointer<fftwf_complex>
    /// cos and sin of 2πk / fftSize for k in 0 ... fftSize / 4: the twiddles that split and
    /// join the half-size spectra.
    private let cosines: RealtimeBuffer
    private let sines: RealtimeBuffer
    /// The window's power per bin (`fftSize / 2 + 1` bins).
    private let powerBuffer: RealtimeBuffer
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
        precondition(size % 4 == 0, "the half-size transforms need a size divisible by 4")
        fftSize = size
        let half = size / 2
        input = fftwf_alloc_real(size)
        numerators = fftwf_alloc_real(size)
        halfSpectrum = fftwf_alloc_complex(half)
        // The real buffers as complex points (FFTW alone reads and writes them so).
        let inputPoints = UnsafeMutablePointer<fftwf_complex>(OpaquePointer(input))
        let numeratorPoints = UnsafeMutablePointer<fftwf_complex>(OpaquePointer(numerators))
        // `correlate` relies on the forward transform keeping `input` (FFTW_PRESERVE_INPUT).
        forward = fftwf_plan_dft_1d(Int32(half), inputPoints, halfSpectrum, FFTW_FORWARD, fftwPlanningFlags | UInt32(FFTW_PRESERVE_INPUT))
        inverse = fftwf_plan_dft_1d(Int32(half), halfSpectrum, numeratorPoints, FFTW_BACKWARD, fftwPlanningFlags)
        input.initialize(repeating: 0, count: size)
        numerators.initialize(repeating: 0, count: size)
        halfSpectrum.initialize(repeating: (0, 0), count: half)
        cosines = RealtimeBuffer(count: size / 4 + 1)
        sines = RealtimeBuffer(count: size / 4 + 1)
        for bin in 0...(size / 4) {
            cosines[bin] = Float(cos(2 * Double.pi * Double(bin) / Double(size)))
            sines[bin] = Float(sin(2 * Double.pi * Double(bin) / Double(size)))
        }
        powerBuffer = RealtimeBuffer(count: half + 1)
        signedSquares = RealtimeBuffer(count: maximumLag + 2)
        energyProducts = RealtimeBuffer(count: maximumLag + 2)
    }

    /// The smallest power of two, or nine times one, of at least `frames`: FFTW's estimated
    /// plans transform 9·2ᵏ points (radix 3 twice) in about half the time of the next power of
    /// two, so a window just over a power of two does not pay for twice the points (the short
    /// window at 48 kHz needs 1,026: both transforms of 1,152 points take ~2.2 µs, of 2,048
    /// ~4.4; 2,304 ~5.5 against ~9.5 for 4,096). Other sizes measured slower (3·2ᵏ, 1,280, and
    /// 5-smooth sizes such as 1,080 or 4,050). From 36 points up (9 and 18 are not divisible by
    /// 4, which the half-size transforms need; windows that short do not occur). Any thread.
    static func fastFFTSize(atLeast frames: Int) -> Int {
        var power = 1
        while power < frames { power <<= 1 }
        var nineTimes = 36
        while nineTimes < frames { nineTimes <<= 1 }
        return min(power, nineTimes)
    }

    deinit {
        fftwf_destroy_plan(forward)
        fftwf_destroy_plan(inverse)
        fftwf_free(input)
        fftwf_free(numerators)
        fftwf_free(halfSpectrum)
    }

    /// Takes the newest window of `history` with its mean removed; returns the mean and the
    /// window's energy (sum of squares). Real-time safe.
    @_noLocks
    func load(_ history: borrowing SampleHistory) -> (mean: Float, energy: Float) {
        let count = windowFrames
        let runs = history.latestRuns(count)
        let sum = realtimeSum(runs.first, count: runs.firstCount) + realtimeSum(runs.second, count: runs.secondCount)
        let mean = sum / Float(count)
        for index in 0..<runs.firstCount { input[index] = runs.first[index] - mean }
        // Through a pointer to the second run's start: an index offset inside the loop is
        // overflow-checked per sample, which keeps the loop from being vectorised.
        let secondInput = input + runs.firstCount
        for index in 0..<runs.secondCount { secondInput[index] = runs.second[index] - mean }
        return (mean, realtimeDotProduct(input, input, count: count))
    }

    /// The energy (sum of squares) of samples `start ..< start + count` of the window `load`
    /// loaded, its mean removed (oldest first). Real-time safe.
    @_noLocks
    func loadedEnergy(from start: Int, count: Int) -> Float {
        realtimeDotProduct(input + start, input + start, count: count)
    }

    /// The sum of the products of samples `start ..< start + count` of the window `load` loaded
    /// (its mean removed) with those `lag` samples earlier (`lag` ≤ `start`). Real-time safe.
    @_noLocks
    func loadedProduct(from start: Int, lag: Int, count: Int) -> Float {
        realtimeDotProduct(input + start, input + start - lag, count: count)
    }

    /// The correlation of the loaded window (`energy` from `load`) at every lag; copies the
    /// forward spectrum (`fftSize / 2 + 1` bins) to `spectrumCopy`. Returns the highest signed
    /// square in minimumLag...maximumLag. Real-time safe.
    @_noLocks
    func correlate(energy: Float, spectrumCopy: UnsafeMutablePointer<fftwf_complex>?) -> Float {
        transform(energy: energy, spectrumCopy: spectrumCopy)
        return correlatePowers(keptShare: 1)
    }

    /// `correlate`'s first half: the window's power spectrum, in `powers`, which the caller may
    /// weigh before `correlatePowers`. Real-time safe.
    @_noLocks
    func transform(energy: Float, spectrumCopy: UnsafeMutablePointer<fftwf_complex>?) {
        let count = windowFrames, lastLag = maximumLag + 1, half = fftSize / 2, quarter = fftSize / 4
        // The half-size transform of the window's sample pairs; it keeps `input`
        // (FFTW_PRESERVE_INPUT), which the energies below still read.
        let forward = self.forward
        _unsafePerformance { fftwf_execute(forward) }
        // Bins k and half − k from points k and half − k of the half-size spectrum Z: the even
        // samples' spectrum E = (Z[k] + Z*[half − k]) / 2, the odd ones' O = (Z[k] − Z*[half − k]) / 2i,
        // X[k] = E + w·O and X[half − k] = (E − w·O)* with w = e^(−2πik / fftSize).
        let spectrum = UnsafeMutableRawPointer(halfSpectrum), powers = powerBuffer.base
        let (zeroReal, zeroImaginary) = halfSpectrum[0]
        powers[0] = (zeroReal + zeroImaginary) * (zeroReal + zeroImaginary)
        powers[half] = (zeroReal - zeroImaginary) * (zeroReal - zeroImaginary)
        spectrumCopy?[0] = (zeroReal + zeroImaginary, 0)
        spectrumCopy?[half] = (zeroReal - zeroImaginary, 0)
        // Four bins at a time (and their four mirrors, in reverse order).
        let copy = spectrumCopy.map { UnsafeMutableRawPointer($0) }
        var bin = 1
        while bin + 3 <= quarter {
            let points = spectrum.loadUnaligned(fromByteOffset: bin * 8, as: SIMD8<Float>.self)
            let mirrors = Self.reversedPoints(spectrum.loadUnaligned(fromByteOffset: (half - bin - 3) * 8, as: SIMD8<Float>.self))
            let real = points.evenHalf, imaginary = points.oddHalf, mirrorReal = mirrors.evenHalf, mirrorImaginary = mirrors.oddHalf
            let evenReal = 0.5 * (real + mirrorReal), evenImaginary = 0.5 * (imaginary - mirrorImaginary)
            let oddReal = 0.5 * (imaginary + mirrorImaginary), oddImaginary = 0.5 * (mirrorReal - real)
            let cosine = UnsafeRawPointer(cosines.base + bin).loadUnaligned(as: SIMD4<Float>.self)
            let sine = UnsafeRawPointer(sines.base + bin).loadUnaligned(as: SIMD4<Float>.self)
            // w·O with w = cos − i·sin.
            let turnedReal = cosine * oddReal + sine * oddImaginary, turnedImaginary = cosine * oddImaginary - sine * oddReal
            let lowReal = evenReal + turnedReal, lowImaginary = evenImaginary + turnedImaginary
            let highReal = evenReal - turnedReal, highImaginary = turnedImaginary - evenImaginary
            UnsafeMutableRawPointer(powers + bin).storeBytes(of: lowReal * lowReal + lowImaginary * lowImaginary, as: SIMD4<Float>.self)
            UnsafeMutableRawPointer(powers + half - bin - 3).storeBytes(of: Self.reversed(highReal * highReal + highImaginary * highImaginary), as: SIMD4<Float>.self)
            if let copy {
                copy.storeBytes(of: Self.interleaved(lowReal, lowImaginary), toByteOffset: bin * 8, as: SIMD8<Float>.self)
                copy.storeBytes(of: Self.reversedPoints(Self.interleaved(highReal, highImaginary)), toByteOffset: (half - bin - 3) * 8, as: SIMD8<Float>.self)
            }
            bin += 4
        }
        while bin <= quarter {
            let (real, imaginary) = halfSpectrum[bin], (mirrorReal, mirrorImaginary) = halfSpectrum[half - bin]
            let evenReal = 0.5 * (real + mirrorReal), evenImaginary = 0.5 * (imaginary - mirrorImaginary)
            let oddReal = 0.5 * (imaginary + mirrorImaginary), oddImaginary = 0.5 * (mirrorReal - real)
            let cosine = cosines[bin], sine = sines[bin]
            let turnedReal = cosine * oddReal + sine * oddImaginary, turnedImaginary = cosine * oddImaginary - sine * oddReal
            let lowReal = evenReal + turnedReal, lowImaginary = evenImaginary + turnedImaginary
            let highReal = evenReal - turnedReal, highImaginary = turnedImaginary - evenImaginary
            powers[bin] = lowReal * lowReal + lowImaginary * lowImaginary
            powers[half - bin] = highReal * highReal + highImaginary * highImaginary
            spectrumCopy?[bin] = (lowReal, lowImaginary)
            spectrumCopy?[half - bin] = (highReal, highImaginary)
            bin += 1
        }
        // Energies of the overlapping segments per lag, updated incrementally (Double: for long
        // lags they differ by tiny amounts).
        var left = Double(energy), right = Double(energy)
        for lag in 1...lastLag {
            let leaving = Double(input[count - lag]), entering = Double(input[lag - 1])
            left -= leaving * leaving      // E[0 ..< n−L]
            right -= entering * entering   // E[L ..< n]
            energyProducts[lag] = Float(max(left, 0) * max(right, 0))
        }
    }

    /// The power per bin (`fftSize / 2 + 1` bins) from `transform`, which `correlatePowers`
    /// reads and keeps: the caller may weigh them in place before it. Real-time safe.
    var powers: UnsafeMutablePointer<Float> { @_noLocks get { powerBuffer.base } }

    /// `correlate`'s second half, on `powers` as the caller left them: `keptShare` is the share
    /// of the window's power that weights kept (1 = unweighted), by which the segments'
    /// energies are scaled, so r is the weighted window's correlation when its spectrum is
    /// steady across the window (`NoiseWeighting`). Returns the highest signed square in
    /// minimumLag...maximumLag. Real-time safe.
    @_noLocks
    func correlatePowers(keptShare: Float) -> Float {
        let lastLag = maximumLag + 1, half = fftSize / 2, quarter = fftSize / 4
        // The powers P (real, even) joined into the half-size spectrum whose inverse transform
        // holds the numerators' even lags as real parts and the odd ones as imaginary parts:
        // Z[k] = (P[k] + P[half − k]) + i·v·(P[k] − P[half − k]) with v = e^(2πik / fftSize), and
        // Z[half − k] likewise (its v is −v*).
        let spectrum = UnsafeMutableRawPointer(halfSpectrum), powers = powerBuffer.base
        halfSpectrum[0] = (powers[0] + powers[half], powers[0] - powers[half])
        // Four bins at a time (and their four mirrors, in reverse order).
        var bin = 1
        while bin + 3 <= quarter {
            let low = UnsafeRawPointer(powers + bin).loadUnaligned(as: SIMD4<Float>.self)
            let high = Self.reversed(UnsafeRawPointer(powers + half - bin - 3).loadUnaligned(as: SIMD4<Float>.self))
            let sum = low + high, difference = low - high
            let cosine = UnsafeRawPointer(cosines.base + bin).loadUnaligned(as: SIMD4<Float>.self)
            let sine = UnsafeRawPointer(sines.base + bin).loadUnaligned(as: SIMD4<Float>.self)
            let imaginary = cosine * difference
            spectrum.storeBytes(of: Self.interleaved(sum - sine * difference, imaginary), toByteOffset: bin * 8, as: SIMD8<Float>.self)
            spectrum.storeBytes(of: Self.reversedPoints(Self.interleaved(sum + sine * difference, imaginary)),
                                toByteOffset: (half - bin - 3) * 8, as: SIMD8<Float>.self)
            bin += 4
        }
        while bin <= quarter {
            let sum = powers[bin] + powers[half - bin], difference = powers[bin] - powers[half - bin]
            let cosine = cosines[bin], sine = sines[bin]
            halfSpectrum[bin] = (sum - sine * difference, cosine * difference)
            halfSpectrum[half - bin] = (sum + sine * difference, cosine * difference)
            bin += 1
        }
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
        return highestSignedSquare(from: minimumLag)
    }

    /// Four values in reverse order.
    @inline(__always) @_noLocks
    private static func reversed(_ values: SIMD4<Float>) -> SIMD4<Float> { SIMD4(values[3], values[2], values[1], values[0]) }

    /// Four complex points (real, imaginary pairs) in reverse order.
    @inline(__always) @_noLocks
    private static func reversedPoints(_ points: SIMD8<Float>) -> SIMD8<Float> {
        SIMD8(points[6], points[7], points[4], points[5], points[2], points[3], points[0], points[1])
    }

    /// Four complex points from their real and imaginary parts.
    @inline(__always) @_noLocks
    private static func interleaved(_ real: SIMD4<Float>, _ imaginary: SIMD4<Float>) -> SIMD8<Float> {
        SIMD8(real[0], imaginary[0], real[1], imaginary[1], real[2], imaginary[2], real[3], imaginary[3])
    }

    /// The highest signed square in first...maximumLag (−1 if all are lower), eight lags at a time.
    @inline(__always) @_noLocks
    private func highestSignedSquare(from first: Int) -> Float {
        var lanes = SIMD8<Float>(repeating: -1)
        var lag = first
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

    /// The highest signed square in minimumLag...maximumLag after the correlation has first
    /// dipped below zero (−1 if none): the highest of the periods' peaks, without the lobe about
    /// lag 0, which stands above them all in a window whose power lies in its lowest partials
    /// (a note's bands left by `NoiseWeighting`). Real-time safe.
    @_noLocks
    func highestAfterFirstDip() -> Float {
        var dip = 1
        while dip <= maximumLag && signedSquares[dip] >= 0 { dip += 1 }
        return highestSignedSquare(from: max(dip, minimumLag))
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
        let offset = parabolicPeakOffset(before: before, peak: peak, after: after)
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
