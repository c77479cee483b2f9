import Foundation
import SpectrumTestSupport
import Testing

/// `spectrum run --midi-clock` against real MIDI clock receivers on a private jackd: jackd2's
/// `jack_midi_dump -r` (every event, frame-exact) and x42's `jack_mclk_dump` (a DLL that
/// measures the tempo, as a drum machine or a lighting desk would).
@Suite("MIDI clock out (real receivers)", .serialized)
struct MidiClockCommandTests {
    /// 16 s of a 120 BPM click, 16 s of 128 BPM, then 20 s of silence: FA once locked, ticks
    /// evenly 1000 frames apart, a glide to 937.5, FC once the silence has dropped the tempo
    /// (the tracker needs about 12 s of silence for that, measured 2026-11-24).
    /// Whether tick `intervals` (frames at 48 kHz) are spaced evenly at `bpm`: their mean within
    /// 0.1 BPM of it (as `jack_mclk_dump` is asked below; 1000 ± 0.83 frames at 120 BPM) and 95 %
    /// within a frame of the mean — a whole-frame rounding of one steady period, no jitter. Not
    /// the exact 1000 frames: the tracker settles within 0.1 BPM of the click, and a loaded CI
    /// run read 119.96 for a while (85 of 288 intervals 1001 frames, the rest 1000). 95 %, not
    /// all: a wakeup late by less than a skipped cycle can still move one tick.
    static func evenAtTempo(_ intervals: [Int], bpm: Double) -> Bool {
        guard !intervals.isEmpty else { return false }
        let mean = Double(intervals.reduce(0, +)) / Double(intervals.count)
        let meanBPM = 48_000 * 60 / (24 * mean)
        let even = intervals.filter { abs(Double($0) - mean) < 1 }.count
        return abs(meanBPM - bpm) <= 0.1 && Double(even) >= 0.95 * Double(intervals.count)
    }

    @Test func clickTempoReachesMidiClockReceiversAndSilenceStopsIt() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let slow = try ToneClient.clicks(bpm: 120, on: server)
        defer { slow.stop() }
        let fast = try ToneClient.clicks(bpm: 128, on: server, amplitude: 0)
        defer { fast.stop() }
        let dump = try JackMidiDump(server: server)
        defer { dump.stop() }
        let receiver = try JackMidiClockDump(server: server)
        defer { receiver.stop() }
        let osc = OSCReceiver()
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--connect", slow.outputPortName, "--connect", fast.outputPortName,
                                            "--midi-clock", "--midi-clock-connect", dump.inputPortName, "--midi-clock-connect", receiver.inputPortName,
                                            "--osc", "127.0.0.1:\(osc.port)", "--quiet"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, Set(server.connections(of: "spectrum:midi_clock")) != [dump.inputPortName, receiver.inputPortName] { usleep(20_000) }
        #expect(Set(server.connections(of: "spectrum:midi_clock")) == [dump.inputPortName, receiver.inputPortName], "--midi-clock-connect")

        // The phases are timed on the audio's clock (the player's cycles), not the wall's: a
        // loaded machine's dummy driver loses time at each late cycle, and a phase timed on the
        // wall then gives the tracker less audio than it needs (a run at load 16 ended the 128
        // BPM phase still at 128.2). spectrum runs until the phases are over, then SIGINT.
        let startCallbacks = slow.callbacks
        func wait(untilAudioSeconds seconds: Double) {
            osc.receive(timeoutSeconds: 3 * seconds + 10) { Double(slow.callbacks - startCallbacks) * 256 / 48_000 >= seconds }
        }
        wait(untilAudioSeconds: 16)
        slow.amplitude = 0
        fast.amplitude = 1
        wait(untilAudioSeconds: 32)
        fast.amplitude = 0
        wait(untilAudioSeconds: 52)
        // The silence stopped the clock, not spectrum's own stop (which sends FC as well).
        #expect(eventually(within: 5) { dump.events().contains { $0.status == 0xFC } }, "no FC after 20 s of silence")
        spectrum.signal(SIGINT)
        let result = try #require(spectrum.waitForExit(within: 20), "spectrum did not stop")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("MIDI clock on spectrum:midi_clock to \(dump.inputPortName), \(receiver.inputPortName)"))
        let events = dump.stopAndReadEvents()
        let lines = receiver.stopAndReadLines()

