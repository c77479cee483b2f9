import Foundation

/// A drum or click signal with its true beat times. Allocates; for tests and benchmarks only.
public struct RhythmSignal: Sendable {
    public var samples: [Float]
    /// Every beat (quarter note) of the pattern, in seconds from the start.
    public var beatTimesSeconds: [Double]
    public var sampleRateHz: Double

    public init(samples: [Float], beatTimesSeconds: [Double], sampleRateHz: Double) {
        self.samples = samples
        self.beatTimesSeconds = beatTimesSeconds
        self.sampleRateHz = sampleRateHz
    }

    /// The true beat nearest to `seconds`, and the distance to it in seconds.
    public func nearestBeat(toSeconds seconds: Double) -> (index: Int, errorSeconds: Double) {
        var best = 0
        for (index, time) in beatTimesSeconds.enumerated() where abs(time - seconds) < abs(beatTimesSeconds[best] - seconds) {
            best = index
        }
        return (best, seconds - beatTimesSeconds[best])
    }
}

/// Percussive voices of the synthetic drum patterns.
public enum DrumVoice: Sendable {
    /// A metronome click: 2 ms of decaying white noise.
    case click
    /// Acoustic-style kick: a sine sweeping 150 → 45 Hz, 120 ms decay, plus a 10 ms noise click.
    case kick
    /// Electronic kick without a click (808 style): the kick's sine sweeping 150 → 45 Hz, 120 ms
    /// decay, nothing above ~200 Hz but its start.
    case subKick
    /// Snare: 180 Hz body (40 ms) and noise (60 ms).
    case snare
    /// Closed hi-hat: noise high-passed at 7 kHz (12 dB/octave), 25 ms decay.
    case hat
    /// Open hi-hat: as the closed one, twice as loud, 50 ms decay (its tail 14 dB under a closed
    /// hat a sixteenth later at 128 BPM).
    case openHat
    /// Shaker: noise high-passed at 2 kHz (12 dB/octave), 30 ms decay, quiet; unlike the hat it
    /// reaches the onset flux band (up to 5 kHz).
    case shaker
    /// A bass note: an 82 Hz sine, 5 ms attack, 150 ms decay (nothing in the hat band).
    case bass
    /// A tonal metronome click: a 1 kHz sine, 1 ms attack, 15 ms decay (a DAW's or a phone's
    /// click; nothing in the hat band, unlike `click`).
    case tonalClick
    /// Rim/percussion: 600 Hz and 1.7 kHz partials plus a little noise, 20 ms decay, quiet
    /// (techno's sixteenth-note percussion).
    case rim
}

/// A one-bar (4/4) drum pattern on a grid of `stepsPerBeat` steps a beat (4: sixteenths).
public struct DrumPattern: Sendable {
    public var name: String
    public var events: [(step: Int, voice: DrumVoice)]
    public var stepsPerBeat: Int

    public init(name: String, events: [(step: Int, voice: DrumVoice)], stepsPerBeat: Int = 4) {
        self.name = name
        self.events = events
        self.stepsPerBeat = stepsPerBeat
    }

