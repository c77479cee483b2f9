import Testing
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// Onsets, tempo and beats on synthetic click trains and drum patterns with known beat times.
@Suite struct RhythmTests {
    /// The test clients' looped click trains stay one beat apart across the loop's seam.
    @Test(arguments: [(120.0, 48_000.0, 96_000), (128, 48_000, 112_500), (128, 44_100, 165_375), (120, 44_100, 88_200)])
    func aClickLoopIsAWholeNumberOfBeatsAndFrames(bpm: Double, sampleRateHz: Double, expectedFrames: Int) throws {
        let loop = TestSignals.clickLoop(bpm: bpm, sampleRateHz: sampleRateHz)
        #expect(loop.samples.count == expectedFrames)
        let beatSeconds = 60 / bpm
        let first = try #require(loop.beatTimesSeconds.first), last = try #require(loop.beatTimesSeconds.last)
        #expect(abs(last + beatSeconds - (first + Double(loop.samples.count) / sampleRateHz)) < 1e-9)
    }

    static let sampleRates: [Double] = [44_100, 48_000, 96_000]
    static let tempos: [Double] = [70, 100, 120, 128, 140, 174]

    static func frames(_ signal: RhythmSignal, configuration: AnalysisConfiguration = AnalysisConfiguration(),
                       blockSizes: [Int] = [512]) throws -> [AnalysisFrame] {
        var analyzer = try Analyzer(configuration: configuration, sampleRateHz: signal.sampleRateHz)
        return OfflineDriver.frames(&analyzer, signal: signal.samples, blockSizes: blockSizes)
    }

    static func seconds(_ frame: AnalysisFrame, _ sampleRateHz: Double) -> Double {
        Double(frame.streamFrame) / sampleRateHz
    }

    /// From `fromSeconds` to `toSeconds`: BPM within ±1 of `bpm` on every frame, and every beat
    /// event within ±20 ms of a true beat, with no beat missed or doubled.
    static func expectLocked(_ frames: [AnalysisFrame], _ signal: RhythmSignal, bpm: Double,
                             fromSeconds: Double, toSeconds: Double, _ label: String) {
        let rate = signal.sampleRateHz
        let window = frames.filter { seconds($0, rate) >= fromSeconds && seconds($0, rate) < toSeconds }
        let wrong = window.filter { abs(Double($0.tempo.bpm) - bpm) > 1 }
        #expect(wrong.count == 0, "\(label): \(wrong.count) of \(window.count) frames off by more than 1 BPM, e.g. \(wrong.first?.tempo.bpm ?? 0) at \(wrong.first.map { seconds($0, rate) } ?? 0) s")
        let beats = window.filter { $0.beat.isBeat }
        var matched = Set<Int>()
        for beat in beats {
            let nearest = signal.nearestBeat(toSeconds: beat.beat.timeFrames / rate)
            #expect(abs(nearest.errorSeconds) <= 0.020, "\(label): beat at \(beat.beat.timeFrames / rate) s is \(nearest.errorSeconds * 1000) ms from a true beat")
            matched.insert(nearest.index)
        }
        #expect(matched.count == beats.count, "\(label): two beat events for one beat")
        // Every true beat inside the window (half a beat from its edges) has an event.
        let period = 60 / bpm
        let expected = signal.beatTimesSeconds.filter { $0 >= fromSeconds + period / 2 && $0 < toSeconds - period / 2 }.count
        #expect(beats.count >= expected, "\(label): \(beats.count) beat events for \(expected) beats")
    }

    @Test(arguments: sampleRates)
    func clickTrainsAndDrumPatternsLockWithinFourSeconds(sampleRateHz: Double) throws {
        for pattern in [DrumPattern.clicks, .rock, .fourOnTheFloor] {
            for bpm in Self.tempos {
                let signal = TestSignals.rhythm(pattern, segments: [(bpm, 6)], sampleRateHz: sampleRateHz)
                let frames = try Self.frames(signal)
                Self.expectLocked(frames, signal, bpm: bpm, fromSeconds: 4, toSeconds: 6, "\(pattern.name) \(bpm) BPM at \(sampleRateHz) Hz")
            }
        }
    }

