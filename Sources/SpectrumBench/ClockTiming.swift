import Foundation
import SpectrumCore
import SpectrumLive
import SpectrumTestSupport

/// The MIDI clock against the click that drives it: a click loop (`ToneClient`) into a
/// `LiveClient` with `midiClock` on, and a `MidiTickRecorder` on `midi_clock`, on one private
/// jackd (48 kHz, period 256), so every tick and every click has an exact JACK frame time. For
/// each tempo: how far each tick lies from its place on the click's grid (24 per beat, from the
/// first click of the latest loop start before the tick; nothing compensates here: no lead,
/// latencies 0), and how regular the
/// tick intervals are, over the run after the first 5 s of clock. JACK's xruns and the clock's
/// restarts (FC then FA: the tempo was lost) are counted: on a loaded machine the dummy driver
/// skips cycles (its frame time jumps), which makes a tick late and the click jump.
enum ClockTiming {
    struct ClockError: Error, CustomStringConvertible { let description: String }

    static func table(seconds: Double, tempos: [Double] = [120, 128]) throws -> String {
        var rows = [
            "| click | clock ticks measured | xruns | clock restarts | tick − grid: mean (frames) | median abs | p95 abs | max abs | intervals on the nominal period (±0.5 frame) | interval range (frames) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for bpm in tempos {
            let sampleRateHz = 48_000.0
            let beatFrames = 60 * sampleRateHz / bpm
            let tickFrames = beatFrames / 24
            // A whole number of beats: the loop is seamless (16 at 120, 15 at 128).
            let beats = (bpm * 8 / 60).rounded()
            let click = TestSignals.clickTrain(bpm: bpm, sampleRateHz: sampleRateHz, seconds: beats * 60 / bpm)
            let server = try PrivateJackServer(sampleRateHz: Int(sampleRateHz), periodFrames: 256)
            defer { server.stop() }
            let player = try ToneClient(serverName: server.name, clientName: "click", amplitude: 1, loop: click.samples)
            defer { player.stop() }
            var configuration = LiveConfiguration()
            configuration.serverName = server.name
            configuration.connections = .ports([player.outputPortName])
            configuration.midiClock = true
            let client = try LiveClient(configuration: configuration)
            defer { client.stop() }
            let recorder = try MidiTickRecorder(serverName: server.name)
            defer { recorder.stop() }
            try server.connect("spectrum:midi_clock", recorder.inputPortName)
            var frame = AnalysisFrame()
            // Every start of the click's loop (every few seconds; polled every 50 ms): when JACK
            // skips cycles the click skips with them, so each tick is measured against the loop
            // start before it.
            var loopStarts: [UInt32] = []
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                while client.popFrame(into: &frame) {}
                let loopStart = player.loopStartFrame
                if loopStart != 0 && loopStart != loopStarts.last { loopStarts.append(loopStart) }
                usleep(50_000)
            }
            let status = client.status()
            recorder.stop()
            let events = recorder.events
            guard let start = events.firstIndex(where: { $0.status == 0xFA }) else {
                throw ClockError(description: "no FA at \(bpm) BPM in \(seconds) s (\(events.count) events)")
            }
            let ticks = events[start...].filter { $0.status == 0xF8 }.map(\.frame)
            let restarts = events[start...].filter { $0.status == 0xFA }.count - 1
            let settled = Array(ticks.dropFirst(Int(5 * bpm / 60 * 24)))
            guard settled.count > 24, !loopStarts.isEmpty else { throw ClockError(description: "only \(ticks.count) ticks at \(bpm) BPM") }
            // Frames from the click's grid origin (its first click), wrapping-safe.
            let origin = Double(click.beatTimesSeconds[0] * sampleRateHz)
            let errors = settled.map { tick -> Double in
                let loopStart = loopStarts.last { Int32(bitPattern: tick &- $0) >= 0 } ?? loopStarts[0]
                let position = Double(Int32(bitPattern: tick &- loopStart)) - origin
                let ticksOnGrid = position / tickFrames
                return (ticksOnGrid - ticksOnGrid.rounded()) * tickFrames
            }
            let magnitudes = Statistics(samples: errors.map(abs))
            let intervals = zip(settled.dropFirst(), settled).map { Double($0 &- $1) }
            let onNominal = intervals.filter { abs($0 - tickFrames) <= 0.5 }.count
            rows.append("| \(Int(bpm)) BPM (tick \(format(tickFrames, 1)) frames) | \(settled.count) | \(status.xruns) | \(restarts) | \(format(errors.reduce(0, +) / Double(errors.count), 1)) "
                + "| \(format(magnitudes.percentile(0.5), 1)) | \(format(magnitudes.percentile(0.95), 1)) | \(format(magnitudes.maximum, 1)) "
                + "| \(format(100 * Double(onNominal) / Double(intervals.count), 1)) % | \(Int(intervals.min() ?? 0))–\(Int(intervals.max() ?? 0)) |")
        }
        return rows.joined(separator: "\n")
    }
}