    /// A click on every beat.
    public static let clicks = DrumPattern(name: "clicks", events: [(0, .click), (4, .click), (8, .click), (12, .click)])
    /// Rock backbeat: kick on 1 and 3, snare on 2 and 4, hi-hat eighths.
    public static let rock = DrumPattern(name: "rock", events: [(0, .kick), (8, .kick), (4, .snare), (12, .snare)]
        + stride(from: 0, to: 16, by: 2).map { ($0, DrumVoice.hat) })
    /// Four on the floor: kick on every beat, snare (clap) on 2 and 4, off-beat hi-hats.
    public static let fourOnTheFloor = DrumPattern(name: "four on the floor", events: [(0, .kick), (4, .kick), (8, .kick), (12, .kick), (4, .snare), (12, .snare)]
        + stride(from: 2, to: 16, by: 4).map { ($0, DrumVoice.hat) })
    /// A tonal click on every beat.
    public static let tonalClicks = DrumPattern(name: "tonal clicks", events: [(0, .tonalClick), (4, .tonalClick), (8, .tonalClick), (12, .tonalClick)])
    /// Techno (as the tempo benchmark's): kick on every beat, open hats on the off-beats, rim
    /// percussion on sixteenths between the beats, clap on 2 and 4, off-beat sixteenth bass.
    public static let technoOffBeat = DrumPattern(
        name: "techno, off-beat open hats",
        events: [(0, .kick), (4, .kick), (8, .kick), (12, .kick), (4, .snare), (12, .snare)]
            + stride(from: 2, to: 16, by: 4).map { ($0, DrumVoice.openHat) }
            + [3, 7, 11, 13, 15].map { ($0, DrumVoice.rim) } + [2, 3, 6, 7, 10, 11, 14, 15].map { ($0, DrumVoice.bass) })
    /// Electronic four on the floor: a clickless (808-style) kick on every beat and nothing else
    /// there; a loud shaker (four layered) and an open hat on the off-beats and rim percussion
    /// on every other sixteenth, so that above the bass band the off-beats and sixteenths are
    /// louder than the beats: only the low band says where the beat is.
    public static let subKickOffBeat = DrumPattern(
        name: "sub-kick techno, loud off-beat shakers",
        events: [(0, .subKick), (4, .subKick), (8, .subKick), (12, .subKick)]
            + stride(from: 2, to: 16, by: 4).flatMap { [($0, DrumVoice.openHat)] + Array(repeating: ($0, DrumVoice.shaker), count: 4) }
            + stride(from: 1, to: 16, by: 2).map { ($0, DrumVoice.rim) })
    /// Sixteenth-note funk (as the tempo benchmark's): kick on 1, 1-a, 2-and, 3-e, 3-a; snare on
    /// 2 and 4 with ghost notes; sixteenth hats. Its kicks group in dotted eighths, which makes
    /// two thirds of the tempo (a period of a dotted quarter) plausible.
    public static let funk = DrumPattern(
        name: "funk",
        events: [(0, .kick), (3, .kick), (6, .kick), (9, .kick), (11, .kick), (4, .snare), (12, .snare)]
            + (0..<16).map { ($0, DrumVoice.hat) } + [0, 3, 6, 8, 10, 11, 13].map { ($0, DrumVoice.bass) })
    /// Funk whose syncopation makes a dotted-eighth pulse (as the tempo benchmark's funk): kick
    /// on 1, 1-a, 2-and, 3-and and 4-e (from 3-and through the next bar's 2-and, five kicks a
    /// dotted eighth apart), snare on 2 and 4, rims for its ghost notes (1-and, 2-a, 3-e, 4-a),
    /// shakers for its chord stabs (1-e, 2-e, 3-e, 4-and), sixteenth hats, a bass on the kicks
    /// and on 3 and 3-a. Its onsets repeat at a dotted eighth (4⁄3 of the tempo) as much as at
    /// the beat, and its bar only a little more (without the ghost notes and stabs it repeats
    /// far more at the bar, and the tempo reads right).
    public static let funkDottedEighth = DrumPattern(
        name: "funk, dotted-eighth kicks",
        events: [(0, .kick), (3, .kick), (6, .kick), (10, .kick), (13, .kick), (4, .snare), (12, .snare)]
            + (0..<16).map { ($0, DrumVoice.hat) } + [0, 3, 6, 8, 10, 11, 13].map { ($0, DrumVoice.bass) }
            + [2, 7, 9, 15].map { ($0, DrumVoice.rim) } + [1, 5, 9, 14].map { ($0, DrumVoice.shaker) })
    /// A slow ballad: kick on 1 and the "and" of 3, snare on 2 and 4, eighth hats (which fall on
    /// every beat of the double tempo and nowhere between).
    public static let ballad = DrumPattern(name: "ballad", events: [(0, .kick), (10, .kick), (4, .snare), (12, .snare), (0, .bass), (8, .bass)]
        + stride(from: 0, to: 16, by: 2).map { ($0, DrumVoice.hat) })
    /// The ballad with a fill whose off-beats are as strong as its beats: a snare on every
    /// "and" besides those on 2 and 4 (for a bar or two its grid's off-beats argue for the
    /// double tempo, as a two-step's snares would).
    public static let balladOffBeatFill = DrumPattern(name: "ballad, off-beat fill", events: ballad.events
        + [2, 6, 10, 14].map { ($0, DrumVoice.snare) })
    /// Reggae one-drop (as the tempo benchmark's): kick and rim on beat 3 only, eighth hats, a
    /// skank chord (a tonal 1 kHz hit) on every off-beat, a bass on 1, 2, 2-and and 4. Its
    /// off-beats are as loud above the bass band as its beats, like a two-step's snares on a
    /// grid at half its tempo, and its onset signal alone favours the double tempo.
    public static let oneDrop = DrumPattern(name: "one-drop", events: [(8, .kick), (8, .rim)]
        + stride(from: 0, to: 16, by: 2).map { ($0, DrumVoice.hat) } + [2, 6, 10, 14].map { ($0, DrumVoice.tonalClick) }
        + [0, 4, 6, 12].map { ($0, DrumVoice.bass) })
    /// Syncopated two-step (drum & bass / breakbeat): kick on 1 and the "and" of 3, snare on 2
    /// and 4, a ghost kick on the last sixteenth, hi-hat eighths.
    public static let syncopated = DrumPattern(name: "syncopated", events: [(0, .kick), (10, .kick), (15, .kick), (4, .snare), (12, .snare)]
        + stride(from: 0, to: 16, by: 2).map { ($0, DrumVoice.hat) })
    /// Breakbeat (as the tempo benchmark's): kick on 1, 1-and, 3-and and 3-a, snare on 2 and 4
    /// with ghost notes (2-a, 3-e, 4-a), hi-hat eighths and an open hat on 4-and, a bass on 1,
    /// 1-and, 3-and and 3-a. Two of its four kicks fall on the "and"s and one on a beat: the bass
    /// band's energy is stronger half a beat off than on the beat; its snares say where the beat
    /// is.
    public static let breakbeat = DrumPattern(name: "breakbeat", events: [(0, .kick), (2, .kick), (10, .kick), (11, .kick),
                                                                         (4, .snare), (12, .snare), (7, .rim), (9, .rim), (15, .rim)]
        + stride(from: 0, to: 16, by: 2).map { ($0, DrumVoice.hat) } + [(14, DrumVoice.openHat)]
        + [0, 2, 10, 11].map { ($0, DrumVoice.bass) })
    /// Slow rock (as the tempo benchmark's rock): kick on 1, 3 and the "and" of 3, snare on 2
    /// and 4, hi-hat eighths, and an eighth-note bass. Its onset signal alone favours the double
    /// tempo, on whose every beat its hats fall, and nowhere between.
    public static let slowRock = DrumPattern(name: "slow rock", events: [(0, .kick), (8, .kick), (10, .kick), (4, .snare), (12, .snare)]
        + stride(from: 0, to: 16, by: 2).flatMap { [($0, DrumVoice.hat), ($0, DrumVoice.bass)] })
    /// Half-time trap (as in the tempo benchmark's corpus): kick on 1, the "a" of 2 and the "a"
    /// of 3, snare on 3 only, hi-hat eighths and two sixteenths: its hats subdivide its beat.
    public static let halfTimeTrap = DrumPattern(name: "half-time trap", events: [(0, .kick), (7, .kick), (11, .kick), (8, .snare)]
        + (stride(from: 0, to: 16, by: 2).map { $0 } + [13, 15]).map { ($0, DrumVoice.hat) })
    /// Swung hip-hop (as in the tempo benchmark's corpus): sixteenths swung by a third (the
    /// off sixteenths on the triplet), kick on 1, the swung "a" of 2 and the "and" of 3, snare on
    /// 2 and 4, swung sixteenth hats; on a grid of 12 steps a beat.
    public static let swungHipHop = DrumPattern(
        name: "swung hip-hop",
        events: [(0, .kick), (22, .kick), (30, .kick), (12, .snare), (36, .snare)]
            + (0..<16).map { ($0 * 3 + $0 % 2, DrumVoice.hat) } + (0..<8).map { ($0 * 6, DrumVoice.shaker) },
        stepsPerBeat: 12)
}

