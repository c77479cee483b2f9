import Foundation
import Testing
@testable import SpectrumDSP
import SpectrumTestSupport

/// The short window skipped while steady noise stays the same (`ShortWindowRecheck`, docs/dsp.md,
/// Tuner, step 4): pink noise stays the window it remembered from hop to hop, and a note that
/// the short window could read — after the noise stopped, or over it — is a change.
@Suite struct ShortWindowRecheckTests {
    static let sampleRateHz = 48_000.0
    static let hopFrames = 800
    /// The short window at 48 kHz: 2.2 periods of 150 Hz.
    static let windowFrames = 704

    /// The window's energy and its first difference's, its mean removed, as the tuner measures them.
    static func energies(_ samples: ArraySlice<Float>) -> (energy: Float, slopeEnergy: Float) {
        let mean = samples.reduce(0, +) / Float(samples.count)
        let window = samples.map { $0 - mean }
        let energy = window.reduce(0) { $0 + $1 * $1 }
        let lagOne = zip(window.dropFirst(), window).reduce(0) { $0 + $1.0 * $1.1 }
        return (energy, ShortWindowRecheck.slopeEnergy(energy: energy, lagOneProduct: lagOne))
    }

    /// The newest window of each hop of `signal`.
    static func windows(_ signal: [Float]) -> [ArraySlice<Float>] {
        stride(from: hopFrames, through: signal.count, by: hopFrames).filter { $0 >= windowFrames }.map { signal[($0 - windowFrames)..<$0] }
    }

    static func tone(midiNote: Int, seconds: Double, rms: Float) -> [Float] {
        let tone = TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: Double(midiNote)), harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05],
                                            sampleRateHz: sampleRateHz, seconds: seconds)
        let toneRMS = (tone.reduce(0) { $0 + $1 * $1 } / Float(tone.count)).squareRoot()
        return tone.map { $0 * rms / toneRMS }
    }

    /// Two seconds of pink noise, and of a note in it at −3 dB SNR (the benchmark's costliest
    /// path): the short window is computed again (the window changed) on few hops.
    @Test(arguments: [false, true])
    func steadyPinkNoiseStaysTheRememberedWindow(withANoteInIt: Bool) {
        var signal = TestSignals.pinkNoise(sampleRateHz: Self.sampleRateHz, seconds: 2, seed: 7)
        let noiseRMS = (signal.reduce(0) { $0 + $1 * $1 } / Float(signal.count)).squareRoot()
        if withANoteInIt {
            for (index, sample) in Self.tone(midiNote: 57, seconds: 2, rms: noiseRMS * powf(10, -3.0 / 20)).enumerated() { signal[index] += sample }
        }
        var recheck = ShortWindowRecheck()
        var changes = 0
        let windows = Self.windows(signal)
        for window in windows {
            let (energy, slopeEnergy) = Self.energies(window)
            if !recheck.isUnchanged(energy: energy, slopeEnergy: slopeEnergy) {
                changes += 1
                recheck.remember(energy: energy, slopeEnergy: slopeEnergy)
            }
        }
        #expect(changes * 10 <= windows.count, "\(changes) of \(windows.count) hops changed")
    }

    /// Pink noise remembered, then a note from A2 to C7 (four partials): as loud as the noise
    /// was, the noise stopped; or four times the noise's power over it (r ≈ 0.8, what the
    /// short window needs). Each is a change on its first whole window.
    @Test func aNoteAfterTheNoiseOrOverItIsAChange() {
        let noise = TestSignals.pinkNoise(sampleRateHz: Self.sampleRateHz, seconds: 1, seed: 8)
        let noiseRMS = (noise.reduce(0) { $0 + $1 * $1 } / Float(noise.count)).squareRoot()
        for note in [45, 57, 69, 81, 93, 96] {
            for (label, noteRMS, noiseGoesOn) in [("the noise stopped", noiseRMS, false), ("over the noise", 2 * noiseRMS, true)] {
                var recheck = ShortWindowRecheck()
                let before = Self.energies(noise[(noise.count - Self.windowFrames)...])
                recheck.remember(energy: before.energy, slopeEnergy: before.slopeEnergy)
                let tone = Self.tone(midiNote: note, seconds: Double(Self.windowFrames) / Self.sampleRateHz, rms: noteRMS)
                let window = noiseGoesOn ? zip(tone, noise).map { $0 + $1 } : tone
                let after = Self.energies(window[...])
                #expect(!recheck.isUnchanged(energy: after.energy, slopeEnergy: after.slopeEnergy),
                        "MIDI \(note), \(label): energy \(10 * log10(after.energy / before.energy)) dB, first difference \(10 * log10(after.slopeEnergy / before.slopeEnergy)) dB")
            }
        }
    }
}
