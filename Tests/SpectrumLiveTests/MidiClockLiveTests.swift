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
        let loop = TestSignals.clickLoop(bpm: 120, sampleRateHz: Double(server.sampleRateHz)).samples
        let player = try ToneClient(serverName: server.name, clientName: "clicks", amplitude: 1, loop: loop)
        try player.connect(to: port)
        return player
    }

    @Test("0 allocations and 0 frees on the JACK process thread with the MIDI clock running, read by jack_midi_dump",
          arguments: [64, 1024])
    func noAllocationWithClock(periodFrames: Int) async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: periodFrames)
        defer { server.stop() }
        let configuration = clockConfiguration(server: server)
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
        // A cycle lost to an xrun (at 64 frames a quiet VM has one or two a minute) can take a
        // tick with it on the monitor's side: each xrun the client saw may have cost one.
        // The monitor prints behind the cycles and is killed unprinted: wait for the FC first.
        _ = await eventually(within: 5) { dump.events().contains { $0.status == 0xFC } }
        let events = dump.stopAndReadEvents()
        let ticksSeen = events.filter { $0.status == 0xF8 }.count
        #expect(ticksSeen >= max(24 * 2, 24 * 4 - Int(status.xruns)), "the monitor saw \(ticksSeen) ticks, \(status.xruns) xruns")
        #expect(events.last?.status == 0xFC || events.dropLast().last?.status == 0xFC, "last events \(events.suffix(3).map(\.bytes))")
    }

    @Test("The tempo input drives the clock: a silent first input and a 120 BPM click on the second, chosen with tempoInput; 0 allocations and 0 frees on the process thread")
    func tempoInputDrivesTheClock() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        var configuration = clockConfiguration(server: server)
        configuration.inputs = [LiveInput(name: "quiet", sources: ["system:capture_1"]), LiveInput(name: "click")]
        configuration.tempoInput = "click"
        let allocationsBefore = allocation_tally_allocations(processThreadTally)
        let freesBefore = allocation_tally_frees(processThreadTally)
        let client = try LiveClient(configuration: configuration, processCallback: countingProcess)
        defer { client.stop() }
        #expect(client.tempoSlot == 1)
        let player = try clicks(server, into: client.portNames[1])
        defer { player.stop() }
        let ran = await eventually(within: 40) {
            _ = drain(client)
            return (client.status().midiClock?.ticks ?? 0) >= 24 * 4
        }
        let status = client.status()
        client.stop()
        let clock = try #require(status.midiClock)
        #expect(ran && clock.isRunning && abs(clock.bpm - 120) < 1, "\(clock)")
        #expect(allocation_tally_allocations(processThreadTally) - allocationsBefore == 0, "allocations on the process thread")
        #expect(allocation_tally_frees(processThreadTally) - freesBefore == 0, "frees on the process thread")
    }

    @Test("The tempo input switched at run time (setTempoInput, as /control/tempo_input does): a 120 BPM click on the first input, 128 BPM on the second; after the switch the clock glides to 128 BPM (ticks near 937.5 frames apart, read by jack_midi_dump) with no FC or second FA; 0 allocations and 0 frees on the process thread")
    func tempoInputSwitchedAtRunTime() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        var configuration = clockConfiguration(server: server)
        configuration.inputs = [LiveInput(name: "slow"), LiveInput(name: "fast")]
        let allocationsBefore = allocation_tally_allocations(processThreadTally)
        let freesBefore = allocation_tally_frees(processThreadTally)
        let client = try LiveClient(configuration: configuration, processCallback: countingProcess)
        defer { client.stop() }
        #expect(client.tempoInput == nil && client.tempoSlot == 0)
        let dump = try JackMidiDump(server: server)
        defer { dump.stop() }
        try server.connect("spectrum:midi_clock", dump.inputPortName)
        let slow = try clicks(server, into: client.portNames[0])
        defer { slow.stop() }
        let fast = try ToneClient.clicks(bpm: 128, on: server)
        defer { fast.stop() }
        try fast.connect(to: client.portNames[1])
        // Both inputs locked (the second one's frames at 128 BPM), the clock at 120.
        var fastBpm: Float = 0
        let locked = await eventually(within: 40) {
            if let latest = drain(client).last(where: { $0.inputIndex == 1 }) { fastBpm = latest.tempo.bpm }
            let clock = client.status().midiClock
            return abs(fastBpm - 128) < 1 && (clock?.isRunning ?? false) && abs((clock?.bpm ?? 0) - 120) < 1
        }
        #expect(locked, "fast input at \(fastBpm) BPM, clock \(String(describing: client.status().midiClock))")
        let switchedAtTicks = client.status().midiClock?.ticks ?? 0

        #expect(try client.setTempoInput(named: "fast") == 1)
        #expect(client.tempoInput == "fast" && client.tempoSlot == 1)
        let followed = await eventually(within: 20) {
            _ = drain(client)
            let clock = client.status().midiClock
            return abs((clock?.bpm ?? 0) - 128) < 0.5 && (clock?.ticks ?? 0) >= switchedAtTicks + 24 * 8
        }
        let status = client.status()
        client.stop()
        let clock = try #require(status.midiClock)
        #expect(followed, "\(clock)")
        #expect(clock.starts == 1 && clock.stops == 0, "the switch stopped or restarted the clock: \(clock)")
        #expect(allocation_tally_allocations(processThreadTally) - allocationsBefore == 0, "allocations on the process thread")
        #expect(allocation_tally_frees(processThreadTally) - freesBefore == 0, "frees on the process thread")
        // The receiver saw one FA, then ticks only until the FC of stop(); the last beat's ticks
        // near 128 BPM's 937.5 frames, far from 120 BPM's 1000 (the phase slew, at most 8 %,
        // may still be re-phasing them: measured 942–945 eight beats after the switch; a cycle
        // JACK skips on a loaded machine makes one tick late). The monitor prints behind the
        // cycles and is killed unprinted: wait for the FC of stop() first.
        _ = await eventually(within: 5) { dump.events().contains { $0.status == 0xFC } }
        let events = dump.stopAndReadEvents()
        let statuses = events.map(\.status)
        #expect(statuses.filter { $0 == 0xFA }.count == 1 && statuses.filter { $0 == 0xFC }.count <= 1, "\(statuses.filter { $0 != 0xF8 })")
        let ticks = events.filter { $0.status == 0xF8 }.map(\.frame)
        let lastIntervals = zip(ticks.dropFirst(), ticks).map { $0 - $1 }.suffix(24)
        let near128 = lastIntervals.filter { (900...975).contains($0) }.count
        #expect(near128 >= 22, "the last beat's tick intervals: \(Array(lastIntervals))")
    }

    @Test("A tempo input switched to a name that is not an input is refused in one line listing them, and nothing changes")
    func unknownTempoInputAtRunTime() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        var configuration = clockConfiguration(server: server)
        configuration.inputs = [LiveInput(name: "kick"), LiveInput(name: "bass")]
        configuration.tempoInput = "bass"
        let client = try LiveClient(configuration: configuration)
        defer { client.stop() }
        let error = #expect(throws: LiveClientError.self) { try client.setTempoInput(named: "snare") }
        #expect(error?.description == "tempo input snare: expected the name of an input, got none of kick, bass")
        #expect(client.tempoInput == "bass" && client.tempoSlot == 1)
        // The new tempo input cannot be removed, the former one can.
        try client.setTempoInput(named: "kick")
        #expect(throws: LiveClientError.self) { try client.removeInput(named: "kick") }
        #expect(try client.removeInput(named: "bass") == 1)
    }

    @Test("A tempo input that is not one of the inputs is refused in one line listing them")
    func unknownTempoInput() throws {
        var configuration = LiveConfiguration()
        configuration.inputs = [LiveInput(name: "kick"), LiveInput(name: "bass")]
        configuration.tempoInput = "snare"
        let error = #expect(throws: LiveClientError.self) { try LiveClient(configuration: configuration) }
        #expect(error?.description == "--tempo-input snare: expected the name of an input, got none of kick, bass")
    }

    @Test("After a server restart the midi_clock port is registered again and the clock starts again (FA) on the next downbeat")
    func clockSurvivesRestart() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let client = try LiveClient(configuration: clockConfiguration(server: server))
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

    @Test("midi_clock's connections survive its destination's client restarting and a server restart: the destination connected by hand is back when its client returns and the clock flows to it again; the one disconnected by hand is not")
    func clockConnectionsSurviveRestart() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let client = try LiveClient(configuration: clockConfiguration(server: server))
        defer { client.stop() }
        var synth = try JackMidiDump(server: server, name: "synth")
        var drums = try JackMidiDump(server: server, name: "drums")
        // Patched by hand: the synth kept, the drums connected and then removed.
        try server.connect("spectrum:midi_clock", synth.inputPortName)
        try server.connect("spectrum:midi_clock", drums.inputPortName)
        try server.disconnect("spectrum:midi_clock", drums.inputPortName)
        let remembered = await eventually(within: 5) { client.rememberedMidiClockDestinations() == [synth.inputPortName] }
        #expect(remembered, "remembered \(client.rememberedMidiClockDestinations())")
        // The input connections are remembered apart: none here.
        #expect(client.rememberedConnections().isEmpty)
        // The synth quits (its port disconnected, then gone: not a disconnection by hand) and
        // starts again while the server runs: connected again as soon as its port appears.
        synth.stop()
        try await Task.sleep(for: .milliseconds(Int(ConnectionMemory.forgetDelaySeconds * 3000)))
        #expect(client.rememberedMidiClockDestinations() == [synth.inputPortName])
        synth = try JackMidiDump(server: server, name: "synth")
        #expect(await eventually(within: 5) { server.connections(of: "spectrum:midi_clock") == [synth.inputPortName] },
                "after the synth came back: \(server.connections(of: "spectrum:midi_clock"))")

        // The server restarts; both peers come back after spectrum has reconnected.
        // No jack_lsp polls the new server while spectrum reopens: one closing then would leave
        // a dead wake-up entry that the synth, downstream of spectrum, could be given (jack2
        // issue 721, docs/live.md "Not covered"); this test is about the connections.
        synth.stop()
        drums.stop()
        try server.restart(signal: SIGKILL, pollsUntilReady: false)
        #expect(await eventually(within: 20) { client.status().reconnections == 1 }, "\(client.status().lastReconnectError ?? "no error")")
        synth = try JackMidiDump(server: server, name: "synth")
        drums = try JackMidiDump(server: server, name: "drums")
        defer { drums.stop() }
        let restored = await eventually(within: 5) { server.connections(of: "spectrum:midi_clock") == [synth.inputPortName] }
        #expect(restored, "midi_clock connected to \(server.connections(of: "spectrum:midi_clock"))")
        // The clock reaches the synth again.
        let player = try clicks(server, into: "spectrum:in")
        defer { player.stop() }
        let ticking = await eventually(within: 30) { (client.status().midiClock?.ticks ?? 0) >= 48 }
        #expect(ticking, "\(String(describing: client.status().midiClock))")
        // The synth prints behind the cycles and is killed unprinted: wait for what is expected.
        _ = await eventually(within: 5) {
            let events = synth.events()
            return events.contains { $0.status == 0xFA } && events.filter { $0.status == 0xF8 }.count >= 24
        }
        let events = synth.stopAndReadEvents()
        #expect(events.contains { $0.status == 0xFA } && events.filter { $0.status == 0xF8 }.count >= 24, "synth got \(events.count) events")
        #expect(drums.stopAndReadEvents().isEmpty, "the port disconnected by hand got the clock")
    }

    @Test("midiClockDestinations connects the clock at start and is remembered; a bad name fails with one line naming it")
    func connectsClockAtStart() async throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let synth = try JackMidiDump(server: server, name: "synth")
        defer { synth.stop() }
        var configuration = clockConfiguration(server: server)
        configuration.midiClockDestinations = [synth.inputPortName]
        let client = try LiveClient(configuration: configuration)
        // The server applies a connection in its own time: poll, then show what it holds.
        #expect(await eventually(within: 5) { server.connections(of: "spectrum:midi_clock") == [synth.inputPortName] },
                "\(server.connections(of: "spectrum:midi_clock"))")
        #expect(client.rememberedMidiClockDestinations() == [synth.inputPortName])
        client.stop()

        for (destination, expected) in [("nosuch:port", "no JACK port named 'nosuch:port': MIDI inputs are: synth:input"),
                                         ("system:capture_1", "'system:capture_1' is not a MIDI input port")] {
            configuration.midiClockDestinations = [destination]
            do {
                _ = try LiveClient(configuration: configuration)
                Issue.record("\(destination): accepted")
            } catch {
                let line = String(describing: error)
                #expect(line.contains(expected) && !line.contains("\n"), "\(line)")
            }
        }
        #expect(!(try server.listPorts()).contains("spectrum:"), "a refused client left ports behind")
    }
}
}

/// A live configuration with the MIDI clock on, on `server`.
private func clockConfiguration(server: PrivateJackServer) -> LiveConfiguration {
    var configuration = liveConfiguration(server: server)
    configuration.midiClock = true
    return configuration
}