extension TestSignals {
    /// `pattern` played at each (bpm, seconds) segment in turn (bars continue across a change),
    /// starting `offsetSeconds` in, over optional pink noise.
    public static func rhythm(_ pattern: DrumPattern, segments: [(bpm: Double, seconds: Double)], sampleRateHz: Double,
                              offsetSeconds: Double = 0.137, noiseAmplitude: Double = 0, seed: UInt64 = 5) -> RhythmSignal {
        rhythm(sections: segments.map { (pattern, $0.bpm, $0.seconds) }, sampleRateHz: sampleRateHz, offsetSeconds: offsetSeconds,
               noiseAmplitude: noiseAmplitude, seed: seed)
    }

    /// The tempo changes of the gapless set: 8–17 %, up and down.
    public static let gaplessTempoChanges: [(from: Double, to: Double)] =
        [(98, 112), (104, 96), (110, 120), (125, 135), (120, 100), (96, 108), (100, 88), (92, 104)]

    /// A tempo change without a gap, as in the tempo corpus: five whole bars of `from`, the
    /// section ending just before the sixth would start, then 10 s of `to`, whose first bar
    /// starts there. Returns the signal and the change's time (s).
    public static func gaplessTempoChange(_ pattern: DrumPattern, from: Double, to: Double,
                                          sampleRateHz: Double) -> (signal: RhythmSignal, changeSeconds: Double) {
        let offsetSeconds = 0.137
        let changeSeconds = offsetSeconds + 5 * 4 * 60 / from
        let signal = rhythm(sections: [(pattern, from, changeSeconds - 0.01), (pattern, to, 10)],
                            sampleRateHz: sampleRateHz, offsetSeconds: offsetSeconds)
        return (signal, changeSeconds)
    }

