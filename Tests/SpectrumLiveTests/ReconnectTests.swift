import CJack
import CAllocationCounter
import Foundation
import SpectrumTestSupport
import Testing
import SpectrumCore
@testable import SpectrumLive

@Suite("Remembered connections")
struct ConnectionMemoryTests {
    typealias Connection = ConnectionMemory.Connection
    let capture = Connection.input(0, from: "system:capture_1")
    let player = Connection.input(0, from: "player:out")

    @Test("A connection made by anyone is remembered once")
    func remembersConnections() {
        var memory = ConnectionMemory()
        _ = memory.apply(.connected(capture), nowSeconds: 0)
        _ = memory.apply(.connected(player), nowSeconds: 0)
        _ = memory.apply(.connected(capture), nowSeconds: 1)
        #expect(memory.remembered == [capture, player])
    }

    @Test("Removed by hand while its source exists: forgotten after the delay, not before")
    func forgetsWhatIsDisconnectedByHand() {
        var memory = ConnectionMemory()
        _ = memory.apply(.connected(capture), nowSeconds: 0)
        _ = memory.apply(.disconnected(capture), nowSeconds: 10)
        memory.judgeDisconnections(nowSeconds: 10 + ConnectionMemory.forgetDelaySeconds / 2, peerExists: { _ in true }, isConnected: { _ in false })
        #expect(memory.remembered == [capture], "judged before the delay")
        memory.judgeDisconnections(nowSeconds: 10 + ConnectionMemory.forgetDelaySeconds, peerExists: { _ in true }, isConnected: { _ in false })
        #expect(memory.remembered.isEmpty)
    }

    @Test("Its source port vanished (client quit, server stopping): kept, and made again when the port appears")
    func keepsWhatVanishedWithItsPort() {
        var memory = ConnectionMemory()
        _ = memory.apply(.connected(player), nowSeconds: 0)
        _ = memory.apply(.disconnected(player), nowSeconds: 1)
        memory.judgeDisconnections(nowSeconds: 5, peerExists: { _ in false }, isConnected: { _ in false })
        #expect(memory.remembered == [player])
        #expect(memory.apply(.appeared("player:out"), nowSeconds: 6) == [player])
        #expect(memory.apply(.appeared("other:out"), nowSeconds: 6) == [])
    }

    @Test("Connected again before judgement, or the server lost meanwhile: kept")
    func keepsWhatCameBack() {
        var memory = ConnectionMemory()
        _ = memory.apply(.connected(capture), nowSeconds: 0)
        _ = memory.apply(.disconnected(capture), nowSeconds: 1)
        memory.judgeDisconnections(nowSeconds: 5, peerExists: { _ in true }, isConnected: { _ in true })
        #expect(memory.remembered == [capture])
        _ = memory.apply(.disconnected(capture), nowSeconds: 6)
        memory.serverLost()
        memory.judgeDisconnections(nowSeconds: 10, peerExists: { _ in true }, isConnected: { _ in false })
        #expect(memory.remembered == [capture])
    }

    @Test("The MIDI clock's destinations follow the same rule; removing an input forgets only that input's connections")
    func remembersClockDestinations() {
        let synth = Connection.midiClock(to: "synth:midi_in")
        let drums = Connection.midiClock(to: "drums:midi_in")
        var memory = ConnectionMemory()
        for connection in [capture, synth, drums] { _ = memory.apply(.connected(connection), nowSeconds: 0) }
        _ = memory.apply(.disconnected(synth), nowSeconds: 1)
        _ = memory.apply(.disconnected(drums), nowSeconds: 1)
        memory.judgeDisconnections(nowSeconds: 5, peerExists: { $0 == drums.peer }, isConnected: { _ in false })
        #expect(memory.remembered == [capture, synth], "the synth's port vanished, the drums were disconnected by hand")
        #expect(memory.apply(.appeared("synth:midi_in"), nowSeconds: 6) == [synth])
        memory.forget(inputIndices: 0..<1)
        #expect(memory.remembered == [synth])
    }

    @Test("A disconnection of something never remembered changes nothing")
    func ignoresUnknownDisconnections() {
        var memory = ConnectionMemory()
        _ = memory.apply(.disconnected(capture), nowSeconds: 0)
        #expect(memory == ConnectionMemory())
    }
}

extension LiveTests {
@Suite("Reconnection after a server restart")
struct Reconnection {
    /// Frames popped within `seconds` (the ring drained first).
    func framesArrive(_ client: LiveClient, within seconds: Double) async -> Bool {
        _ = drain(client)
        return await eventually(within: seconds) { !drain(client).isEmpty }
    }

    @Test("Three restarts (SIGTERM, SIGKILL, another rate and period): frames resume, every connection is restored, none made by hand is resurrected, 0 allocations on the process thread")
    func survivesRestarts() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        var metronome = try JackMetronome(server: server)
        let allocationsBefore = allocation_tally_allocations(processThreadTally)
        let client = try LiveClient(configuration: liveConfiguration(server: server, connections: .ports([metronome.portName])),
                                    processCallback: countingProcess)
        defer { client.stop() }
        // Patched by others: one connection kept, one made and then removed by hand.
        try server.connect("system:capture_1", "spectrum:in")
        try server.connect("system:capture_2", "spectrum:in")
        try server.disconnect("system:capture_2", "spectrum:in")
        let remembered = await eventually(within: 5) {
            Set(client.rememberedConnections().map(\.source)) == [metronome.portName, "system:capture_1"]
        }
        #expect(remembered, "remembered \(client.rememberedConnections())")
        #expect(await framesArrive(client, within: 5))

