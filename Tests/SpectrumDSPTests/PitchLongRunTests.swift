import Foundation
import Testing
import SpectrumDSP
import SpectrumTestSupport

/// The tuner over minutes of steady noise, as in a loud rehearsal room: the input's noise floor
/// (`pitch.gate_above_noise_floor_db`) rises to the noise within ~100 s, and from then on must
/// neither silence the notes the tuner reads at a run's start nor let the noise through.
/// 48 kHz only (the sample rate does not enter the floor's rise; `PitchTests` covers the rates).
@Suite struct PitchLongRunTests {
    static let sampleRateHz = 48_000.0
    /// Long enough for the floor, rising 0.5 dB/s from −66 dBFS, to reach noise at −20 dBFS
    /// (92 s) with time to settle.
    static let longLeadSeconds = 150.0
    static let noteSeconds = 1.5, gapSeconds = 0.5
    /// D3 to E5, as `PitchTests.notesInPinkNoiseAsLoudAsThemAreRead`.
    static let notes = [50, 57, 64, 69, 76]
    static let signalToNoiseDecibels = [0.0, 3, 5, 10]

    static func meanSquare(_ signal: ArraySlice<Float>) -> Double {
        signal.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(signal.count, 1))
    }

    /// `signal` scaled to an RMS level in dBFS.
    static func atRMS(_ signal: [Float], decibels: Double) -> [Float] {
        let gain = Float(pow(10, decibels / 20) / meanSquare(signal[...]).squareRoot())
        return signal.map { $0 * gain }
    }

    /// Brown (1/f²) noise: white noise integrated with a slow leak (a 20 Hz corner at 48 kHz).
    static func brownNoise(seconds: Double, seed: UInt64) -> [Float] {
        var value: Float = 0
        return TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: seconds, seed: seed).map { white in
            value = 0.9974 * value + 0.05 * white
            return value
        }
    }

    /// Share of each SNR's note frames (from 10 hops after the note's start to its end) read
    /// within 50 cents: pink noise at −20 dBFS RMS for `leadSeconds`, then every note of `notes`
    /// at each SNR (RMS against the noise's RMS) for `noteSeconds`, `gapSeconds` of the noise
    /// alone after each. Also the notes read on the noise alone before the first note.
    static func readShares(leadSeconds: Double) throws -> (shares: [Double], notesOnLead: Int) {
        let noiseDecibels = -20.0
        let slotSeconds = noteSeconds + gapSeconds
        let slots = notes.count * signalToNoiseDecibels.count
        var signal = atRMS(TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: leadSeconds + Double(slots) * slotSeconds, seed: 31),
                           decibels: noiseDecibels)
        let hopFrames = Int(sampleRateHz / AnalysisConfiguration().outputRateHz)
        var scoredRanges: [(snrIndex: Int, note: Int, range: Range<Int64>)] = []
        for (snrIndex, snr) in signalToNoiseDecibels.enumerated() {
            for (noteIndex, note) in notes.enumerated() {
                let tone = atRMS(TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: Double(note)),
                                                          harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05], sampleRateHz: sampleRateHz, seconds: noteSeconds),
                                 decibels: noiseDecibels + snr)
                let start = Int((leadSeconds + Double(snrIndex * notes.count + noteIndex) * slotSeconds) * sampleRateHz)
                for (offset, value) in tone.enumerated() { signal[start + offset] += value }
                scoredRanges.append((snrIndex, note, Int64(start + 10 * hopFrames)..<Int64(start + tone.count)))
            }
        }
        var configuration = AnalysisConfiguration()
        configuration.rhythm.enabled = false
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames])
        let leadEnd = Int64(leadSeconds * sampleRateHz)
        let notesOnLead = frames.filter { $0.streamFrame <= leadEnd && $0.pitch.hasNote }.count
        var read = [Int](repeating: 0, count: signalToNoiseDecibels.count), scored = read
        for frame in frames {
            guard let slot = scoredRanges.first(where: { $0.range.contains(frame.streamFrame) }) else { continue }
            scored[slot.snrIndex] += 1
            if frame.pitch.hasNote && abs(frame.pitch.midiNote - Float(slot.note)) < 0.5 { read[slot.snrIndex] += 1 }
        }
        return (zip(read, scored).map { Double($0) / Double(max($1, 1)) }, notesOnLead)
    }

    /// Notes in steady pink noise are read after 150 s of it as at a run's start: the floor
    /// has reached the noise by then, and a gate on the window's whole energy 6 dB above it
    /// silenced every note under ~5 dB SNR (0 dB: 0 % against 66 % at the start).
    @Test func notesInSteadyNoiseAreReadAfterMinutesAsAtTheStart() throws {
        let start = try Self.readShares(leadSeconds: 1.5)
        let later = try Self.readShares(leadSeconds: Self.longLeadSeconds)
        for (index, snr) in Self.signalToNoiseDecibels.enumerated() {
            let line = String(format: "pink noise, notes at %.0f dB SNR: %.1f %% within 50 cents at the start, %.1f %% after %.0f s of noise",
                              snr, 100 * start.shares[index], 100 * later.shares[index], Self.longLeadSeconds)
            print(line)
            #expect(later.shares[index] >= start.shares[index] - 0.1, "\(line)")
            #expect(later.shares[index] >= (snr == 0 ? 0.4 : 0.8), "\(line)")
        }
        #expect(start.notesOnLead == 0 && later.notesOnLead == 0,
                "notes on the noise alone: \(start.notesOnLead) in 1.5 s, \(later.notesOnLead) in \(Self.longLeadSeconds) s")
    }

    /// Minutes of noise alone give no note on at least 99 % of frames — pink, white and brown
    /// noise, mains hum with harmonics at 50 and 60 Hz, a low hiss — once the floor has reached
    /// them as at the start; silence, a dither-level hiss and digital silence give none.
    @Test func minutesOfNoiseAloneGiveNoNote() throws {
        let seconds = 160.0
        var configuration = AnalysisConfiguration()
        configuration.rhythm.enabled = false
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: Self.sampleRateHz)
        let hopFrames = Int(Self.sampleRateHz / configuration.outputRateHz)
        func hum(_ mainsHz: Double) -> [Float] {
            Self.atRMS(TestSignals.harmonicTone(fundamentalHz: mainsHz, harmonicAmplitudes: [0.5, 0.3, 0.2, 0.1, 0.05], sampleRateHz: Self.sampleRateHz, seconds: seconds),
                       decibels: -40)
        }
        let noises: [(name: String, signal: [Float], allowedShare: Double)] = [
            ("pink noise at −20 dBFS RMS", Self.atRMS(TestSignals.pinkNoise(sampleRateHz: Self.sampleRateHz, seconds: seconds, seed: 41), decibels: -20), 0.01),
            ("white noise at −30 dBFS RMS", Self.atRMS(TestSignals.whiteNoise(sampleRateHz: Self.sampleRateHz, seconds: seconds, seed: 42), decibels: -30), 0.01),
            ("brown noise at −20 dBFS RMS", Self.atRMS(Self.brownNoise(seconds: seconds, seed: 43), decibels: -20), 0.01),
            ("50 Hz hum with harmonics at −40 dBFS RMS", hum(50.1), 0.01),
            ("60 Hz hum with harmonics at −40 dBFS RMS", hum(59.9), 0.01),
            ("hiss at −70 dBFS RMS", Self.atRMS(TestSignals.whiteNoise(sampleRateHz: Self.sampleRateHz, seconds: seconds, seed: 44), decibels: -70), 0.01),
            ("dither at −100 dBFS RMS", Self.atRMS(TestSignals.whiteNoise(sampleRateHz: Self.sampleRateHz, seconds: seconds, seed: 45), decibels: -100), 0),
            ("digital silence", TestSignals.silence(sampleRateHz: Self.sampleRateHz, seconds: seconds), 0),
        ]
        for noise in noises {
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: noise.signal, blockSizes: [hopFrames])
            let voiced = frames.filter { $0.pitch.hasNote }.count
            let lateVoiced = frames.dropFirst(Int(120 * configuration.outputRateHz)).filter { $0.pitch.hasNote }.count
            #expect(Double(voiced) <= noise.allowedShare * Double(frames.count),
                    "\(noise.name) for \(seconds) s: \(voiced) of \(frames.count) frames had a note (\(lateVoiced) after 120 s)")
        }
    }
}
