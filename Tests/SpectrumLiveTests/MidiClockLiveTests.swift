import CAllocationCounter
import Foundation
import SpectrumTestSupport
import Testing
@testable import SpectrumLive

extension LiveTests {
@Suite("MIDI clock port (private jackd)")
struct MidiClockPort {
    /// A click loop at 120 BPM into `spectrum:in` (four beats, seamless).
    func clicks(_ server: PrivateJackServer, into port: String) throws -> ToneClient {
        let loop = TestSignals.clickTrain(bpm: 120, sampleRateHz: Double(server.sampleRateHz), seconds: 2).samples
        let player = try ToneClient(serverName: server.name, clientName: "clicks", amplitude: 1, loop: loop)
        try player.connect(to: port)
        return player
    }

    @Test("0 allocations and 0 frees on the JACK process thread with the MIDI clock running, read by jack_midi_dump",
          arguments: [64, 1024])
    func noAllocationWithClock(periodFrames: Int) async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: periodFrames)
        defer { server.stop() }
        var configuration = liveConfiguration(server: server)
        configuration.midiClock = true
        let allocationsBefore = allocation_tally_allocations(processThreadTally)
        let freesBefore = allocation_tally_frees(processThreadTally)
        let client = try LiveClient(configuration: configuration, processCallback: countingProcess)
        defer { client.stop() }
        #expect(client.midiClockPortName == "spectrum:midi_clock")
        let dump = try JackMidiDump(server: server)
        defer { dump.stop() }
        try server.connect("spectrum:midi_clock", dump.inputPortName)
        let player = try clicks(server, into: client.portNames[0])
        defer { player.stop() }
        let startCallbacks = client.status().callbacks
        // Four beats of ticks after the clock started, and at least 1000 cycles.
        let ran = await eventually(within: 40) {
            _ = drain(client)
            let status = client.status()
            return (status.midiClock?.ticks ?? 0) >= 24 * 4 && status.callbacks >= startCallbacks + 1000
        }
        let status = client.status()
        client.stop()
        let clock = try #require(status.midiClock)
        #expect(ran, "clock: \(clock), callbacks \(status.callbacks - startCallbacks)")
        #expect(allocation_tally_allocations(processThreadTally) - allocationsBefore == 0, "allocations on the process thread")
        #expect(allocation_tally_frees(processThreadTally) - freesBefore == 0, "frees on the process thread")
        #expect(clock.isRunning && clock.starts == 1 && clock.writeFailures == 0, "\(clock)")
        #expect(abs(clock.bpm - 120) < 1, "clock at \(clock.bpm) BPM")
        // stop() sent FC before closing; the monitor saw the ticks, then FC.
        let events = dump.stopAndReadEvents()
        #expect(events.filter { $0.status == 0xF8 }.count >= 24 * 4)
        #expect(events.last?.status == 0xFC || events.dropLast().last?.status == 0xFC, "last events \(events.suffix(3).map(\.bytes))")
    }

    @Test("After a server restart the midi_clock port is registered again and the clock starts again (FA) on the next downbeat")
    func clockSurvivesRestart() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        var configuration = liveConfiguration(server: server)
        configuration.midiClock = true
        let client = try LiveClient(configuration: configuration)
        defer { client.stop() }
        var player = try clicks(server, into: client.portNames[0])
        #expect(await eventually(within: 30) { (client.status().midiClock?.ticks ?? 0) >= 48 }, "\(String(describing: client.status().midiClock))")
        player.stop()
        try server.restart(signal: SIGKILL)
        #expect(await eventually(within: 10) { client.status().reconnections == 1 })
        #expect(try server.listPorts().contains("spectrum:midi_clock"))
        let ticksBefore = client.status().midiClock?.ticks ?? 0
        player = try clicks(server, into: "spectrum:in")
        defer { player.stop() }
        let restarted = await eventually(within: 30) {
            let clock = client.status().midiClock
            return (clock?.starts ?? 0) >= 2 && (clock?.ticks ?? 0) >= ticksBefore + 48
        }
        #expect(restarted, "\(String(describing: client.status().midiClock))")
    }
}
}
