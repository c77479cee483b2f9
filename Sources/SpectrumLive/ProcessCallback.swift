import CJack
import CRealtime
import SpectrumDSP
import Synchronization
import SpectrumCore

// THE REAL-TIME FILE. Everything here runs on JACK's threads and obeys the process-callback
// rules (docs/live.md): no allocation, lock, system call, I/O, `print`, class reference or
// capturing closure. Every function is `@_noLocks` (checked by the compiler, transitively);
// each C call is wrapped alone in `_unsafePerformance { }` and is one of JACK's real-time safe
// getters or a CRealtime helper. Backed at run time by the allocation-counting tests and RTSan
// (scripts/rtsan).
//
// These are global functions in a non-main file on purpose: a closure literal written in
// main.swift or in a @MainActor type and handed to JACK crashes with SIGILL on the JACK thread.

/// The C type of a JACK process callback (`JackProcessCallback`): frames in this cycle and the
/// context pointer given to `LiveClient`.
public typealias LiveProcessCallback = @convention(c) (UInt32, UnsafeMutableRawPointer?) -> Int32

/// The production process callback. `argument` is the `ProcessContext` pointer that
/// `LiveClient` registers with JACK. Real-time safe; called by JACK's process thread only
/// (or by a test trampoline that wraps it, see `LiveClient.init(configuration:processCallback:)`).
@_noLocks
public func spectrumLiveProcess(_ frameCount: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let argument else { return 0 }
    _unsafePerformance { spectrum_rtsan_enter() }
    let previousControl = _unsafePerformance { spectrum_denormals_disable() }
    let context = argument.assumingMemoryBound(to: ProcessContext.self)
    let started = _unsafePerformance { jack_get_time() }
    runProcessCycle(context, frameCount: frameCount)
    let finished = _unsafePerformance { jack_get_time() }
    recordCost(context.pointee.counters, microseconds: finished >= started ? finished - started : 0)
    _unsafePerformance { spectrum_denormals_restore(previousControl) }
    _unsafePerformance { spectrum_rtsan_exit() }
    return 0
}

/// One process cycle: for each input, fetch its port buffers, mix them to mono in chunks,
/// analyse, stamp and push frames.
@_noLocks
func runProcessCycle(_ context: UnsafeMutablePointer<ProcessContext>, frameCount: UInt32) {
    let counters = context.pointee.counters
    // 1) Epoch in. Each input's analyser is loaded after it (both sequentially consistent):
    //    that order is what lets the control side know when an analyser it swapped out can no
    //    longer be in use.
    _ = counters.pointee.callbacksEntered.add(1, ordering: .sequentiallyConsistent)
    counters.pointee.lastFrameCount.store(frameCount, ordering: .relaxed)
    let relearn = counters.pointee.relearnRequested.exchange(false, ordering: .acquiring)

    let client = context.pointee.client
    if context.pointee.channelsPerInput > 1 && Int(frameCount) > context.pointee.monoCapacity {
        _ = counters.pointee.chunkedCycles.add(1, ordering: .relaxed)
    }

    // 2) Analyse each input; the MIDI clock follows the tempo slot (0 unless --tempo-input).
    var tally = PushTally()
    var clockAnalyzer: UnsafeMutablePointer<Analyzer>?
    var clockCycleStartStreamFrame: Int64 = 0
    let cycleStartFrame = _unsafePerformance { jack_last_frame_time(client) }
    let tempoSlot = counters.pointee.tempoSlot.load(ordering: .relaxed)
    for slot in 0..<context.pointee.inputCapacity {
        guard let analyzer = context.pointee.analyzers[slot].load(ordering: .sequentiallyConsistent) else { continue }
        if relearn { analyzer.pointee.relearnTempo() }
        if slot == tempoSlot {
            clockAnalyzer = analyzer
            clockCycleStartStreamFrame = analyzer.pointee.streamFrame
        }
        // The capture clock: frame time of this cycle's first sample, and the capture latency.
        let clock = CaptureClock(client: client, cycleStartFrame: cycleStartFrame,
                                 latencyMicroseconds: latencyMicroseconds(counters, sampleRateHz: analyzer.pointee.sampleRateHz))
        analyseInput(context, slot: slot, isTempoSlot: slot == tempoSlot, analyzer: analyzer, frameCount: Int(frameCount), clock: clock, tally: &tally)
    }
    if tally.pushed > 0 { _ = counters.pointee.pushedFrames.add(tally.pushed, ordering: .relaxed) }
    if tally.dropped > 0 { _ = counters.pointee.droppedFrames.add(tally.dropped, ordering: .relaxed) }
    // Single writer (the process thread), so load-compare-store is enough.
    let completed = tally.pushed &+ tally.dropped
    if completed > counters.pointee.mostFramesInOneCycle.load(ordering: .relaxed) {
        counters.pointee.mostFramesInOneCycle.store(completed, ordering: .relaxed)
    }

    // 3) MIDI clock from the beat grid as it stands after this cycle's analysis (no grid while
    //    the tempo slot has no input: the port is still cleared, as JACK requires every cycle).
    if let port = context.pointee.midiClockPort, let midiClock = context.pointee.midiClock {
        var grid = MidiClockGrid.unlocked
        if let clockAnalyzer {
            if midiClock.pointee.readingSlot != tempoSlot && midiClock.pointee.heldFrames < midiClock.pointee.maximumHeldFrames {
                // The tempo input was just switched and its analyser has completed no frame
                // since: the former grid carries on, the scheduler then glides to the new one.
                grid = midiClock.pointee.heldGrid
                midiClock.pointee.heldFrames += Int(frameCount)
            } else {
                let latency = Double(counters.pointee.captureLatencyFrames.load(ordering: .relaxed))
                    + Double(counters.pointee.playbackLatencyFrames.load(ordering: .relaxed))
                grid = midiClockGrid(midiClock, analyzer: clockAnalyzer, cycleStartStreamFrame: clockCycleStartStreamFrame, latencyFrames: latency)
                midiClock.pointee.heldFrames = 0
            }
        }
        runMidiClock(midiClock, port: port, frameCount: frameCount, grid: grid, counters: counters)
        midiClock.pointee.heldGrid = grid
        midiClock.pointee.heldGrid.beatOffsetFrames -= Double(frameCount)
    }

    // 4) Epoch out: from here on this cycle no longer touches any analyser.
    _ = counters.pointee.callbacksCompleted.add(1, ordering: .releasing)
}