    /// The hat cue end to end (its decisions alone: `TempoEstimatorTests`): a slow rock beat
    /// (kick 1, 3, 3-and; snare 2, 4; eighth bass, which makes the onset signal favour the
    /// double; eighth hats, which fall on every beat of the double and nowhere between) reads
    /// its slow tempo, and a half-time trap beat (snare on 3 only),
    /// whose hats subdivide its beat, keeps its fast one. The octave is asserted, BPM within 2 %
    /// from 6 s (slow rock at 62 BPM shows 124 until ~5.5 s: its synthetic kick and snare reach
    /// the hat band, which takes that long to show itself a layer of its own), not the beats: at 96 kHz this synthetic trap's grid may lock on its syncopated
    /// kicks a sixteenth early, which also pulls the fitted tempo ~1 BPM low (145 → 144.0).
    @Test(arguments: sampleRates)
    func slowRockStaysSlowAndHalfTimeTrapStaysFast(sampleRateHz: Double) throws {
        for (pattern, bpm) in [(DrumPattern.slowRock, 62.0), (.slowRock, 72), (.halfTimeTrap, 140), (.halfTimeTrap, 145)] {
            let signal = TestSignals.rhythm(pattern, segments: [(bpm, 10)], sampleRateHz: sampleRateHz)
            let frames = try Self.frames(signal).filter { Self.seconds($0, sampleRateHz) >= 6 }
            let wrong = frames.filter { abs(Double($0.tempo.bpm) - bpm) > 0.02 * bpm }
            #expect(wrong.count == 0, "\(pattern.name) \(bpm) BPM at \(sampleRateHz) Hz: \(wrong.count) of \(frames.count) frames off, e.g. \(wrong.first?.tempo.bpm ?? 0)")
        }
    }

    @Test(arguments: tempos)
    func syncopatedPatternLocksAtItsTempo(bpm: Double) throws {
        // Known weakness: at 70 BPM the hat eighths and the kick on the "and" of 3 make 140 as
        // plausible as 70, and the analyser may pick 140; at 128 the one tempo decision (issue
        // 14) reads 64 for about a second (5–6 s) before it settles on 128, since this pattern's
        // autocorrelation at one beat is near 0 (its beats are mostly empty); see docs/dsp.md.
        let fragile: Set<Double> = [70, 128]
        let signal = TestSignals.rhythm(.syncopated, segments: [(bpm, 8)], sampleRateHz: 48_000)
        let frames = try Self.frames(signal)
        if fragile.contains(bpm) {
            withKnownIssue("syncopated pattern at \(bpm) BPM may lock an octave off", isIntermittent: true) {
                Self.expectLocked(frames, signal, bpm: bpm, fromSeconds: 4.5, toSeconds: 8, "syncopated \(bpm) BPM")
            }
        } else {
            Self.expectLocked(frames, signal, bpm: bpm, fromSeconds: 4.5, toSeconds: 8, "syncopated \(bpm) BPM")
        }
    }

    /// Swung hip-hop also fits the double tempo (its off-beats are 16th-note swing positions);
    /// the half-tempo check (every other beat of the 172 grid nearly empty, the snare on every
    /// fourth beat) brings it back to the slower one.
    @Test(arguments: [86.0, 90.0])
    func swungHipHopReadsItsTempoNotTheDouble(bpm: Double) throws {
        let signal = TestSignals.rhythm(.swungHipHop, segments: [(bpm, 16)], sampleRateHz: 48_000)
        let frames = try Self.frames(signal)
        Self.expectLocked(frames, signal, bpm: bpm, fromSeconds: 10, toSeconds: 16, "swung hip-hop \(bpm) BPM")
    }

    @Test(arguments: [(120.0, 128.0), (100.0, 140.0)])
    func tempoChangesAreFollowedWithinFiveSeconds(from: Double, to: Double) throws {
        for pattern in [DrumPattern.clicks, .rock] {
            let signal = TestSignals.rhythm(pattern, segments: [(from, 6), (to, 9)], sampleRateHz: 48_000)
            let frames = try Self.frames(signal)
            Self.expectLocked(frames, signal, bpm: from, fromSeconds: 4, toSeconds: 6, "\(pattern.name) before \(from) → \(to)")
            Self.expectLocked(frames, signal, bpm: to, fromSeconds: 11, toSeconds: 15, "\(pattern.name) after \(from) → \(to)")
        }
    }

