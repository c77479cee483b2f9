import Testing
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// One synthetic regression per class of input the tempo benchmark's held-out part showed
/// failing (issue 14): a tonal click at any phase of the hop, four on the floor with off-beat
/// open hats and sixteenth percussion (also under a clickless kick), funk's dotted-eighth
/// groupings (read at ⅔ before; at 4⁄3 where the dotted eighth lasts whole hops: a known
/// issue), a slow ballad's eighth hats (also through a fill on its off-beats: a known issue), a
/// tempo above the BPM range, a tempo change (the old period's evidence lingered for the
/// autocorrelation's whole memory).
@Suite struct RhythmClassTests {
    static let sampleRateHz = 48_000.0

    /// The tempo readings from `fromSeconds` on that are off `bpm` by more than 2 %.
    static func wrongReadings(_ frames: [AnalysisFrame], bpm: Double, fromSeconds: Double) -> (wrong: Int, of: Int, example: Float) {
        let window = frames.filter { RhythmTests.seconds($0, sampleRateHz) >= fromSeconds }
        let wrong = window.filter { abs(Double($0.tempo.bpm) - bpm) > 0.02 * bpm }
        return (wrong.count, window.count, wrong.first?.tempo.bpm ?? 0)
    }

    /// A 1 kHz click at 120 BPM (a period of exactly 30 hops of 800 samples) reads 120 whatever
    /// its phase within the hop: offsets 0..<800 samples in steps of 100.
    @Test(arguments: Array(stride(from: 0, to: 800, by: 100)))
    func aTonalClickReadsItsTempoAtEveryPhaseOfTheHop(offsetSamples: Int) throws {
        let offsetSeconds = 0.5 + Double(offsetSamples) / Self.sampleRateHz
        let signal = TestSignals.rhythm(.tonalClicks, segments: [(120, 12)], sampleRateHz: Self.sampleRateHz, offsetSeconds: offsetSeconds)
        let frames = try RhythmTests.frames(signal)
        RhythmTests.expectLocked(frames, signal, bpm: 120, fromSeconds: 6, toSeconds: 12, "tonal click, offset \(offsetSamples) samples")
    }

