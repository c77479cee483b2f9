import Testing
@testable import SpectrumLive

/// The MIDI clock's tick scheduler driven offline: a beat grid in absolute frames, cut into JACK
/// cycles of any length, the messages collected at absolute frames.
@Suite("MIDI clock scheduler (offline)")
struct MidiClockSchedulerTests {
    /// A beat grid over absolute frames: beats at `anchor + k·period` until `changeFrame`, then
    /// `after` (e.g. another tempo, or the same one re-phased).
    struct Timeline {
        struct Segment {
            var periodFrames: Double
            var anchorFrame: Double
            /// Position in the bar of the beat at `anchorFrame`.
            var anchorInBar: Int = 0
        }
        var before: Segment
        var after: Segment? = nil
        var changeFrame: Double = .infinity
        /// Frames in which there is no tempo (the grid is unlocked).
        var unlocked: Range<Double>? = nil
        var beatsPerBar = 4

        func grid(atCycleStart start: Int) -> MidiClockGrid {
            if let unlocked, unlocked.contains(Double(start)) { return .unlocked }
            let segment = Double(start) >= changeFrame ? (after ?? before) : before
            return MidiClockGrid(isLocked: true, beatPeriodFrames: segment.periodFrames, beatOffsetFrames: segment.anchorFrame - Double(start),
                                 beatInBar: segment.anchorInBar, beatsPerBar: beatsPerBar)
        }
    }

    struct Emitted: Equatable {
        var frame: Int
        var status: UInt8
        var bytes: [UInt8]
    }

    /// Runs `cycles` (their lengths, repeated) until `totalFrames`; checks every cycle's offsets.
    static func run(_ timeline: Timeline, totalFrames: Int, cycles: [Int] = [256], hold: (Int) -> Bool = { _ in false },
                    parameters: MidiClockScheduler.Parameters = .init()) -> [Emitted] {
        var scheduler = MidiClockScheduler(parameters: parameters)
        var emitted: [Emitted] = []
        var start = 0, index = 0
        // The scheduler's closure is checked as real-time code: it writes into raw memory.
        let sink = UnsafeMutablePointer<MidiClockEvent>.allocate(capacity: 1024)
        defer { sink.deallocate() }
        while start < totalFrames {
            let count = cycles[index % cycles.count]
            index += 1
            var written = 0
            scheduler.process(frameCount: count, grid: timeline.grid(atCycleStart: start), hold: hold(start)) { event in
                if written < 1024 { sink[written] = event }
                written += 1
            }
            let cycle = Array(UnsafeBufferPointer(start: sink, count: min(written, 1024)))
            #expect(cycle.map(\.offsetFrames) == cycle.map(\.offsetFrames).sorted(), "offsets out of order")
            #expect(cycle.allSatisfy { $0.offsetFrames >= 0 && $0.offsetFrames < count }, "offset outside a cycle of \(count)")
            emitted += cycle.map { event in
                Emitted(frame: start + event.offsetFrames, status: event.status, bytes: Array([event.status, event.data1, event.data2].prefix(event.length)))
            }
            start += count
        }
        return emitted
    }

    static func ticks(_ events: [Emitted]) -> [Int] { events.filter { $0.status == 0xF8 }.map(\.frame) }

    static func intervals(_ frames: [Int]) -> [Int] { zip(frames.dropFirst(), frames).map { $0 - $1 } }

    @Test("120 BPM at 48 kHz: FA and the first F8 on a downbeat, then ticks exactly 1000 frames apart, on the beats")
    func steadyTempo() {
        // Beats at 24000·k + 5000; the anchor beat is the bar's third, so the first downbeat
        // after the start is at 53000.
        let timeline = Timeline(before: .init(periodFrames: 24_000, anchorFrame: 5000, anchorInBar: 2))
        let events = Self.run(timeline, totalFrames: 48_000 * 20)
        #expect(events.first == Emitted(frame: 0, status: 0xF2, bytes: [0xF2, 0, 0]), "song position 0 while stopped at first")
        let start = events.firstIndex { $0.status == 0xFA }
        #expect(start == 1)
        #expect(events[1].frame == 53_000, "FA at \(events[1].frame)")
        #expect(events[2] == Emitted(frame: 53_000, status: 0xF8, bytes: [0xF8]), "then \(events[2])")
        let ticks = Self.ticks(events)
        #expect(Set(Self.intervals(ticks)) == [1000])
        #expect(ticks.enumerated().allSatisfy { index, frame in index % 24 != 0 || (frame - 5000) % 24_000 == 0 }, "every 24th tick on a beat")
        #expect(!events.contains { $0.status == 0xFC || $0.status == 0xF2 && $0.frame > 0 }, "no stop, no song position while running")
    }

