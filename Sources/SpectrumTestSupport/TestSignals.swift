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