/// One input's share of the cycle. Its port buffers are fetched every cycle (never cached).
/// One port: its buffer directly, any length. Several: average into the mono buffer chunk by
/// chunk, so any nframes (0, or more than announced) works with no reallocation.
@_noLocks
func analyseInput(_ context: UnsafeMutablePointer<ProcessContext>, slot: Int, isTempoSlot: Bool, analyzer: UnsafeMutablePointer<Analyzer>,
                  frameCount total: Int, clock: CaptureClock, tally: inout PushTally) {
    let channels = context.pointee.channelsPerInput
    let buffers = context.pointee.portBuffers + slot * channels
    for channel in 0..<channels {
        guard let port = context.pointee.ports[slot * channels + channel].load(ordering: .acquiring) else { buffers[channel] = nil; continue }
        let raw = _unsafePerformance { jack_port_get_buffer(port, UInt32(total)) }
        buffers[channel] = UnsafePointer(raw?.assumingMemoryBound(to: Float.self))
    }
    if channels == 1, let buffer = buffers[0] {
        feed(analyzer, slot: slot, isTempoSlot: isTempoSlot, samples: buffer, count: total, cycleOffset: 0, clock: clock, context: context, tally: &tally)
        return
    }
    let mono = context.pointee.mono
    let capacity = context.pointee.monoCapacity
    let scale = 1 / Float(channels)
    var chunkStart = 0
    while chunkStart < total {
        let chunk = min(capacity, total - chunkStart)
        mixToMono(buffers, portCount: channels, from: chunkStart, count: chunk, scale: scale, into: mono)
        feed(analyzer, slot: slot, isTempoSlot: isTempoSlot, samples: mono, count: chunk, cycleOffset: chunkStart, clock: clock, context: context, tally: &tally)
        chunkStart += chunk
    }
}

/// Keeps the newest completed frame's beat grid for the MIDI clock. Real-time safe.
@_noLocks
func recordMidiClockReading(_ state: UnsafeMutablePointer<MidiClockState>, analyzer: UnsafeMutablePointer<Analyzer>, slot: Int) {
    let frame = analyzer.pointee.frame
    state.pointee.analyzer = analyzer
    state.pointee.readingSlot = slot
    state.pointee.tempo = frame.pointee.tempo
    state.pointee.streamFrame = frame.pointee.streamFrame
    state.pointee.latestBeat = analyzer.pointee.latestBeat
}

