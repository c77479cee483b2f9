import Glibc

/// The octave decision's spectral evidence about one period (fundamental f): the Hann-windowed
/// powers of the long window at f's partials and between them, measured only where the decision
/// asks (each set at most once per hop and period, `PitchDetector.partialPowers`).
struct PartialPowers {
    /// The frequencies of `partials`, as multiples of f.
    static var partialMultiples: SIMD4<Double> { @_noLocks get { SIMD4(2, 3, 4, 5) } }
    /// The frequencies of `fundamentalAndReferences`, as multiples of f: f itself, and three
    /// references where neither f nor 2 f has a partial (not a fifth above f, where a previous
    /// note often rings in melodies).
    static var fundamentalMultiples: SIMD4<Double> { @_noLocks get { SIMD4(1, 0.75, 1.25, 1.75) } }

    /// The period, in frames (0: none measured).
    var period: Int
    /// The powers at 2 f, 3 f, 4 f and 5 f (nil: not measured yet).
    var partials: SIMD4<Float>?
    /// The powers at f, 0.75 f, 1.25 f and 1.75 f (nil: not measured yet).
    var fundamentalAndReferences: SIMD4<Float>?

    /// Nothing measured yet. Written out: the synthesised initialiser is opaque to the
    /// real-time checks in a build with testing enabled.
    @_noLocks
    init(period: Int = 0) {
        self.period = period
        partials = nil
        fundamentalAndReferences = nil
    }
}

/// Single-frequency DFTs at four frequencies side by side, one SIMD lane each, accumulated two
/// samples a step: each frequency has a phasor for the even samples and one for the odd, both
/// rotated by twice its angle, so two rotation chains run at once (with one chain a sample
/// waits on the rotation's multiply-add latency). Float lanes: over a window's few thousand
/// samples the powers stay within ~3e-5 (0.0001 dB) of a direct sum in Double
/// (`PartialPowersTests`), far inside the octave decision's dB-wide thresholds. Real-time safe.
struct FourFrequencyDFT {
    private var stepReal = SIMD4<Float>(), stepImaginary = SIMD4<Float>()
    private var evenReal = SIMD4<Float>(repeating: 1), evenImaginary = SIMD4<Float>()
    private var oddReal = SIMD4<Float>(), oddImaginary = SIMD4<Float>()
    private var sumReal = SIMD4<Float>(), sumImaginary = SIMD4<Float>()

    /// `anglesRadians`: each frequency's phase step per sample.
    @_noLocks
    init(anglesRadians: SIMD4<Double>) {
        for lane in 0..<4 {
            let angle = anglesRadians[lane]
            stepReal[lane] = Float(_unsafePerformance { cos(2 * angle) })
            stepImaginary[lane] = Float(_unsafePerformance { sin(2 * angle) })
            oddReal[lane] = Float(_unsafePerformance { cos(angle) })
            oddImaginary[lane] = Float(_unsafePerformance { sin(angle) })
        }
    }

    /// Adds two consecutive samples.
    @inline(__always) @_noLocks
    mutating func add(_ even: Float, _ odd: Float) {
        sumReal += even * evenReal + odd * oddReal
        sumImaginary += even * evenImaginary + odd * oddImaginary
        let nextEvenReal = evenReal * stepReal - evenImaginary * stepImaginary
        evenImaginary = evenReal * stepImaginary + evenImaginary * stepReal
        evenReal = nextEvenReal
        let nextOddReal = oddReal * stepReal - oddImaginary * stepImaginary
        oddImaginary = oddReal * stepImaginary + oddImaginary * stepReal
        oddReal = nextOddReal
    }

    /// Adds a last, unpaired sample.
    @_noLocks
    mutating func add(_ even: Float) {
        sumReal += even * evenReal
        sumImaginary += even * evenImaginary
    }

    var powers: SIMD4<Float> { @_noLocks get { sumReal * sumReal + sumImaginary * sumImaginary } }
}
