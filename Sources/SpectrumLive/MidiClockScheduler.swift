import Glibc

/// The beat grid as the MIDI clock sees it in one JACK cycle: a plain value the process callback
/// builds from the analyser's public readings (`MidiClockGrid.init(analyzer:…)`), and tests
/// build by hand.
///
/// Times are frames relative to the first frame of the cycle on the *emission* timeline: the
/// capture latency, the lead time and the port's playback latency are already subtracted, so a
/// tick written at `beatOffsetFrames` leaves the port's far end when the beat is heard, early by
/// the lead time.
public struct MidiClockGrid: Equatable, Sendable {
    /// Whether a tempo is locked (false: the clock stops).
    public var isLocked: Bool
    /// Frames per beat (quarter note).
    public var beatPeriodFrames: Double
    /// Time of one beat of the grid relative to this cycle's first frame (any sign).
    public var beatOffsetFrames: Double
    /// That beat's position in the bar, 0 ..< `beatsPerBar` (0: a downbeat).
    public var beatInBar: Int
    public var beatsPerBar: Int

    /// Real-time safe.
    @_noLocks
    public init(isLocked: Bool, beatPeriodFrames: Double, beatOffsetFrames: Double, beatInBar: Int, beatsPerBar: Int) {
        self.isLocked = isLocked
        self.beatPeriodFrames = beatPeriodFrames
        self.beatOffsetFrames = beatOffsetFrames
        self.beatInBar = beatInBar
        self.beatsPerBar = beatsPerBar
    }

    /// No tempo: the clock stops. Real-time safe.
    public static var unlocked: MidiClockGrid {
        @_noLocks get { MidiClockGrid(isLocked: false, beatPeriodFrames: 0, beatOffsetFrames: 0, beatInBar: 0, beatsPerBar: 4) }
    }

    /// Usable for a clock: locked, with a finite period of at least one frame per tick.
    var isUsable: Bool {
        @_noLocks get {
            isLocked && beatPeriodFrames.isFinite && beatOffsetFrames.isFinite
                && beatPeriodFrames >= Double(MidiClockScheduler.ticksPerBeat) && beatsPerBar >= 1
        }
    }
}

/// One MIDI message at a frame offset in the cycle: one byte (clock, start, stop) or three
/// (song position).
public struct MidiClockEvent: Equatable, Sendable {
    public var offsetFrames: Int
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8
    /// 1 or 3 bytes.
    public var length: Int

    @_noLocks
    public init(offsetFrames: Int, status: UInt8, data1: UInt8 = 0, data2: UInt8 = 0, length: Int = 1) {
        self.offsetFrames = offsetFrames
        self.status = status
        self.data1 = data1
        self.data2 = data2
        self.length = length
    }

    public static var clock: UInt8 { @_noLocks get { 0xF8 } }
    public static var start: UInt8 { @_noLocks get { 0xFA } }
    public static var stop: UInt8 { @_noLocks get { 0xFC } }
    public static var songPosition: UInt8 { @_noLocks get { 0xF2 } }
}

/// MIDI clock from a beat grid: 24 `F8` per beat, `FA` on the first downbeat after the tempo
/// locks, `FC` when it is lost (or held), `F2` (song position 0, where the next `FA` starts)
/// only while stopped.
///
/// A tick-period loop, so receivers' PLLs can follow: the tick period glides towards the grid's
/// (`Parameters.glidePerTick`), and the ticks' phase error against the grid (taken modulo one
/// beat, so a re-phase never skips a beat) is absorbed by shortening or stretching the period by
/// at most `maximumPhaseSlew`, the correction itself changing by at most `phaseSlewStepPerTick`
/// per tick. Every interval between ticks therefore stays within `maximumPhaseSlew` of the
/// glided period: never a burst of ticks, never a gap. Ticks fall on whole frames (rounded).
///
/// Pure and allocation-free: the process callback calls `process` once per cycle with that
/// cycle's grid; tests drive it offline with any sequence of cycles. All state is inline.
/// Real-time safe; one thread at a time.
public struct MidiClockScheduler: Sendable {
    /// The loop's constants, each with its unit and the reason for its default.
    public struct Parameters: Equatable, Sendable {
        /// Share of the way from the current tick period to the grid's, taken at each tick.
        /// 1/24: a time constant of one beat, slow enough for a receiver's PLL (they settle over
        /// a few beats), fast enough that a tempo change is followed within a bar.
        public var glidePerTick: Double = 1.0 / 24
        /// Share of the phase error (ticks) corrected per tick. 1/48: half the error gone in
        /// about a beat, so the grid's small refits (a few ms) never show as jitter.
        public var phaseGainPerTick: Double = 1.0 / 48
        /// Largest relative change of one tick interval for phase correction. 0.08: a half-beat
        /// re-phase (12 ticks) is absorbed in about seven beats, and a receiver sees at most an
        /// 8 % tempo wobble, which PLLs follow without dropping out.
        public var maximumPhaseSlew: Double = 0.08
        /// Largest change of that correction from one tick to the next. 0.005: the correction
        /// ramps in over ~16 ticks instead of stepping, so the receivers' tempo moves smoothly.
        public var phaseSlewStepPerTick: Double = 0.005

        public init() {}
    }

    /// F8 messages per beat (quarter note), fixed by the MIDI specification.
    public static var ticksPerBeat: Int { @_noLocks get { 24 } }

    public let parameters: Parameters