/// The beat grid for the MIDI clock, from the analyser's public readings of the newest completed
/// frame (the tempo, the phase at its end, the latest beat event's place in the bar), on the
/// emission timeline of this cycle: a beat heard at stream frame B is due at B − capture
/// latency − lead − playback latency (`latencyFrames` is the sum of the two latencies).
@_noLocks
func midiClockGrid(_ state: UnsafeMutablePointer<MidiClockState>, analyzer: UnsafeMutablePointer<Analyzer>,
                   cycleStartStreamFrame: Int64, latencyFrames: Double) -> MidiClockGrid {
    let tempo = state.pointee.tempo
    let sampleRateHz = analyzer.pointee.sampleRateHz
    guard state.pointee.analyzer == analyzer, tempo.bpm > 0, tempo.bpm.isFinite, tempo.phase.isFinite else { return .unlocked }
    let periodFrames = 60 * sampleRateHz / Double(tempo.bpm)
    let leadFrames = analyzer.pointee.configuration.rhythm.leadMilliseconds / 1000 * sampleRateHz
    let beatsPerBar = max(1, analyzer.pointee.configuration.rhythm.beatsPerBar)
    // The phase is 0 at each beat's event, the lead time before the beat: the beat nearest
    // behind the newest frame's end plus the lead.
    let beatFrame = Double(state.pointee.streamFrame) + leadFrames - Double(tempo.phase) * periodFrames
    // Its place in the bar, counted from the latest beat event (the tracker counts bars from
    // the first beat after locking).
    let latest = state.pointee.latestBeat
    var inBar = 0
    if latest.inBar > 0 {
        let beatsAfterLatest = Int(realtimeRoundHalfAway((beatFrame - latest.timeFrames) / periodFrames))
        let position = (Int(latest.inBar) - 1 + beatsAfterLatest) % beatsPerBar
        inBar = position < 0 ? position + beatsPerBar : position
    }
    let offset = beatFrame - Double(cycleStartStreamFrame) - leadFrames - latencyFrames
    return MidiClockGrid(isLocked: true, beatPeriodFrames: periodFrames, beatOffsetFrames: offset, beatInBar: inBar, beatsPerBar: beatsPerBar)
}

/// Clears the MIDI port's buffer (every cycle, as JACK requires) and writes the scheduler's
/// messages for this cycle, in time order.
@_noLocks
func runMidiClock(_ state: UnsafeMutablePointer<MidiClockState>, port: OpaquePointer, frameCount: UInt32,
                  grid: MidiClockGrid, counters: UnsafeMutablePointer<LiveCounters>) {
    guard let buffer = _unsafePerformance({ jack_port_get_buffer(port, frameCount) }) else { return }
    _unsafePerformance { jack_midi_clear_buffer(buffer) }
    let hold = counters.pointee.midiClockHold.load(ordering: .relaxed)
    var ticks: UInt64 = 0, failures: UInt64 = 0
    state.pointee.scheduler.process(frameCount: Int(frameCount), grid: grid, hold: hold) { event in
        var bytes: (UInt8, UInt8, UInt8) = (event.status, event.data1, event.data2)
        let result = withUnsafeBytes(of: &bytes) { raw in
            _unsafePerformance {
                jack_midi_event_write(buffer, jack_nframes_t(event.offsetFrames), raw.baseAddress!.assumingMemoryBound(to: jack_midi_data_t.self), event.length)
            }
        }
        if result != 0 { failures &+= 1; return }
        switch event.status {
        case MidiClockEvent.clock: ticks &+= 1
        case MidiClockEvent.start: _ = counters.pointee.midiClockStarts.add(1, ordering: .relaxed)
        case MidiClockEvent.stop: _ = counters.pointee.midiClockStops.add(1, ordering: .relaxed)
        default: break
        }
    }
    if ticks > 0 { _ = counters.pointee.midiClockTicks.add(ticks, ordering: .relaxed) }
    if failures > 0 { _ = counters.pointee.midiClockWriteFailures.add(failures, ordering: .relaxed) }
    counters.pointee.midiClockRunning.store(state.pointee.scheduler.isRunning, ordering: .relaxed)
    counters.pointee.midiClockTickPeriodBits.store(state.pointee.scheduler.tickPeriodFrames.bitPattern, ordering: .relaxed)
    counters.pointee.midiClockPhaseErrorBits.store(state.pointee.scheduler.phaseErrorTicks.bitPattern, ordering: .relaxed)
}

