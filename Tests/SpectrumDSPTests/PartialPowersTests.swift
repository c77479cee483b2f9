import Foundation
import Testing
@testable import SpectrumDSP
import SpectrumTestSupport

/// The octave decision's single-frequency DFTs (`FourFrequencyDFT`: Float lanes, two samples a
/// step) against the same DFTs summed directly in Double, on a window's worth of a harmonic tone
/// in noise: the partials' powers and the powers between them, the even and odd sample counts.
@Suite struct PartialPowersTests {
    /// The direct sum: Σ x[n] e^(i·angle·n), its power.
    static func directPower(_ samples: [Float], angleRadians: Double) -> Double {
        var real = 0.0, imaginary = 0.0
        for (index, value) in samples.enumerated() {
            real += Double(value) * cos(angleRadians * Double(index))
            imaginary += Double(value) * sin(angleRadians * Double(index))
        }
        return real * real + imaginary * imaginary
    }

    @Test(arguments: [2_781, 2_782])
    func theLanesReadWhatADirectSumReads(count: Int) {
        let sampleRateHz = 48_000.0, periodFrames = 582.0  // 82.5 Hz
        let tone = TestSignals.harmonicTone(fundamentalHz: sampleRateHz / periodFrames, harmonicAmplitudes: [0.05, 1, 0.1, 0.6, 0.03],
                                            sampleRateHz: sampleRateHz, seconds: 0.1)
        let noise = TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 0.1, amplitude: 0.001)
        let samples: [Float] = (0..<count).map { index in
            let hann = 0.5 - 0.5 * cos(2 * Double.pi * (Double(index) + 0.5) / Double(count))
            return Float(hann) * (tone[index] + noise[index])
        }
        for multiples in [PartialPowers.partialMultiples, PartialPowers.fundamentalMultiples] {
            let angles = multiples * (-2 * Double.pi / periodFrames)
            var dft = FourFrequencyDFT(anglesRadians: angles)
            var index = 0
            while index + 1 < count {
                dft.add(samples[index], samples[index + 1])
                index += 2
            }
            if index < count { dft.add(samples[index]) }
            let powers = dft.powers
            for lane in 0..<4 {
                let expected = Self.directPower(samples, angleRadians: angles[lane])
                // Within 0.005 dB, at the partials and between them (the window's leakage there, 35–40 dB
                // under the second partial); measured here ~0.0001 dB.
                let tolerance = 0.001
                #expect(abs(Double(powers[lane]) / expected - 1) < tolerance,
                        "\(multiples[lane]) f: \(powers[lane]) against \(expected)")
            }
        }
    }
}
