import CFFTW
import Glibc
import SpectrumCore

/// FFTW's planner is not thread-safe (tests build analysers in parallel): every type that
/// plans evaluates this first, which makes it so exactly once.
let fftwPlannerMadeThreadSafe: Void = fftwf_make_planner_thread_safe()

/// Plans are chosen by FFTW's heuristics, not by timing (FFTW_MEASURE): timed plans differ from
/// process to process and round differently, so the same file analysed twice gave different
/// bands and, where a decision sat at a threshold, different pitch readings. Estimated plans
/// are reproducible and take ~1 ms to make instead of ~140 ms, for a somewhat slower FFT.
let fftwPlanningFlags = UInt32(FFTW_ESTIMATE)

/// Hann-windowed real FFT of the newest `windowFrames` samples, zero-padded to the power of two
/// `fftSize` ≥ `windowFrames × paddingFactor`,
/// producing the power of each bin scaled so that a full-scale sine reads 1.0 (0 dB) at its peak.
///
/// `init` plans with FFTW_ESTIMATE (see `fftwPlanningFlags`) and allocates (not real-time safe); `compute` only calls
/// `fftwf_execute` on that plan (real-time safe).
struct PowerSpectrum: ~Copyable {
    let windowFrames: Int
    let fftSize: Int
    let binCount: Int
    /// Hz between bins of the zero-padded transform.
    let binSpacingHz: Double
    /// Equivalent noise bandwidth of the window in Hz: turns integrated power into band power.
    let equivalentNoiseBandwidthHz: Double

    private let window: RealtimeBuffer
    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<fftwf_complex>
    private let plan: OpaquePointer
    private let powerScale: Float

    init(windowFrames: Int, sampleRateHz: Double, paddingFactor: Int) {
        _ = fftwPlannerMadeThreadSafe
        self.windowFrames = windowFrames
        var size = 1
        while size < windowFrames * paddingFactor { size <<= 1 }
        fftSize = size
        binCount = size / 2 + 1
        binSpacingHz = sampleRateHz / Double(size)

        window = RealtimeBuffer(count: windowFrames, repeating: 0)
        var sum = 0.0, sumOfSquares = 0.0
        for index in 0..<windowFrames {
            // Periodic Hann: w[n] = 0.5 (1 − cos(2πn/N)).
            let value = 0.5 * (1 - cos(2 * Double.pi * Double(index) / Double(windowFrames)))
            window[index] = Float(value)
            sum += value
            sumOfSquares += value * value
        }
        powerScale = Float((2 / sum) * (2 / sum))
        equivalentNoiseBandwidthHz = sampleRateHz * sumOfSquares / (sum * sum)

        input = fftwf_alloc_real(size)
        output = fftwf_alloc_complex(size / 2 + 1)
        plan = fftwf_plan_dft_r2c_1d(Int32(size), input, output, fftwPlanningFlags)
        // The zero padding must be zero (and a timing planner would scribble on the arrays).
        input.initialize(repeating: 0, count: size)
    }

    deinit {
        fftwf_destroy_plan(plan)
        fftwf_free(input)
        fftwf_free(output)
    }

    /// Windows the newest samples of `history`, transforms, and writes `binCount` powers to
    /// `power`. Real-time safe.
    @_noLocks
    func compute(from history: borrowing SampleHistory, into power: UnsafeMutablePointer<Float>) {
        // 1) Window (the zero padding beyond windowFrames is never written).
        let runs = history.latestRuns(windowFrames)
        for index in 0..<runs.firstCount {
            input[index] = window[index] * runs.first[index]
        }
        // Through pointers to the second run's start (an offset index is overflow-checked per
        // sample, which keeps the loop from being vectorised).
        let secondInput = input + runs.firstCount, secondWindow = window.base + runs.firstCount
        for index in 0..<runs.secondCount {
            secondInput[index] = secondWindow[index] * runs.second[index]
        }
        // 2) FFT.
        let plan = self.plan
        _unsafePerformance { fftwf_execute(plan) }
        // 3) Squared magnitudes, scaled to full-scale-sine = 1.
        for bin in 0..<binCount {
            let (real, imaginary) = output[bin]
            power[bin] = (real * real + imaginary * imaginary) * powerScale
        }
    }
}
