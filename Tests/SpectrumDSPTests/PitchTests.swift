import Foundation
import Testing
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// The tuner: cents accuracy, octave safety and "no note", at every supported sample rate.
@Suite struct PitchTests {
    static let sampleRates: [Double] = [44_100, 48_000, 96_000]
    /// E1 (MIDI 28) to C7 (MIDI 96).
    static let notes = Array(stride(from: 28, through: 96, by: 4)) + [96]

    /// The reading once the tone has sounded for `seconds`.
    static func reading(_ analyzer: inout Analyzer, _ signal: [Float]) -> PitchReading {
        analyzer.reset()
        return OfflineDriver.frames(&analyzer, signal: signal).last!.pitch
    }

    static func centsError(_ reading: PitchReading, expectedHz: Double) -> Double {
        1200 * log2(Double(reading.frequencyHz) / expectedHz)
    }

    @Test(arguments: sampleRates)
    func sinesFromE1ToC7WithinOneCent(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for note in Self.notes {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let reading = Self.reading(&analyzer, TestSignals.sine(frequencyHz: frequencyHz, sampleRateHz: sampleRateHz, seconds: 0.4))
            #expect(reading.noteNumber == Int32(note), "MIDI \(note) at \(sampleRateHz) Hz")
            #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 1, "MIDI \(note) at \(sampleRateHz) Hz: \(reading.frequencyHz) Hz")
            #expect(abs(reading.cents) < 1 && reading.confidence > 0.95)
        }
    }