        // 1) FA once, the first tick with it, then only ticks until one FC, then the song position.
        let statuses = events.map(\.status)
        let start = try #require(statuses.firstIndex(of: 0xFA), "no FA: \(statuses.prefix(10))")
        let stopFound = statuses.firstIndex(of: 0xFC)
        #expect(stopFound != nil, "no FC after the silence")
        let stop = stopFound ?? events.count - 1
        #expect(statuses.filter { $0 == 0xFA }.count == 1 && statuses.filter { $0 == 0xFC }.count == 1,
                "expected one FA and one FC: \(statuses.filter { $0 != 0xF8 })")
        #expect(events[start + 1].status == 0xF8 && events[start + 1].frame == events[start].frame, "FA without its first tick")
        #expect(statuses[start + 1 ..< stop].allSatisfy { $0 == 0xF8 }, "something other than F8 while running")
        #expect(stop + 1 < events.count && events[stop + 1].bytes == [0xF2, 0, 0], "no song position 0 after FC")
        #expect(!statuses[(stop + 1)...].contains(0xF8), "a tick after FC")
        let ticks = events[start + 1 ..< stop].map(\.frame)
        let intervals = zip(ticks.dropFirst(), ticks).map { $0 - $1 }
        #expect(intervals.count > 24 * 40, "\(intervals.count) ticks")

        // A cycle the dummy driver skips (it wakes late when the VM's host takes the CPU away:
        // steal time, 1–18 % in runs that showed it) moves JACK's frame time on by a period or
        // more with no cycle run: that tick comes late by as much, and the scheduler slews the
        // phase back over the next seconds (docs/live.md), so the spacing is no longer even. The
        // spacing, the glide's shape and the receiver's ±0.1 BPM are asserted in runs whose
        // frame time never jumped; a disturbed run checks the protocol above and the status
        // below, and says so. The clock's precision over a minute: `SpectrumBench clock`.
        // JACK's own word for it: the player records each frame-time jump it saw (its
        // `playbackOrigins`); a run with one is disturbed whatever the intervals show. (On a
        // busy host, 2 of 6 runs failed on the intervals alone with no interval over 1100: one
        // with a 744-frame interval counted as a burst, one with 996–1000-frame intervals for
        // seconds, a slew's signature. Whether their players recorded a jump was not checked: a
        // run that records none is still held to every assertion below.)
        let skippedCycles = intervals.filter { $0 > 1100 }, frameTimeJumps = slow.playbackOrigins.count - 1
        guard skippedCycles.isEmpty && frameTimeJumps == 0 else {
            print("MIDI clock test: JACK skipped cycles (\(frameTimeJumps) frame-time jumps; tick intervals over 1100 frames: \(skippedCycles)); spacing and tempo precision not asserted in this run")
            #expect(lines.contains(.event("start")) && lines.contains(.event("stop")))
            Self.checkStatus(osc)
            return
        }

        // 2) 120 BPM once settled, from 3 s to 9 s after FA (the tempo locks within ~4 s of the
        //    start, and changes 16 s after it): 1000 frames apart, to the frame and to the
        //    tracked tempo (`evenAtTempo`).
        let settled120 = Array(intervals[24 * 6 ..< 24 * 18])
        #expect(Self.evenAtTempo(settled120, bpm: 120) && settled120.allSatisfy { $0 >= 920 },
                "120 BPM: \(Dictionary(grouping: settled120, by: { $0 }).mapValues(\.count))")
        let glideStart = try #require(intervals.firstIndex { $0 < 990 }, "the tempo never went up")

        // 3) The change glides: no burst, no gap, small steps, and 937/938 frames at the end.
        //    (A wakeup late by less than a skipped cycle makes one tick late, never early: the
        //    interval before it is longer and the one after it shorter by as much, the pair's sum
        //    unchanged. The upper bound allows that in 1 % of the intervals; a short interval
        //    counts as a burst unless the one before it was as much too long.)
        let running = Array(intervals[glideStart...])
        let bursts = running.indices.filter { index in
            running[index] < 862 && (index == 0 || running[index - 1] + running[index] < 2 * 862)
        }
        #expect(bursts.isEmpty, "a burst: \(bursts.map { running[$0] }) frames between two ticks")
        let long = running.filter { $0 > 1081 }
        #expect(Double(long.count) <= 0.01 * Double(running.count), "gaps: \(long)")
        let steps = zip(running.dropFirst(), running).map { abs($0 - $1) }.sorted()
        #expect(steps[steps.count * 98 / 100] <= 15, "consecutive intervals differ by up to \(steps.last!) frames (98th percentile \(steps[steps.count * 98 / 100]))")
        let settled128 = Array(intervals.suffix(24 * 8))
        #expect(Self.evenAtTempo(settled128, bpm: 128), "128 BPM: \(Dictionary(grouping: settled128, by: { $0 }).mapValues(\.count))")

        // 4) The receiver's DLL: 120.0 ± 0.1 BPM before the change, 128.0 ± 0.1 at the end.
        let tempos = lines.compactMap { line -> Double? in if case .tick(_, let filtered) = line { filtered } else { nil } }
        let before = tempos.count > 24 * 18 ? tempos[24 * 6 ..< 24 * 18] : []
        #expect(!before.isEmpty && before.allSatisfy { abs($0 - 120) <= 0.1 }, "jack_mclk_dump before the change: \(before.min() ?? 0)…\(before.max() ?? 0)")
        let end = tempos.suffix(24 * 2)
        #expect(end.allSatisfy { abs($0 - 128) <= 0.1 }, "jack_mclk_dump at the end: \(end.min() ?? 0)…\(end.max() ?? 0)")
        #expect(lines.contains(.event("start")) && lines.contains(.event("stop")))

        Self.checkStatus(osc)
    }

    /// 5) /status/midi_clock: running near 120 BPM before the change, stopped at the end.
    private static func checkStatus(_ osc: OSCReceiver) {
        let clockStatus = osc.bundles.compactMap { $0.message("/spectrum/status/midi_clock")?.values }
        #expect(clockStatus.contains { $0[0] == 1 && abs($0[1] - 120) < 0.5 && $0[2] > 0 }, "no running status at 120 BPM")
        #expect(clockStatus.last.map { $0[0] == 0 && $0[1] == 0 } == true, "last status \(String(describing: clockStatus.last))")
    }
}