    /// Each section's pattern played at its tempo for its length in turn (bars continue across
    /// a change; a bar a section cuts short is not finished by the next), starting
    /// `offsetSeconds` in, over optional pink noise.
    public static func rhythm(sections: [(pattern: DrumPattern, bpm: Double, seconds: Double)], sampleRateHz: Double,
                              offsetSeconds: Double = 0.137, noiseAmplitude: Double = 0, seed: UInt64 = 5) -> RhythmSignal {
        let totalSeconds = sections.reduce(0) { $0 + $1.seconds }
        var samples = noiseAmplitude > 0
            ? pinkNoise(sampleRateHz: sampleRateHz, seconds: totalSeconds, amplitude: noiseAmplitude, seed: seed)
            : [Float](repeating: 0, count: Int(totalSeconds * sampleRateHz))
        var generator = SeededGenerator(seed: seed &+ 1)
        let voices: [DrumVoice: [Float]] = [
            .click: voice(.click, sampleRateHz: sampleRateHz, using: &generator),
            .kick: voice(.kick, sampleRateHz: sampleRateHz, using: &generator),
            .snare: voice(.snare, sampleRateHz: sampleRateHz, using: &generator),
            .hat: voice(.hat, sampleRateHz: sampleRateHz, using: &generator),
            .openHat: voice(.openHat, sampleRateHz: sampleRateHz, using: &generator),
            .shaker: voice(.shaker, sampleRateHz: sampleRateHz, using: &generator),
            .bass: voice(.bass, sampleRateHz: sampleRateHz, using: &generator),
            .tonalClick: voice(.tonalClick, sampleRateHz: sampleRateHz, using: &generator),
            .rim: voice(.rim, sampleRateHz: sampleRateHz, using: &generator),
            .subKick: voice(.subKick, sampleRateHz: sampleRateHz, using: &generator),
        ]
        var beats: [Double] = []
        var segmentStart = 0.0
        var barStart = offsetSeconds
        for segment in sections {
            let pattern = segment.pattern
            let segmentEnd = segmentStart + segment.seconds
            let stepSeconds = 60 / segment.bpm / Double(pattern.stepsPerBeat)
            while barStart < segmentEnd {
                for beat in 0..<4 where barStart + Double(beat * pattern.stepsPerBeat) * stepSeconds < min(segmentEnd, totalSeconds) {
                    beats.append(barStart + Double(beat * pattern.stepsPerBeat) * stepSeconds)
                }
                for event in pattern.events {
                    let time = barStart + Double(event.step) * stepSeconds
                    guard time < segmentEnd else { continue }
                    let start = Int((time * sampleRateHz).rounded())
                    for (offset, value) in voices[event.voice]!.enumerated() where start + offset < samples.count {
                        samples[start + offset] += value
                    }
                }
                barStart += Double(4 * pattern.stepsPerBeat) * stepSeconds
            }
            segmentStart = segmentEnd
        }
        return RhythmSignal(samples: samples, beatTimesSeconds: beats, sampleRateHz: sampleRateHz)
    }