    /// Four on the floor with open hats on the off-beats and rim percussion on the sixteenths
    /// between: the beats land on the kick (within 20 ms), not a sixteenth or an eighth away.
    @Test(arguments: [125.0, 130.0, 135.0])
    func fourOnTheFloorWithOffBeatHatsLandsOnTheKick(bpm: Double) throws {
        let signal = TestSignals.rhythm(.technoOffBeat, segments: [(bpm, 14)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        RhythmTests.expectLocked(frames, signal, bpm: bpm, fromSeconds: 6, toSeconds: 14, "techno \(bpm) BPM")
    }

    /// The same class with a clickless electronic kick under off-beat shakers and sixteenth
    /// percussion that are louder than it above the bass band: the grid still lands on the
    /// kick (within 20 ms), which only the low band marks. (A grid seeded a sixteenth off the
    /// kick fails this by 130–165 ms.)
    @Test(arguments: [122.0, 128.0, 134.0])
    func aClicklessKickUnderLouderOffBeatsLandsOnTheKick(bpm: Double) throws {
        let signal = TestSignals.rhythm(.subKickOffBeat, segments: [(bpm, 14)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        RhythmTests.expectLocked(frames, signal, bpm: bpm, fromSeconds: 6, toSeconds: 14, "sub-kick techno \(bpm) BPM")
    }

    /// Funk (`DrumPattern.funk`: kicks on 1, 1-a, 2-and, 3-e, 3-a, snares on 2 and 4) lands
    /// its beats on the kick on 1 and the snares (within 20 ms), not a sixteenth early on the
    /// kicks of 1-a and 3-a, at 44.1, 48 and 96 kHz. Its snares follow a kick by a sixteenth and
    /// pass the grid's threshold barely (strength ~0.1 against the kicks' 0.5–0.65), so the
    /// grid a sixteenth early (two kicks a bar) has nearly the strength of the beat's (a kick
    /// and two snares), and 120 BPM at 96 kHz landed 125 ms early. The bass band's onsets (the
    /// snares' bodies and the bass note on 3 besides the kick on 1, against two kicks) decide
    /// (`phaseBassPresenceWeight`; tempo findings 21 and 23).
    @Test(arguments: [44_100.0, 48_000.0, 96_000.0])
    func funkLandsItsBeatsOnTheKick(sampleRateHz: Double) throws {
        for bpm in [104.0, 116.0, 120.0] {
            let signal = TestSignals.rhythm(.funk, segments: [(bpm, 14)], sampleRateHz: sampleRateHz)
            let frames = try RhythmTests.frames(signal)
            RhythmTests.expectLocked(frames, signal, bpm: bpm, fromSeconds: 6, toSeconds: 14, "funk \(bpm) BPM at \(sampleRateHz) Hz")
        }
    }

    /// Funk's kicks on 1, 1-a, 2-and (dotted eighths) make a period of a dotted quarter (two
    /// thirds of the tempo) plausible: the tempo reads the beat, never two thirds of it.
    @Test(arguments: [96.0, 104.0, 110.0])
    func funkIsNotReadAtTwoThirds(bpm: Double) throws {
        let signal = TestSignals.rhythm(.funk, segments: [(bpm, 14)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let result = Self.wrongReadings(frames, bpm: bpm, fromSeconds: 7)
        #expect(result.wrong == 0, "funk \(bpm) BPM: \(result.wrong) of \(result.of) readings off, e.g. \(result.example)")
    }

    /// Funk at 128 and 134 BPM reads its tempo, not half of it, at 44.1, 48 and 96 kHz. A known
    /// issue: its bar (4 beats: 112.5 and 107.5 hops of 1/60 s) falls between two whole lags
    /// and its repetitions split between them, while its two bars (225 and 215 hops, four beats
    /// of the half tempo) last whole hops, so the bar's box reads the half tempo's bar 15 %
    /// higher (0.70 against 0.61 at 134), 1.4 nats at the bar's weight, against the 1.6 the
    /// half pays per octave slower: 134 reads 67 at every rate (every reading from 7 s), 128
    /// reads 64 at 48 kHz. The cost per octave 2.2 fixed it and was worse held out (tempo
    /// finding 28).
    @Test(arguments: [44_100.0, 48_000.0, 96_000.0])
    func funkIsNotReadAtHalfWhereItsBarSplitsBetweenTwoLags(sampleRateHz: Double) throws {
        var results: [(bpm: Double, wrong: Int, of: Int, example: Float)] = []
        for bpm in [128.0, 134.0] {
            let signal = TestSignals.rhythm(.funk, segments: [(bpm, 14)], sampleRateHz: sampleRateHz)
            let result = Self.wrongReadings(try RhythmTests.frames(signal), bpm: bpm, fromSeconds: 7)
            results.append((bpm, result.wrong, result.of, result.example))
        }
        withKnownIssue("funk at 134 BPM (and 128 at 48 kHz) reads half: the bar's split between two lags (issue 14)") {
            for result in results {
                #expect(result.wrong == 0, "funk \(result.bpm) BPM at \(sampleRateHz) Hz: \(result.wrong) of \(result.of) readings off, e.g. \(result.example)")
            }
        }
    }

    /// Funk whose kicks run in dotted eighths (3-and, 4-e, 1, 1-a, 2-and) reads its beat, not
    /// the dotted-eighth pulse at 4⁄3 of it, also at tempi whose dotted eighth lasts a whole
    /// number of hops (25, 26, 28 and 23 hops of 800 samples at 48 kHz) while the beat and the
    /// bar do not: the onset signal, sampled once a hop, then repeats at one lag at the dotted
    /// eighth and split between two at the beat and the bar, which the decision's box reading
    /// evens out (docs/accuracy.md, tempo finding 9; at a point reading all four read 4⁄3).
    @Test(arguments: [108.0, 2700.0 / 26, 2700.0 / 28, 2700.0 / 23])
    func funkIsNotReadAtItsDottedEighthPulse(bpm: Double) throws {
        let signal = TestSignals.rhythm(.funkDottedEighth, segments: [(bpm, 16)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let result = Self.wrongReadings(frames, bpm: bpm, fromSeconds: 8)
        #expect(result.wrong == 0, "funk (dotted-eighth kicks) \(bpm) BPM: \(result.wrong) of \(result.of) readings off, e.g. \(result.example)")
    }

    /// The same funk at 88 BPM reads its beat, not its double: a known issue (found on the
    /// gapless change 100 → 88, tempo finding 30, where 88 was read for 6 s and then 176 with its
    /// bar and comb salience unchanged: the beat grid's octave memory turned to the double, whose
    /// opinion takes upper-band onsets halfway between the beats for a two-step's snares,
    /// `TempoEstimator.Parameters.gridOffBeatShare`; this pattern's ghost notes, stabs and
    /// sixteenth hats put many there). Played steadily it reads 176 too.
    @Test func funkWithDottedEighthKicksAt88ReadsItsBeat() throws {
        let signal = TestSignals.rhythm(.funkDottedEighth, segments: [(88, 16)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let result = Self.wrongReadings(frames, bpm: 88, fromSeconds: 8)
        withKnownIssue("funk with dotted-eighth kicks at 88 BPM reads its double (issue 14)") {
            #expect(result.wrong == 0, "funk (dotted-eighth kicks) 88 BPM: \(result.wrong) of \(result.of) readings off, e.g. \(result.example)")
        }
    }

    /// A slow ballad with eighth hats reads its slow tempo, not the double its hats mark.
    @Test(arguments: [60.0, 66.0, 70.0])
    func aSlowBalladWithEighthHatsReadsItsTempo(bpm: Double) throws {
        let signal = TestSignals.rhythm(.ballad, segments: [(bpm, 18)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let result = Self.wrongReadings(frames, bpm: bpm, fromSeconds: 9)
        #expect(result.wrong == 0, "ballad \(bpm) BPM: \(result.wrong) of \(result.of) readings off, e.g. \(result.example)")
    }

    /// A slow ballad with eighth hats whose off-beats are, for two bars, as strong as its beats
    /// (`DrumPattern.balladOffBeatFill`: a snare on every "and") keeps its slow tempo. A known
    /// issue: no grid opinion is involved (the hats veto it); the decision itself reads the
    /// double while the fill lasts, because the hats' evidence counts by how much the beats
    /// differ from the half-beats (`accentContrast`), which the fill evens out: 60 read 120 at
    /// 14.0–14.2 s, 66 read 132 from 14.5 to 20.5 s, 71 read 142 at 11.5 s. The hats' opinion
    /// remembered per pair of octaves fixed it but cost a one-drop its grid's phase
    /// (docs/accuracy.md, tempo finding 14).
    @Test(arguments: [60.0, 66.0, 71.0])
    func aSlowBalladKeepsItsTempoThroughAFillOnTheOffBeats(bpm: Double) throws {
        let bar = 240 / bpm
        let signal = TestSignals.rhythm(sections: [(.ballad, bpm, 3 * bar), (.balladOffBeatFill, bpm, 2 * bar), (.ballad, bpm, 3 * bar)],
                                        sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let result = Self.wrongReadings(frames, bpm: bpm, fromSeconds: 6)
        withKnownIssue("the decision reads the double while the off-beats are as strong as the beats (issue 14)") {
            #expect(result.wrong == 0, "ballad \(bpm) BPM with a fill on the off-beats: \(result.wrong) of \(result.of) readings off, e.g. \(result.example)")
        }
    }

    /// A reggae one-drop reads its slow tempo and keeps it, its beats on the beat (within
    /// 20 ms), not on the skank chords that fill its off-beats as a two-step's snares would
    /// on a grid at half its tempo. (This synthetic one reads slow on its hats' evidence
    /// alone; the rendered ones of the tempo benchmark need the beat grid's remembered
    /// opinion, `TempoEstimatorTests.theGridsOctaveOpinionIsRemembered`. Its grid's phase at
    /// 74–114 BPM: `aOneDropsGridStaysOnTheBeat`.)
    @Test(arguments: [64.0, 70.0])
    func aOneDropReadsItsSlowTempo(bpm: Double) throws {
        let signal = TestSignals.rhythm(.oneDrop, segments: [(bpm, 20)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        RhythmTests.expectLocked(frames, signal, bpm: bpm, fromSeconds: 8, toSeconds: 20, "one-drop \(bpm) BPM")
    }

    /// A one-drop's grid stays on the beat: a known issue at 74–110 BPM (4–14 beats half a beat
    /// off from 6 s). Its skank chords on every off-beat tip the few seconds of onsets the locked
    /// grid's phase check reads (`BeatTracker.phaseSwitchRatio`), and the grid moves onto them
    /// (at 76, 80 and 110) or is seeded there (74). Waiting for the off-beat to be preferred for
    /// 0.5 s before moving fixed 76, 80 and 110 and the tuning part (beat F 0.950 → 0.958) but
    /// cost the held-out part (0.967 → 0.958: drumless intros' grids seeded off the beat moved
    /// back later); weighing the bass band's presence on each grid as the seeding does fixed
    /// all five and the tuning part (0.957) but put a held-out techno grid on its off-beat bass
    /// (0.967 → 0.928): neither kept (tempo finding 31). Weighing the bass band's power after
    /// the beats fixed all five and the tuning part too, but lost held-out breakbeat and funk,
    /// whose kicks fall on the "and"s (0.967 → 0.961, tempo finding 34).
    @Test(arguments: [74.0, 76.0, 80.0, 110.0, 114.0])
    func aOneDropsGridStaysOnTheBeat(bpm: Double) throws {
        let signal = TestSignals.rhythm(.oneDrop, segments: [(bpm, 16)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        withKnownIssue("a one-drop's grid moves onto its skank chords (issue 14)") {
            RhythmTests.expectLocked(frames, signal, bpm: bpm, fromSeconds: 6, toSeconds: 16, "one-drop \(bpm) BPM")
        } when: { bpm < 114 }
    }

    /// A breakbeat's grid stays on the beat, though two of its four kicks fall on the "and"s:
    /// the class that weighing the bass band's power in the half-beat decision lost (held out
    /// `breakbeat-130`, tempo finding 34). With that power's exponent at 2 every beat at 96 BPM
    /// lands half a beat off; at the branch's 0.5 this synthetic one held where the held-out
    /// track did not.
    @Test(arguments: [96.0, 112.0, 130.0])
    func aBreakbeatsGridStaysOnTheBeat(bpm: Double) throws {
        let signal = TestSignals.rhythm(.breakbeat, segments: [(bpm, 16)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        RhythmTests.expectLocked(frames, signal, bpm: bpm, fromSeconds: 6, toSeconds: 16, "breakbeat \(bpm) BPM")
    }

    /// A rock beat above the default range (60–180) reads at the in-range octave (half), never
    /// at a third.
    @Test(arguments: [186.0, 192.0])
    func aTempoAboveTheRangeReadsHalf(bpm: Double) throws {
        let signal = TestSignals.rhythm(.rock, segments: [(bpm, 12)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let result = Self.wrongReadings(frames, bpm: bpm / 2, fromSeconds: 6)
        #expect(result.wrong == 0, "rock \(bpm) BPM: \(result.wrong) of \(result.of) readings off \(bpm / 2), e.g. \(result.example)")
    }

    /// A steady groove is shown from 2.5 s, and nothing else is shown before. A known issue:
    /// every first reading waits until 3.0 s — a lag is read once it holds 1 s of products,
    /// the slowest period's lag (61 hops at 60 BPM) has them at ~2.02 s, just after the 2.0 s
    /// estimate, so the first estimate comes at 2.5 s and the second agreeing one at 3.0 s
    /// (docs/accuracy.md, tempo finding 16). A shorter warm-up with one decisive estimate
    /// shown alone passed this at 2.0–2.5 s but read a click train at 128 as 64 for 0.3 s
    /// (branch `s17-tempo-faster-lock-attempt`).
    @Test(arguments: [80.0, 100.0, 120.0, 140.0])
    func aSteadyGrooveIsShownWithinTwoAndAHalfSeconds(bpm: Double) throws {
        let shownBySeconds = 2.5
        for pattern in [DrumPattern.rock, .fourOnTheFloor, .technoOffBeat] {
            let signal = TestSignals.rhythm(pattern, segments: [(bpm, 6)], sampleRateHz: Self.sampleRateHz)
            let frames = try RhythmTests.frames(signal)
            let early = frames.filter { RhythmTests.seconds($0, Self.sampleRateHz) < shownBySeconds && $0.tempo.bpm > 0 }
            let earlyWrong = Self.wrongReadings(early, bpm: bpm, fromSeconds: 0)
            #expect(earlyWrong.wrong == 0, "\(pattern.name) \(bpm): \(earlyWrong.wrong) readings before \(shownBySeconds) s off \(bpm), e.g. \(earlyWrong.example)")
            let shown = Self.wrongReadings(frames, bpm: bpm, fromSeconds: shownBySeconds)
            withKnownIssue("the first reading waits for 1 s of products at the slowest lag and two agreeing estimates: 3.0 s (issue 14)") {
                #expect(shown.wrong == 0, "\(pattern.name) \(bpm): \(shown.wrong) of \(shown.of) readings from \(shownBySeconds) s off \(bpm) (0 = none yet), e.g. \(shown.example)")
            }
        }
    }

    /// A slow syncopated groove (swung hip-hop at 72–90 BPM, funk at 90) is shown within 4 s
    /// of the start, and right from then on. Until its 4-beat bar's lag (2.7–3.3 s) holds its
    /// products, a faster relative whose bars are read sooner wins the first estimates; with
    /// the bar's lags read after 1 s of products like every other, each of these was shown
    /// at 4.5 s (last wrong reading 4.48 s), with 0.75 s (`TempoEstimator.Parameters.barWarmUpSeconds`)
    /// at 4.0 s (3.98 s; 48 kHz, offline; docs/accuracy.md, tempo finding 24).
    @Test(arguments: [("swung hip-hop", 72.0), ("swung hip-hop", 78.0), ("swung hip-hop", 90.0), ("funk", 90.0)])
    func aSlowSyncopatedGrooveIsShownWithinFourSeconds(style: String, bpm: Double) throws {
        let patterns = ["swung hip-hop": DrumPattern.swungHipHop, "funk": .funk]
        let pattern = try #require(patterns[style])
        let signal = TestSignals.rhythm(pattern, segments: [(bpm, 8)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let shown = Self.wrongReadings(frames, bpm: bpm, fromSeconds: 4.0)
        #expect(shown.wrong == 0, "\(pattern.name) \(bpm): \(shown.wrong) of \(shown.of) readings from 4 s off \(bpm) (0 = none yet), e.g. \(shown.example)")
    }

    /// A sudden change is followed within 4.5 s. Measured (offline, 48 kHz), last wrong reading
    /// after the change: rock and four on the floor 98 → 112 and the off-beat techno groove
    /// 100 → 120 5.0 → 4.5 s since a lock that diverges while its evidence fades is reviewed,
    /// not dropped (`TempoEstimator.Parameters.reviewSeconds`, tempo finding 18: the restarted
    /// autocorrelation is read after one estimate instead of two, with no second without a
    /// tempo); funk 128 → 140 and 125 → 135 4.5 s since the bar is read over a wider window
    /// (tempo finding 17; 125 → 135 still 5.0 s at 96 kHz, which this test does not run).
    @Test(arguments: [("rock", 98.0, 112.0), ("four on the floor", 98.0, 112.0),
                      ("funk", 125.0, 135.0), ("funk", 128.0, 140.0), ("techno", 100.0, 120.0)])
    func aSuddenChangeIsFollowedWithinFourAndAHalfSeconds(style: String, from: Double, to: Double) throws {
        let changeSeconds = 8.0, boundSeconds = 4.5
        let patterns = ["rock": DrumPattern.rock, "four on the floor": .fourOnTheFloor, "funk": .funk, "techno": .technoOffBeat]
        let pattern = try #require(patterns[style])
        let signal = TestSignals.rhythm(pattern, segments: [(from, changeSeconds), (to, 8)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let after = Self.wrongReadings(frames, bpm: to, fromSeconds: changeSeconds + boundSeconds)
        #expect(after.wrong == 0, "\(pattern.name) \(from) → \(to): \(after.wrong) of \(after.of) readings from \(boundSeconds) s after the change off \(to), e.g. \(after.example)")
    }

    /// A groove that changes tempo is read at its new tempo (±2 %) soon after the change: the
    /// old period's evidence no longer lingers for the autocorrelation's whole memory (τ = 3 s;
    /// `TempoEstimator.Parameters.fadingSalienceShare`). Measured (offline, so the machine's
    /// load does not matter), last wrong reading after the change, before → after the fading
    /// memory: 135 → 125 rock, four on the floor, clicks 4.9, 4.9, 4.0 s → 3.0 s each; 100 → 120
    /// 4.5 s each → 4.0, 4.0, 3.5 s. (The off-beat techno groove passed through a second
    /// without a tempo and a restart: 5.0 → 4.0 s and 6.0 → 5.0 s, and since the review of
    /// tempo finding 18 3.5 and 4.5 s with a tempo throughout:
    /// `aTempoChangeKeepsATempoAndIsFollowedWithinFourSeconds`.)
    @Test(arguments: [(135.0, 125.0, 3.5), (100.0, 120.0, 4.25)])
    func aTempoChangeIsFollowedSoon(from: Double, to: Double, boundSeconds: Double) throws {
        let changeSeconds = 8.0
        for pattern in [DrumPattern.rock, .fourOnTheFloor, .clicks] {
            let signal = TestSignals.rhythm(pattern, segments: [(from, changeSeconds), (to, 8)], sampleRateHz: Self.sampleRateHz)
            let frames = try RhythmTests.frames(signal)
            let before = Self.wrongReadings(frames.filter { RhythmTests.seconds($0, Self.sampleRateHz) < changeSeconds }, bpm: from, fromSeconds: 5)
            #expect(before.wrong == 0, "\(pattern.name) \(from) → \(to): \(before.wrong) of \(before.of) readings before the change off \(from), e.g. \(before.example)")
            let after = Self.wrongReadings(frames, bpm: to, fromSeconds: changeSeconds + boundSeconds)
            #expect(after.wrong == 0, "\(pattern.name) \(from) → \(to): \(after.wrong) of \(after.of) readings from \(boundSeconds) s after the change off \(to), e.g. \(after.example)")
        }
    }

    /// A change at a bar line with no gap (the next tempo's first bar starts where the last bar
    /// of the old one ends, as in the tempo corpus, unlike the cut-short bar of the other change
    /// tests) is followed within 3.5 s: rock and funk, eight changes each of 8–17 % up and down.
    /// Measured (offline, 48 kHz), the time after the change from which every reading is within
    /// 2 % of the new tempo, with estimates every 0.5 s → every 0.25 s while the evidence fades
    /// (tempo finding 29): rock 2.1–3.0 → 1.9–2.5 s, funk 3.3–4.4 → 2.6–3.4 s (98 → 112, 125 → 135
    /// and 96 → 108 were over 3.5 s). Funk with dotted-eighth kicks is a known issue: the first
    /// agreement after most changes is its 4⁄3 pulse, which it reads for 1–2 s (3.1–4.6 s after
    /// the change; 100 → 88 then reads its double, as a steady 88 does). With the long memory back
    /// 0.5 s after that agreement it read the pulse 3.1–7.6 s, and 125 → 135 never settled
    /// (`TempoEstimator.Parameters.changeHoldSeconds`, tempo finding 30; `SpectrumBench changes`).
    @Test(arguments: ["rock", "funk", "funk, dotted-eighth kicks"])
    func aChangeWithoutAGapIsFollowedWithinThreeAndAHalfSeconds(style: String) throws {
        let patterns = ["rock": DrumPattern.rock, "funk": .funk, "funk, dotted-eighth kicks": .funkDottedEighth]
        let pattern = try #require(patterns[style])
        let boundSeconds = 3.5
        var late: [String] = []
        for (from, to) in TestSignals.gaplessTempoChanges {
            let (signal, changeSeconds) = TestSignals.gaplessTempoChange(pattern, from: from, to: to, sampleRateHz: Self.sampleRateHz)
            let after = Self.wrongReadings(try RhythmTests.frames(signal), bpm: to, fromSeconds: changeSeconds + boundSeconds)
            if after.wrong > 0 { late.append("\(from) → \(to): \(after.wrong) of \(after.of) readings off, e.g. \(after.example)") }
        }
        withKnownIssue("funk with dotted-eighth kicks reads its 4⁄3 pulse after a change (issue 14)") {
            #expect(late.isEmpty, "\(pattern.name), from \(boundSeconds) s after the change: \(late.joined(separator: "; "))")
        } when: { pattern.name == DrumPattern.funkDottedEighth.name }
    }

    /// A change is followed at the pace of the estimates: the first estimate of the new tempo is
    /// right, and the agreement on it (2 of the last 3) waited a whole interval (0.5 s) for the
    /// second. Estimates come every 0.25 s while the shown tempo's evidence fades or is under
    /// review (`TempoEstimator.Parameters.fadingEstimateIntervalSeconds`; offline, 48 kHz, last
    /// reading off by more than 2 % after the change, 0.5 s → 0.25 s: rock 100 → 120 3.98 →
    /// 3.48 s, four on the floor 128 → 174 3.48 → 2.98 s, clicks 135 → 125 2.98 → 2.73 s, funk
    /// 110 → 120 3.98 → 3.48 s, funk 128 → 140 4.48 → 3.73 s; tempo findings 26 and 29). The
    /// synthetic changes pass through a silent gap (the bar the change cuts short is not
    /// finished), which the tempo now treats as a break (`RhythmTests.aOneBarBreakOfSilence…`).
    @Test(arguments: [("rock", 100.0, 120.0, 3.75), ("four on the floor", 128.0, 174.0, 3.25), ("clicks", 135.0, 125.0, 2.85),
                      ("funk", 110.0, 120.0, 3.75), ("funk", 128.0, 140.0, 4.1)])
    func aTempoChangeIsFollowedAtThePaceOfTheEstimates(style: String, from: Double, to: Double, boundSeconds: Double) throws {
        let changeSeconds = 8.0
        let patterns = ["rock": DrumPattern.rock, "four on the floor": .fourOnTheFloor, "clicks": .clicks, "funk": .funk]
        let pattern = try #require(patterns[style])
        let signal = TestSignals.rhythm(pattern, segments: [(from, changeSeconds), (to, 8)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let after = Self.wrongReadings(frames, bpm: to, fromSeconds: changeSeconds + boundSeconds)
        #expect(after.wrong == 0, "\(pattern.name) \(from) → \(to): \(after.wrong) of \(after.of) readings from \(boundSeconds) s after the change off \(to), e.g. \(after.example)")
    }

    /// The same for funk (`DrumPattern.funk`), whose dotted-eighth pulse (4⁄3 of the beat)
    /// correlates at short lags as much as its beat: only its bar (2–4 beats) tells them apart,
    /// and after a change the bar's lags are the last to hold the new tempo
    /// (`TempoEstimator.Parameters.fadingHoldSeconds`). Measured (offline), last wrong reading
    /// after the change, without → with the hold: 125 → 135 8.0 s (168, 180, then 90) → 5.0 s;
    /// 120 → 100 5.0 → 3.5 s; 128 → 140 5.0 → 5.0 s (before the fading memory: 5.0, 4.5,
    /// 4.5 s). Not helped by the hold (the same 5.0, 4.5 and 4.5 s either way; since the
    /// review of tempo finding 18 5.0, 4.0 and 4.0 s, asserted in
    /// `aTempoChangeKeepsATempoAndIsFollowedWithinFourSeconds`): 98 → 112, 104 → 96, 110 → 120. Funk at 128 reads 64 before the
    /// change (not this class), so only the readings after it are checked.
    @Test(arguments: [(125.0, 135.0, 5.5), (120.0, 100.0, 4.0), (128.0, 140.0, 5.5)])
    func aFunkTempoChangeIsFollowedSoon(from: Double, to: Double, boundSeconds: Double) throws {
        let changeSeconds = 8.0
        let signal = TestSignals.rhythm(.funk, segments: [(from, changeSeconds), (to, 8)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let after = Self.wrongReadings(frames, bpm: to, fromSeconds: changeSeconds + boundSeconds)
        #expect(after.wrong == 0, "funk \(from) → \(to): \(after.wrong) of \(after.of) readings from \(boundSeconds) s after the change off \(to), e.g. \(after.example)")
    }

    /// A tempo change where the estimates pass through a stretch without a tempo: funk (whose
    /// dotted-eighth pulse, 4⁄3 of the beat, wins on the short lags until its bar's lags, 2–4
    /// beats, hold the new tempo) and the off-beat techno groove. The lock used to drop there and
    /// the autocorrelation restart, which showed no tempo for 1.5–2 s (the held-out
    /// `change-funk-98-112`: 6.3 s); a lock that diverges while its evidence fades is now kept
    /// under review while the autocorrelation restarts (`TempoEstimator.Parameters.reviewSeconds`,
    /// tempo finding 18). The class asks that the tempo never reads "none" after the change and
    /// reads the new tempo (±2 %) from 4 s after it (issue 14's "worst ≤ 4 s"). Measured
    /// (offline, 48 kHz), readings without a tempo after the change and the last wrong reading,
    /// before → after the review: funk 98 → 112 +3.5…4.5 s, 5.0 s → none, 5.0 s; 104 → 96 and
    /// 110 → 120 +3.0…4.0 s, 4.5 s → none, 4.0 s; off-beat techno 135 → 125 +2.5…3.5 s, 4.0 s →
    /// none, 3.5 s; 100 → 120 +3.5…4.5 s, 5.0 s → none, 4.5 s. Since the synthetic change's
    /// silent gap (the bar the change cuts short is not finished) is a break (missing data, the
    /// tempo reviewed when the music resumes) and estimates come every 0.25 s while the evidence
    /// fades (tempo finding 29): techno 100 → 120 within 4 s; funk 98 → 112 and 104 → 96 read
    /// their 4⁄3 pulse in the review's first estimates (149, 128) and the new tempo from 4.75 s
    /// (104 → 96 was 4.0 s: the old tempo's evidence, eroded by the gap read as zeros, held 104
    /// until the new one won; kept whole over the gap, the fresh funk's 4⁄3 wins first). The 4 s
    /// bound is a known issue for both funk changes.
    @Test(arguments: [("funk", 98.0, 112.0, true), ("funk", 104.0, 96.0, true), ("funk", 110.0, 120.0, false),
                      ("techno", 135.0, 125.0, false), ("techno", 100.0, 120.0, false)])
    func aTempoChangeKeepsATempoAndIsFollowedWithinFourSeconds(style: String, from: Double, to: Double, isKnownIssue: Bool) throws {
        let changeSeconds = 8.0, boundSeconds = 4.0
        let pattern = style == "funk" ? DrumPattern.funk : DrumPattern.technoOffBeat
        let signal = TestSignals.rhythm(pattern, segments: [(from, changeSeconds), (to, 8)], sampleRateHz: Self.sampleRateHz)
        let frames = try RhythmTests.frames(signal)
        let afterChange = frames.filter { RhythmTests.seconds($0, Self.sampleRateHz) >= changeSeconds }
        let withoutTempo = afterChange.filter { $0.tempo.bpm == 0 }
        #expect(withoutTempo.count == 0, "\(pattern.name) \(from) → \(to): \(withoutTempo.count) of \(afterChange.count) readings after the change without a tempo, from \(withoutTempo.first.map { RhythmTests.seconds($0, Self.sampleRateHz) - changeSeconds } ?? 0) s after it")
        let after = Self.wrongReadings(frames, bpm: to, fromSeconds: changeSeconds + boundSeconds)
        let check = {
            #expect(after.wrong == 0, "\(pattern.name) \(from) → \(to): \(after.wrong) of \(after.of) readings from \(boundSeconds) s after the change off \(to), e.g. \(after.example)")
        }
        if isKnownIssue {
            withKnownIssue("funk 98 → 112 and 104 → 96 read their 4⁄3 pulse in the review's first estimates and agree on the new tempo at 4.75 s (issue 14)") { check() }
        } else {
            check()
        }
    }
}