    @Test(arguments: sampleRates)
    func harmonicTonesHaveNoOctaveErrors(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let timbres: [(String, [Double])] = [
            ("bright", [0.3, 0.2, 0.15, 0.1, 0.08, 0.05]),
            ("second harmonic 2x the fundamental", [0.15, 0.3, 0.1]),
            ("second harmonic 3x the fundamental", [0.1, 0.3, 0.05]),
            ("missing fundamental", [0, 0.3, 0.25, 0.2]),
        ]
        for (name, amplitudes) in timbres {
            for note in Self.notes where note <= (amplitudes.count > 3 ? 84 : 96) {
                let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
                guard frequencyHz * Double(amplitudes.count) < sampleRateHz / 2 else { continue }
                let signal = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: amplitudes, sampleRateHz: sampleRateHz, seconds: 0.4)
                let reading = Self.reading(&analyzer, signal)
                #expect(reading.noteNumber == Int32(note), "\(name), MIDI \(note) at \(sampleRateHz) Hz: got \(reading.noteNumber)")
                #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 1, "\(name), MIDI \(note): \(reading.frequencyHz) Hz")
            }
        }
    }

    @Test(arguments: [-23.0, -7, 7, 23])
    func detunedTonesReportTheirCents(detuneCents: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        for note in [40, 57, 69, 81] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note) + detuneCents / 100)
            let reading = Self.reading(&analyzer, TestSignals.sine(frequencyHz: frequencyHz, sampleRateHz: 48_000, seconds: 0.4))
            #expect(reading.noteNumber == Int32(note))
            #expect(abs(Double(reading.cents) - detuneCents) < 1, "MIDI \(note) \(detuneCents) cents: \(reading.cents)")
        }
    }

    @Test func referencePitchShiftsCents() throws {
        var configuration = AnalysisConfiguration()
        configuration.pitch.referenceHz = 442
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: 48_000)
        // 440 Hz against A4 = 442 Hz is 1200·log2(440/442) = −7.85 cents.
        let reading = Self.reading(&analyzer, TestSignals.sine(frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.4))
        #expect(reading.noteNumber == 69)
        #expect(abs(Double(reading.cents) - 1200 * log2(440.0 / 442)) < 0.5)
        // 442 Hz is exactly A4.
        let inTune = Self.reading(&analyzer, TestSignals.sine(frequencyHz: 442, sampleRateHz: 48_000, seconds: 0.4))
        #expect(abs(inTune.cents) < 0.5 && inTune.noteName == "A4")
    }

    @Test(arguments: sampleRates)
    func noiseSilenceAndDrumsGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let signals: [(String, [Float])] = [
            ("white noise", TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 3, amplitude: 0.5)),
            ("pink noise", TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 3)),
            ("silence", TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 1)),
            ("drum hits", TestSignals.drumHits(sampleRateHz: sampleRateHz, seconds: 3, intervalSeconds: 0.5)),
        ]
        for (name, signal) in signals {
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: signal)
            let voiced = frames.filter { $0.pitch.hasNote }.count
            #expect(voiced == 0, "\(name) at \(sampleRateHz) Hz: \(voiced) of \(frames.count) frames had a note")
        }
    }

    static func scaled(_ signal: [Float], peakDecibels: Double) -> [Float] {
        let peak = signal.map { abs($0) }.max() ?? 0
        let gain = Float(pow(10, peakDecibels / 20)) / max(peak, .leastNonzeroMagnitude)
        return signal.map { $0 * gain }
    }

    /// 50 Hz mains hum: the fundamental and its first harmonics, steady.
    static func hum(sampleRateHz: Double, seconds: Double, peakDecibels: Double) -> [Float] {
        scaled(TestSignals.harmonicTone(fundamentalHz: 50, harmonicAmplitudes: [0.5, 0.3, 0.2, 0.1], sampleRateHz: sampleRateHz, seconds: seconds),
               peakDecibels: peakDecibels)
    }

    /// The gate is relative to the input's own noise floor: a note 20 dB or more above it is
    /// read at any level — after silence, or over a quiet hiss — to a cent.
    @Test(arguments: sampleRates)
    func quietNotesAreNotesAtAnyLevel(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let frequencyHz = TestSignals.frequencyHz(midiNote: 57)
        let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: [0.3, 0.2, 0.1], sampleRateHz: sampleRateHz, seconds: 0.6)
        for peakDecibels in [-40.0, -60, -75] {
            let floorDecibels = peakDecibels - 25
            let hiss = TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 1.1, amplitude: pow(10, floorDecibels / 20))
            let note = Self.scaled(tone, peakDecibels: peakDecibels)
            for (name, lead) in [("after silence", TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 0.5)), ("over hiss", Array(hiss.prefix(Int(0.5 * sampleRateHz))))] {
                var signal = lead + note
                if name == "over hiss" { for index in signal.indices { signal[index] += hiss[index] } }
                let reading = Self.reading(&analyzer, signal)
                #expect(reading.noteNumber == 57, "\(name), peak \(peakDecibels) dBFS at \(sampleRateHz) Hz: \(reading.noteNumber)")
                #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 1, "\(name), peak \(peakDecibels) dBFS: \(reading.frequencyHz) Hz")
            }
        }
    }

    /// No note on each no-note class at any level: silence, hiss (white and pink, quiet and
    /// loud), mains hum present from the start (it is the input's floor) and drums.
    @Test(arguments: sampleRates)
    func noNoteOnSilenceHissHumOrDrumsAtAnyLevel(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        var signals: [(String, [Float])] = [("digital silence", TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 2))]
        for decibels in [-90.0, -60, -30, -10] {
            signals.append(("white noise at \(decibels) dBFS", TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 2, amplitude: pow(10, decibels / 20))))
            signals.append(("pink noise at \(decibels) dBFS", Self.scaled(TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 2), peakDecibels: decibels)))
            signals.append(("drums at \(decibels) dBFS", Self.scaled(TestSignals.drumHits(sampleRateHz: sampleRateHz, seconds: 2, intervalSeconds: 0.5), peakDecibels: decibels)))
        }
        for decibels in [-90.0, -75, -62] {
            signals.append(("50 Hz hum at \(decibels) dBFS", Self.hum(sampleRateHz: sampleRateHz, seconds: 2, peakDecibels: decibels)))
        }
        for (name, signal) in signals {
            analyzer.reset()
            let voiced = OfflineDriver.frames(&analyzer, signal: signal).filter { $0.pitch.hasNote }.count
            #expect(voiced == 0, "\(name) at \(sampleRateHz) Hz: \(voiced) frames had a note")
        }
    }

    /// A steady tone is not its own noise floor: a reference tone, a drone or a held note is
    /// read for minutes at any level, after silence or over hiss, low or high, near a mains
    /// frequency or not (110 Hz is no multiple of 50 or 60). The floor rises by 0.5 dB/s, so
    /// 150 s is long enough to reach any of these tones had they been taken for the floor
    /// (before, each lost its note after 10–95 s).
    @Test func aSteadyToneIsReadTheWholeWayThrough() throws {
        let sampleRateHz = 48_000.0, seconds = 150.0
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let lead = TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 0.5)
        let e1 = TestSignals.frequencyHz(midiNote: 28)
        let tones: [(name: String, note: Int32, signal: [Float])] = [
            ("110 Hz sine at −10 dBFS after silence", 45,
             lead + TestSignals.sine(frequencyHz: 110, sampleRateHz: sampleRateHz, seconds: seconds, amplitude: pow(10, -10.0 / 20))),
            ("440 Hz sine at −40 dBFS", 69,
             TestSignals.sine(frequencyHz: 440, sampleRateHz: sampleRateHz, seconds: seconds, amplitude: pow(10, -40.0 / 20))),
            ("1760 Hz sine at −70 dBFS after silence", 93,
             lead + TestSignals.sine(frequencyHz: 1760, sampleRateHz: sampleRateHz, seconds: seconds, amplitude: pow(10, -70.0 / 20))),
            ("E1 drone with harmonics at −20 dBFS after silence", 28,
             lead + Self.scaled(TestSignals.harmonicTone(fundamentalHz: e1, harmonicAmplitudes: [0.3, 0.3, 0.2, 0.15, 0.1], sampleRateHz: sampleRateHz, seconds: seconds),
                         peakDecibels: -20)),
            ("440 Hz sine at −30 dBFS over hiss at −65 dBFS", 69,
             zip(TestSignals.sine(frequencyHz: 440, sampleRateHz: sampleRateHz, seconds: seconds, amplitude: pow(10, -30.0 / 20)),
                 TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: seconds, amplitude: pow(10, -65.0 / 20))).map { $0 + $1 }),
        ]
        for tone in tones {
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: tone.signal).map(\.pitch)
            // From 1 s on (after the lead and the lock), every frame.
            let checked = readings.dropFirst(Int(AnalysisConfiguration().outputRateHz))
            let missed = checked.filter { $0.noteNumber != tone.note }
            let firstMissSeconds = checked.firstIndex { $0.noteNumber != tone.note }.map { Double($0) / AnalysisConfiguration().outputRateHz }
            #expect(missed.count == 0, "\(tone.name): \(missed.count) of \(checked.count) frames without MIDI \(tone.note), the first at \(firstMissSeconds ?? 0) s")
        }
    }

    /// Mains hum is no note at any level: 50 and 60 Hz hum (the grid 0.15 Hz off) and a
    /// full-wave rectifier's buzz (even harmonics only: it repeats at 100 or 120 Hz), present
    /// from the start; a note played over the hum is read, and nothing once it stops.
    @Test(arguments: sampleRates)
    func mainsHumIsNoNoteAtAnyLevel(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let seconds = 4.0
        for mainsHz in [50.15, 59.85] {
            let humShapes: [(String, [Double])] = [("hum", [0.5, 0.3, 0.2, 0.1]), ("full-wave buzz", [0, 0.5, 0, 0.3, 0, 0.15])]
            for (shape, amplitudes) in humShapes {
                let hum = TestSignals.harmonicTone(fundamentalHz: mainsHz, harmonicAmplitudes: amplitudes, sampleRateHz: sampleRateHz, seconds: seconds)
                for decibels in [-60.0, -40, -20] {
                    analyzer.reset()
                    let voiced = OfflineDriver.frames(&analyzer, signal: Self.scaled(hum, peakDecibels: decibels)).filter { $0.pitch.hasNote }.count
                    #expect(voiced == 0, "\(mainsHz) Hz \(shape) at \(decibels) dBFS, \(sampleRateHz) Hz: \(voiced) frames had a note")
                }
            }
        }
        // A3 for 1 s, 20 dB over a 50 Hz hum at −40 dBFS, then the hum alone.
        let hum = Self.hum(sampleRateHz: sampleRateHz, seconds: seconds, peakDecibels: -40)
        let note = TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: 57), harmonicAmplitudes: [0.3, 0.2, 0.1],
                                            sampleRateHz: sampleRateHz, seconds: 1)
        var signal = hum
        let start = Int(1.5 * sampleRateHz)
        for (index, value) in Self.scaled(note, peakDecibels: -20).enumerated() { signal[start + index] += value }
        analyzer.reset()
        let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
        let rate = AnalysisConfiguration().outputRateHz
        #expect(readings[Int(2.2 * rate)].noteNumber == 57, "A3 over hum at \(sampleRateHz) Hz: \(readings[Int(2.2 * rate)].noteNumber)")
        let afterwards = readings[Int(3 * rate)...].filter(\.hasNote).count
        #expect(afterwards == 0, "hum after the note at \(sampleRateHz) Hz: \(afterwards) frames had a note")
    }

    /// `--gate-db`: a fixed gate in place of the floor-relative one.
    @Test func aFixedGateSilencesQuieterNotes() throws {
        var configuration = AnalysisConfiguration()
        configuration.pitch.silenceGateDecibels = -60
        configuration.pitch.noiseFloorGate = false
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: 48_000)
        let tone = TestSignals.sine(frequencyHz: 220, sampleRateHz: 48_000, seconds: 0.5)
        #expect(!Self.reading(&analyzer, Self.scaled(tone, peakDecibels: -70)).hasNote)
        #expect(Self.reading(&analyzer, Self.scaled(tone, peakDecibels: -50)).noteNumber == 57)
    }

    /// The pitch range is the user's: the correlation's lags are whole, the shortest rounded
    /// down, so they reach a little beyond the range's top (to 2285.7 Hz for 2200 Hz at
    /// 48 kHz; a crash cymbal's ring at 2250 Hz was read as C♯7). A tone there is no note; the
    /// notes just inside the range are read.
    @Test(arguments: sampleRates)
    func tonesBeyondThePitchRangesTopAreNoNote(sampleRateHz: Double) throws {
        var configuration = AnalysisConfiguration()
        configuration.pitch.maximumFrequencyHz = 2_200
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        let reachedHz = sampleRateHz / (sampleRateHz / 2_200).rounded(.down)
        for share in [0.25, 0.5, 0.9] {
            let frequencyHz = 2_200 + share * (reachedHz - 2_200)
            analyzer.reset()
            let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: [0.5, 0.2], sampleRateHz: sampleRateHz, seconds: 1)
            let voiced = OfflineDriver.frames(&analyzer, signal: tone).filter { $0.pitch.hasNote }.count
            #expect(voiced == 0, "\(frequencyHz) Hz over the 2200 Hz top at \(sampleRateHz) Hz: \(voiced) frames had a note")
        }
        for frequencyHz in [2_150.0, 2_190] {
            let reading = Self.reading(&analyzer, TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: [0.5, 0.2],
                                                                           sampleRateHz: sampleRateHz, seconds: 1))
            #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 5, "\(frequencyHz) Hz at \(sampleRateHz) Hz: \(reading.frequencyHz) Hz")
        }
    }

    /// A piano's top notes decay faster than the percussive-decay gate's 60 dB/s; above 400 Hz
    /// the allowed rate grows with the pitch, below it a decay that fast is still a drum.
    @Test(arguments: sampleRates)
    func fastDecayingHighNotesKeepTheirPitch(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        // τ = 80 ms: the energy falls by 20·log10(e)/τ ≈ 109 dB/s.
        func decaying(_ frequencyHz: Double) -> [Float] {
            (0..<Int(0.35 * sampleRateHz)).map { index in
                let seconds = Double(index) / sampleRateHz
                return Float(0.5 * exp(-seconds / 0.08) * sin(2 * .pi * frequencyHz * seconds))
            }
        }
        for note in [88, 93, 96] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let reading = Self.reading(&analyzer, decaying(frequencyHz))
            #expect(reading.noteNumber == Int32(note), "MIDI \(note) at \(sampleRateHz) Hz: got \(reading.noteNumber)")
            #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 1, "MIDI \(note): \(reading.frequencyHz) Hz")
        }
        let low = Self.reading(&analyzer, decaying(TestSignals.frequencyHz(midiNote: 57)))
        #expect(!low.hasNote, "A3 decaying at 109 dB/s at \(sampleRateHz) Hz read \(low.frequencyHz) Hz")
    }

    /// A plucked note whose bright attack dies fast: a pick's 4 ms of noise, upper partials
    /// 6–12 dB over the fundamental decaying at 100 dB/s, the fundamental at 12 dB/s. For
    /// ~0.1 s after the pluck the window's energy falls faster than the percussive-decay gate's
    /// 60 dB/s while the fundamental holds (FluidR3's nylon guitar lost 100–170 ms after each
    /// pluck this way, and cellos and voices the frames of legato steps, where the last note
    /// fades under the new one: docs/accuracy.md, Pitch, finding 25). A note being read whose
    /// fundamental decays slower than `pitch.percussive_fundamental_decay_db_per_second` is
    /// still read; `percussiveFundamentalDecayDecibelsPerSecond` 0 is the gate before (the window's
    /// energy alone), which loses frames of every note here.
    @Test(arguments: sampleRates)
    func aPluckedNoteWhoseBrightAttackDiesFastIsReadThroughIt(sampleRateHz: Double) throws {
        let hopsPerSecond = AnalysisConfiguration().outputRateHz
        func missedFrames(frequencyHz: Double, fundamentalDecayDecibelsPerSecond: Double) throws -> (missed: Int, scored: Int) {
            var configuration = AnalysisConfiguration()
            configuration.pitch.percussiveFundamentalDecayDecibelsPerSecond = fundamentalDecayDecibelsPerSecond
            var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
            var generator = SeededGenerator(seed: 5)
            let silence = [Float](repeating: 0, count: Int(0.25 * sampleRateHz))
            let upperPartials = [0.5, 0.45, 0.35, 0.3, 0.25]
            let note = (0..<Int(0.6 * sampleRateHz)).map { index -> Float in
                let seconds = Double(index) / sampleRateHz
                var value = 0.2 * exp(-seconds / 0.004) * Double.random(in: -1...1, using: &generator)
                value += 0.2 * pow(10, -12 * seconds / 20) * sin(2 * .pi * frequencyHz * seconds)
                for (offset, amplitude) in upperPartials.enumerated() {
                    value += amplitude * pow(10, -100 * seconds / 20) * sin(2 * .pi * frequencyHz * Double(offset + 2) * seconds)
                }
                return Float(0.5 * value)
            }
            let readings = OfflineDriver.frames(&analyzer, signal: silence + note).map(\.pitch)
            // From 60 ms after the pluck (the corpus's scoring starts there) to its end.
            let scored = readings[Int(0.31 * hopsPerSecond)..<Int(0.83 * hopsPerSecond)]
            return (scored.filter { !$0.hasNote || abs(Self.centsError($0, expectedHz: frequencyHz)) > 50 }.count, scored.count)
        }
        var missedBefore = 0
        for frequencyHz in [110.0, 147, 196, 262, 330] {
            let (missed, scored) = try missedFrames(frequencyHz: frequencyHz, fundamentalDecayDecibelsPerSecond: 60)
            #expect(missed == 0, "\(frequencyHz) Hz at \(sampleRateHz) Hz: \(missed) of \(scored) frames without the note")
            missedBefore += try missedFrames(frequencyHz: frequencyHz, fundamentalDecayDecibelsPerSecond: 0).missed
        }
        // The class exists: the window's energy alone refuses some of these frames.
        #expect(missedBefore > 0, "at \(sampleRateHz) Hz the window's energy alone refused no frame")
    }

    /// Snare hits: a 220 Hz body decaying at 290 dB/s (τ 30 ms) under a 12 ms burst of noise, every
    /// 0.5 s. The body repeats well enough for a note while the hit is still in the window, and
    /// the window's energy as a whole has not fallen yet (the look-back of the percussive-decay
    /// gate sees the hit in both windows); its newest half has (`pitch.hit_decay_db_per_second`).
    /// FluidR3's snare read 218–221 Hz for 1–2 frames at each hit this way (docs/accuracy.md).
    @Test(arguments: sampleRates)
    func snareHitsGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for seed: UInt64 in [1, 2, 3] {
            let signal = Self.struck(everySeconds: 0.5, times: 6, sampleRateHz: sampleRateHz, seed: seed) { seconds, generator in
                let noise = Double.random(in: -1...1, using: &generator)
                return 0.6 * exp(-seconds / 0.03) * sin(2 * .pi * 220 * seconds) + exp(-seconds / 0.012) * noise
            }
            analyzer.reset()
            let voiced = OfflineDriver.frames(&analyzer, signal: signal).filter { $0.pitch.hasNote }.count
            // At most one hit's attack (a window half silence, half hit reads like a note's start).
            #expect(voiced <= 2, "snare hits (seed \(seed)) at \(sampleRateHz) Hz: \(voiced) frames had a note")
        }
    }

    /// Snare strokes in eighths at 120 BPM (every 0.25 s): a 240 Hz body dying with a 30 ms time
    /// constant under its wires' noise, as loud at the stroke and dying twice as fast. While a
    /// stroke dies in the window, the window repeats at the body's period with r 0.55–0.8 and its
    /// newest half holds more than 6 dB less than its oldest: a stroke dying
    /// (`pitch.stroke_maximum_correlation`, `pitch.stroke_energy_fall_db`), no note: 0–3 frames
    /// of each seed's 2 s read, a stroke's first hops. Without that term
    /// (`strokeMaximumCorrelation = 0`, as before finding 19) 0–13 (44.1 kHz 8, 13, 7; 48 kHz 6,
    /// 0, 4; 96 kHz 0, 5, 9).
    @Test(arguments: sampleRates)
    func snareStrokesDyingInTheWindowGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for seed: UInt64 in [1, 2, 3] {
            let silence = [Float](repeating: 0, count: Int(0.5 * sampleRateHz))
            let strokes = Self.struck(everySeconds: 0.25, times: 8, sampleRateHz: sampleRateHz, seed: seed) { seconds, generator in
                let wires = 0.6 * exp(-seconds / 0.015) * Double.random(in: -1...1, using: &generator)
                return 0.5 * (0.5 * exp(-seconds / 0.03) * sin(2 * .pi * 240 * seconds) + wires)
            }
            analyzer.reset()
            let voiced = OfflineDriver.frames(&analyzer, signal: silence + strokes + silence).filter { $0.pitch.hasNote }.count
            #expect(voiced <= 3, "snare strokes (seed \(seed)) at \(sampleRateHz) Hz: \(voiced) frames had a note")
        }
    }

    /// Snare rolls: strokes in sixteenths and thirty-seconds at 120 BPM (every 0.125 and
    /// 0.0625 s) growing louder over 2 s, each a body at 216 or 240 Hz dying with a 30 ms time
    /// constant under its wires' noise, as loud at the stroke and dying twice as fast (the strokes
    /// of `snareStrokesDyingInTheWindowGiveNoNote`). In a roll the next stroke arrives as the last
    /// dies, so the window's halves hold alike and the stroke term's fall alone does not see it:
    /// FluidR3's rolls read 216–242 Hz 2–4 hops after each stroke, on and on (docs/accuracy.md,
    /// Pitch, finding 23). The window repeats at the body's period with r 0.5–0.7, its newest
    /// 14.7 ms not at all, and in blocks of whole periods its energy falls from the oldest block
    /// and spreads more than 10 dB: a stroke dying as the next arrives
    /// (`pitch.stroke_arrival_fall_db`, `pitch.stroke_arrival_spread_db`), no note. With the term
    /// the four rolls read 12, 7 and 4 frames in all at 44.1, 48 and 96 kHz (a roll's first
    /// strokes); without it (`strokeArrivalSpreadDecibels = 0`) 125, 120 and 112, the 240 Hz
    /// body in thirty-seconds 106–109 of them.
    @Test(arguments: sampleRates)
    func snareRollsGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        var voiced = 0
        for (bodyHz, everySeconds, seed) in [(240.0, 0.125, UInt64(1)), (216, 0.125, 2), (240, 0.0625, 3), (216, 0.0625, 4)] {
            var generator = SeededGenerator(seed: seed)
            let silence = [Float](repeating: 0, count: Int(0.5 * sampleRateHz))
            let interval = Int(everySeconds * sampleRateHz), strokes = Int(2 / everySeconds)
            let roll = (0..<(strokes * interval)).map { index -> Float in
                let seconds = Double(index % interval) / sampleRateHz, stroke = Double(index / interval)
                let wires = 0.6 * exp(-seconds / 0.015) * Double.random(in: -1...1, using: &generator)
                let gain = 0.4 + 0.6 * stroke / Double(strokes)
                return Float(gain * 0.5 * (0.5 * exp(-seconds / 0.03) * sin(2 * .pi * bodyHz * seconds) + wires))
            }
            analyzer.reset()
            voiced += OfflineDriver.frames(&analyzer, signal: silence + roll + silence).filter { $0.pitch.hasNote }.count
        }
        #expect(voiced <= 16, "four snare rolls at \(sampleRateHz) Hz: \(voiced) frames had a note")
    }

    /// The price of the stroke term, measured at the snare's pitch: a note plucked at 220 and
    /// 240 Hz after a pick's noise as loud and as short-lived as the snare's wires above (0.6,
    /// 15 ms) is read from its first 100 ms on and to a cent at its end. Its partials repeat
    /// (r above 0.8) before the pick has died in the window.
    @Test(arguments: sampleRates)
    func aNotePluckedAtTheSnaresPitchAfterANoisyPickIsRead(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopsPerSecond = AnalysisConfiguration().outputRateHz
        for frequencyHz in [220.0, 240.0] {
            for seed: UInt64 in [1, 2, 3] {
                var generator = SeededGenerator(seed: seed)
                let silence = [Float](repeating: 0, count: Int(0.25 * sampleRateHz))
                let note = (0..<Int(0.4 * sampleRateHz)).map { index -> Float in
                    let seconds = Double(index) / sampleRateHz
                    var value = 0.6 * exp(-seconds / 0.015) * Double.random(in: -1...1, using: &generator)
                    for (harmonic, amplitude) in [0.5, 0.3, 0.2, 0.12, 0.08].enumerated() {
                        let number = Double(harmonic + 1)
                        value += amplitude * exp(-seconds * number / 0.6) * sin(2 * .pi * frequencyHz * number * seconds)
                    }
                    return Float(0.5 * value)
                }
                analyzer.reset()
                let readings = OfflineDriver.frames(&analyzer, signal: silence + note).map(\.pitch)
                let onsetHops = Double(silence.count) / sampleRateHz * hopsPerSecond
                let first = readings.firstIndex { $0.hasNote && abs(Self.centsError($0, expectedHz: frequencyHz)) < 50 }
                    .map { (Double($0 + 1) - onsetHops) / hopsPerSecond }
                #expect(first.map { $0 <= 0.1 } == true, "\(frequencyHz) Hz plucked (seed \(seed)) at \(sampleRateHz) Hz: first read after \(first ?? .infinity) s")
                #expect(abs(Self.centsError(readings.last!, expectedHz: frequencyHz)) < 1,
                        "\(frequencyHz) Hz plucked (seed \(seed)) at \(sampleRateHz) Hz: \(readings.last!.frequencyHz) Hz at its end")
            }
        }
    }

    /// A plucked string is no hit: a harmonic tone whose upper partials die away faster than its
    /// fundamental, after a 3 ms pick transient as loud as the tone, is read to a cent and from its
    /// first 100 ms on, from E2 to E4.
    @Test(arguments: sampleRates)
    func pluckedNotesAfterAPickTransientAreRead(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        var generator = SeededGenerator(seed: 7)
        let hopsPerSecond = AnalysisConfiguration().outputRateHz
        for note in [40, 45, 50, 55, 59, 64] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let amplitudes = [0.5, 0.3, 0.2, 0.12, 0.08]
            let signal = (0..<Int(0.4 * sampleRateHz)).map { index -> Float in
                let seconds = Double(index) / sampleRateHz
                var value = 0.5 * exp(-seconds / 0.003) * Double.random(in: -1...1, using: &generator)
                for (harmonic, amplitude) in amplitudes.enumerated() {
                    let number = Double(harmonic + 1)
                    value += amplitude * exp(-seconds * number / 0.6) * sin(2 * .pi * frequencyHz * number * seconds)
                }
                return Float(value)
            }
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
            let first = readings.firstIndex { $0.noteNumber == Int32(note) }.map { Double($0 + 1) / hopsPerSecond }
            #expect(first.map { $0 <= 0.1 } == true, "plucked MIDI \(note) at \(sampleRateHz) Hz: first read after \(first ?? .infinity) s")
            #expect(abs(Self.centsError(readings.last!, expectedHz: frequencyHz)) < 1, "plucked MIDI \(note) at \(sampleRateHz) Hz: \(readings.last!.frequencyHz) Hz")
        }
    }

    /// Tom strokes, every 0.5 s: a membrane's body gliding down as it rings — from 300 cents above
    /// 118 Hz with a time constant of 100 ms (40–60 cents per 80 ms by the time it is read, as
    /// FluidR3's toms, 141 → 119 Hz), from 300 cents above 165 Hz in 60 ms, and from 250 cents
    /// above 88 Hz in 100 ms — decaying at 43 dB/s like a plucked string, with the inharmonic
    /// modes of a struck membrane (1.59, 2.14, 2.30, 2.65 × f0) 20 dB down and a stick's click.
    /// They repeat at their period as well as a note does; what tells them from one is their
    /// glide: falling fast from the stroke on (`pitch.falling_pitch_cents_per_second`). The glide
    /// is not followed down, and from 150 ms after each stroke on nothing is read, the body's
    /// slower tail included (with a fall limit in cents alone, 2–68 frames of those were read:
    /// the first frames before the fall reached 80 cents, and the 118 Hz tom's tail after its
    /// glide passed 120 Hz, where the hum gate broke it). The stroke's first 2–4 frames, while
    /// the window still fills with the stroke and its energy rises, still read as a note (a
    /// known issue: docs/accuracy.md, Pitch, finding 16); for the 118 Hz tom they do not follow
    /// its glide down by more than a semitone.
    @Test(arguments: sampleRates)
    func tomStrokesGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        // Whether the attack's readings are checked against the glide: the faster and the lower
        // tom's first frames follow its start by up to 160 cents (the known issue below).
        for (restingHz, glideCents, glideSeconds, attackChecked) in [(118.0, 300.0, 0.1, true), (165, 300, 0.06, false), (88, 250, 0.1, false)] {
            // The body decaying with a 0.2 s time constant (43 dB/s), the other modes 20 dB under
            // it with 0.1 s (87 dB/s).
            let decibelsPerSecondPerRate = 20 * log10(M_E)
            let signal = Self.membraneStrokes(restingHz: restingHz, glideCents: glideCents, glideSeconds: glideSeconds,
                                              overtoneAmplitude: 0.08, bodyDecayDecibelsPerSecond: decibelsPerSecondPerRate / 0.2,
                                              overtoneDecayDecibelsPerSecond: decibelsPerSecondPerRate / 0.1,
                                              gain: 1, strokes: 6, intervalSeconds: 0.5, sampleRateHz: sampleRateHz, seed: 5)
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
            let hopsPerSecond = AnalysisConfiguration().outputRateHz, hopsPerStroke = Int(0.5 * hopsPerSecond)
            let tom = "\(Int(restingHz)) Hz tom at \(sampleRateHz) Hz"
            for stroke in 0..<6 {
                let start = stroke * hopsPerStroke, end = min(readings.count, start + hopsPerStroke)
                // While the body glides no reading follows it down by more than a semitone.
                let gliding = readings[start..<min(end, start + Int(0.25 * hopsPerSecond))]
                if attackChecked, let first = gliding.first(where: \.hasNote) {
                    let lowest = gliding.filter(\.hasNote).map(\.frequencyHz).min()!
                    let fallCents = 1200 * log2(Double(first.frequencyHz / lowest))
                    #expect(fallCents <= 100, "\(tom), stroke \(stroke): followed its glide down \(fallCents) cents")
                }
                let late = readings[min(end, start + Int(0.15 * hopsPerSecond))..<end].filter(\.hasNote).count
                #expect(late == 0, "\(tom), stroke \(stroke): \(late) frames from 150 ms after the stroke had a note")
            }
            let voiced = readings.filter(\.hasNote).count
            withKnownIssue("a tom stroke's first frames, while its energy still rises, read as a note") {
                #expect(voiced == 0, "\(tom): \(voiced) frames had a note")
            }
        }
    }

    /// A sound struck every `everySeconds`, `times` times: `sample(seconds since the stroke,
    /// generator)` at each sample, the generator seeded by `seed` (or passed on).
    static func struck(everySeconds: Double, times: Int, sampleRateHz: Double, seed: UInt64,
                       _ sample: (Double, inout SeededGenerator) -> Double) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        return struck(everySeconds: everySeconds, times: times, sampleRateHz: sampleRateHz, generator: &generator, sample)
    }

    static func struck(everySeconds: Double, times: Int, sampleRateHz: Double, generator: inout SeededGenerator,
                       _ sample: (Double, inout SeededGenerator) -> Double) -> [Float] {
        let interval = Int(everySeconds * sampleRateHz)
        return (0..<(times * interval)).map { index in Float(sample(Double(index % interval) / sampleRateHz, &generator)) }
    }

    /// A struck membrane: a body at `restingHz` gliding down from `glideCents` above it with time
    /// constant `glideSeconds` and wobbling ±`wobbleCents` at 7 Hz, its other modes (1.59, 2.14,
    /// 2.30, 2.65 × f0, each at `overtoneAmplitude` against the body's 0.8) and a stick's click,
    /// struck every `intervalSeconds`; the body decays at `bodyDecayDecibelsPerSecond`, the other
    /// modes at `overtoneDecayDecibelsPerSecond`; the whole scaled by `gain`.
    static func membraneStrokes(restingHz: Double, glideCents: Double, glideSeconds: Double, wobbleCents: Double = 0,
                                overtoneAmplitude: Double, bodyDecayDecibelsPerSecond: Double, overtoneDecayDecibelsPerSecond: Double,
                                ringingNoiseAmplitude: Double = 0,
                                gain: Double, strokes: Int, intervalSeconds: Double, sampleRateHz: Double, seed: UInt64) -> [Float] {
        var generator = SeededGenerator(seed: seed)
        let interval = Int(intervalSeconds * sampleRateHz)
        var phases = [Double](repeating: 0, count: 5)
        let modes = [1, 1.59, 2.14, 2.30, 2.65]
        return (0..<(strokes * interval)).map { index -> Float in
            let seconds = Double(index % interval) / sampleRateHz
            if index % interval == 0 { phases = phases.map { _ in 0 } }
            let cents = glideCents * exp(-seconds / glideSeconds) + wobbleCents * sin(2 * .pi * 7 * seconds)
            let fundamentalHz = restingHz * pow(2, cents / 1200)
            var value = 0.4 * exp(-seconds / 0.005) * Double.random(in: -1...1, using: &generator)
            if ringingNoiseAmplitude > 0 {
                value += ringingNoiseAmplitude * pow(10, -bodyDecayDecibelsPerSecond * seconds / 20) * Double.random(in: -1...1, using: &generator)
            }
            for mode in modes.indices {
                phases[mode] += 2 * .pi * fundamentalHz * modes[mode] / sampleRateHz
                let (amplitude, decay) = mode == 0 ? (0.8, bodyDecayDecibelsPerSecond) : (overtoneAmplitude, overtoneDecayDecibelsPerSecond)
                value += amplitude * pow(10, -decay * seconds / 20) * sin(phases[mode])
            }
            return Float(gain * value)
        }
    }

    /// Frames with a note in `readings` of `strokes` strokes `intervalSeconds` apart, each counted
    /// over `secondsAfterStroke` (up to the next stroke); by default from 100 ms after its stroke:
    /// a tom ringing on, after its stroke's first hops.
    static func framesWithANote(_ readings: [PitchReading], strokes: Int, intervalSeconds: Double,
                                secondsAfterStroke: Range<Double> = 0.1..<Double.infinity) -> Int {
        let hopsPerSecond = AnalysisConfiguration().outputRateHz, hopsPerStroke = Int(intervalSeconds * hopsPerSecond)
        let firstHop = Int(secondsAfterStroke.lowerBound * hopsPerSecond)
        let hops = secondsAfterStroke.upperBound.isFinite ? Int(secondsAfterStroke.upperBound * hopsPerSecond) : hopsPerStroke
        return (0..<strokes).reduce(0) { count, stroke in
            let start = stroke * hopsPerStroke, end = min(readings.count, start + min(hopsPerStroke, hops))
            return count + readings[min(end, start + firstHop)..<end].filter(\.hasNote).count
        }
    }

    /// `framesWithANote` summed over `toms` (each 4 strokes 0.6 s apart), read with the default
    /// configuration, or with one setting changed.
    static func framesWithANote(_ toms: [[Float]], sampleRateHz: Double, secondsAfterStroke: Range<Double> = 0.1..<Double.infinity,
                                setting: WritableKeyPath<AnalysisConfiguration, Double>? = nil, to value: Double = 0) throws -> Int {
        var configuration = AnalysisConfiguration()
        if let setting { configuration[keyPath: setting] = value }
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        var count = 0
        for signal in toms {
            analyzer.reset()
            count += framesWithANote(OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch), strokes: 4, intervalSeconds: 0.6,
                                     secondsAfterStroke: secondsAfterStroke)
        }
        return count
    }

    /// Toms ringing on, as the held-out kits' (MuseScore's 126 Hz tom read 3 frames a stroke
    /// 190–260 ms after it; TimGM6mb's 175 and 164 Hz toms 75–125 ms after it): bodies gliding
    /// down slowly (200–250 cents with a 0.3 s time constant: under 800 cents/s once read), one
    /// wobbling ±20 cents as well, decaying at 25–35 dB/s, with a membrane's inharmonic modes
    /// ringing as long. Neither the falling-pitch term (too slow) nor the decay gate (slower than
    /// 60 dB/s) refuses them; the membrane term does (`pitch.membrane_fundamental_share`,
    /// `pitch.membrane_aperiodic_share`, `pitch.membrane_rise_db`): a near-pure,
    /// decaying body whose other energy does not repeat at its period. From 100 ms after each
    /// stroke on nothing is read. Without the term (`membraneFundamentalShare = 0`, as before
    /// finding 21) 120, 104, 120 and 16 of those 120 frames read (48 kHz). Not covered: an 87 Hz
    /// body gliding 150 cents read 16 frames either way, a 116 Hz one wobbling ±10 cents 84 → 32
    /// (docs/accuracy.md, Pitch, finding 21).
    @Test(arguments: sampleRates)
    func ringingTomsGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for (restingHz, glideCents, wobbleCents, decay) in [(126.0, 250.0, 0.0, 25.0), (126, 250, 20, 25), (175, 200, 0, 35), (164, 250, 0, 35)] {
            // The other modes 14 dB under the body, all decaying together.
            let signal = Self.membraneStrokes(restingHz: restingHz, glideCents: glideCents, glideSeconds: 0.3, wobbleCents: wobbleCents,
                                              overtoneAmplitude: 0.16, bodyDecayDecibelsPerSecond: decay, overtoneDecayDecibelsPerSecond: decay,
                                              gain: 0.5, strokes: 4, intervalSeconds: 0.6, sampleRateHz: sampleRateHz, seed: 11)
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
            let late = Self.framesWithANote(readings, strokes: 4, intervalSeconds: 0.6)
            #expect(late == 0, "\(restingHz) Hz tom ringing at \(sampleRateHz) Hz: \(late) frames from 100 ms after its strokes had a note")
        }
    }

    /// Toms whose body rings with a noise-like tail a quarter of its energy (the room, the
    /// snare's wires, the shell), decaying with it: the body holds ~0.75 of the window's energy as
    /// the membrane term reads it and the rest does not repeat (the tuning kits' toms that a share
    /// of 0.8 let through: share 0.70–0.80, r 0.65–0.86, the window's energy falling 0.05–2.9 dB
    /// per 50 ms). Drum fills with two more seeds per kit found them (docs/accuracy.md, Pitch,
    /// finding 39); a share of 0.7 refuses them with every note condition of the tuning part
    /// within 0.2 points. From 100 ms after each stroke none of the three toms' 4 strokes' 360
    /// frames has a note (at most 8 asserted); with the share at 0.8, 104–219 do at 44.1, 48 and
    /// 96 kHz (at least 40 asserted), so the class exists.
    @Test(arguments: sampleRates)
    func tomsRingingWithANoisyTailGiveNoNote(sampleRateHz: Double) throws {
        let toms = Self.tomsRingingWithANoisyTail(sampleRateHz: sampleRateHz)
        let late = try Self.framesWithANote(toms, sampleRateHz: sampleRateHz)
        let before = try Self.framesWithANote(toms, sampleRateHz: sampleRateHz, setting: \.pitch.membraneFundamentalShare, to: 0.8)
        #expect(late <= 8, "toms at \(sampleRateHz) Hz: \(late) frames from 100 ms after their strokes had a note")
        #expect(before >= 40, "toms at \(sampleRateHz) Hz with the share at 0.8: only \(before) late frames had a note")
    }

    /// The same toms in their first 100 ms, while the window still fills with the stroke: the
    /// window's energy still rises (the tuning kits' toms that read there: a rise of 1.2 dB over
    /// ~50 ms, median; fundamental share 0.84, r 0.81), which the membrane term once took for a
    /// new note and let read. Its score now takes off the rise, 20 dB to a unit
    /// (`pitch.membrane_rise_db`), so a tom's small rise leaves it a membrane while a singer's
    /// legato step (2–9 dB) stays a note (docs/accuracy.md, Pitch, finding 41). Of the three
    /// toms' 72 early frames 12–16 have a note at 44.1, 48 and 96 kHz (at most 20 asserted: the
    /// stroke's own hops, rising faster); with any rise vetoing (`membraneRiseDecibels = 0`, the
    /// condition before) 37–38 (at least 30 asserted), so the class exists.
    @Test(arguments: sampleRates)
    func tomsRingingWithANoisyTailReadLittleWhileTheirStrokeFillsTheWindow(sampleRateHz: Double) throws {
        let toms = Self.tomsRingingWithANoisyTail(sampleRateHz: sampleRateHz)
        let early = try Self.framesWithANote(toms, sampleRateHz: sampleRateHz, secondsAfterStroke: 0..<0.1)
        let before = try Self.framesWithANote(toms, sampleRateHz: sampleRateHz, secondsAfterStroke: 0..<0.1,
                                              setting: \.pitch.membraneRiseDecibels, to: 0)
        #expect(early <= 20, "toms at \(sampleRateHz) Hz: \(early) frames within 100 ms of their strokes had a note")
        #expect(before >= 30, "toms at \(sampleRateHz) Hz with any rise vetoing: only \(before) early frames had a note")
    }

    /// Toms at 98, 126 and 164 Hz, 4 strokes 0.6 s apart, whose body (gliding 250 cents with a
    /// 0.3 s time constant, decaying at 30 dB/s) rings with a noise-like tail as loud as a
    /// quarter of its energy, decaying with it.
    static func tomsRingingWithANoisyTail(sampleRateHz: Double) -> [[Float]] {
        [98.0, 126, 164].map { restingHz in
            membraneStrokes(restingHz: restingHz, glideCents: 250, glideSeconds: 0.3, overtoneAmplitude: 0,
                            bodyDecayDecibelsPerSecond: 30, overtoneDecayDecibelsPerSecond: 30, ringingNoiseAmplitude: 0.52,
                            gain: 0.5, strokes: 4, intervalSeconds: 0.6, sampleRateHz: sampleRateHz, seed: 11)
        }
    }

    /// Toms whose stick noise and inharmonic modes die within ~100 ms (150 dB/s), leaving a
    /// near-pure body that decays at 30 dB/s and repeats at its period as well as a string
    /// (FluidR3's toms that still read: fundamental share 0.85–0.96, r 0.95–1.00): bodies at 90,
    /// 116, 150 and 175 Hz gliding down 200–300 cents with a 0.15–0.2 s time constant, one
    /// wobbling ±10 cents. What tells them from a bar or a plucked string of the same pitch is
    /// the glide (`pitch.membrane_glide_cents_per_second`): the membrane score adds the body's
    /// mean fall since its energy last rose to the aperiodic share. From 100 ms after each
    /// stroke no frame of the five toms' 4 strokes each has a note (at most 8 asserted); without
    /// the glide (`membraneGlideCentsPerSecond = 0`) 32 do at 44.1, 48 and 96 kHz, and the test
    /// asserts that at least 20 do (docs/accuracy.md, Pitch, finding 26). The first 100 ms,
    /// while the body falls fastest but the window still fills with the stroke, are the
    /// falling-pitch term's.
    @Test(arguments: sampleRates)
    func tomsWhoseModesDieFastGiveNoNoteWhileTheirBodyGlides(sampleRateHz: Double) throws {
        let toms = [(90.0, 300.0, 0.2, 0.0), (116, 200, 0.15, 10), (116, 300, 0.2, 0), (150, 250, 0.2, 0), (175, 200, 0.15, 0)].map {
            restingHz, glideCents, glideSeconds, wobbleCents in
            Self.membraneStrokes(restingHz: restingHz, glideCents: glideCents, glideSeconds: glideSeconds, wobbleCents: wobbleCents,
                                 overtoneAmplitude: 0.16, bodyDecayDecibelsPerSecond: 30, overtoneDecayDecibelsPerSecond: 150,
                                 gain: 0.5, strokes: 4, intervalSeconds: 0.6, sampleRateHz: sampleRateHz, seed: 11)
        }
        let late = try Self.framesWithANote(toms, sampleRateHz: sampleRateHz)
        #expect(late <= 8, "toms at \(sampleRateHz) Hz: \(late) frames from 100 ms after their strokes had a note")
        // The class exists: without the glide the membrane term reads these bodies as notes.
        let without = try Self.framesWithANote(toms, sampleRateHz: sampleRateHz, setting: \.pitch.membraneGlideCentsPerSecond, to: 0)
        #expect(without >= 20, "toms at \(sampleRateHz) Hz without the glide: only \(without) late frames had a note")
    }

    /// Toms whose body beats as it rings: a 164 Hz body gliding down 300 cents (a 0.08 or 0.12 s
    /// time constant), its modes dying at 150 dB/s, and from 250 ms after the stroke a swell of
    /// ±10 % at 6 Hz (two close modes beating). The glide is found (`pitch.falling_pitch_cents`),
    /// but each swell raises the window's energy, which starts the glide's memory again, and the
    /// tail, near-pure and no longer falling, repeats like a string: as FluidR3's toms that still
    /// read (docs/accuracy.md, Pitch, findings 41–43). Once the drum is found, what rings on is
    /// that drum until the next attack (`pitch.drum_ring_seconds`): from 100 ms after each of the
    /// 4 strokes no frame has a note (at most 4 asserted); without it (`drumRingSeconds = 0`) 40
    /// of each tom's 120 do at 44.1, 48 and 96 kHz (at least 30 asserted), so the class exists;
    /// with the falling-pitch term off 72–84 do (the glide is what finds these drums).
    @Test(arguments: sampleRates)
    func tomsBeatingAsTheyRingGiveNoNoteUntilTheNextStroke(sampleRateHz: Double) throws {
        let toms = [0.08, 0.12].map { glideSeconds in
            let strokes = Self.membraneStrokes(restingHz: 164, glideCents: 300, glideSeconds: glideSeconds, overtoneAmplitude: 0.16,
                                               bodyDecayDecibelsPerSecond: 15, overtoneDecayDecibelsPerSecond: 150,
                                               gain: 0.5, strokes: 4, intervalSeconds: 0.6, sampleRateHz: sampleRateHz, seed: 11)
            let interval = Int(0.6 * sampleRateHz)
            return strokes.indices.map { index in
                let seconds = Double(index % interval) / sampleRateHz
                return strokes[index] * Float(1 + (seconds > 0.25 ? 0.1 * sin(2 * .pi * 6 * (seconds - 0.25)) : 0))
            }
        }
        for (tom, glideSeconds) in zip(toms, [0.08, 0.12]) {
            let late = try Self.framesWithANote([tom], sampleRateHz: sampleRateHz)
            let without = try Self.framesWithANote([tom], sampleRateHz: sampleRateHz, setting: \.pitch.drumRingSeconds, to: 0)
            #expect(late <= 4, "tom gliding over \(glideSeconds) s at \(sampleRateHz) Hz: \(late) frames from 100 ms after its strokes had a note")
            #expect(without >= 30, "tom gliding over \(glideSeconds) s at \(sampleRateHz) Hz without the ring: only \(without) late frames had a note")
        }
    }

    /// A held note (110, 220 or 440 Hz, four harmonics) with a snare struck over it every 0.5 s
    /// (a 240 Hz body and its wires, 3 dB under the note's peak). Each stroke dying in the window is
    /// a drum found (`pitch.stroke_maximum_correlation`), and what rings on after a drum is that
    /// drum (`pitch.drum_ring_seconds`) — except the note read just before it, which the drum
    /// was struck over: from 0.5 s on at least 140 of the 210 frames read the note within 50
    /// cents (110 Hz 149–152, 220 Hz 154–175, 440 Hz 198–200 over 44.1, 48 and 96 kHz). Without that exception the
    /// 220 Hz note read 43 at 48 kHz. The stroke's attack pulls the 110 Hz note's readings up to a
    /// semitone sharp before the drum is found; taken as the note struck over, they made the
    /// note itself the drum's ring: 24, 128 and 108 frames, once the noise floors no longer hid
    /// it (docs/accuracy.md, pitch finding 49). Readings during an attack now never name it.
    @Test(arguments: sampleRates)
    func aHeldNoteGoesOnUnderSnareStrokes(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let snare = Self.struck(everySeconds: 0.5, times: 8, sampleRateHz: sampleRateHz, seed: 3) { seconds, generator in
            let noise = Double.random(in: -1...1, using: &generator)
            return 0.6 * exp(-seconds / 0.03) * sin(2 * .pi * 240 * seconds) + exp(-seconds / 0.015) * noise
        }
        for noteHz in [110.0, 220, 440] {
            let signal = snare.indices.map { index -> Float in
                let seconds = Double(index) / sampleRateHz
                let note = (1...4).reduce(0.0) { sum, k in sum + 0.3 / Double(k) * sin(2 * .pi * noteHz * Double(k) * seconds) }
                return Float(note) + 0.7 * snare[index]
            }
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
            let after = readings.dropFirst(Int(0.5 * AnalysisConfiguration().outputRateHz))
            let read = after.filter { $0.hasNote && abs(1200 * log2(Double($0.frequencyHz) / noteHz)) <= 50 }.count
            #expect(read >= 140, "\(noteHz) Hz under snare strokes at \(sampleRateHz) Hz: \(read) of \(after.count) frames read the note")
        }
    }

    /// Sung notes with a wide vibrato (5.5 Hz, ±40 cents) whose energy swells and falls with the
    /// pitch (a tremolo of ±0.5 dB in phase, as a voice's formants make it), near-pure (a
    /// fundamental with its 2nd and 3rd harmonics 14 and 26 dB down, breath noise 40 dB down),
    /// at 220–523 Hz. Each swing down after a swell looks like a tom's body gliding down as it
    /// decays (≥ 40 cents at ~900 cents/s while the energy falls), so the falling-pitch term and
    /// the membrane score's glide refused about half the frames. A drum's pitch only falls from
    /// its stroke on; a vibrato turns back up (`pitch.falling_pitch_rise_cents`): from 150 ms
    /// after each note's start every frame reads the note within 50 cents. Without the rule
    /// (`fallingPitchRiseCents = 0`) 188, 189 and 189 of the 5 notes' ~370 frames had no note at
    /// 44.1, 48 and 96 kHz; the test asserts that at least 100 do (docs/accuracy.md, Pitch, finding 28).
    @Test(arguments: sampleRates)
    func aSungNoteWithAWideVibratoWhoseEnergyFallsWithItsPitchIsRead(sampleRateHz: Double) throws {
        let notesHz = [220.0, 293.66, 329.63, 440, 523.25], noteSeconds = 1.5
        var generator = SeededGenerator(seed: 7)
        var signal: [Float] = []
        for noteHz in notesHz {
            var phase = 0.0
            let count = Int(noteSeconds * sampleRateHz), sounding = count - Int(0.1 * sampleRateHz)
            for index in 0..<count {
                let seconds = Double(index) / sampleRateHz, swing = sin(2 * .pi * 5.5 * seconds)
                phase += 2 * .pi * noteHz * pow(2, 40 * swing / 1200) / sampleRateHz
                let amplitude = index < sounding ? (1 - exp(-seconds / 0.03)) * pow(10, (0.5 * swing - 3 * seconds) / 20) : 0
                let breath = 0.017 * Double.random(in: -1...1, using: &generator)
                signal.append(Float(0.25 * amplitude * (sin(phase) + 0.2 * sin(2 * phase) + 0.05 * sin(3 * phase) + breath)))
            }
        }
        func missing(riseCents: Double) throws -> Int {
            var configuration = AnalysisConfiguration()
            configuration.pitch.fallingPitchRiseCents = riseCents
            var analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
            var missing = 0
            for frame in OfflineDriver.frames(&analyzer, signal: signal) {
                let seconds = Double(frame.streamFrame) / sampleRateHz
                let note = Int(seconds / noteSeconds), inNote = seconds - Double(note) * noteSeconds
                guard note < notesHz.count, inNote >= 0.15, inNote < noteSeconds - 0.13 else { continue }
                if !frame.pitch.hasNote || abs(Self.centsError(frame.pitch, expectedHz: notesHz[note])) > 50 { missing += 1 }
            }
            return missing
        }
        let read = try missing(riseCents: AnalysisConfiguration().pitch.fallingPitchRiseCents)
        #expect(read == 0, "sung vibrato at \(sampleRateHz) Hz: \(read) frames from 150 ms after the notes' starts without the note")
        // The class exists: without the rule the vibrato's swings down are read as a drum's glide.
        let without = try missing(riseCents: 0)
        #expect(without >= 100, "sung vibrato at \(sampleRateHz) Hz without the rule: only \(without) frames without the note")
    }

    /// Crash cymbals: dense inharmonic partials (15 between 1.8 and 3 kHz, as the held-out
    /// TimGM6mb crash that reads 2.24–2.29 kHz; 60 between 300 Hz and 8 kHz), the higher ones
    /// dying faster, after a stick's click, struck every second. A cluster of partials repeats
    /// at some common period for a few hops, and nothing in the tuner's drum terms refuses it:
    /// its fundamental share is low (not a membrane) and its energy holds within the window
    /// (not a stroke dying). A known issue (docs/accuracy.md, Pitch, finding 21): 157–178 and
    /// 66–70 of their 180 frames read, with the membrane term and without it alike.
    @Test(arguments: sampleRates)
    func crashCymbalsGiveNoNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for (count, lowestHz, highestHz, seed) in [(15, 1800.0, 3000.0, UInt64(5)), (60, 300, 8000, 1)] {
            var generator = SeededGenerator(seed: seed)
            let partials = (0..<count).map { _ in
                (frequencyHz: exp(Double.random(in: log(lowestHz)...log(highestHz), using: &generator)),
                 amplitude: Double.random(in: 0.2...1, using: &generator) / Double(count).squareRoot(),
                 phase: Double.random(in: 0...(2 * .pi), using: &generator))
            }
            let signal = Self.struck(everySeconds: 1, times: 3, sampleRateHz: sampleRateHz, generator: &generator) { seconds, generator in
                var value = 0.5 * exp(-seconds / 0.003) * Double.random(in: -1...1, using: &generator)
                for partial in partials {
                    let decay = 20 * (partial.frequencyHz / 2000).squareRoot()
                    value += partial.amplitude * pow(10, -decay * seconds / 20) * sin(2 * .pi * partial.frequencyHz * seconds + partial.phase)
                }
                return 0.5 * value
            }
            analyzer.reset()
            let voiced = OfflineDriver.frames(&analyzer, signal: signal).filter { $0.pitch.hasNote }.count
            withKnownIssue("a crash's cluster of partials repeats for a few hops and reads as a note") {
                #expect(voiced == 0, "crash (\(count) partials, \(lowestHz)–\(highestHz) Hz) at \(sampleRateHz) Hz: \(voiced) frames had a note")
            }
        }
    }

    /// The membrane term's price, at the toms' pitches: struck and plucked notes that decay as
    /// fast, with a fundamental as dominant — a marimba-like bar (its tuned overtone at 4 × f0,
    /// 20 dB down, and a mallet's click), and a plucked string whose harmonics die fast (a bass
    /// or a nylon string with the tone rolled off) — are read from 100 ms after their attack to
    /// their end, as the right note (the price would be frames without one; their cents are other
    /// tests' business: without the term as with it the 164 Hz string at 44.1 kHz reads one
    /// frame over 5 cents off). Their energy beyond the fundamental lies at harmonics and repeats.
    @Test(arguments: sampleRates)
    func pureStruckAndPluckedNotesAtTheTomsPitchesAreRead(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopsPerSecond = AnalysisConfiguration().outputRateHz
        for frequencyHz in [56.0, 87, 126, 164] {
            for (name, partials) in [("bar", [(1.0, 0.8), (4, 0.08)]), ("string", [(1.0, 0.8), (2, 0.2), (3, 0.1)])] {
                var generator = SeededGenerator(seed: 3)
                let silence = [Float](repeating: 0, count: Int(0.25 * sampleRateHz))
                let note = (0..<Int(0.6 * sampleRateHz)).map { index -> Float in
                    let seconds = Double(index) / sampleRateHz
                    var value = 0.3 * exp(-seconds / 0.004) * Double.random(in: -1...1, using: &generator)
                    for (number, amplitude) in partials {
                        value += amplitude * pow(10, -30 * number * seconds / 20) * sin(2 * .pi * frequencyHz * number * seconds)
                    }
                    return Float(0.5 * value)
                }
                analyzer.reset()
                let readings = OfflineDriver.frames(&analyzer, signal: silence + note).map(\.pitch)
                let ringing = readings[Int(0.35 * hopsPerSecond)...]
                let missed = ringing.filter { !$0.hasNote || abs(Self.centsError($0, expectedHz: frequencyHz)) > 50 }.count
                #expect(missed == 0, "\(name) at \(frequencyHz) Hz, \(sampleRateHz) Hz: \(missed) of \(ringing.count) frames without the note")
            }
        }
    }

    /// A plucked string whose pitch follows `centsAt(seconds)` (cents from `baseHz`), with the
    /// partials of `pluckedNotesAfterAPickTransientAreRead` decaying together at
    /// `decayDecibelsPerSecond`.
    static func glidingString(baseHz: Double, centsAt: (Double) -> Double, seconds: Double,
                              decayDecibelsPerSecond: Double, sampleRateHz: Double) -> [Float] {
        let amplitudes = [0.5, 0.3, 0.2, 0.12, 0.08]
        var phase = 0.0
        return (0..<Int(seconds * sampleRateHz)).map { index -> Float in
            let time = Double(index) / sampleRateHz
            phase += 2 * .pi * baseHz * pow(2, centsAt(time) / 1200) / sampleRateHz
            let envelope = pow(10, -decayDecibelsPerSecond * time / 20)
            var value = 0.0
            for (harmonic, amplitude) in amplitudes.enumerated() { value += amplitude * sin(Double(harmonic + 1) * phase) }
            return Float(envelope * value)
        }
    }

    /// A string tuned down while it rings (drop D: E2 turned to D2 at the peg): plucked, held
    /// 0.5 s, lowered 200 cents over 2 s (100 cents/s; a peg turns at tens of cents per second)
    /// and left to ring 1 s, decaying at 12 dB/s throughout. It is read all the way down: every
    /// frame of the turn has a note, and the last reads D2 to within 3 cents. A drum's body falls
    /// ten times faster from its stroke on (`pitch.falling_pitch_cents_per_second`); with a
    /// fall limit in cents alone it read no note once 80 cents under E2 (78.7 Hz).
    @Test(arguments: sampleRates)
    func aStringTunedDownWhileItRingsIsReadAllTheWayDown(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let e2 = TestSignals.frequencyHz(midiNote: 40), d2 = TestSignals.frequencyHz(midiNote: 38)
        let signal = Self.glidingString(baseHz: e2, centsAt: { -200 * min(max(($0 - 0.5) / 2, 0), 1) }, seconds: 3.5,
                                        decayDecibelsPerSecond: 12, sampleRateHz: sampleRateHz)
        let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
        let hopsPerSecond = AnalysisConfiguration().outputRateHz
        let turning = readings[Int(0.5 * hopsPerSecond)..<Int(2.5 * hopsPerSecond)]
        let silent = turning.filter { !$0.hasNote }.count
        #expect(silent == 0, "tuned down at \(sampleRateHz) Hz: \(silent) frames of the turn had no note")
        let last = readings.last!
        #expect(last.hasNote && abs(Self.centsError(last, expectedHz: d2)) < 3,
                "tuned down at \(sampleRateHz) Hz: the last reading \(last.frequencyHz) Hz, D2 is \(d2) Hz")
    }

    /// A bend released: a string struck bent a whole tone up (G3 sounding A3), held 0.4 s, then
    /// let down to G3 in 0.1 s and left to ring 0.8 s, decaying at 12 dB/s; and a whammy-bar dive,
    /// E3 held 0.5 s and pushed down 500 cents in 0.3 s. Both fall fast, but only after the note
    /// has sounded steady: their mean fall since the pluck stays under a drum's
    /// (`pitch.falling_pitch_cents_per_second`). The end of each reads its last pitch to a few
    /// cents; with a fall limit in cents alone neither read a note after its first 80 cents.
    @Test(arguments: sampleRates)
    func aReleasedBendAndAWhammyDiveAreRead(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let g3 = TestSignals.frequencyHz(midiNote: 55), e3 = TestSignals.frequencyHz(midiNote: 52)
        let bend = Self.glidingString(baseHz: g3, centsAt: { 200 - 200 * min(max(($0 - 0.4) / 0.1, 0), 1) }, seconds: 1.3,
                                      decayDecibelsPerSecond: 12, sampleRateHz: sampleRateHz)
        let dive = Self.glidingString(baseHz: e3, centsAt: { -500 * min(max(($0 - 0.5) / 0.3, 0), 1) }, seconds: 1.3,
                                      decayDecibelsPerSecond: 12, sampleRateHz: sampleRateHz)
        for (name, signal, endHz) in [("released bend", bend, g3), ("whammy dive", dive, e3 * pow(2, -5.0 / 12))] {
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch)
            let hopsPerSecond = AnalysisConfiguration().outputRateHz
            let ringing = readings[Int(0.9 * hopsPerSecond)...]
            let off = ringing.filter { !$0.hasNote || abs(Self.centsError($0, expectedHz: endHz)) >= 3 }.count
            #expect(off == 0, "\(name) at \(sampleRateHz) Hz: \(off) of \(ringing.count) frames after it were not its end pitch")
        }
    }

    /// A low guitar string: the fundamental and odd harmonics die away faster than the even ones,
    /// until the wave almost repeats at half its period (over 2 s they fall 28 dB, to 0.2 % of
    /// the energy; FluidR3's steel guitar G2 reaches −24 dB). The tuner must not jump an octave
    /// up as they fade: an established note is held while its fundamental sounds (without
    /// that hold it jumped from ~1 s on).
    @Test(arguments: sampleRates)
    func fadingOddHarmonicsDoNotJumpAnOctave(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for note in [40, 43, 45] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let signal: [Float] = (0..<Int(2.0 * sampleRateHz)).map { index in
                let seconds = Double(index) / sampleRateHz
                let odd = exp(-seconds / 0.63), phase = 2 * Double.pi * frequencyHz * seconds
                return Float(0.3 * odd * sin(phase) + 0.3 * sin(2 * phase) + 0.1 * odd * sin(3 * phase) + 0.15 * sin(4 * phase))
            }
            analyzer.reset()
            let readings = OfflineDriver.frames(&analyzer, signal: signal).map(\.pitch).filter(\.hasNote)
            let wrong = readings.filter { $0.noteNumber != Int32(note) }
            #expect(wrong.isEmpty && readings.last?.noteNumber == Int32(note),
                    "MIDI \(note) at \(sampleRateHz) Hz: \(wrong.count) of \(readings.count) readings wrong, e.g. \(wrong.first?.noteNumber ?? -1)")
        }
    }

    /// The same fading string with a partial a fifth above its fundamental (a neighbouring
    /// string ringing, 16 dB under the second partial; FluidR3's steel guitar G2 has one at
    /// −11 dB), started at eight phases of the hop. Its leakage makes the fundamental's power
    /// in the rectangular-window spectrum swing by several dB from hop to hop; a 6 dB fall in
    /// 50 ms counted as the note ending and it jumped an octave at 2 of the 8 phases.
    @Test func theOctaveHoldDoesNotDependOnTheHopPhase() throws {
        let sampleRateHz = 48_000.0, frequencyHz = TestSignals.frequencyHz(midiNote: 43)
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let string: [Float] = (0..<Int(2.0 * sampleRateHz)).map { index in
            let seconds = Double(index) / sampleRateHz
            let odd = exp(-seconds / 0.63), phase = 2 * Double.pi * frequencyHz * seconds
            return Float(0.5 * (0.3 * odd * sin(phase) + 0.3 * sin(2 * phase) + 0.1 * odd * sin(3 * phase) + 0.15 * sin(4 * phase)
                                + 0.05 * sin(1.5 * phase + 0.3)))
        }
        for leadFrames in stride(from: 0, to: analyzer.hopFrames, by: 100) {
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: [Float](repeating: 0, count: leadFrames) + string)
            let wrong = frames.filter { Double($0.streamFrame - Int64(leadFrames)) > 0.15 * sampleRateHz && $0.pitch.hasNote && $0.pitch.noteNumber != 43 }
            #expect(wrong.count == 0, "\(leadFrames) frames of lead: \(wrong.count) readings off G2, e.g. MIDI \(wrong.first?.pitch.noteNumber ?? -1)")
        }
    }

    /// A note right after a burst of noise (a pick, a breath, a bow's scrape): the long
    /// window still holds the noise and is not confident for three hops; the short window
    /// (2.2 periods of 150 Hz) hears the note within two.
    @Test(arguments: sampleRates)
    func aNoteAfterNoiseShowsWithinTwoHops(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        for note in [57, 69, 81] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let noise = TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: Double(6 * hopFrames) / sampleRateHz, amplitude: 0.4)
            let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: [0.3, 0.15, 0.1], sampleRateHz: sampleRateHz, seconds: 0.3)
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: noise + tone, blockSizes: [hopFrames])
            // Frame 6 ends where the tone starts; frame 8 has 2 hops (33 ms) of it.
            let shown = frames[8].pitch
            #expect(shown.noteNumber == Int32(note), "MIDI \(note) at \(sampleRateHz) Hz: 2 hops in, \(shown.hasNote ? "\(shown.noteNumber)" : "no note")")
        }
    }

    /// A note in pink noise louder than it (−3 dB SNR, where every hop takes the second look),
    /// then the noise stops as a new note starts, as loud as the noise was: the short window
    /// hears the new note within two hops, as `aNoteAfterNoiseShowsWithinTwoHops` after white
    /// noise. In steady noise the short window is computed only when its newest samples change
    /// (`ShortWindowRecheck`); skipped on every such hop, the new note showed 3–4 hops in.
    @Test(arguments: sampleRates)
    func aNoteAfterANoteInLoudNoiseThatStopsShowsWithinTwoHops(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded()), leadFrames = Int(1.5 * sampleRateHz)
        func rms(_ signal: [Float]) -> Float { (signal.reduce(0) { $0 + $1 * $1 } / Float(signal.count)).squareRoot() }
        let noise = TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 1.5, seed: 40)
        func tone(_ note: Int, frames: Int, decibelsOverNoise: Float) -> [Float] {
            let tone = TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: Double(note)), harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05],
                                                sampleRateHz: sampleRateHz, seconds: Double(frames) / sampleRateHz)
            let scale = rms(noise) / rms(tone) * powf(10, decibelsOverNoise / 20)
            return tone.map { $0 * scale }
        }
        for (held, next) in [(45, 57), (57, 64), (64, 81)] {
            let signal = zip(noise, tone(held, frames: leadFrames, decibelsOverNoise: -3)).map { $0 + $1 }
                + tone(next, frames: Int(0.3 * sampleRateHz), decibelsOverNoise: 0)
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames])
            // Frame `noteStart` ends where the new note starts; two hops later 33 ms of it.
            let noteStart = frames.firstIndex { $0.streamFrame >= Int64(leadFrames) }!
            let shown = frames[noteStart + 2].pitch
            #expect(shown.noteNumber == Int32(next), "MIDI \(held) then \(next) at \(sampleRateHz) Hz: 2 hops in, \(shown.hasNote ? "\(shown.noteNumber)" : "no note")")
        }
    }

    /// Notes in pink noise nearly as loud as they are (2 dB SNR, RMS against RMS): the
    /// window's correlation at the period is then about 0.55–0.75, under the old threshold of
    /// 0.75 (0–10 of 50 frames read), and the note is read on most frames (43–50 of 50),
    /// within 50 cents.
    @Test(arguments: sampleRates)
    func notesInLoudPinkNoiseAreRead(sampleRateHz: Double) throws {
        let snrDecibels: Float = 2
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        for note in [57, 64, 69, 76, 81] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05], sampleRateHz: sampleRateHz, seconds: 1)
            let noise = TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 1)
            func rms(_ signal: [Float]) -> Float { (signal.reduce(0) { $0 + $1 * $1 } / Float(signal.count)).squareRoot() }
            let noiseScale = rms(tone) / rms(noise) * powf(10, -snrDecibels / 20)
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: zip(tone, noise).map { $0 + noiseScale * $1 }, blockSizes: [hopFrames])
            let scored = frames[10...]
            let within = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note)) < 0.5 }.count
            #expect(within * 4 >= scored.count * 3, "MIDI \(note) at \(sampleRateHz) Hz in pink noise at 2 dB SNR: \(within) of \(scored.count) frames within 50 cents")
        }
    }

    /// Pink noise (`seed`) for `afterSeconds` and then with `tone` added (and alone again for
    /// `trailingSeconds`), the noise scaled to the tone's RMS over the tone's span (0 dB SNR), or
    /// `noiseAboveToneDecibels` above it.
    static func toneInPinkNoiseAsLoud(_ tone: [Float], afterSeconds: Double, sampleRateHz: Double, seed: UInt64,
                                      noiseAboveToneDecibels: Float = 0, trailingSeconds: Double = 0) -> [Float] {
        let leadFrames = Int(afterSeconds * sampleRateHz)
        func rms(_ signal: ArraySlice<Float>) -> Float { (signal.reduce(0) { $0 + $1 * $1 } / Float(signal.count)).squareRoot() }
        var signal = TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: afterSeconds + Double(tone.count) / sampleRateHz + trailingSeconds, seed: seed)
        let span = leadFrames..<min(signal.count, leadFrames + tone.count)
        let noiseScale = rms(tone[...]) / rms(signal[span]) * powf(10, noiseAboveToneDecibels / 20)
        for sample in 0..<signal.count { signal[sample] *= noiseScale }
        for sample in 0..<min(tone.count, signal.count - leadFrames) { signal[leadFrames + sample] += tone[sample] }
        return signal
    }

    /// Each of `notes` as a harmonic tone (`partials`, 1.5 s, decaying by
    /// `decayDecibelsPerSecond`) after 1.5 s of pink noise (`toneInPinkNoiseAsLoud`, seed
    /// `firstSeed` + the note's index), analysed from a reset: the
    /// notes read on the noise before the tone, the tone's frames from 10 hops on, and the notes
    /// read on the noise from 100 ms after the tone (`trailingSeconds` of it).
    static func tonesAfterPinkNoise(_ notes: [Int], partials: [Double], sampleRateHz: Double, firstSeed: UInt64,
                                    noiseAboveToneDecibels: Float = 0, trailingSeconds: Double = 0, decayDecibelsPerSecond: Float = 0,
                                    blockSizes: [Int]? = nil) throws
        -> [(note: Int, notesBefore: Int, scored: ArraySlice<AnalysisFrame>, notesAfter: Int)] {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let leadSeconds = 1.5, leadFrames = Int(leadSeconds * sampleRateHz)
        return notes.enumerated().map { index, note in
            var tone = TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: Double(note)), harmonicAmplitudes: partials,
                                                sampleRateHz: sampleRateHz, seconds: 1.5)
            if decayDecibelsPerSecond > 0 {
                for sample in tone.indices { tone[sample] *= powf(10, -decayDecibelsPerSecond * Float(Double(sample) / sampleRateHz) / 20) }
            }
            let signal = toneInPinkNoiseAsLoud(tone, afterSeconds: leadSeconds, sampleRateHz: sampleRateHz, seed: firstSeed + UInt64(index),
                                               noiseAboveToneDecibels: noiseAboveToneDecibels, trailingSeconds: trailingSeconds)
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: blockSizes ?? [Int((sampleRateHz / 60).rounded())])
            let noteStart = frames.firstIndex { $0.streamFrame >= Int64(leadFrames) }!
            let toneEnd = Int64(leadFrames + tone.count)
            let noteEnd = frames.firstIndex { $0.streamFrame > toneEnd } ?? frames.endIndex
            let notesAfter = frames[noteEnd...].filter { $0.streamFrame >= toneEnd + Int64(0.1 * sampleRateHz) && $0.pitch.hasNote }.count
            return (note, frames[..<noteStart].filter { $0.pitch.hasNote }.count, frames[(noteStart + 10)..<noteEnd], notesAfter)
        }
    }

    /// Frames of `frames` that read `midiNote` within 50 cents.
    static func framesReading(_ midiNote: Int, in frames: ArraySlice<AnalysisFrame>) -> Int {
        frames.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote)) < 0.5 }.count
    }

    /// Notes in pink noise as loud as they are (0 dB SNR, RMS against RMS), after the noise
    /// alone for 1.5 s: the unweighted window is half noise, so a note correlates at r ≈ 0.5,
    /// under the threshold of 0.55, and D3 (147 Hz, where pink noise is loudest against the
    /// partials) was read on 38, 27 and 4 of 81 frames at 44.1, 48 and 96 kHz; weighed against
    /// the noise's band floors (`NoiseWeighting`), the bands without a partial drop out: 56, 48,
    /// 46 (A3 to E5: 58–81 of 81); 81, 61, 42 before pitch finding 49 and 81, 49, 46 since (A3
    /// to E5: 63–81 and 67–81). The noise alone, before the note and for 5 s on its own,
    /// gives no note (with the floors learnt from the first full window, pitch finding 49, the
    /// weights kept 0.2–0.3 of the noise at 96 kHz and the narrow bands left read D♯1 on 2
    /// frames, until `NoiseWeighting.Parameters.minimumKeptShare` was raised to 0.25).
    @Test(arguments: sampleRates)
    func notesInPinkNoiseAsLoudAsThemAreRead(sampleRateHz: Double) throws {
        let hopFrames = Int((sampleRateHz / 60).rounded())
        for (note, notesBefore, scored, _) in try Self.tonesAfterPinkNoise([50, 57, 64, 69, 76], partials: [0.3, 0.2, 0.1, 0.05], sampleRateHz: sampleRateHz,
                                                                        firstSeed: 10, blockSizes: [hopFrames, 63, 1000]) {
            let within = Self.framesReading(note, in: scored)
            #expect(notesBefore == 0, "MIDI \(note) at \(sampleRateHz) Hz: \(notesBefore) notes read on the pink noise before it")
            #expect(within * 20 >= scored.count * 9, "MIDI \(note) at \(sampleRateHz) Hz in pink noise at 0 dB SNR: \(within) of \(scored.count) frames within 50 cents")
        }
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let noiseAlone = OfflineDriver.frames(&analyzer, signal: TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 5), blockSizes: [hopFrames])
        #expect(noiseAlone.allSatisfy { !$0.pitch.hasNote }, "pink noise alone at \(sampleRateHz) Hz: \(noiseAlone.filter { $0.pitch.hasNote }.count) notes")
    }

    /// Held notes in pink noise 3 dB louder than they are, after the noise alone for 1.5 s: r at
    /// the note's period scatters about the threshold from hop to hop, and every hop under it
    /// lost the note. A note read within the last ~50 ms, on two hops in a row, whose window the
    /// steady noise fills now continues at its own period while r there stays at 0.45
    /// (`PitchDetector.heldNoteInNoiseConfidence`; docs/accuracy.md, pitch finding 35), and a
    /// stray reading of one hop between no longer ends it (finding 36). Since finding 47 it is
    /// continued also where the weighted second look found a key maximum elsewhere, read at its
    /// own period, and not forgotten when the noise's own window energy rises 1.5 dB; since
    /// finding 49 the noise floors are learnt from the first full window (not from the zeros
    /// before the stream) and a note whose correlation is lost continues at its fundamental's
    /// spectral peak. Of the 972 frames of A2 to G5, within 50 cents at 44.1, 48 and 96 kHz:
    /// 790, 949 and 922 (80 % asserted); 776, 761 and 670 before finding 49; 612, 536 and 533
    /// before finding 47; 575, 515 and 466 when the stray reading ended the note. (Finding
    /// 35's five notes, A2 to A4:
    /// 157, 142 and 139 of 405 before it, 198, 214 and 214 after.) The noise before the notes,
    /// and from 100 ms after them for 2 s, still gives no note: the note is continued, not
    /// invented.
    @Test(arguments: sampleRates)
    func heldNotesInPinkNoiseLouderThanThemAreFollowed(sampleRateHz: Double) throws {
        var within = 0, scoredFrames = 0, counts: [String] = []
        for (note, notesBefore, scored, notesAfter) in try Self.tonesAfterPinkNoise([45, 48, 52, 55, 57, 60, 64, 67, 69, 72, 76, 79], partials: [0.3, 0.2, 0.1, 0.05],
                                                                                    sampleRateHz: sampleRateHz, firstSeed: 50,
                                                                                    noiseAboveToneDecibels: 3, trailingSeconds: 2) {
            #expect(notesBefore == 0, "MIDI \(note) at \(sampleRateHz) Hz: \(notesBefore) notes read on the pink noise before it")
            #expect(notesAfter == 0, "MIDI \(note) at \(sampleRateHz) Hz: \(notesAfter) notes read on the pink noise from 100 ms after it")
            let right = Self.framesReading(note, in: scored)
            within += right
            scoredFrames += scored.count
            counts.append("MIDI \(note): \(right)")
        }
        #expect(within * 5 >= scoredFrames * 4, "at \(sampleRateHz) Hz, of \(scoredFrames) frames within 50 cents: \(counts.joined(separator: "; "))")
    }

    /// Plucked-like notes decaying at 20 dB/s under steady pink noise (10 dB under the note's
    /// RMS over its 1.5 s, after the noise alone for 1.5 s): from ~0.9 s the note lies under the
    /// noise's broadband power (−12 dB at its end), where the plain correlation loses it. The
    /// note read so far is continued where the weighted second look found a key maximum
    /// elsewhere, read at its own period, and no longer forgotten when the noise's window energy
    /// rises 1.5 dB by itself (`PitchDetector.octaveHoldReleaseRatioInSteadyNoise`;
    /// docs/accuracy.md, pitch finding 47). Since finding 49 a note whose correlation is lost
    /// continues while its fundamental stands `PitchDetector.heldNoteFundamentalAboveFloorRatio`
    /// over its band's noise floor. Of the 1,296 frames of A3 to E6 (two noise seeds each),
    /// within 50 cents at 44.1, 48 and 96 kHz: 1,231, 1,255 and 1,249 (90 % asserted);
    /// 1,074, 1,085 and 1,058 before finding 49; 1,058, 1,030 and 1,015 before finding 47. The
    /// noise before the notes, and from 100 ms after them for 1 s, gives no note.
    @Test(arguments: sampleRates)
    func decayingNotesUnderSteadyPinkNoiseAreFollowed(sampleRateHz: Double) throws {
        var within = 0, scoredFrames = 0, counts: [String] = []
        for firstSeed in [UInt64(300), 320] {
            for (note, notesBefore, scored, notesAfter) in try Self.tonesAfterPinkNoise([57, 64, 67, 72, 76, 79, 84, 88], partials: [0.3, 0.2, 0.1, 0.05],
                                                                                        sampleRateHz: sampleRateHz, firstSeed: firstSeed,
                                                                                        noiseAboveToneDecibels: -10, trailingSeconds: 1,
                                                                                        decayDecibelsPerSecond: 20) {
                #expect(notesBefore == 0 && notesAfter == 0, "MIDI \(note), seeds from \(firstSeed) at \(sampleRateHz) Hz: \(notesBefore) notes read on the noise before it, \(notesAfter) from 100 ms after it")
                let right = Self.framesReading(note, in: scored)
                within += right
                scoredFrames += scored.count
                counts.append("MIDI \(note)/\(firstSeed): \(right)")
            }
        }
        #expect(within * 10 >= scoredFrames * 9, "at \(sampleRateHz) Hz, of \(scoredFrames) frames within 50 cents: \(counts.joined(separator: "; "))")
    }

    /// Low harmonic tones (E1 to A2, eight partials at 1/k, as the corpus's synthetic control)
    /// in pink noise as loud as they are, after the noise alone for 1.5 s. Weighed against the
    /// noise's band floors (`NoiseWeighting`), the window keeps mostly the bands of the note's
    /// lowest partials, whose correlation stays high over the first lags: that lobe about lag 0
    /// stood above the period's peak and, as the key maximum's reference, refused it, so a note
    /// read once was lost again on most hops. A note read within the last ~50 ms in steady
    /// noise is now measured against the periods' peaks alone (docs/accuracy.md, pitch finding
    /// 31): of the 405 frames 113, 123 and 107 within 50 cents at 44.1, 48 and 96 kHz; without
    /// it 41, 71 and 60 (E1 and A1 0–2 of 81 each).
    @Test(arguments: sampleRates)
    func lowHarmonicTonesInPinkNoiseAtZeroDecibelsAreRead(sampleRateHz: Double) throws {
        let hopFrames = Int((sampleRateHz / 60).rounded())
        var counts: [String] = [], within = 0, scoredFrames = 0
        for (note, notesBefore, scored, _) in try Self.tonesAfterPinkNoise([28, 33, 36, 40, 45], partials: (1...8).map { 1 / Double($0) },
                                                                        sampleRateHz: sampleRateHz, firstSeed: 50, blockSizes: [hopFrames, 63, 1000]) {
            let right = Self.framesReading(note, in: scored)
            #expect(notesBefore == 0, "MIDI \(note) at \(sampleRateHz) Hz: \(notesBefore) notes read on the pink noise before it")
            within += right
            scoredFrames += scored.count
            counts.append("MIDI \(note): \(right) of \(scored.count)")
        }
        #expect(within * 5 >= scoredFrames, "at \(sampleRateHz) Hz, within 50 cents: \(counts.joined(separator: "; "))")
    }

    /// Harmonic tones (eight partials at 1/k, as the corpus's synthetic control) in pink noise
    /// as loud as they are, after the noise alone for 1.5 s. The correlation at the note's
    /// period scatters about the threshold; where it falls just under while twice the period
    /// (whose segments are shorter, so r scatters more) reaches it, the first key maximum is
    /// the octave below, and its frequency (41–104 Hz here) is too low for references about it
    /// within the window (`partialReferenceMinimumBins`), so the pink noise there, loudest at
    /// low frequencies, passes for its fundamental: the octave below is read, then held. 16, 19
    /// and 34 of 405 frames at 44.1, 48 and 96 kHz read an octave low at finding 24, 33, 34 and
    /// 60 before a held note continued in steady noise (pitch finding 35), 41, 37 and 65 since:
    /// an octave below read on two hops continues too; 49, 37 and 79 since a stray reading no
    /// longer ends it (finding 36). A known issue (docs/accuracy.md, pitch finding
    /// 24): weighing that fundamental against the noise's band floor instead (11, 13 and 2) read
    /// the tuning part's clean organ and choir an octave up.
    @Test(arguments: sampleRates)
    func harmonicTonesInPinkNoiseAtZeroDecibelsAreNotReadAnOctaveLow(sampleRateHz: Double) throws {
        var octaveLow = 0, scoredFrames = 0, counts: [String] = []
        for (note, _, scored, _) in try Self.tonesAfterPinkNoise([40, 44, 48, 52, 56], partials: (1...8).map { 1 / Double($0) },
                                                              sampleRateHz: sampleRateHz, firstSeed: 30) {
            let low = Self.framesReading(note - 12, in: scored), right = Self.framesReading(note, in: scored)
            octaveLow += low
            scoredFrames += scored.count
            counts.append("MIDI \(note): \(right) right, \(low) an octave low")
        }
        withKnownIssue("the octave below of a note in loud pink noise is taken for the note (docs/accuracy.md, pitch finding 24)") {
            #expect(octaveLow * 100 <= scoredFrames, "at \(sampleRateHz) Hz, of \(scoredFrames) frames: \(counts.joined(separator: "; "))")
        }
    }

    /// A steady display: a note's first shown reading is within 5 cents of where it settles
    /// (its reading 250 ms on), after silence, after noise and after another note.
    @Test(arguments: sampleRates)
    func aNotesFirstReadingIsWithinFiveCentsOfItsSettledReading(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        let partials = [0.3, 0.2, 0.1, 0.05]
        for note in [40, 45, 52, 57, 64, 69, 76, 81, 88] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note) + 0.13)
            let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: partials, sampleRateHz: sampleRateHz, seconds: 0.5)
            let before = TestSignals.harmonicTone(fundamentalHz: frequencyHz * 1.26, harmonicAmplitudes: partials, sampleRateHz: sampleRateHz, seconds: 0.3)
            let leads: [(String, [Float])] = [
                ("after silence", TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 0.3)),
                ("after noise", TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 0.3, amplitude: 0.3)),
                ("after a major third up", before),
            ]
            for (name, lead) in leads {
                analyzer.reset()
                let frames = OfflineDriver.frames(&analyzer, signal: lead + tone, blockSizes: [hopFrames])
                let start = lead.count / hopFrames
                let settled = frames[start + 15].pitch
                guard let first = frames[start...].first(where: { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note) - 0.13) < 1 })?.pitch else {
                    Issue.record("MIDI \(note) \(name) at \(sampleRateHz) Hz: never shown")
                    continue
                }
                let cents = 1200 * log2(Double(first.frequencyHz / settled.frequencyHz))
                #expect(abs(cents) <= 5, "MIDI \(note) \(name) at \(sampleRateHz) Hz: first shown \(first.frequencyHz) Hz, settled \(settled.frequencyHz) Hz (\(cents) cents)")
            }
        }
    }

    /// A steady tone that starts from silence is shown where it is from its first reading on:
    /// every shown reading of sines and harmonic tones A2–E6 within 5 cents (the worst 3.8, a
    /// harmonic A3's first readings). The fundamental's phase advance measured across the
    /// attack compares a window that still held the silence, and moved the readings of its
    /// first ~100 ms by up to 15 cents (at 44.1 kHz; 6.6 at 48 and 96 kHz); it now waits for
    /// an older window without the attack (docs/accuracy.md, pitch finding 37).
    @Test(arguments: sampleRates)
    func aSteadyToneFromSilenceShowsNoWobble(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        var worst: [String] = [], worstCents = 0.0
        for (name, partials) in [("sine", [1.0]), ("harmonic tone", [0.3, 0.2, 0.1, 0.05])] {
            for note in [45.0, 52, 57, 64, 69.04, 76, 81, 88] {
                let frequencyHz = TestSignals.frequencyHz(midiNote: note)
                let signal = TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 0.3)
                    + TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: partials, sampleRateHz: sampleRateHz, seconds: 0.6)
                analyzer.reset()
                let shown = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames]).filter { $0.pitch.hasNote }
                let cents = shown.map { 1200 * log2(Double($0.pitch.frequencyHz) / frequencyHz) }
                let farthest = cents.max { abs($0) < abs($1) } ?? .infinity
                worstCents = max(worstCents, abs(farthest))
                worst.append("\(name) MIDI \(note): \(shown.count) shown, farthest \(farthest) cents")
            }
        }
        #expect(worstCents <= 5, "at \(sampleRateHz) Hz: \(worst.joined(separator: "; "))")
    }

    /// A legato step up to a note at or above 300 Hz: for several hops the long window still
    /// repeats at the old note's period, or at one common to both notes (a fifth up: an octave
    /// below the old note), while the short window already reads the new note; reaching its
    /// octave below, it overrules the lower reading, and where both windows read the new note
    /// it shows at once. Shown from 2 hops (33 ms) after the change on, nothing else between.
    /// Without the short window's say: the sub-multiple for a hop, the new note 4 hops in.
    @Test(arguments: sampleRates)
    func aLegatoStepUpShowsTheNewNoteWithinTwoHops(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        let partials = [1, 0.6, 0.3, 0.2]
        for (first, second) in [(57, 64), (62, 69), (55, 67), (64, 76)] {
            let firstHz = TestSignals.frequencyHz(midiNote: Double(first)), secondHz = TestSignals.frequencyHz(midiNote: Double(second))
            let signal = TestSignals.harmonicTone(fundamentalHz: firstHz, harmonicAmplitudes: partials, sampleRateHz: sampleRateHz, seconds: Double(18 * hopFrames) / sampleRateHz)
                + TestSignals.harmonicTone(fundamentalHz: secondHz, harmonicAmplitudes: partials, sampleRateHz: sampleRateHz, seconds: 0.3)
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames])
            // Frame 17 ends where the second note starts.
            for index in 18..<36 {
                let shown = frames[index].pitch
                let allowed = index >= 19 ? [Int32(second)] : [Int32(first), Int32(second)]
                #expect(!shown.hasNote && index < 19 || shown.hasNote && allowed.contains(shown.noteNumber),
                        "MIDI \(first) → \(second) at \(sampleRateHz) Hz: \(index - 17) hops in, \(shown.hasNote ? "\(shown.noteNumber)" : "no note")")
            }
        }
    }

    /// An organ stop with a quint (a 2⅔' mutation: partials at 3/2·f and 9/2·f besides the
    /// note's own) repeats at half the note's frequency, where it has no partial at all. The
    /// tuner reads the note, not the octave below; the missing-fundamental tones of
    /// `harmonicTonesHaveNoOctaveErrors` (odd partials a third of the energy) still read low.
    @Test(arguments: sampleRates)
    func aQuintMutationDoesNotReadAnOctaveLow(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        // Harmonics of f/2: the note's partials at 2, 4, 6, 8, the quint's at 3 and 9 (11 % of
        // the energy: r at the note's period is ~0.78 of r at twice it).
        let amplitudes = [0, 0.3, 0.12, 0.15, 0, 0.1, 0, 0.075, 0.04]
        for note in [48, 60, 72, 84, 96] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let signal = TestSignals.harmonicTone(fundamentalHz: frequencyHz / 2, harmonicAmplitudes: amplitudes, sampleRateHz: sampleRateHz, seconds: 0.4)
            let reading = Self.reading(&analyzer, signal)
            #expect(reading.noteNumber == Int32(note), "MIDI \(note) at \(sampleRateHz) Hz: got \(reading.noteNumber)")
            #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 1, "MIDI \(note): \(reading.frequencyHz) Hz")
        }
    }

    /// The same note plus a quint mutation in pink noise at 10 dB SNR: the noise alone fills
    /// the note's missing half-pitch to well over −45 dB of the note's power, so the mutation
    /// check read an octave low on every frame (FluidR3's church organ from C5 up in the
    /// corpus's pink-noise copies). The half-pitch counts as absent where it does not stand out
    /// of the spectrum between its would-be partials: 40–50 of 50 frames read the note, up to
    /// 10 an octave low (one bin's noise power scatters, so some hops still see a partial).
    @Test(arguments: sampleRates)
    func aQuintMutationInPinkNoiseDoesNotReadAnOctaveLow(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let amplitudes = [0, 0.3, 0.12, 0.15, 0, 0.1, 0, 0.075, 0.04]
        let hopFrames = Int((sampleRateHz / 60).rounded())
        for note in [72, 79, 84, 91] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz / 2, harmonicAmplitudes: amplitudes, sampleRateHz: sampleRateHz, seconds: 1)
            let noise = TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 1)
            func rms(_ signal: [Float]) -> Float { (signal.reduce(0) { $0 + $1 * $1 } / Float(signal.count)).squareRoot() }
            let noiseScale = rms(tone) / rms(noise) * powf(10, -10 / 20)
            analyzer.reset()
            let frames = OfflineDriver.frames(&analyzer, signal: zip(tone, noise).map { $0 + noiseScale * $1 }, blockSizes: [hopFrames])
            let scored = frames[10...]
            let octaveLow = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note - 12)) < 0.5 }.count
            let within = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note)) < 0.5 }.count
            #expect(octaveLow * 4 <= scored.count, "MIDI \(note) at \(sampleRateHz) Hz: \(octaveLow) of \(scored.count) frames an octave low")
            #expect(within * 3 >= scored.count * 2, "MIDI \(note) at \(sampleRateHz) Hz: \(within) of \(scored.count) frames read the note")
        }
    }

    /// A note whose fundamental and third partial sit 16 and 12 dB under its even partials (an
    /// organ's attack, where the upper ranks speak first; a choir whose fundamental beats)
    /// repeats at half its period within 10 % of r at its period (0.92 against 1.0): the
    /// key-maximum rule alone read the octave up. The wave repeats clearly better at the
    /// period and the fundamental is a real partial, so the note is read. Notes below 150 Hz:
    /// from there the short window (whose key maximum reads the octave up here) overrules a
    /// lower long-window reading, as it must for a saxophone's octave-below attack.
    @Test(arguments: sampleRates)
    func aWeakButPresentFundamentalIsTheNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        for note in [36, 40, 45, 50] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let signal = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: [0.16, 1, 0.25, 1, 0, 0.3],
                                                  sampleRateHz: sampleRateHz, seconds: 0.4).map { 0.15 * $0 }
            let reading = Self.reading(&analyzer, signal)
            #expect(reading.noteNumber == Int32(note), "MIDI \(note) at \(sampleRateHz) Hz: got \(reading.noteNumber)")
            #expect(abs(Self.centsError(reading, expectedHz: frequencyHz)) < 1, "MIDI \(note): \(reading.frequencyHz) Hz")
        }
    }

    /// An organ with a 4' rank over its 8', steady (the tuning part's largest octave-up class:
    /// FluidR3's church organ E1–E3, whose 8' fundamental lies 20–40 dB under its upper ranks
    /// for the first 100–250 ms; docs/accuracy.md, pitch findings 27 and 29): the even partials
    /// dominate, the fundamental and odd partials are present but weak (the fundamental 23 dB
    /// under the second partial, the third 20 dB, the fifth 30 dB). The wave repeats at the
    /// note's period, but only ~2 % better than at half of it (r 1.00 against 0.98), so the
    /// key-maximum rule reads the octave up, and the octave below (the note) meets neither the
    /// 5 % margin (`octaveBelowCost`) nor the −20 dB support (`octaveBelowPowerRatio`): every
    /// frame from 150 ms on reads the octave up. A known issue: a weak fundamental told from
    /// leakage by its frequency, with its third partial and its fade (finding 29), read 2–15 of
    /// 28 frames per note (this one's third partial lies at that attempt's −20 dB limit), but
    /// cost up to 21 µs a hop and was not kept. Its odd partials also lie at the −20 dB of the
    /// odd-partial support (finding 53), which does not take it: 0 of 28 as before.
    @Test(arguments: sampleRates)
    func anOrganWithAFourFootRankOverAWeakFundamentalIsTheNote(sampleRateHz: Double) throws {
        for reading in try steadyOrganReadings(harmonicAmplitudes: [0.07, 1, 0.1, 0.6, 0.03, 0.3, 0, 0.2], sampleRateHz: sampleRateHz) {
            withKnownIssue("a steady weak 8' fundamental under a 4' rank reads the octave up on most frames (docs/accuracy.md, pitch findings 27 and 29)") {
                #expect(reading.read == reading.scored, "\(reading)")
            }
        }
    }

    /// How a steady organ-like tone (partials 1, 2, … at `harmonicAmplitudes`, 0.6 s) is read at
    /// MIDI 33, 36, 40, 45 and 50, each from a reset analyzer: of the frames from 150 ms on,
    /// those reading the note and those reading its octave up.
    private func steadyOrganReadings(harmonicAmplitudes: [Double], sampleRateHz: Double) throws -> [OrganReading] {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        return [33, 36, 40, 45, 50].map { note in
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let signal = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: harmonicAmplitudes,
                                                  sampleRateHz: sampleRateHz, seconds: 0.6).map { 0.15 * $0 }
            analyzer.reset()
            let scored = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames]).filter { frame in
                Double(frame.streamFrame) / sampleRateHz >= 0.15
            }
            return OrganReading(note: note, sampleRateHz: sampleRateHz, scored: scored.count,
                                read: scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note)) < 0.5 }.count,
                                octaveUp: scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note + 12)) < 0.5 }.count)
        }
    }

    struct OrganReading: CustomStringConvertible {
        var note: Int, sampleRateHz: Double, scored: Int, read: Int, octaveUp: Int
        var description: String { "MIDI \(note) at \(sampleRateHz) Hz: \(read) of \(scored) frames read the note, \(octaveUp) its octave up" }
    }

    /// An organ's low note while its 8' speaks under its upper ranks, as FluidR3's and
    /// MuseScore's E1–E3 sound in their first 100–300 ms (docs/accuracy.md, pitch finding 53):
    /// the fundamental 25 dB under the second partial, under the −20 dB support, but the odd
    /// partials sound (the third 14 dB, the fifth 26 dB under the second), so the wave repeats
    /// at the note's period and not at half of it. The octave below is supported by its odd
    /// partials (`OctaveDecision.Parameters.oddPartialsPowerRatio`): every frame from 150 ms on
    /// reads the note (27 of 27 per note at 48 kHz; before, 0 of 27: the octave up).
    @Test(arguments: sampleRates)
    func anOrganNoteWhoseOddPartialsSoundOverAWeakFundamentalIsTheNote(sampleRateHz: Double) throws {
        for reading in try steadyOrganReadings(harmonicAmplitudes: [0.056, 1, 0.2, 0.6, 0.05, 0.3, 0, 0.2], sampleRateHz: sampleRateHz) {
            #expect(reading.read * 10 >= reading.scored * 9, "\(reading)")
        }
    }

    /// The organ above as FluidR3's E1–E3 sound (pitch finding 29): the 8' fundamental speaks
    /// late, rising at 60 dB/s from 40 dB under the 4' rank, its third partial 14 dB under it.
    /// From 150 to 350 ms the fundamental lies 31 to 19 dB under the second partial, under the
    /// −20 dB support, but it is the note's own partial (it reads its frequency), its third
    /// partial sounds and it grows. Every frame read the octave up (0 of 12–13 read the note);
    /// since the octave below is supported by its odd partials (pitch finding 53) 6–9 of them
    /// read the note, and since that support is asked at r ≥ 0.85 instead of 0.95 with the
    /// fundamental at −25 dB instead of −30 (finding 54: the corpus's organs read better; at
    /// −30 dB the lower r let FluidR3's steel guitar's ringing fifths read an octave low) 3–4
    /// of them, from ~250 ms on. A known issue: finding 29's evidence read ≥ 90 % of
    /// them but cost up to 21 µs a hop; asked for only where the kept spectrum holds the third
    /// partial (finding 30, commit eae65a1) it still read them, and cost an organ's hop +20 µs.
    @Test(arguments: sampleRates)
    func anOrganWhoseWeakFundamentalSpeaksUnderAFourFootRankIsTheNote(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        let upper: [Double] = [0, 1, 0.2, 0.6, 0.03, 0.3, 0, 0.2]  // partials 1–8; the fundamental apart
        for note in [33, 36, 40, 45, 50] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let signal: [Float] = (0..<Int(0.35 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                var value = pow(10, (-40 + 60 * time) / 20) * sin(2 * .pi * frequencyHz * time)
                for (harmonic, amplitude) in upper.enumerated() where amplitude != 0 {
                    value += amplitude * sin(2 * .pi * frequencyHz * Double(harmonic + 1) * time + Double(harmonic))
                }
                return Float(0.15 * value * min(1, time / 0.02))
            }
            analyzer.reset()
            let scored = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames]).filter { frame in
                Double(frame.streamFrame) / sampleRateHz >= 0.15
            }
            let read = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note)) < 0.5 }.count
            let octaveUp = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note + 12)) < 0.5 }.count
            withKnownIssue("an organ's 8' speaking late under its 4' reads the octave up (docs/accuracy.md, pitch finding 29)") {
                #expect(read * 10 >= scored.count * 9,
                        "MIDI \(note) at \(sampleRateHz) Hz: \(read) of \(scored.count) frames read the note, \(octaveUp) its octave up")
            }
        }
    }

    /// A guard for any weak-fundamental evidence (docs/accuracy.md, pitch findings 27 and 29):
    /// below ~207 Hz the Hann window's main lobe at a low note's fundamental leaks into half its
    /// frequency at −9 to −45 dB, so an exact harmonic tone or a bass string seems to hold a weak
    /// partial at its octave below. That leakage reads the note's frequency, not half of it, and
    /// must not earn the octave below: every frame from 100 ms on reads the note (with leakage
    /// taken for a weak fundamental, E1–E3 read an octave low on many frames).
    @Test(arguments: sampleRates)
    func lowHarmonicTonesAndPluckedBassAreNotReadAnOctaveLow(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let hopFrames = Int((sampleRateHz / 60).rounded())
        let timbres: [(name: String, partials: [Double], decayDecibelsPerSecond: Double)] = [
            ("1/k, 8 partials", (1...8).map { 1 / Double($0) }, 0),
            ("plucked bass", [1, 0.7, 0.45, 0.3, 0.2, 0.12], 12),
        ]
        for timbre in timbres {
            for note in stride(from: 28, through: 52, by: 4) {
                let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
                let tone = TestSignals.harmonicTone(fundamentalHz: frequencyHz, harmonicAmplitudes: timbre.partials,
                                                    sampleRateHz: sampleRateHz, seconds: 0.8)
                let signal = tone.enumerated().map { index, value in
                    Float(0.2 * pow(10, -timbre.decayDecibelsPerSecond * Double(index) / sampleRateHz / 20)) * value
                }
                analyzer.reset()
                let scored = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [hopFrames]).filter { frame in
                    Double(frame.streamFrame) / sampleRateHz >= 0.1
                }
                let read = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note)) < 0.5 }.count
                let octaveLow = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(note - 12)) < 0.5 }.count
                #expect(read == scored.count && octaveLow == 0,
                        "\(timbre.name), MIDI \(note) at \(sampleRateHz) Hz: \(read) of \(scored.count) frames read the note, \(octaveLow) its octave below")
            }
        }
    }

    /// A melody leaping up an octave while the previous note still rings (in the corpus FluidR3's
    /// nylon guitar E♭3 → E♭4 and D4 → D5, the cello at each leap: docs/accuracy.md, findings 12
    /// and 13). At the new note's attack the old fundamental stands 2.5 dB above the new one and
    /// fades through its release, so the window repeats far better at the old period (in the
    /// corpus r 0.99 against 0.74–0.86 at the new one) and the new note is only the octave-above
    /// candidate, which pays as if it were a mutation: the old note is read until its
    /// fundamental lies about 8 dB under the new one (here, with the old note releasing at
    /// 30 dB/s, 400 ms after the leap: none of the frames scored). No evidence within one window tells this from a mutation,
    /// a swell or a slow organ pipe (finding 13: tried and lost), so this is a known issue until
    /// the decision looks at the note's history.
    @Test(arguments: [(43, 55), (51, 63), (62, 74)])
    func anOctaveLeapUpOverTheRingingPreviousNoteReadsTheNewNote(from oldNote: Int, to newNote: Int) throws {
        // The old note sustains at −3 dB/s, then releases at −30 dB/s from the new note's onset;
        // the new one starts (5 ms) 2.5 dB under the old fundamental and sustains at −3 dB/s.
        let signal = Self.noteOverRingingPreviousNote(oldNote: oldNote, newNote: newNote, partials: [1, 0.5, 0.35, 0.25, 0.15, 0.1],
                                                      sustainDecibelsPerSecond: 3, releaseDecibelsPerSecond: 30, leadDecibels: -2.5)
        let reading = try Self.readingAfterStep(signal, newNote: newNote, otherNote: oldNote)
        withKnownIssue("the octave decision reads the ringing previous note an octave under the new one (docs/accuracy.md, finding 13)") {
            #expect(reading.newNoteFrames * 10 >= reading.scored * 9,
                    "MIDI \(oldNote) → \(newNote): \(reading.newNoteFrames) of \(reading.scored) frames read the new note, \(reading.otherFrames) the old one")
        }
    }

    /// A melody stepping down a fifth while the previous note still rings (in the corpus
    /// FluidR3's steel guitar G4 → C4): the old note is the new one's octave below's third
    /// partial, so the two together repeat at that octave below. Plucked, both decaying at
    /// −6 dB/s, the old note releasing at −20 dB/s from the new one's onset. Struck 6 dB over
    /// the old note, the new note is read on every frame from 100 to 400 ms after the step,
    /// never its octave below. Struck level with it, the mixture repeats at the octave below
    /// better than at the new note (r 0.998 against the new note's lower maximum) and is read
    /// there until the old note has faded (MIDI 67 → 60: 5 of 18 frames read the new note, 13
    /// its octave below): a known issue, the decision has no evidence within one window that
    /// the octave below's partials belong to two notes.
    @Test(arguments: [(67, 60), (62, 55), (57, 50)])
    func aFifthDownOverTheRingingPreviousNoteIsNotReadAnOctaveLow(from oldNote: Int, to newNote: Int) throws {
        for leadDecibels in [6.0, 0] {
            let signal = Self.noteOverRingingPreviousNote(oldNote: oldNote, newNote: newNote, partials: [1, 0.6, 0.4, 0.3, 0.2, 0.1],
                                                          sustainDecibelsPerSecond: 6, releaseDecibelsPerSecond: 20, leadDecibels: leadDecibels)
            let reading = try Self.readingAfterStep(signal, newNote: newNote, otherNote: newNote - 12)
            let described = "MIDI \(oldNote) → \(newNote), struck \(leadDecibels) dB over the old note: \(reading.newNoteFrames) of \(reading.scored) frames read the new note, \(reading.otherFrames) its octave below"
            if leadDecibels > 0 {
                #expect(reading.newNoteFrames == reading.scored && reading.otherFrames == 0, "\(described)")
            } else {
                withKnownIssue("a level mixture with the previous note a fifth above repeats at the new note's octave below and is read there (docs/accuracy.md, pitch finding 54)") {
                    #expect(reading.newNoteFrames * 10 >= reading.scored * 9, "\(described)")
                }
            }
        }
    }

    /// A step from `oldNote` to `newNote` (harmonic tones of `partials`, 48 kHz, 1.3 s): the old
    /// note from the start, sustaining at −`sustainDecibelsPerSecond` and releasing at
    /// −`releaseDecibelsPerSecond` from the new note's onset at 0.7 s; the new one from then
    /// (5 ms attack) `leadDecibels` over the old note's level there, sustaining alike.
    static func noteOverRingingPreviousNote(oldNote: Int, newNote: Int, partials: [Double], sustainDecibelsPerSecond: Double,
                                            releaseDecibelsPerSecond: Double, leadDecibels: Double) -> [Float] {
        let sampleRateHz = 48_000.0, onsetSeconds = 0.7, totalSeconds = 1.3
        let old = TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: Double(oldNote)), harmonicAmplitudes: partials,
                                           sampleRateHz: sampleRateHz, seconds: totalSeconds)
        let new = TestSignals.harmonicTone(fundamentalHz: TestSignals.frequencyHz(midiNote: Double(newNote)), harmonicAmplitudes: partials,
                                           sampleRateHz: sampleRateHz, seconds: totalSeconds - onsetSeconds)
        func decibels(_ value: Double) -> Double { pow(10, value / 20) }
        let onset = Int(onsetSeconds * sampleRateHz)
        return (0..<old.count).map { index in
            let seconds = Double(index) / sampleRateHz
            let oldGain = 0.3 * decibels(-sustainDecibelsPerSecond * min(seconds, onsetSeconds) - releaseDecibelsPerSecond * max(0, seconds - onsetSeconds))
            guard index >= onset else { return Float(oldGain) * old[index] }
            let since = seconds - onsetSeconds
            let newGain = 0.3 * decibels(-sustainDecibelsPerSecond * onsetSeconds + leadDecibels - sustainDecibelsPerSecond * since) * min(1, since / 0.005)
            return Float(oldGain) * old[index] + Float(newGain) * new[index - onset]
        }
    }

    /// How a fresh analyzer reads `signal` (`noteOverRingingPreviousNote`) from 100 to 400 ms
    /// after the step (one frame per 800-frame hop): the frames reading `newNote` and those
    /// reading `otherNote`.
    static func readingAfterStep(_ signal: [Float], newNote: Int, otherNote: Int) throws -> (scored: Int, newNoteFrames: Int, otherFrames: Int) {
        let sampleRateHz = 48_000.0, onsetSeconds = 0.7
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let scored = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [800]).filter { frame in
            let seconds = Double(frame.streamFrame) / sampleRateHz - onsetSeconds
            return seconds >= 0.1 && seconds <= 0.4
        }
        return (scored.count, scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(newNote)) < 0.5 }.count,
                scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(otherNote)) < 0.5 }.count)
    }

    /// The held-out corpus's largest octave-error class: an organ read an octave up in its first
    /// 400 ms (docs/accuracy.md, findings 13 and 15). An organ-like tone whose 4' rank (the even
    /// partials) speaks at once while its 8' fundamental speaks late, from 25 dB under the second
    /// partial to level with it over 400 ms (the odd partials 3 and 5 at −26 dB, a registration
    /// without a strong 8' reed): its fundamental's note is read once the fundamental has
    /// spoken (asserted, 500–800 ms), but from 100 to 400 ms only while the fundamental lies
    /// within about 15 dB of the second partial (on the tuner of finding 15: A2 13, E3 and A3 11
    /// of 19 frames, the rest the octave up). A known issue: within one window such a pipe
    /// looks like a mutation over a missing fundamental (finding 13), and a path over hops that
    /// must decide as it goes (finding 15) reads what the first windows held.
    @Test(arguments: [45, 52, 57])
    func anOrganLikeToneWhoseFundamentalSpeaksLateKeepsItsOctave(midiNote: Int) throws {
        let sampleRateHz = 48_000.0
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let frequencyHz = TestSignals.frequencyHz(midiNote: Double(midiNote))
        let upper: [Double] = [0, 1, 0.05, 0.5, 0.05, 0.3]  // partials 1–6; the fundamental apart
        let seconds = 0.8, speakSeconds = 0.4, startDecibels = -25.0
        let signal: [Float] = (0..<Int(seconds * sampleRateHz)).map { index in
            let time = Double(index) / sampleRateHz
            let fundamental = pow(10, startDecibels * (1 - min(1, time / speakSeconds)) / 20)
            var value = fundamental * sin(2 * .pi * frequencyHz * time)
            for (harmonic, amplitude) in upper.enumerated() where amplitude != 0 {
                value += amplitude * sin(2 * .pi * frequencyHz * Double(harmonic + 1) * time + Double(harmonic))
            }
            return Float(0.1 * value * min(1, time / 0.02))
        }
        let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [800])
        func count(from start: Double, to end: Double) -> (note: Int, octaveUp: Int, scored: Int) {
            let scored = frames.filter { frame in
                let time = Double(frame.streamFrame) / sampleRateHz
                return time >= start && time <= end
            }
            let note = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote)) < 0.5 }.count
            let octaveUp = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote + 12)) < 0.5 }.count
            return (note, octaveUp, scored.count)
        }
        let spoken = count(from: 0.5, to: seconds)
        #expect(spoken.note == spoken.scored, "MIDI \(midiNote), 500–800 ms: \(spoken.note) of \(spoken.scored) frames read the note")
        let speaking = count(from: 0.1, to: speakSeconds)
        withKnownIssue("an organ whose fundamental speaks late reads an octave up (docs/accuracy.md, finding 15)") {
            #expect(speaking.note * 10 >= speaking.scored * 9,
                    "MIDI \(midiNote), 100–400 ms: \(speaking.note) of \(speaking.scored) frames read the note, \(speaking.octaveUp) its octave up")
        }
    }

    /// A voice-like tone (a 5 Hz vibrato of ±20 cents, the fundamental 10 or 20 dB under the
    /// second partial) `seconds` long in pink noise at `signalToNoiseDecibels`, through the
    /// analyser: how many frames after the first 10 read the note and its octave up.
    static func voiceInPinkNoise(midiNote: Int, fundamentalAmplitude: Double, signalToNoiseDecibels: Float,
                                 seconds: Double = 1.5) throws -> (note: Int, octaveUp: Int, scored: Int) {
        let sampleRateHz = 48_000.0
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let frequencyHz = TestSignals.frequencyHz(midiNote: Double(midiNote))
        let partials = [fundamentalAmplitude, 1, 0.6, 0.4, 0.3, 0.2, 0.1]
        var phase = 0.0
        let tone: [Float] = (0..<Int(seconds * sampleRateHz)).map { index in
            let time = Double(index) / sampleRateHz
            phase += 2 * .pi * frequencyHz * pow(2, 20 / 1200 * sin(2 * .pi * 5 * time)) / sampleRateHz
            return Float(0.2 * partials.enumerated().reduce(0) { $0 + $1.element * sin(Double($1.offset + 1) * phase + Double($1.offset)) })
        }
        let noise = TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: seconds)
        func rms(_ signal: [Float]) -> Float { (signal.reduce(0) { $0 + $1 * $1 } / Float(signal.count)).squareRoot() }
        let noiseScale = rms(tone) / rms(noise) * powf(10, -signalToNoiseDecibels / 20)
        let scored = OfflineDriver.frames(&analyzer, signal: zip(tone, noise).map { $0 + noiseScale * $1 }, blockSizes: [800])[10...]
        let note = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote)) < 0.5 }.count
        let octaveUp = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote + 12)) < 0.5 }.count
        return (note, octaveUp, scored.count)
    }

    /// The held-out corpus's largest octave-error class outside the organ is the choir in pink
    /// noise, read an octave up (docs/accuracy.md, findings 8 and 13). A voice-like tone with
    /// its fundamental 10 or 20 dB under its second partial keeps its octave at 10 dB SNR (all
    /// 80 frames of each note on the code of finding 13), so noise alone does not read the choir
    /// up at 10 dB (in the tuning part: its ensemble's flips and the short window's overrule).
    @Test(arguments: [0.3, 0.1])
    func aVoiceLikeToneInPinkNoiseAtTenDecibelsKeepsItsOctave(fundamentalAmplitude: Double) throws {
        for midiNote in [50, 55, 58, 62, 67] {
            let reading = try Self.voiceInPinkNoise(midiNote: midiNote, fundamentalAmplitude: fundamentalAmplitude, signalToNoiseDecibels: 10)
            #expect(reading.octaveUp * 20 <= reading.scored && reading.note * 10 >= reading.scored * 9,
                    "MIDI \(midiNote), fundamental \(fundamentalAmplitude): \(reading.note) of \(reading.scored) frames the note, \(reading.octaveUp) its octave up")
        }
    }

    /// At 0 dB SNR the same tone with its fundamental 20 dB under the second partial reads its
    /// octave up on most frames from D4 (D4 39, G4 51 of 80 on the code of finding 13): the
    /// fundamental does not stand 10 dB above the noise around it, so the octave decision counts
    /// it absent, as it must for an organ's mutation in noise (`partialOverReferenceRatio`,
    /// finding 7). A known issue: within one window the two look alike (finding 13).
    @Test(arguments: [62, 67])
    func aVoiceLikeToneWithAWeakFundamentalInPinkNoiseAtZeroDecibelsKeepsItsOctave(midiNote: Int) throws {
        let reading = try Self.voiceInPinkNoise(midiNote: midiNote, fundamentalAmplitude: 0.1, signalToNoiseDecibels: 0)
        withKnownIssue("a fundamental buried in the noise counts as absent (docs/accuracy.md, finding 13)") {
            #expect(reading.octaveUp * 10 <= reading.scored,
                    "MIDI \(midiNote): \(reading.note) of \(reading.scored) frames the note, \(reading.octaveUp) its octave up")
        }
    }

    /// The voice family's octave errors (docs/accuracy.md, Pitch, finding 17): a choir's "aah"
    /// is an ensemble of voices a few cents apart whose formant puts the second partial far
    /// above the fundamental, so the fundamentals of the voices beat and for moments nearly
    /// cancel (here three voices at −6, 0 and +6 cents, partials 1–6 at 0.2, 1, 0.15, 0.3,
    /// 0.05, 0.1). Then the short window reads the second partial (300 Hz or more: its
    /// reading vetoes the long window's right one as stale), the octave-above candidate wins,
    /// and once the first key maximum has moved to the half period the right one, no longer
    /// the held period, lacks a fundamental within 20 dB of its second partial. On the tuner
    /// of finding 16 A♯3, D4 and G4 read the note on 40, 27 and 33 of 79 frames from 200 ms
    /// on, the octave up on 21, 34 and 28. A known issue:
    /// within one window such a moment looks like a new note an octave up (findings 13, 15, 17).
    @Test(arguments: [58, 62, 67])
    func aChoirLikeEnsembleWithAWeakFundamentalKeepsItsOctave(midiNote: Int) throws {
        let sampleRateHz = 48_000.0
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let frequencyHz = TestSignals.frequencyHz(midiNote: Double(midiNote))
        let partials = [0.2, 1, 0.15, 0.3, 0.05, 0.1], detunesCents = [-6.0, 0, 6], seconds = 1.5
        let signal: [Float] = (0..<Int(seconds * sampleRateHz)).map { index in
            let time = Double(index) / sampleRateHz
            var value = 0.0
            for (voice, cents) in detunesCents.enumerated() {
                let phase = 2 * .pi * frequencyHz * pow(2, cents / 1200) * time
                for (harmonic, amplitude) in partials.enumerated() {
                    value += amplitude * sin(Double(harmonic + 1) * phase + 1.3 * Double(harmonic * voice) + 0.7 * Double(voice))
                }
            }
            return Float(0.05 * value * min(1, time / 0.05))
        }
        let frames = OfflineDriver.frames(&analyzer, signal: signal, blockSizes: [800])
        let scored = frames.filter { Double($0.streamFrame) / sampleRateHz >= 0.2 }
        let note = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote)) < 0.5 }.count
        let octaveUp = scored.filter { $0.pitch.hasNote && abs($0.pitch.midiNote - Float(midiNote + 12)) < 0.5 }.count
        withKnownIssue("a choir's weak, beating fundamental reads an octave up (docs/accuracy.md, finding 17)") {
            #expect(note * 10 >= scored.count * 9,
                    "MIDI \(midiNote): \(note) of \(scored.count) frames read the note, \(octaveUp) its octave up")
        }
    }

    /// A piano's partials are stretched (f_k = k·f·√(1 + B·k²)); autocorrelation follows all of
    /// them and reads sharp, the tuner refines on the first partial's phase.
    @Test(arguments: sampleRates)
    func stretchedPartialsReadAtTheFirstPartial(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let inharmonicity = 0.0004  // a piano's middle octaves: partial 8 is 22 cents sharp
        for note in [55, 60, 69, 76] {
            let frequencyHz = TestSignals.frequencyHz(midiNote: Double(note))
            let partialsHz = (1...8).map { Double($0) * frequencyHz * (1 + inharmonicity * Double($0 * $0)).squareRoot() }
            let signal: [Float] = (0..<Int(0.5 * sampleRateHz)).map { index in
                let seconds = Double(index) / sampleRateHz
                return Float(partialsHz.enumerated().reduce(0) { sum, partial in
                    sum + 0.3 / Double(partial.offset + 1) * sin(2 * .pi * partial.element * seconds)
                })
            }
            let reading = Self.reading(&analyzer, signal)
            let error = Self.centsError(reading, expectedHz: partialsHz[0])
            #expect(abs(error) < 1.5, "MIDI \(note) at \(sampleRateHz) Hz: \(error) cents from the first partial")
        }
    }

    /// Vibrato (5 Hz, ±15 cents) on stretched partials: the refinement on the first partial
    /// must follow the vibrato, not lag it. Its phase advance spans ~50 ms of earlier windows,
    /// so it is compared with the autocorrelation over that same span; compared with the
    /// newest estimate alone it mistook the vibrato's movement for the partials' bias
    /// (median error 5.9 cents here; 1.7 with the same span).
    @Test(arguments: sampleRates)
    func vibratoOnStretchedPartialsIsFollowed(sampleRateHz: Double) throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
        let centreHz = 440.0, depthCents = 15.0, rateHz = 5.0, inharmonicity = 0.0004
        let firstPartialHz: (Double) -> Double = { seconds in
            centreHz * pow(2, depthCents / 1200 * sin(2 * .pi * rateHz * seconds))
        }
        let count = Int(1.5 * sampleRateHz)
        var phase = 0.0
        let signal: [Float] = (0..<count).map { index in
            phase += 2 * .pi * firstPartialHz(Double(index) / sampleRateHz) / sampleRateHz
            var sample = 0.0
            for k in 1...8 {
                let stretch = (1 + inharmonicity * Double(k * k)).squareRoot()
                sample += 0.3 / Double(k) * sin(Double(k) * stretch * phase)
            }
            return Float(sample)
        }
        analyzer.reset()
        let frames = OfflineDriver.frames(&analyzer, signal: signal)
        // Truth: the first partial's mean frequency over the tuner's window (2.2 periods of
        // 38 Hz) ending one hop before the frame (the tracker's median of three lags a hop).
        let windowFrames = (2.2 * (sampleRateHz / 38).rounded(.up)).rounded(.up)
        let hopFrames = Double(frames[1].streamFrame - frames[0].streamFrame)
        var errors: [Double] = []
        for frame in frames where Double(frame.streamFrame) > 0.3 * sampleRateHz && frame.pitch.frequencyHz > 0 {
            let end = Double(frame.streamFrame) - hopFrames, start = end - windowFrames
            var sumHz = 0.0
            for step in 0..<64 {
                let seconds = (start + (Double(step) + 0.5) * windowFrames / 64) / sampleRateHz
                sumHz += firstPartialHz(seconds)
            }
            let meanHz = sumHz / 64
            errors.append(abs(Self.centsError(frame.pitch, expectedHz: meanHz)))
        }
        let median = errors.sorted()[errors.count / 2]
        #expect(errors.count > 60 && median < 2.5, "\(sampleRateHz) Hz: median \(median) cents over \(errors.count) frames")
    }

    @Test func noteNamesUseScientificPitchNotation() {
        let names = [(28, "E1"), (40, "E2"), (60, "C4"), (61, "C#4"), (69, "A4"), (96, "C7")].map { number, _ in
            PitchReading(frequencyHz: 1, midiNote: Float(number), noteNumber: Int32(number), cents: 0, confidence: 1).noteName
        }
        #expect(names == ["E1", "E2", "C4", "C#4", "A4", "C7"])
        #expect(PitchReading.none.noteName == nil)
    }
}
