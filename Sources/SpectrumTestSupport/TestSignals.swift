import Foundation

/// Deterministic test signals with known answers. Allocates; for tests and benchmarks only.
public enum TestSignals {
    public static func sine(frequencyHz: Double, sampleRateHz: Double, seconds: Double, amplitude: Double = 0.5, phase: Double = 0) -> [Float] {
        let count = Int(seconds * sampleRateHz)
        return (0..<count).map { Float(amplitude * sin(2 * .pi * frequencyHz * Double($0) / sampleRateHz + phase)) }
    }

    public static func square(frequencyHz: Double, sampleRateHz: Double, seconds: Double, amplitude: Double = 1) -> [Float] {
        let count = Int(seconds * sampleRateHz)
        return (0..<count).map {
            let cycle = (frequencyHz * Double($0) / sampleRateHz).truncatingRemainder(dividingBy: 1)
            return Float(cycle < 0.5 ? amplitude : -amplitude)
        }
    }

    /// Uniform white noise in −amplitude..amplitude from a fixed seed (SplitMix64).
    public static func whiteNoise(sampleRateHz: Double, seconds: Double, amplitude: Double = 1, seed: UInt64 = 1) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        return (0..<Int(seconds * sampleRateHz)).map { _ in Float(Double.random(in: -amplitude...amplitude, using: &generator)) }
    }

    /// A harmonic tone: `harmonicAmplitudes[k]` is the amplitude of harmonic k + 1 (so a
    /// leading 0 gives a missing fundamental).
    public static func harmonicTone(fundamentalHz: Double, harmonicAmplitudes: [Double], sampleRateHz: Double, seconds: Double) -> [Float] {
        (0..<Int(seconds * sampleRateHz)).map { index in
            let time = Double(index) / sampleRateHz
            var value = 0.0
            for (harmonic, amplitude) in harmonicAmplitudes.enumerated() where amplitude != 0 {
                value += amplitude * sin(2 * .pi * fundamentalHz * Double(harmonic + 1) * time + Double(harmonic))
            }
            return Float(value)
        }
    }

    /// G2 with its fundamental and odd partials 24 dB under the even ones (FluidR3's steel
    /// guitar G2 late in the note): the wave repeats at half its period as well, so on every hop
    /// the tuner holds the established note and measures its fundamental.
    public static func lowStringWithFadedOddPartials(sampleRateHz: Double, seconds: Double) -> [Float] {
        let odd = pow(10, -24.0 / 20)
        return harmonicTone(fundamentalHz: 98, harmonicAmplitudes: [0.8 * odd, 1, 0.4 * odd, 0.3, 0.2 * odd, 0.1],
                            sampleRateHz: sampleRateHz, seconds: seconds).map { 0.2 * $0 }
    }

    /// Pink (1/f) noise: white noise through Paul Kellet's economy filter, scaled to ~amplitude peak.
    public static func pinkNoise(sampleRateHz: Double, seconds: Double, amplitude: Double = 0.5, seed: UInt64 = 2) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        var b0 = 0.0, b1 = 0.0, b2 = 0.0
        return (0..<Int(seconds * sampleRateHz)).map { _ in
            let white = Double.random(in: -1...1, using: &generator)
            b0 = 0.99765 * b0 + white * 0.0990460
            b1 = 0.96300 * b1 + white * 0.2965164
            b2 = 0.57000 * b2 + white * 1.0526913
            return Float(amplitude * (b0 + b1 + b2 + white * 0.1848) / 3)
        }
    }

    /// Synthetic drum hits, alternating an acoustic-style kick (a sine sweeping 150 → 45 Hz
    /// with a 120 ms decay, plus a noise click) and a snare (180 Hz body, 60 ms noise), one every
    /// `intervalSeconds`.
    public static func drumHits(sampleRateHz: Double, seconds: Double, intervalSeconds: Double = 0.5, seed: UInt64 = 3) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        var phase = 0.0
        return (0..<Int(seconds * sampleRateHz)).map { index in
            let absolute = Double(index) / sampleRateHz
            let time = absolute.truncatingRemainder(dividingBy: intervalSeconds)
            let isSnare = Int(absolute / intervalSeconds) % 2 == 1
            if time < 1 / sampleRateHz { phase = 0 }
            let noise = Double.random(in: -1...1, using: &generator)
            if isSnare {
                phase += 2 * .pi * 180 / sampleRateHz
                return Float(0.4 * exp(-time / 0.04) * sin(phase) + 0.5 * exp(-time / 0.06) * noise)
            }
            let frequencyHz = 45 + 105 * exp(-time / 0.04)
            phase += 2 * .pi * frequencyHz / sampleRateHz
            return Float(0.8 * exp(-time / 0.12) * sin(phase) + 0.4 * exp(-time / 0.01) * noise)
        }
    }

    public static func silence(sampleRateHz: Double, seconds: Double) -> [Float] {
        [Float](repeating: 0, count: Int(seconds * sampleRateHz))
    }

    /// Frequency of a chromatic step: A4 = 440 Hz, MIDI numbers.
    public static func frequencyHz(midiNote: Double, referenceHz: Double = 440) -> Double {
        referenceHz * pow(2, (midiNote - 69) / 12)
    }
}

/// SplitMix64: a tiny, seedable generator so noise is the same on every run.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1330_11EB
        return z ^ (z >> 31)
    }
}