    /// A jump to a fast tempo, whose 2/3 (the dotted-quarter pulse) is in the range too, is
    /// followed within 5 s (guards the triple check; the synthetic kit does not need its 0.9
    /// margin — the rendered `change-house-128-174` of the benchmark does).
    @Test func fourOnTheFloorJumpFrom128To174IsFollowed() throws {
        let signal = TestSignals.rhythm(.fourOnTheFloor, segments: [(128, 6), (174, 12)], sampleRateHz: 48_000)
        let frames = try Self.frames(signal)
        Self.expectLocked(frames, signal, bpm: 128, fromSeconds: 4, toSeconds: 6, "four on the floor before 128 → 174")
        Self.expectLocked(frames, signal, bpm: 174, fromSeconds: 11, toSeconds: 18, "four on the floor after 128 → 174")
    }

    @Test(arguments: sampleRates)
    func silenceTonesAndNoiseHaveNoTempoAndNoBeats(sampleRateHz: Double) throws {
        let signals: [(String, [Float])] = [
            ("silence", TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 6)),
            ("220 Hz tone", TestSignals.sine(frequencyHz: 220, sampleRateHz: sampleRateHz, seconds: 6)),
            ("55 Hz tone", TestSignals.sine(frequencyHz: 55, sampleRateHz: sampleRateHz, seconds: 6, amplitude: 0.8)),
            ("pink noise", TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 10)),
            ("white noise", TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 8, amplitude: 0.3)),
        ]
        for (name, samples) in signals {
            var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: sampleRateHz)
            let frames = OfflineDriver.frames(&analyzer, signal: samples)
            let locked = frames.filter { $0.tempo.bpm != 0 }.count
            let beats = frames.filter { $0.beat.isBeat }.count
            #expect(locked == 0 && beats == 0, "\(name) at \(sampleRateHz) Hz: \(locked) frames with a tempo, \(beats) beats")
            #expect(frames.allSatisfy { $0.tempo.phase == 0 && $0.tempo.confidence.isFinite })
        }
    }

    /// When the music stops, the tempo and the beats stop soon after: lights must not pulse on
    /// into the silence between songs. (The silence gate read the flux's variance with the
    /// tempo memory, τ = 3 s, and closed ~20 s into digital silence: tempo and beats went on
    /// 20.5 s; now over the last `silenceWindowSeconds`.)
    @Test(arguments: sampleRates)
    func aGrooveThatStopsLosesItsTempoAndBeatsWithinFiveSeconds(sampleRateHz: Double) throws {
        let stopSeconds = 10.0
        for pattern in [DrumPattern.rock, .fourOnTheFloor] {
            var signal = TestSignals.rhythm(pattern, segments: [(120, stopSeconds)], sampleRateHz: sampleRateHz)
            signal.samples += TestSignals.silence(sampleRateHz: sampleRateHz, seconds: 8)
            try Self.expectTheBeatsStop(signal, atSeconds: stopSeconds, "\(pattern.name) at \(sampleRateHz) Hz")
        }
    }

    /// A groove at 120 BPM locked from 6 s to its stop at `stopSeconds`, and no tempo or beat
    /// 5 s after it.
    private static func expectTheBeatsStop(_ signal: RhythmSignal, atSeconds stopSeconds: Double, _ label: String) throws {
        let unlockedWithinSeconds = 5.0
        let frames = try Self.frames(signal)
        Self.expectLocked(frames, signal, bpm: 120, fromSeconds: 6, toSeconds: stopSeconds, label)
        let lastLocked = frames.last { $0.tempo.bpm != 0 || $0.beat.isBeat }.map { Self.seconds($0, signal.sampleRateHz) } ?? 0
        #expect(lastLocked > stopSeconds && lastLocked < stopSeconds + unlockedWithinSeconds,
                "\(label): tempo or beats until \(lastLocked) s, the music stopped at \(stopSeconds) s")
    }

    /// When the music stops into hiss or a reverb tail, the tempo and the beats should stop
    /// within 5 s too: the onset autocorrelation, a ratio, still reads the old period in noise
    /// (four on the floor into pink hiss 40 dB under it kept them for 9–10 s, tempo finding 25),
    /// so the "music stopped" decision drops the lock when the grid's last bar holds no onset
    /// and the level has fallen 30 dB under its loudest (tempo finding 27).
    @Test(arguments: [44_100.0, 48_000, 96_000])
    func aGrooveThatStopsIntoHissOrAReverbTailLosesItsTempoAndBeatsWithinFiveSeconds(sampleRateHz: Double) throws {
        let stopSeconds = 10.0
        for pattern in [DrumPattern.rock, .fourOnTheFloor] {
            for tail in [StopTail.pinkHiss(decibelsUnderGroove: 40), .whiteHiss(decibelsUnderGroove: 40), .reverbTail(rt60Seconds: 4)] {
                let signal = TestSignals.grooveThatStops(pattern, bpm: 120, grooveSeconds: stopSeconds, into: tail, sampleRateHz: sampleRateHz)
                try Self.expectTheBeatsStop(signal, atSeconds: stopSeconds, "\(pattern.name) into \(tail) at \(sampleRateHz) Hz")
            }
        }
    }

    /// A bar of digital silence inside a groove (a stop before the drop) is not the music
    /// stopping: the tempo and the beats carry through it and on after. The "music stopped"
    /// decision must not drop the lock there: with a window of 4 beats it did at 100 and
    /// 120 BPM (tempo finding 27). Nor may the silence count as data: read as zeros, it lowered
    /// the lags that span it once the drums returned, and four on the floor at 120 BPM read 60
    /// for 1.5 s from 1.4 s after their return (tempo finding 29).
    @Test(arguments: [100.0, 120, 140])
    func aOneBarBreakOfSilenceKeepsTheTempoAndTheBeats(bpm: Double) throws {
        let barSeconds = 4 * 60 / bpm, offsetSeconds = 0.137
        let breakStart = offsetSeconds + (10 / barSeconds).rounded(.up) * barSeconds
        for pattern in [DrumPattern.rock, .fourOnTheFloor] {
            let silent = DrumPattern(name: "silent", events: [])
            let signal = TestSignals.rhythm(sections: [(pattern, bpm, breakStart), (silent, bpm, barSeconds), (pattern, bpm, 6)],
                                            sampleRateHz: 48_000, offsetSeconds: offsetSeconds)
            let frames = try Self.frames(signal)
            Self.expectLocked(frames, signal, bpm: bpm, fromSeconds: 6, toSeconds: breakStart + barSeconds + 5.5,
                              "\(pattern.name) at \(bpm) BPM with a bar of silence at \(breakStart) s")
        }
    }

    /// A drumless breakdown (8 bars of pads between two drum sections) is music without a pulse:
    /// the tempo and the beat grid should carry on through it (the confidence may fall), and when
    /// the drums return the beats should be on them at once. Known issue (tempo finding 20): the
    /// pads' estimates without a tempo, and their chorus's weak pulse, drop the lock 6.3–7.4 s
    /// in, and the drums re-lock 2.4–4.8 s after their return; a flywheel that fixed this
    /// synthetic class cost the tuning part 96 → 92 % (branch `s19-tempo-breakdown-attempt`).
    @Test(arguments: [110.0, 120, 128])
    func aDrumlessBreakdownKeepsTheTempoAndTheBeats(bpm: Double) throws {
        try withKnownIssue("a drumless breakdown loses the tempo and the drums re-lock late") {
            try expectTheTempoCarriesThroughABreakdown(bpm: bpm)
        }
    }

    private func expectTheTempoCarriesThroughABreakdown(bpm: Double) throws {
        for pattern in [DrumPattern.rock, .fourOnTheFloor] {
            let (signal, start, end) = TestSignals.breakdown(pattern, bpm: bpm, part: .pads, sampleRateHz: 48_000)
            let frames = try Self.frames(signal)
            let label = "\(pattern.name) at \(bpm) BPM"
            let inBreakdown = frames.filter { Self.seconds($0, 48_000) >= start && Self.seconds($0, 48_000) < end }
            let wrong = inBreakdown.filter { abs(Double($0.tempo.bpm) - bpm) > 1 }
            #expect(wrong.isEmpty, "\(label): \(wrong.count) of \(inBreakdown.count) breakdown frames off by more than 1 BPM, from \(wrong.first.map { Self.seconds($0, 48_000) - start } ?? 0) s in")
            let beats = inBreakdown.filter { $0.beat.isBeat }.map { $0.beat.timeFrames / 48_000 }
            let onGrid = beats.filter { abs(signal.nearestBeat(toSeconds: $0).errorSeconds) <= 0.07 }
            let expected = signal.beatTimesSeconds.filter { $0 >= start && $0 < end }.count
            #expect(onGrid.count == beats.count && beats.count >= expected - 1,
                    "\(label): \(beats.count) beats in the breakdown (\(onGrid.count) within 70 ms of the grid) for \(expected)")
            Self.expectLocked(frames, signal, bpm: bpm, fromSeconds: end, toSeconds: end + 6, "\(label) after the breakdown")
        }
    }

    @Test func clickOnsetsAreFoundAtTheirSample() throws {
        for sampleRateHz in Self.sampleRates {
            let signal = TestSignals.clickTrain(bpm: 100, sampleRateHz: sampleRateHz, seconds: 4)
            let onsets = try Self.frames(signal).filter { $0.onset.isOnset }
            #expect(onsets.count == signal.beatTimesSeconds.count, "\(sampleRateHz) Hz: \(onsets.count) onsets")
            for frame in onsets {
                let error = signal.nearestBeat(toSeconds: frame.onset.timeFrames / sampleRateHz).errorSeconds
                #expect(abs(error) < 0.001, "\(sampleRateHz) Hz: onset \(error * 1000) ms from its click")
                #expect(frame.onset.strength > 0 && frame.onset.strength <= 1)
                // The onset lies in the newest hop and a half of its frame.
                #expect(frame.onset.timeFrames < Double(frame.streamFrame))
            }
        }
    }

    /// Hi-hats alone (energy above 6 kHz, outside the onset flux bands) are reported through the
    /// hat band, at their sample.
    @Test func hiHatsAreReportedAsOnsets() throws {
        let hats = DrumPattern(name: "hats", events: stride(from: 0, to: 16, by: 2).map { ($0, DrumVoice.hat) })
        for sampleRateHz in Self.sampleRates {
            let signal = TestSignals.rhythm(hats, segments: [(120, 4)], sampleRateHz: sampleRateHz)
            let hatTimes = (0..<16).map { 0.137 + Double($0) * 0.25 }
            let onsets = try Self.frames(signal).filter { $0.onset.isOnset }
            #expect(onsets.count == hatTimes.count, "\(sampleRateHz) Hz: \(onsets.count) onsets for \(hatTimes.count) hats")
            for frame in onsets {
                let time = frame.onset.timeFrames / sampleRateHz
                let error = hatTimes.map { time - $0 }.min { abs($0) < abs($1) } ?? 1
                #expect(abs(error) < 0.002, "\(sampleRateHz) Hz: onset \(error * 1000) ms from its hat")
            }
        }
    }

    /// Steady white and pink noise (−25 dBFS RMS and louder) are no music: fewer than one
    /// reported onset every two seconds (a mean + k·σ threshold alone is crossed by a stationary
    /// signal at a steady rate: ~5 a second with k = 1).
    @Test func steadyNoiseGivesAlmostNoOnsets() throws {
        for sampleRateHz in Self.sampleRates {
            let noises = [("white", TestSignals.whiteNoise(sampleRateHz: sampleRateHz, seconds: 20, amplitude: 0.1)),
                          ("pink", TestSignals.pinkNoise(sampleRateHz: sampleRateHz, seconds: 20, amplitude: 0.3))]
            for (name, samples) in noises {
                let signal = RhythmSignal(samples: samples, beatTimesSeconds: [], sampleRateHz: sampleRateHz)
                let onsets = try Self.frames(signal).filter { $0.onset.isOnset }.count
                #expect(onsets < 10, "\(name) noise at \(sampleRateHz) Hz: \(onsets) onsets in 20 s")
            }
        }
    }

    /// House hats over a quiet noise floor: a kick on every beat, a loud open hat on the
    /// off-beats, and closed hats at half its level on the sixteenths between. In the main
    /// spectrum (42.7 ms window, 16.7 ms hops) the closed hats barely move the hat band's flux
    /// (none is reported without `HatTransientDetector`); in 4 ms blocks of the samples each is
    /// a step: at least 90 % of them are reported, within 2 ms.
    @Test func quietClosedHatsBetweenOpenHatsAreReported() throws {
        let house = DrumPattern(name: "house hats", events: [(0, .kick), (4, .kick), (8, .kick), (12, .kick)]
            + stride(from: 2, to: 16, by: 4).map { ($0, DrumVoice.openHat) } + stride(from: 1, to: 16, by: 2).map { ($0, DrumVoice.hat) })
        for sampleRateHz in Self.sampleRates {
            let signal = TestSignals.rhythm(house, segments: [(128, 10)], sampleRateHz: sampleRateHz, noiseAmplitude: 0.01)
            let sixteenthSeconds = 60.0 / 128 / 4
            let closedHatTimes = stride(from: 0.137 + sixteenthSeconds, to: 10, by: 2 * sixteenthSeconds).filter { $0 > 3 }
            let onsetTimes = try Self.frames(signal).filter { $0.onset.isOnset }.map { $0.onset.timeFrames / sampleRateHz }
            let found = closedHatTimes.filter { hat in onsetTimes.contains { abs($0 - hat) < 0.002 } }
            #expect(Double(found.count) >= 0.9 * Double(closedHatTimes.count),
                    "\(sampleRateHz) Hz: \(found.count) of \(closedHatTimes.count) quiet closed hats reported")
        }
    }

    /// Onsets and tempo do not depend on the block size. Beats are taken as soon as a block
    /// passes them (so a live host can send them before the hop ends), from the grid as of the
    /// last hop: the same beats in the same frames, their times within 1 ms of one pass's.
    @Test func anyBlockSizeGivesTheSameOnsetsTempoAndBeats() throws {
        let signal = TestSignals.rhythm(.rock, segments: [(128, 5)], sampleRateHz: 48_000)
        let expected = try Self.frames(signal, blockSizes: [signal.samples.count])
        #expect(expected.filter { $0.onset.isOnset }.count >= 10)
        #expect(expected.contains { $0.beat.isBeat })
        for blockSizes in [[1], [63], [64], [1000], [4096], [0, 1, 63, 64, 1000, 4096, 0, 17]] {
            let frames = try Self.frames(signal, blockSizes: blockSizes)
            #expect(frames.count == expected.count)
            let same = zip(frames, expected).allSatisfy { $0.onset == $1.onset && $0.tempo == $1.tempo }
            #expect(same, "blocks \(blockSizes)")
            for (frame, reference) in zip(frames, expected) {
                #expect(frame.beat.isBeat == reference.beat.isBeat && frame.beat.count == reference.beat.count
                        && frame.beat.inBar == reference.beat.inBar, "blocks \(blockSizes): beat \(frame.beat) vs \(reference.beat)")
                #expect(abs(frame.beat.timeFrames - reference.beat.timeFrames) <= 48, "blocks \(blockSizes): beat \(frame.beat) vs \(reference.beat)")
            }
        }
    }

    @Test func aBeatIsAnnouncedByTheBlockThatPassesIt() throws {
        let signal = TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 8)
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let block = 64
        var announced: [BeatReading] = [], inFrames: [BeatReading] = []
        signal.samples.withUnsafeBufferPointer { samples in
            for start in stride(from: 0, to: samples.count - block, by: block) {
                let before = analyzer.beatEventCount
                _ = analyzer.process(samples.baseAddress! + start, frameCount: block) { frame in
                    if frame.beat.isBeat { inFrames.append(frame.beat) }
                }
                guard analyzer.beatEventCount != before else { continue }
                let beat = analyzer.latestBeat
                // Announced by the block holding it, not at the end of its hop.
                let delay = Double(analyzer.streamFrame) - beat.timeFrames
                #expect(delay > 0 && delay <= Double(block), "beat at \(beat.timeFrames) announced \(delay) frames late")
                announced.append(beat)
            }
        }
        #expect(announced.count >= 8)
        #expect(announced == inFrames, "each announced beat rides in its frame too")
    }

    @Test func beatsCountAndCycleThroughTheBar() throws {
        var configuration = AnalysisConfiguration()
        configuration.rhythm.beatsPerBar = 3
        let signal = TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 8)
        let beats = try Self.frames(signal, configuration: configuration).filter { $0.beat.isBeat }.map { $0.beat }
        #expect(beats.count >= 8)
        for (index, beat) in beats.enumerated() {
            #expect(beat.count == Int32(index + 1))
            #expect(beat.inBar == Int32(index % 3 + 1))
        }
    }

    @Test func leadTimeReportsBeatsEarlyAndShiftsThePhase() throws {
        let signal = TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 7)
        let plain = try Self.frames(signal).filter { Self.seconds($0, 48_000) > 4 }
        var configuration = AnalysisConfiguration()
        configuration.rhythm.leadMilliseconds = 100
        let early = try Self.frames(signal, configuration: configuration).filter { Self.seconds($0, 48_000) > 4 }
        let lead = 0.1 * 48_000, hop = 800.0
        for frame in early where frame.beat.isBeat {
            // Reported in the hop in which (beat − lead) falls, with the beat's own time.
            let reportTime = frame.beat.timeFrames - lead
            #expect(reportTime < Double(frame.streamFrame) && reportTime >= Double(frame.streamFrame) - hop, "beat at \(frame.beat.timeFrames)")
            #expect(abs(signal.nearestBeat(toSeconds: frame.beat.timeFrames / 48_000).errorSeconds) <= 0.020)
        }
        #expect(early.filter { $0.beat.isBeat }.count == plain.filter { $0.beat.isBeat }.count)
        // The phase runs 100 ms (0.2 beat at 120 BPM) ahead.
        for (withLead, without) in zip(early, plain) {
            var difference = Double(withLead.tempo.phase - without.tempo.phase)
            difference -= difference.rounded(.down)
            #expect(abs(difference - 0.2) < 0.02, "phase \(withLead.tempo.phase) vs \(without.tempo.phase)")
        }
    }

    @Test func relearnForgetsTheTempoAndLocksAgain() throws {
        let signal = TestSignals.rhythm(.fourOnTheFloor, segments: [(128, 10)], sampleRateHz: 48_000)
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let half = 5 * 48_000
        var frames = OfflineDriver.frames(&analyzer, signal: Array(signal.samples[..<half]))
        #expect(abs(frames.last!.tempo.bpm - 128) <= 1)
        analyzer.relearnTempo()
        #expect(analyzer.frame.pointee.tempo.bpm == 0)
        frames = OfflineDriver.frames(&analyzer, signal: Array(signal.samples[half...]))
        #expect(frames.first!.tempo.bpm == 0, "the lock is gone after relearn")
        #expect(frames.suffix(60).allSatisfy { abs($0.tempo.bpm - 128) <= 1 }, "locked again within 4 s")
    }

    @Test func disabledRhythmLeavesTheFieldsEmpty() throws {
        var configuration = AnalysisConfiguration()
        configuration.rhythm.enabled = false
        let frames = try Self.frames(TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 5), configuration: configuration)
        #expect(frames.allSatisfy { $0.onset == .none && $0.tempo == .none && $0.beat == .none })
    }

    /// The BPM range is the user's: a groove faster than its maximum reads at half tempo, never
    /// above the range (the searches may end up to half a lag beyond its edge).
    @Test(arguments: [182.0, 183.0, 185.0])
    func aTempoAboveTheRangeReadsAtHalfTempo(bpm: Double) throws {
        let signal = TestSignals.rhythm(.rock, segments: [(bpm, 10)], sampleRateHz: 48_000)
        let frames = try Self.frames(signal)
        let maximum = AnalysisConfiguration().rhythm.maximumBpm
        #expect(frames.allSatisfy { Double($0.tempo.bpm) <= maximum * 1.011 }, "a tempo above \(maximum) BPM: \(frames.map(\.tempo.bpm).max() ?? 0)")
        #expect(frames.suffix(60).allSatisfy { abs(Double($0.tempo.bpm) - bpm / 2) <= 1 }, "\(frames.last!.tempo.bpm) for \(bpm) BPM")
    }

    @Test func badRhythmSettingsAreRejected() {
        var narrow = AnalysisConfiguration()
        narrow.rhythm.minimumBpm = 100
        narrow.rhythm.maximumBpm = 120
        var lead = AnalysisConfiguration()
        lead.rhythm.leadMilliseconds = 800
        var bar = AnalysisConfiguration()
        bar.rhythm.beatsPerBar = 0
        var preferred = AnalysisConfiguration()
        preferred.rhythm.preferredMinimumBpm = 200
        preferred.rhythm.preferredMaximumBpm = 250
        for configuration in [narrow, lead, bar, preferred] {
            #expect(throws: AnalysisConfigurationError.self) { try Analyzer(configuration: configuration, sampleRateHz: 48_000) }
        }
    }
}