    /// A click on every beat.
    public static func clickTrain(bpm: Double, sampleRateHz: Double, seconds: Double, offsetSeconds: Double = 0.137) -> RhythmSignal {
        rhythm(.clicks, segments: [(bpm, seconds)], sampleRateHz: sampleRateHz, offsetSeconds: offsetSeconds)
    }

    /// A click train to loop (a ToneClient's `loop`): the fewest whole beats lasting at least
    /// `minimumSeconds` whose length is a whole number of frames, so the looped clicks stay
    /// exactly one beat apart across the seam (at 48 kHz: 4 beats at 120 BPM, 5 at 128).
    public static func clickLoop(bpm: Double, sampleRateHz: Double, minimumSeconds: Double = 2, offsetSeconds: Double = 0.137) -> RhythmSignal {
        let framesPerBeat = 60 * sampleRateHz / bpm
        var beats = (minimumSeconds / (60 / bpm)).rounded(.up)
        while abs(beats * framesPerBeat - (beats * framesPerBeat).rounded()) > 1e-6 && beats < 10_000 { beats += 1 }
        return clickTrain(bpm: bpm, sampleRateHz: sampleRateHz, seconds: (beats * framesPerBeat).rounded() / sampleRateHz, offsetSeconds: offsetSeconds)
    }