    /// Whether FA has been sent and F8 run (until the next FC).
    public private(set) var isRunning = false
    /// Ticks since the latest FA.
    public private(set) var ticksSinceStart: UInt64 = 0
    /// The current (glided) tick period, frames; 0 while stopped.
    public private(set) var tickPeriodFrames: Double = 0
    /// The latest phase error of a tick against the grid, in ticks (positive: the grid is ahead).
    public private(set) var phaseErrorTicks: Double = 0
    /// Time of the next tick relative to the next cycle's first frame (fractional).
    private var nextTickOffsetFrames: Double = 0
    private var phaseCorrection: Double = 0
    /// F2 waits to be sent (at the start, and after each FC).
    private var songPositionPending = true

    /// Allocation-free; call it before the process thread sees the scheduler.
    public init(parameters: Parameters = Parameters()) {
        self.parameters = parameters
    }

    /// Emits this cycle's messages, in time order, offsets in `0 ..< frameCount` (none when
    /// `frameCount` is 0), through `emit`. `hold` (blackout) stops the clock as a lost tempo does.
    /// Real-time safe.
    @_noLocks
    public mutating func process(frameCount: Int, grid: MidiClockGrid, hold: Bool, emit: (MidiClockEvent) -> Void) {
        guard frameCount > 0 else { return }
        let end = Double(frameCount)
        // 1) Stop: FC at once when the tempo is lost; then, stopped, the song position once.
        let usable = grid.isUsable && !hold
        if isRunning && !usable {
            emit(MidiClockEvent(offsetFrames: 0, status: MidiClockEvent.stop))
            isRunning = false
            tickPeriodFrames = 0
            songPositionPending = true
        }
        if !isRunning && songPositionPending {
            emit(MidiClockEvent(offsetFrames: 0, status: MidiClockEvent.songPosition, length: 3))
            songPositionPending = false
        }
        guard usable else { return }
        let gridTickFrames = grid.beatPeriodFrames / Double(Self.ticksPerBeat)
        // 2) Start: FA and the first F8 together on the first downbeat at or after this cycle's
        //    first frame.
        if !isRunning {
            let beatsPerBar = grid.beatsPerBar
            var beats = realtimeCeiling(-grid.beatOffsetFrames / grid.beatPeriodFrames)
            let inBar = positiveModulo(grid.beatInBar + Int(beats), beatsPerBar)
            if inBar != 0 { beats += Double(beatsPerBar - inBar) }
            let downbeat = grid.beatOffsetFrames + beats * grid.beatPeriodFrames
            let offset = max(0, Int(realtimeFloor(downbeat + 0.5)))
            guard offset < frameCount else { return }
            emit(MidiClockEvent(offsetFrames: offset, status: MidiClockEvent.start))
            isRunning = true
            ticksSinceStart = 0
            tickPeriodFrames = gridTickFrames
            phaseCorrection = 0
            phaseErrorTicks = 0
            nextTickOffsetFrames = downbeat
        }
        // 3) Ticks due in this cycle, each followed by the next interval of the loop.
        while true {
            let offset = max(0, Int(realtimeFloor(nextTickOffsetFrames + 0.5)))
            guard offset < frameCount else { break }
            emit(MidiClockEvent(offsetFrames: offset, status: MidiClockEvent.clock))
            // An overdue tick went out at the cycle's start: the next one follows from there,
            // never in a burst behind it.
            advance(tickAt: max(nextTickOffsetFrames, 0), grid: grid, gridTickFrames: gridTickFrames)
        }
        nextTickOffsetFrames -= end
    }

    /// Sets the time of the next tick after one at `tickTime` (frames in this cycle).
    @_noLocks
    private mutating func advance(tickAt tickTime: Double, grid: MidiClockGrid, gridTickFrames: Double) {
        let ticksPerBeat = Double(Self.ticksPerBeat)
        // Phase error of this tick against the grid, modulo one beat: the tick `ticksSinceStart`
        // should sit on grid tick ≡ ticksSinceStart (mod 24).
        var error = (tickTime - grid.beatOffsetFrames) / gridTickFrames - Double(ticksSinceStart % UInt64(Self.ticksPerBeat))
        error -= ticksPerBeat * realtimeRoundHalfAway(error / ticksPerBeat)
        phaseErrorTicks = error
        let limit = parameters.maximumPhaseSlew
        let wanted = min(limit, max(-limit, parameters.phaseGainPerTick * error))
        let step = parameters.phaseSlewStepPerTick
        phaseCorrection += min(step, max(-step, wanted - phaseCorrection))
        tickPeriodFrames += (gridTickFrames - tickPeriodFrames) * parameters.glidePerTick
        nextTickOffsetFrames = tickTime + tickPeriodFrames * (1 - phaseCorrection)
        ticksSinceStart &+= 1
    }
}

// Glibc's floor/ceil/round, each C call wrapped alone.
@_noLocks
func realtimeFloor(_ value: Double) -> Double { _unsafePerformance { floor(value) } }

@_noLocks
func realtimeCeiling(_ value: Double) -> Double { _unsafePerformance { ceil(value) } }

@_noLocks
func realtimeRoundHalfAway(_ value: Double) -> Double { _unsafePerformance { round(value) } }

@_noLocks
private func positiveModulo(_ value: Int, _ modulus: Int) -> Int {
    let remainder = value % modulus
    return remainder < 0 ? remainder + modulus : remainder
}