/// What the cycle needs to turn a position in the cycle into JACK time.
struct CaptureClock {
    let client: OpaquePointer
    let cycleStartFrame: UInt32
    let latencyMicroseconds: UInt64
}

struct PushTally {
    var pushed: UInt64 = 0
    var dropped: UInt64 = 0
}

/// Average of the ports' samples `from ..< from + count` into `mono` (a missing buffer counts
/// as silence).
@_noLocks
func mixToMono(_ buffers: UnsafeMutablePointer<UnsafePointer<Float>?>, portCount: Int, from start: Int, count: Int, scale: Float, into mono: UnsafeMutablePointer<Float>) {
    for frame in 0..<count { mono[frame] = 0 }
    for index in 0..<portCount {
        guard let buffer = buffers[index] else { continue }
        for frame in 0..<count { mono[frame] += buffer[start + frame] }
    }
    for frame in 0..<count { mono[frame] *= scale }
}

/// Feeds `count` samples to input `slot`'s analyser; a beat event is posted to its mailbox as soon as the
/// samples holding it are consumed, and each completed frame is stamped with the capture time of
/// its newest sample and pushed (or counted as dropped when the ring is full).
@_noLocks
func feed(_ analyzer: UnsafeMutablePointer<Analyzer>, slot: Int, isTempoSlot: Bool, samples: UnsafePointer<Float>, count: Int, cycleOffset: Int,
          clock: CaptureClock, context: UnsafeMutablePointer<ProcessContext>, tally: inout PushTally) {
    var offset = 0
    while offset < count {
        let beatsBefore = analyzer.pointee.beatEventCount
        let step = analyzer.pointee.consume(samples + offset, frameCount: count - offset)
        offset += step.consumed
        // The analyser's next sample sits at this cycle position.
        let nextPosition = cycleOffset + offset
        if analyzer.pointee.beatEventCount != beatsBefore {
            let beat = analyzer.pointee.latestBeat
            // Beat time relative to the next sample (negative: already heard; positive: early by
            // the lead time), rounded to the nearest frame.
            let offset = beat.timeFrames - Double(analyzer.pointee.streamFrame)
            let framesFromNext = Int(offset < 0 ? offset - 0.5 : offset + 0.5)
            context.pointee.beats[slot].post(BeatMailbox.Event(
                beat: beat, bpm: analyzer.pointee.frame.pointee.tempo.bpm,
                captureTimeMicroseconds: captureMicroseconds(clock, cyclePosition: nextPosition + framesFromNext)))
        }
        guard step.frameCompleted else { continue }
        if isTempoSlot, let midiClock = context.pointee.midiClock {
            recordMidiClockReading(midiClock, analyzer: analyzer, slot: slot)
        }
        analyzer.pointee.stampCaptureTime(microseconds: captureMicroseconds(clock, cyclePosition: nextPosition - 1))
        if context.pointee.ring.push(analyzer.pointee.frame, inputIndex: Int32(truncatingIfNeeded: slot)) { tally.pushed &+= 1 } else { tally.dropped &+= 1 }
    }
}

/// Acoustic time (µs on JACK's clock, capture latency subtracted) of the sample at
/// `cyclePosition` in this cycle (may lie before or after the cycle).
@_noLocks
func captureMicroseconds(_ clock: CaptureClock, cyclePosition: Int) -> UInt64 {
    let frame = clock.cycleStartFrame &+ UInt32(bitPattern: Int32(truncatingIfNeeded: cyclePosition))
    let client = clock.client
    let heardAt = _unsafePerformance { jack_frames_to_time(client, frame) }
    let latency = clock.latencyMicroseconds
    return heardAt > latency ? heardAt - latency : 0
}

@_noLocks
func latencyMicroseconds(_ counters: UnsafeMutablePointer<LiveCounters>, sampleRateHz: Double) -> UInt64 {
    let frames = counters.pointee.captureLatencyFrames.load(ordering: .relaxed)
    guard frames > 0, sampleRateHz > 0 else { return 0 }
    return UInt64(Double(frames) * 1_000_000 / sampleRateHz)
}