    static func voice(_ voice: DrumVoice, sampleRateHz: Double, using generator: inout SeededGenerator) -> [Float] {
        // White noise with the same power per Hz at every sample rate (as at 48 kHz), so that a
        // voice sounds the same at 44.1, 48 and 96 kHz.
        let noiseScale = (sampleRateHz / 48_000).squareRoot()
        func noise() -> Double { noiseScale * Double.random(in: -1...1, using: &generator) }
        switch voice {
        case .click:
            return (0..<Int(0.002 * sampleRateHz)).map { Float(0.8 * exp(-Double($0) / sampleRateHz / 0.0005) * noise()) }
        case .kick:
            var phase = 0.0
            return (0..<Int(0.4 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                phase += 2 * .pi * (45 + 105 * exp(-time / 0.04)) / sampleRateHz
                return Float(0.8 * exp(-time / 0.12) * sin(phase) + 0.4 * exp(-time / 0.01) * noise())
            }
        case .subKick:
            var phase = 0.0
            return (0..<Int(0.4 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                phase += 2 * .pi * (45 + 105 * exp(-time / 0.04)) / sampleRateHz
                return Float(0.8 * min(1, time / 0.002) * exp(-time / 0.12) * sin(phase))
            }
        case .snare:
            return (0..<Int(0.3 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                return Float(0.4 * exp(-time / 0.04) * sin(2 * .pi * 180 * time) + 0.5 * exp(-time / 0.06) * noise())
            }
        case .bass:
            return (0..<Int(0.3 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                return Float(0.4 * min(1, time / 0.005) * exp(-time / 0.15) * sin(2 * .pi * 82 * time))
            }
        case .tonalClick:
            return (0..<Int(0.1 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                return Float(0.6 * min(1, time / 0.001) * exp(-time / 0.015) * sin(2 * .pi * 1_000 * time))
            }
        case .rim:
            return (0..<Int(0.1 * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                let partials = 0.6 * sin(2 * .pi * 600 * time) + 0.4 * sin(2 * .pi * 1_700 * time)
                return Float(0.2 * exp(-time / 0.02) * partials + 0.05 * exp(-time / 0.005) * noise())
            }
        case .hat, .openHat, .shaker:
            // Two one-pole high-passes (12 dB/octave below; sample-rate independent): a hat's
            // energy lies mostly above 6 kHz.
            let pole = exp(-2 * .pi * (voice == .shaker ? 2_000 : 7_000) / sampleRateHz)
            let (amplitude, decaySeconds) = switch voice {
            case .hat: (0.3, 0.025)
            case .openHat: (0.6, 0.05)
            default: (0.15, 0.03)
            }
            var input1 = 0.0, output1 = 0.0, output2 = 0.0
            return (0..<Int((voice == .openHat ? 0.9 : 0.12) * sampleRateHz)).map { index in
                let time = Double(index) / sampleRateHz
                let white = noise()
                let first = pole * (output1 + white - input1)
                let second = pole * (output2 + first - output1)
                input1 = white
                output1 = first
                output2 = second
                return Float(amplitude * exp(-time / decaySeconds) * second)
            }
        }
    }
}

/// What plays through a drumless section (a breakdown): pads alone, or pads and a bass line.
public enum DrumlessPart: Sendable {
    /// Sustained chords, one a bar (`TestSignals.pads`).
    case pads
    /// The pads and a bass line: the chord's root on every beat (`TestSignals.pads`).
    case padsAndBass
}

extension TestSignals {
    /// A groove, a drumless breakdown of `breakdownBars` bars (`part`), the groove again, at one
    /// tempo on one bar grid: each groove section lasts the whole bars that fill
    /// `grooveSeconds`, so the breakdown starts and ends on a bar line. `beatTimesSeconds` holds
    /// every beat, the breakdown's too (the grid a light show should keep).
    /// Returns the signal and the breakdown's start and end in seconds.
    public static func breakdown(_ pattern: DrumPattern, bpm: Double, grooveSeconds: Double = 12, breakdownBars: Int = 8,
                                 part: DrumlessPart, sampleRateHz: Double,
                                 offsetSeconds: Double = 0.137) -> (signal: RhythmSignal, startSeconds: Double, endSeconds: Double) {
        let barSeconds = 4 * 60 / bpm
        let start = offsetSeconds + (grooveSeconds / barSeconds).rounded(.up) * barSeconds
        let end = start + Double(breakdownBars) * barSeconds
        let drumless = DrumPattern(name: "drumless", events: [])
        var signal = rhythm(sections: [(pattern, bpm, start), (drumless, bpm, end - start), (pattern, bpm, start - offsetSeconds)],
                            sampleRateHz: sampleRateHz, offsetSeconds: offsetSeconds)
        let pads = pads(bpm: bpm, bars: breakdownBars, sampleRateHz: sampleRateHz, withBass: part == .padsAndBass)
        let first = Int((start * sampleRateHz).rounded())
        for (offset, value) in pads.enumerated() where first + offset < signal.samples.count {
            signal.samples[first + offset] += value
        }
        return (signal, start, end)
    }

    /// Pads: a chord a bar (Imaj7, IVmaj7, vi7, V7 on C3, as the tempo corpus's drumless intros),
    /// each note two detuned voices (±4 cents: the slow beating of a chorus) of five harmonics
    /// falling 6 dB an octave, a 250 ms attack and a 300 ms release overlapping the next chord;
    /// `withBass`, the chord's root two octaves down on every beat (fundamental and octave, 10 ms
    /// attack, 90 % of the beat, 30 ms release).
    public static func pads(bpm: Double, bars: Int, sampleRateHz: Double, amplitude: Double = 0.04, withBass: Bool = false) -> [Float] {
        let progression: [[Double]] = [[0, 4, 7, 11], [5, 9, 12, 16], [-3, 0, 4, 7], [7, 11, 14, 17]]
        let barSeconds = 4 * 60 / bpm, attackSeconds = 0.25, releaseSeconds = 0.3
        var samples = [Float](repeating: 0, count: Int((Double(bars) * barSeconds + releaseSeconds) * sampleRateHz))
        for bar in 0..<bars {
            let barStart = Double(bar) * barSeconds
            for offset in progression[bar % progression.count] {
                let fundamentalHz = frequencyHz(midiNote: 48 + offset)
                for detuneCents in [-4.0, 4.0] {
                    let voiceHz = fundamentalHz * pow(2, detuneCents / 1200)
                    let first = Int(barStart * sampleRateHz), count = Int((barSeconds + releaseSeconds) * sampleRateHz)
                    for index in 0..<count where first + index < samples.count {
                        let time = Double(index) / sampleRateHz
                        let envelope = min(1, time / attackSeconds) * (time > barSeconds ? max(0, 1 - (time - barSeconds) / releaseSeconds) : 1)
                        var value = 0.0
                        for harmonic in 1...5 { value += sin(2 * .pi * voiceHz * Double(harmonic) * time) / Double(harmonic) }
                        samples[first + index] += Float(amplitude * envelope * value)
                    }
                }
            }
            guard withBass else { continue }
            let rootHz = frequencyHz(midiNote: 36 + progression[bar % progression.count][0]), beatSeconds = 60 / bpm
            for beat in 0..<4 {
                let first = Int((barStart + Double(beat) * beatSeconds) * sampleRateHz), noteSeconds = 0.9 * beatSeconds
                for index in 0..<Int((noteSeconds + 0.03) * sampleRateHz) where first + index < samples.count {
                    let time = Double(index) / sampleRateHz
                    let envelope = min(1, time / 0.01) * (time > noteSeconds ? max(0, 1 - (time - noteSeconds) / 0.03) : 1)
                    samples[first + index] += Float(0.25 * envelope * (sin(2 * .pi * rootHz * time) + 0.5 * sin(4 * .pi * rootHz * time)))
                }
            }
        }
        return samples
    }
}

/// What follows a groove that stops (`TestSignals.grooveThatStops`).
public enum StopTail: Sendable {
    /// Pink noise this many dB under the groove's RMS (a noisy line input, a hissing desk).
    case pinkHiss(decibelsUnderGroove: Double)
    /// White noise this many dB under the groove's RMS.
    case whiteHiss(decibelsUnderGroove: Double)
    /// White noise decaying from the groove's RMS by 60 dB in `rt60Seconds` (a hall's reverb).
    case reverbTail(rt60Seconds: Double)
}

extension TestSignals {
    /// A groove at `bpm` for `grooveSeconds`, then `tailSeconds` of `tail` (hiss or a reverb
    /// tail, levels relative to the groove's RMS over its last 4 s): music that stopped, for
    /// which a light show's beats must stop too.
    public static func grooveThatStops(_ pattern: DrumPattern, bpm: Double, grooveSeconds: Double = 10, into tail: StopTail,
                                       tailSeconds: Double = 8, sampleRateHz: Double) -> RhythmSignal {
        var signal = rhythm(pattern, segments: [(bpm, grooveSeconds)], sampleRateHz: sampleRateHz)
        func rms(_ samples: ArraySlice<Float>) -> Double {
            (samples.reduce(0.0) { $0 + Double($1 * $1) } / Double(max(1, samples.count))).squareRoot()
        }
        let grooveRms = rms(signal.samples.suffix(Int(4 * sampleRateHz)))
        switch tail {
        case .pinkHiss(let decibels):
            let pink = pinkNoise(sampleRateHz: sampleRateHz, seconds: tailSeconds, amplitude: 0.5, seed: 9)
            let gain = grooveRms * pow(10, -decibels / 20) / rms(pink[...])
            signal.samples += pink.map { Float(gain) * $0 }
        case .whiteHiss(let decibels):
            let white = whiteNoise(sampleRateHz: sampleRateHz, seconds: tailSeconds, amplitude: 1, seed: 9)
            let gain = grooveRms * pow(10, -decibels / 20) / rms(white[...])
            signal.samples += white.map { Float(gain) * $0 }
        case .reverbTail(let rt60Seconds):
            let white = whiteNoise(sampleRateHz: sampleRateHz, seconds: tailSeconds, amplitude: 1, seed: 9)
            let gain = grooveRms / rms(white[...])
            signal.samples += white.enumerated().map { Float(gain * exp(-log(1000) * Double($0) / sampleRateHz / rt60Seconds)) * $1 }
        }
        return signal
    }
}
