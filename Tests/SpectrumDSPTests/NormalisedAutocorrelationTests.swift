import Foundation
import Testing
@testable import SpectrumDSP

/// The tuner's correlation (FFT pair) against the per-lag sums it replaces, at the FFT sizes
/// `fastFFTSize` picks: a size too small for the window and its lags would wrap the longest
/// lags into the shortest.
@Suite struct NormalisedAutocorrelationTests {
    /// The short window at 44.1, 48 and 96 kHz (FFT sizes 1024, 1152, 2304) and the long window
    /// at 48 kHz (4096).
    @Test(arguments: [(2, 294), (2, 320), (2, 640), (21, 1264)])
    func everyLagMatchesTheDirectSums(minimumLag: Int, maximumLag: Int) {
        let correlation = NormalisedAutocorrelation(minimumLag: minimumLag, maximumLag: maximumLag)
        let count = correlation.windowFrames
        var history = SampleHistory(capacity: count + 100)
        // A tone with a few partials, an offset (the mean is removed) and deterministic noise,
        // written past the ring's end so the window wraps.
        var noise: UInt32 = 12_345
        var samples: [Float] = []
        for index in 0..<(count + 100) {
            noise = noise &* 1_664_525 &+ 1_013_904_223
            let phase = 2 * Double.pi * 196 * Double(index) / 48_000
            let value = 0.1 + 0.5 * sin(phase) + 0.3 * sin(2 * phase + 1) + 0.2 * sin(3 * phase + 2)
                + 0.1 * (Double(noise >> 8) / Double(1 << 24) - 0.5)
            samples.append(Float(value))
            history.append(Float(value))
        }
        let (mean, energy) = correlation.load(history)
        _ = correlation.correlate(energy: energy, spectrumCopy: nil)
        let window = samples.suffix(count).map { Double($0 - mean) }
        var largestError = 0.0
        for lag in 1...(maximumLag + 1) {
            var product = 0.0, left = 0.0, right = 0.0
            for index in 0..<(count - lag) {
                product += window[index] * window[index + lag]
                left += window[index] * window[index]
                right += window[index + lag] * window[index + lag]
            }
            let r = product / (left * right).squareRoot()
            largestError = max(largestError, abs(Double(correlation[lag]) - r * abs(r)))
        }
        #expect(largestError < 1e-4, "fftSize \(correlation.fftSize), window \(count), lags to \(maximumLag + 1)")
    }

    @Test func fftSizesArePowersOfTwoOrNineTimesOne() {
        #expect(NormalisedAutocorrelation.fastFFTSize(atLeast: 1) == 1)
        #expect(NormalisedAutocorrelation.fastFFTSize(atLeast: 943) == 1024)
        #expect(NormalisedAutocorrelation.fastFFTSize(atLeast: 1026) == 1152)
        #expect(NormalisedAutocorrelation.fastFFTSize(atLeast: 1153) == 2048)
        #expect(NormalisedAutocorrelation.fastFFTSize(atLeast: 2050) == 2304)
        #expect(NormalisedAutocorrelation.fastFFTSize(atLeast: 4047) == 4096)
    }
}
