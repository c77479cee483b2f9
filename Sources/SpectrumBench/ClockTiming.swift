import Foundation
import SpectrumCore
import SpectrumLive
import SpectrumTestSupport

/// The MIDI clock against the click that drives it: a click loop (`ToneClient`) into a
/// `LiveClient` with `midiClock` on, and a `MidiTickRecorder` on `midi_clock`, on one private
/// jackd (48 kHz, period 256), so every tick and every click has an exact JACK frame time. For
/// each tempo: how far each tick lies from its place on the click's grid (24 per beat, from the
/// first click, on JACK's frame clock where the click really sounded: `playbackOrigins`), and how
/// regular the tick intervals are, over the run after the first 5 s of clock; nothing compensates
/// here (no lead, latencies 0). JACK's xruns, the click's frames lost to skipped cycles and the
/// clock's restarts (FC then FA: the tempo was lost) are counted: on a loaded machine the dummy
/// driver skips cycles (its frame time moves on without the clients), so the click and the
/// ticks that follow it land a period later on the frame clock, and one interval is a period long.
enum ClockTiming {
    struct ClockError: Error, CustomStringConvertible { let description: String }

    static func table(seconds: Double, tempos: [Double] = [120, 128]) throws -> String {
        var rows = [
            "| click | clock ticks measured | xruns | click frames lost to skipped cycles | clock restarts | tick − grid: mean (frames) | median abs | p95 abs | max abs | intervals on the nominal period (±0.5 frame) | interval range (frames) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
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
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                while client.popFrame(into: &frame) {}
                usleep(50_000)
            }
            let status = client.status()
            recorder.stop()
            player.stop()
            let events = recorder.events
            guard let start = events.firstIndex(where: { $0.status == 0xFA }) else {
                throw ClockError(description: "no FA at \(bpm) BPM in \(seconds) s (\(events.count) events)")
            }
            let ticks = events[start...].filter { $0.status == 0xF8 }.map(\.frame)
            let restarts = events[start...].filter { $0.status == 0xFA }.count - 1
            let settled = Array(ticks.dropFirst(Int(5 * bpm / 60 * 24)))
            let origins = player.playbackOrigins
            guard settled.count > 24, let firstOrigin = origins.first else { throw ClockError(description: "only \(ticks.count) ticks at \(bpm) BPM") }
            // Each tick against the click's grid where the click really sounded: from the played
            // stream's origin in force at the tick (a cycle the server skipped moves the stream,
            // and the click with it, later on JACK's frame clock), wrapping-safe.
            let firstClickFrames = Double(click.beatTimesSeconds[0] * sampleRateHz)
            let errors = settled.map { tick -> Double in
                let origin = origins.last { Int32(bitPattern: tick &- $0.fromFrame) >= 0 } ?? firstOrigin
                let position = Double(Int32(bitPattern: tick &- origin.originFrame)) - firstClickFrames
                let ticksOnGrid = position / tickFrames
                return (ticksOnGrid - ticksOnGrid.rounded()) * tickFrames
            }
            let clickFramesLost = Int32(bitPattern: (origins.last ?? firstOrigin).originFrame &- firstOrigin.originFrame)
            let magnitudes = Statistics(samples: errors.map(abs))
            let intervals = zip(settled.dropFirst(), settled).map { Double($0 &- $1) }
            let onNominal = intervals.filter { abs($0 - tickFrames) <= 0.5 }.count
            rows.append("| \(Int(bpm)) BPM (tick \(format(tickFrames, 1)) frames) | \(settled.count) | \(status.xruns) | \(clickFramesLost) | \(restarts) | \(format(errors.reduce(0, +) / Double(errors.count), 1)) "
                + "| \(format(magnitudes.percentile(0.5), 1)) | \(format(magnitudes.percentile(0.95), 1)) | \(format(magnitudes.maximum, 1)) "
                + "| \(format(100 * Double(onNominal) / Double(intervals.count), 1)) % | \(Int(intervals.min() ?? 0))–\(Int(intervals.max() ?? 0)) |")
        }
        return rows.joined(separator: "\n")
    }
}