@_noLocks
func recordCost(_ counters: UnsafeMutablePointer<LiveCounters>, microseconds: UInt64) {
    _ = counters.pointee.costTotalMicroseconds.add(microseconds, ordering: .relaxed)
    // Single writer (the process thread), so load-compare-store is enough.
    if microseconds > counters.pointee.costMaximumMicroseconds.load(ordering: .relaxed) {
        counters.pointee.costMaximumMicroseconds.store(microseconds, ordering: .relaxed)
    }
}

// MARK: The other JACK callbacks that get the ProcessContext

/// Buffer-size callback: records the new period. Nothing to rebuild: the process callback
/// handles any nframes in chunks and the analysis hop does not depend on the period.
/// Real-time safe (JACK may call it on the process thread).
@_noLocks
func liveBufferSizeChanged(_ frames: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let argument else { return 0 }
    let context = argument.assumingMemoryBound(to: ProcessContext.self)
    context.pointee.counters.pointee.periodFrames.store(frames, ordering: .relaxed)
    return 0
}

/// Xrun callback: counts. Real-time safe.
@_noLocks
func liveXrun(_ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let argument else { return 0 }
    let context = argument.assumingMemoryBound(to: ProcessContext.self)
    _ = context.pointee.counters.pointee.xruns.add(1, ordering: .relaxed)
    return 0
}

/// Freewheel callback: records the mode (process() then runs faster than real time; consumers
/// pace themselves by `streamFrame`, not the wall clock). Real-time safe.
@_noLocks
func liveFreewheel(_ starting: Int32, _ argument: UnsafeMutableRawPointer?) {
    guard let argument else { return }
    let context = argument.assumingMemoryBound(to: ProcessContext.self)
    context.pointee.counters.pointee.freewheeling.store(starting != 0, ordering: .relaxed)
}

/// `jack_on_info_shutdown`: only sets the flag (JACK forbids calling it back from here).
@_noLocks
func liveShutdown(_ code: jack_status_t, _ reason: UnsafePointer<CChar>?, _ argument: UnsafeMutableRawPointer?) {
    guard let argument else { return }
    let context = argument.assumingMemoryBound(to: ProcessContext.self)
    context.pointee.counters.pointee.shutDown.store(true, ordering: .releasing)
}

/// Latency callback: on the capture pass, reads the capture latency of the input ports so
/// frames are stamped in acoustic time; on the playback pass, the MIDI clock port's latency. Runs on JACK's notification thread, not the process
/// thread; still allocation-free.
@_noLocks
func liveLatency(_ mode: jack_latency_callback_mode_t, _ argument: UnsafeMutableRawPointer?) {
    guard let argument else { return }
    let context = argument.assumingMemoryBound(to: ProcessContext.self)
    if mode == JackCaptureLatency { updateCaptureLatency(context) } else { updatePlaybackLatency(context) }
}

/// Stores the MIDI clock port's playback latency (range maximum): how long a message written
/// now takes to leave the graph. Not for the process thread.
@_noLocks
func updatePlaybackLatency(_ context: UnsafeMutablePointer<ProcessContext>) {
    guard let port = context.pointee.midiClockPort else { return }
    var range = jack_latency_range_t(min: 0, max: 0)
    _unsafePerformance { jack_port_get_latency_range(port, JackPlaybackLatency, &range) }
    context.pointee.counters.pointee.playbackLatencyFrames.store(range.max, ordering: .relaxed)
}

/// Stores the largest capture latency (range maximum) over the input ports. Not for the
/// process thread (JACK computes latencies on its notification thread).
@_noLocks
func updateCaptureLatency(_ context: UnsafeMutablePointer<ProcessContext>) {
    var largest: UInt32 = 0
    for index in 0..<context.pointee.portCount {
        guard let port = context.pointee.ports[index].load(ordering: .acquiring) else { continue }
        var range = jack_latency_range_t(min: 0, max: 0)
        _unsafePerformance { jack_port_get_latency_range(port, JackCaptureLatency, &range) }
        largest = max(largest, range.max)
    }
    context.pointee.counters.pointee.captureLatencyFrames.store(largest, ordering: .relaxed)
}

/// An error/info function for libjack that prints nothing (LiveClient reports errors itself).
func liveQuietJackMessage(_ message: UnsafePointer<CChar>?) {}