        let restarts: [(signal: Int32, rate: Int, period: Int)] = [(SIGTERM, 44_100, 512), (SIGKILL, 48_000, 256), (SIGTERM, 48_000, 128)]
        for (number, restart) in restarts.enumerated() {
            metronome.stop()
            try server.restart(signal: restart.signal, sampleRateHz: restart.rate, periodFrames: restart.period)
            let back = await eventually(within: 10) { client.status().reconnections == number + 1 }
            #expect(back, "restart \(number + 1): not reconnected (\(client.status().lastReconnectError ?? "no error"))")
            #expect(await framesArrive(client, within: 5), "restart \(number + 1): no frames")
            let status = client.status()
            #expect(status.serverLostSeconds == nil && !status.isShutDown)
            #expect(status.sampleRateHz == Double(restart.rate) && status.analysisSampleRateHz == Double(restart.rate))
            #expect(await eventually(within: 5) { server.connections(of: "spectrum:in") == ["system:capture_1"] },
                    "restart \(number + 1): \(server.connections(of: "spectrum:in"))")
            // The new analyser runs at the new rate: a 1 kHz tone peaks in its band.
            let tone = try ToneClient(serverName: server.name, frequencyHz: 1000, amplitude: 0.5)
            try tone.connect(to: "spectrum:in")
            _ = drain(client)
            let frames = await collect(30, from: client)
            tone.stop()
            let expected = try expectedBand(frequencyHz: 1000, sampleRateHz: Double(restart.rate))
            let loudest = frames.suffix(10).map { frame in (0..<frame.bandCount).max { frame.bands[$0] < frame.bands[$1] }! }
            #expect(frames.count >= 30 && loudest.allSatisfy { $0 == expected }, "restart \(number + 1) at \(restart.rate) Hz: loudest bands \(loudest), expected \(expected)")
            // The player comes back after spectrum: connected as soon as its port appears.
            metronome = try JackMetronome(server: server)
            #expect(await eventually(within: 5) { Set(server.connections(of: "spectrum:in")) == ["system:capture_1", metronome.portName] },
                    "restart \(number + 1): \(server.connections(of: "spectrum:in"))")
        }
        metronome.stop()
        client.stop()
        #expect(client.status().abandonedClients == 0)
        #expect(allocation_tally_allocations(processThreadTally) == allocationsBefore, "allocations on the process thread")
    }

    @Test("A client the server no longer runs while the server runs on is found stuck within seconds and reopened, once")
    func stuckClientIsReopened() async throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let client = try LiveClient(configuration: liveConfiguration(server: server))
        defer { client.stop() }
        #expect(await framesArrive(client, within: 5))
        // Stuck on purpose: deactivated behind its back, the client stays open and in the
        // server, whose cycles run on, but its process callback is never called again (what a
        // stale libjack wake-up does, docs/live.md "A client that is never run").
        #expect(client.withJackClient { jack_deactivate($0) } == 0)
        let callbacks = client.status().callbacks
        try await Task.sleep(for: .milliseconds(300))
        #expect(client.status().callbacks == callbacks && client.status().stallRecoveries == 0, "not stuck as set up")
        #expect(await eventually(within: 10) { client.status().stallRecoveries == 1 }, "not reopened (\(client.status().stallRecoveries) recoveries)")
        #expect(await framesArrive(client, within: 5), "no frames after the reopen")
        let status = client.status()
        #expect(status.reconnections == 0 && status.serverLostSeconds == nil && status.abandonedClients == 0)
        #expect(try server.listPorts().contains("spectrum:in"))
        // Running again: no further recovery.
        try await Task.sleep(for: .milliseconds(1500))
        #expect(client.status().stallRecoveries == 1)
    }

    @Test("While the server is lost: the status says so and for how long, no frames come, and stop() returns at once")
    func lostServer() async throws {
        let server = try PrivateJackServer()
        let client = try LiveClient(configuration: liveConfiguration(server: server))
        #expect(await eventually(within: 5) { client.status().callbacks > 10 })
        server.stop()  // (stop(signal: SIGKILL) would start a server of the same name again briefly)
        #expect(await eventually(within: 2) { client.status().serverLostSeconds != nil })
        try await Task.sleep(for: .milliseconds(1200))
        _ = drain(client)
        try await Task.sleep(for: .milliseconds(300))
        #expect(drain(client).isEmpty, "frames while the server is lost")
        let status = client.status()
        #expect((status.serverLostSeconds ?? 0) >= 1.2 && !status.isShutDown && status.reconnections == 0)
        #expect(status.lastReconnectError?.contains("cannot connect") == true, "\(status.lastReconnectError ?? "nil")")
        #expect(finishes(within: 3) { client.stop() }, "stop() hung while reconnecting")
    }
}
}