    @Test("Any cycle length (0, 1, 63, 1000, 4096 frames) gives the same tick frames")
    func cycleLengthsDoNotMatter() {
        let timeline = Timeline(before: .init(periodFrames: 22_500, anchorFrame: 1234.5))
        let reference = Self.run(timeline, totalFrames: 48_000 * 10)
        let irregular = Self.run(timeline, totalFrames: 48_000 * 10, cycles: [0, 1, 63, 1000, 4096, 0, 256]).filter { $0.frame < 48_000 * 10 }
        let mismatch = zip(reference, irregular).first { $0 != $1 }
        #expect(irregular.count == reference.count && mismatch == nil, "first difference: \(String(describing: mismatch))")
        #expect(Self.ticks(reference).count > 400)
    }

    @Test("120 → 128 BPM: the tick period glides, no burst and no gap, and the ticks end up on the new grid")
    func tempoChangeGlides() {
        // The tempo changes at a beat (48000·10), the grid continues from it at 128 BPM.
        let change = 240_000.0 + 5000
        let timeline = Timeline(before: .init(periodFrames: 24_000, anchorFrame: 5000),
                                after: .init(periodFrames: 22_500, anchorFrame: change), changeFrame: change)
        let events = Self.run(timeline, totalFrames: 48_000 * 30)
        let ticks = Self.ticks(events)
        let intervals = Self.intervals(ticks)
        let slew = MidiClockScheduler.Parameters().maximumPhaseSlew
        #expect(intervals.allSatisfy { Double($0) >= 937.5 * (1 - slew) - 1 && Double($0) <= 1000 * (1 + slew) + 1 },
                "interval range \(intervals.min()!)…\(intervals.max()!)")
        // Glide: consecutive intervals differ by little (no step a PLL would lose).
        let steps = Self.intervals(intervals).map(abs)
        #expect(steps.max()! <= 12, "largest change between consecutive intervals \(steps.max()!) frames")
        // It took more than a beat to get from 1000 to 937.5 (a glide, not a jump).
        let firstNew = intervals.firstIndex { $0 <= 945 }!
        let lastOld = intervals.lastIndex { $0 >= 995 }!
        #expect(firstNew - lastOld >= 12, "glide over \(firstNew - lastOld) ticks")
        // Settled 12 s after the change: 937/938 frames, and every 24th tick within 2 frames of a beat.
        let settled = ticks.filter { Double($0) > change + 48_000 * 12 }
        #expect(Set(Self.intervals(settled)).isSubset(of: [937, 938]))
        let beatErrors = settled.map { frame in
            let beats = (Double(frame) - change) / 22_500 * 24
            return abs(beats - beats.rounded()) * 937.5
        }
        #expect(beatErrors.max()! <= 2, "tick off its grid tick by \(beatErrors.max()!) frames")
        #expect(events.filter { $0.status == 0xFA }.count == 1 && !events.contains { $0.status == 0xFC })
    }

    @Test("A re-phase by half a beat: at most one tick per slewed period, then back on the grid")
    func rephaseNeverBursts() {
        let jump = 48_000.0 * 10 + 700
        let timeline = Timeline(before: .init(periodFrames: 24_000, anchorFrame: 5000),
                                after: .init(periodFrames: 24_000, anchorFrame: 5000 + 12_000), changeFrame: jump)
        let ticks = Self.ticks(Self.run(timeline, totalFrames: 48_000 * 40))
        let intervals = Self.intervals(ticks)
        let slew = MidiClockScheduler.Parameters().maximumPhaseSlew
        #expect(intervals.allSatisfy { Double($0) >= 1000 * (1 - slew) - 1 && Double($0) <= 1000 * (1 + slew) + 1 },
                "interval range \(intervals.min()!)…\(intervals.max()!)")
        // Never two ticks closer than the slewed period, in any window: no burst.
        #expect(intervals.min()! >= 919)
        // Back on the new grid (ticks 1000 apart, on its beats ± 1 frame) within 20 s.
        let settled = ticks.filter { Double($0) > jump + 48_000 * 20 }
        #expect(Set(Self.intervals(settled)).isSubset(of: [999, 1000, 1001]))
        // The new grid's ticks fall on multiples of 1000 frames (17000 + 1000·k).
        let offGrid = settled.map { min($0 % 1000, 1000 - $0 % 1000) }
        #expect(offGrid.max()! <= 1, "ticks off the new grid by \(offGrid.max()!) frames")
    }

    @Test("Losing the tempo sends FC at once, then the song position; the next lock starts on a downbeat")
    func stopOnLossAndRestart() {
        // Cycles of 256 frames: the tempo is lost from cycle 1000 to cycle 1500.
        let lost = 256 * 1000, found = 256 * 1500
        let timeline = Timeline(before: .init(periodFrames: 24_000, anchorFrame: 5000),
                                unlocked: Double(lost) ..< Double(found))
        let events = Self.run(timeline, totalFrames: 48_000 * 12)
        let stopIndex = events.firstIndex { $0.status == 0xFC }!
        #expect(events[stopIndex].frame == lost, "FC in the first cycle without a tempo")
        #expect(events[stopIndex + 1] == Emitted(frame: lost, status: 0xF2, bytes: [0xF2, 0, 0]))
        #expect(!events.contains { $0.status == 0xF8 && $0.frame >= lost && $0.frame < found }, "no tick while stopped")
        let restart = events.last { $0.status == 0xFA }!
        #expect(events.filter { $0.status == 0xFA }.count == 2)
        #expect(restart.frame >= found && (restart.frame - 5000) % (24_000 * 4) == 0, "restart at \(restart.frame): not a downbeat")
        #expect(!events.contains { $0.status == 0xF2 && $0.frame > lost })
    }

    @Test("Hold (blackout) stops the clock like a lost tempo; release starts it on the next downbeat")
    func holdStops() {
        let timeline = Timeline(before: .init(periodFrames: 24_000, anchorFrame: 0))
        let events = Self.run(timeline, totalFrames: 48_000 * 10, hold: { $0 >= 256 * 600 && $0 < 48_000 * 5 })
        #expect(events.filter { $0.status == 0xFC }.map(\.frame) == [256 * 600])
        #expect(events.filter { $0.status == 0xFA }.map(\.frame) == [0, 96_000 * 3])
    }

    @Test("The grid jumps 4608 frames later against the cycles (a re-seed, a stall): one late tick, no burst, back on the grid")
    func skippedCycles() {
        var scheduler = MidiClockScheduler()
        let sink = UnsafeMutablePointer<Int>.allocate(capacity: 4096)
        defer { sink.deallocate() }
        var ticks = 0
        var start = 0
        while start < 48_000 * 20 {
            // At 5 s the grid moves 4608 frames (18 periods) later against the cycles.
            if start == 256 * 940 { start += 4608 }
            let grid = MidiClockGrid(isLocked: true, beatPeriodFrames: 24_000, beatOffsetFrames: 5000 - Double(start), beatInBar: 0, beatsPerBar: 4)
            let cycleStart = start
            scheduler.process(frameCount: 256, grid: grid, hold: false) { event in
                if event.status == 0xF8, ticks < 4096 { sink[ticks] = cycleStart + event.offsetFrames }
                if event.status == 0xF8 { ticks += 1 }
            }
            start += 256
        }
        let frames = Array(UnsafeBufferPointer(start: sink, count: min(ticks, 4096)))
        let intervals = zip(frames.dropFirst(), frames).map { $0 - $1 }
        let late = intervals.filter { $0 > 1081 }
        #expect(late.count == 1 && late[0] <= 1000 + 4608 + 256, "late ticks \(late)")
        #expect(intervals.min()! >= 919, "a burst: \(intervals.min()!) frames between two ticks")
        let settled = frames.filter { $0 > 48_000 * 15 }.map { ($0 - 5000) % 1000 }.map { min($0, 1000 - $0) }
        #expect(settled.max()! <= 1, "not back on the grid: \(settled.max()!) frames off")
    }

    @Test("An unusable grid (period under a frame per tick, NaN) counts as no tempo")
    func unusableGrid() {
        var scheduler = MidiClockScheduler()
        let sink = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
        defer { sink.deallocate() }
        var written = 0
        for grid in [MidiClockGrid(isLocked: true, beatPeriodFrames: 10, beatOffsetFrames: 0, beatInBar: 0, beatsPerBar: 4),
                     MidiClockGrid(isLocked: true, beatPeriodFrames: .nan, beatOffsetFrames: 0, beatInBar: 0, beatsPerBar: 4)] {
            scheduler.process(frameCount: 256, grid: grid, hold: false) { event in
                if written < 16 { sink[written] = event.status }
                written += 1
            }
        }
        #expect(written == 1 && sink[0] == 0xF2, "only the song position while stopped")
        #expect(!scheduler.isRunning)
    }
}
