import Foundation
import Testing
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// Every reported onset carries the time of its attack in the samples, not the hop it was
/// detected in: clicks and plucked tones placed at random positions within the 800-frame hop
/// (48 kHz) are each reported once, within 2 ms of the true attack.
@Suite struct OnsetTimingTests {
    static let sampleRateHz = 48_000.0

    /// Attacks ~0.5 s apart (random, so every phase of the hop occurs), each built by `voice`
    /// (samples from the attack on), summed over the previous voices' tails.
    static func signal(count: Int, seed: UInt64, voice: (inout SeededGenerator) -> [Float]) -> (samples: [Float], attacks: [Double]) {
        var generator = SeededGenerator(seed: seed)
        var attacks: [Int] = []
        var position = Int(0.3 * sampleRateHz)
        for _ in 0..<count {
            position += Int.random(in: 0..<800, using: &generator)
            attacks.append(position)
            position += Int(0.45 * sampleRateHz)
        }
        var samples = [Float](repeating: 0, count: position + Int(0.5 * sampleRateHz))
        for attack in attacks {
            let sound = voice(&generator)
            for index in 0..<min(sound.count, samples.count - attack) { samples[attack + index] += sound[index] }
        }
        return (samples, attacks.map { Double($0) })
    }

    /// A click: 1 ms of noise, decaying with a 0.3 ms time constant.
    static func click(_ generator: inout SeededGenerator) -> [Float] {
        let amplitude = Float.random(in: 0.3...0.8, using: &generator)
        var samples = [Float](repeating: 0, count: 48)
        for index in samples.indices {
            let decay = Float(exp(-Double(index) / (0.0003 * sampleRateHz)))
            samples[index] = amplitude * Float.random(in: -1...1, using: &generator) * decay
        }
        return samples
    }

    /// A plucked string: six harmonics (amplitude 1/k) of a random note from 82 to 660 Hz, a
    /// 1 ms rise and a 0.2 s decay, ringing for 1.2 s (under the next notes, as a string does).
    static func pluck(_ generator: inout SeededGenerator) -> [Float] {
        let fundamentalHz = 82.0 * Double.random(in: 1...8, using: &generator)
        let amplitude = Double.random(in: 0.15...0.3, using: &generator)
        let riseFrames = 0.001 * sampleRateHz
        var samples = [Float](repeating: 0, count: Int(1.2 * sampleRateHz))
        for index in samples.indices {
            let time = Double(index) / sampleRateHz
            var value = 0.0
            for harmonic in 1...6 {
                let partialHz = Double(harmonic) * fundamentalHz
                value += sin(2 * Double.pi * partialHz * time) / Double(harmonic)
            }
            let envelope: Double = min(1, Double(index) / riseFrames) * exp(-time / 0.2)
            samples[index] = Float(amplitude * envelope * value)
        }
        return samples
    }

    static func expectOnsetsAtAttacks(_ signal: (samples: [Float], attacks: [Double]), _ label: String) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let onsets = OfflineDriver.frames(&analyzer, signal: signal.samples, blockSizes: [256]).filter { $0.onset.isOnset }
        #expect(onsets.count == signal.attacks.count, "\(label): \(onsets.count) onsets for \(signal.attacks.count) attacks")
        for frame in onsets {
            let nearest = signal.attacks.min { abs($0 - frame.onset.timeFrames) < abs($1 - frame.onset.timeFrames) } ?? 0
            let errorMilliseconds = (frame.onset.timeFrames - nearest) / sampleRateHz * 1000
            #expect(abs(errorMilliseconds) <= 2, "\(label): onset at \(frame.onset.timeFrames) is \(errorMilliseconds) ms from its attack")
        }
    }

    @Test func clicksAtRandomHopPhasesAreTimedToTheirAttack() throws {
        try Self.expectOnsetsAtAttacks(Self.signal(count: 24, seed: 14, voice: Self.click), "clicks")
    }

    @Test func pluckedTonesAtRandomHopPhasesAreTimedToTheirAttack() throws {
        try Self.expectOnsetsAtAttacks(Self.signal(count: 24, seed: 41, voice: Self.pluck), "plucks")
    }

    /// Stamped as the live host stamps each frame (its newest sample at a capture time on
    /// JACK's clock), an onset gets the capture time of its attack: the frame's less the
    /// onset's age in samples, to the microsecond; frames without an onset leave it 0.
    @Test func anOnsetIsStampedWithTheCaptureTimeOfItsAttack() throws {
        let signal = Self.signal(count: 6, seed: 7, voice: Self.click)
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: Self.sampleRateHz)
        let startMicroseconds: UInt64 = 7_000_000_000
        var stamped: [AnalysisFrame] = []
        try signal.samples.withUnsafeBufferPointer { buffer in
            let base = try #require(buffer.baseAddress)
            var offset = 0
            while offset < buffer.count {
                let step = analyzer.consume(base + offset, frameCount: min(256, buffer.count - offset))
                offset += step.consumed
                guard step.frameCompleted else { continue }
                // The newest sample of the frame is sample streamFrame − 1 of the stream.
                let newest = Double(analyzer.frame.pointee.streamFrame)
                analyzer.stampCaptureTime(microseconds: startMicroseconds + UInt64((newest * 1_000_000 / Self.sampleRateHz).rounded()))
                stamped.append(analyzer.frame.pointee)
            }
        }
        let onsets = stamped.filter { $0.onset.isOnset }
        #expect(onsets.count == signal.attacks.count)
        for frame in onsets {
            let expected = Double(startMicroseconds) + frame.onset.timeFrames * 1_000_000 / Self.sampleRateHz
            #expect(abs(Double(frame.onset.captureTimeMicroseconds) - expected) <= 1, "onset at \(frame.onset.timeFrames)")
            #expect(frame.onset.captureTimeMicroseconds < frame.captureTimeMicroseconds)
        }
        #expect(stamped.filter { !$0.onset.isOnset }.allSatisfy { $0.onset.captureTimeMicroseconds == 0 })
    }
}
