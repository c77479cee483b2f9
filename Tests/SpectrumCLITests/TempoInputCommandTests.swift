import CLo
import Foundation
import SpectrumTestSupport
import Testing

/// `spectrum run --tempo-input NAME`: the chosen input, not the first, drives the tempo outputs
/// (the live summary, the MIDI clock; Link and WLED take the same frames), on a private jackd.
@Suite("Tempo input", .serialized)
struct TempoInputCommandTests {
    /// The first input hears silence, the second a 120 BPM click: with `--tempo-input click` the
    /// MIDI clock runs at 120 BPM and the summary shows it.
    @Test func theChosenInputDrivesTheMidiClockAndTheSummary() throws {
        try expectTheClickDrivesTheTempoOutputs { _, clickPort in
            ["--input", "quiet=system:capture_1", "--input", "click=\(clickPort)", "--tempo-input", "click"]
        }
    }

    /// The same from a preset: its `tempo_input: click` picks the second of its inputs.
    @Test func aPresetsTempoInputDrivesTheMidiClockAndTheSummary() throws {
        try expectTheClickDrivesTheTempoOutputs { scratch, clickPort in
            let preset = try scratch.write("rig.yaml", """
                inputs:
                  - name: quiet
                    source: system:capture_1
                  - name: click
                    source: \(clickPort)
                tempo_input: click
                """)
            return ["--preset", preset]
        }
    }

    /// Runs spectrum for 12 s on a private jackd with a 120 BPM click client, its inputs and
    /// tempo input chosen by `inputArguments(scratch, clickPort)` (a silent first input, the
    /// click second), and expects the MIDI clock at 120 BPM and the summary to show it.
    private func expectTheClickDrivesTheTempoOutputs(_ inputArguments: (ScratchDirectory, String) throws -> [String]) throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let click = try ToneClient.clicks(bpm: 120, on: server)
        defer { click.stop() }
        let scratch = try ScratchDirectory()
        let osc = OSCReceiver()
        let spectrum = try RunningSpectrum(["run", "--server", server.name] + inputArguments(scratch, click.outputPortName)
                                           + ["--midi-clock", "--osc", "127.0.0.1:\(osc.port)", "--duration", "12"])
        osc.receive(timeoutSeconds: 13) { false }
        let result = try #require(spectrum.waitForExit(within: 20), "spectrum did not stop")
        #expect(result.status == 0, "\(result.standardError)")
        let clockStatus = osc.bundles.compactMap { $0.message("/spectrum/status/midi_clock")?.values }
        #expect(clockStatus.contains { $0[0] == 1 && abs($0[1] - 120) < 0.5 }, "the clock did not run at 120 BPM: \(clockStatus.suffix(3))")
        #expect(result.standardOutput.contains("120.0 BPM"), "the summary shows no 120 BPM: \(result.standardOutput.suffix(400))")
    }

    /// Switched at run time over OSC control: a 120 BPM click on the first input, 128 BPM on the
    /// second; `/control/tempo_input fast` after 14 s moves the MIDI clock (without a stop) and
    /// the summary to 128 BPM, and the answer goes to the OSC target.
    @Test func theTempoInputSwitchedOverOSCControlMovesTheClockAndTheSummary() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let slow = try ToneClient.clicks(bpm: 120, on: server)
        defer { slow.stop() }
        let fast = try ToneClient.clicks(bpm: 128, on: server)
        defer { fast.stop() }
        let osc = OSCReceiver()
        let controlPort = ControlCommandTests.freePort()
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--input", "slow=\(slow.outputPortName)", "--input", "fast=\(fast.outputPortName)",
                                            "--midi-clock", "--control", "\(controlPort)", "--osc", "127.0.0.1:\(osc.port)", "--duration", "28"])
        let started = Date()
        osc.receive(timeoutSeconds: 15) { Date().timeIntervalSince(started) >= 14 }
        let before = osc.bundles.compactMap { $0.message("/spectrum/status/midi_clock")?.values }
        ControlCommandTests.send("/spectrum/control/tempo_input", port: controlPort) { lo_message_add_string($0, "fast") }
        osc.receive(timeoutSeconds: 15) { Date().timeIntervalSince(started) >= 27 }
        let result = try #require(spectrum.waitForExit(within: 20), "spectrum did not stop")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(before.contains { $0[0] == 1 && abs($0[1] - 120) < 0.5 }, "the clock did not run at 120 BPM before the switch: \(before.suffix(3))")
        let after = osc.bundles.compactMap { $0.message("/spectrum/status/midi_clock")?.values }.suffix(3)
        #expect(after.count == 3 && after.allSatisfy { $0[0] == 1 && abs($0[1] - 128) < 1 }, "the clock did not follow to 128 BPM: \(Array(after))")
        let answers = (osc.looseMessages + osc.bundles.flatMap(\.messages)).filter { $0.path == "/spectrum/status/control" }.map(\.strings)
        #expect(answers.contains { $0.first == "/spectrum/control/tempo_input" && ($0.last ?? "").hasPrefix("ok: tempo input fast") }, "\(answers)")
        #expect(result.standardOutput.contains("128.0 BPM"), "the summary shows no 128 BPM: \(result.standardOutput.suffix(400))")
    }

    /// A preset's unknown `tempo_input:` is one line naming the file, the key, the value and the
    /// inputs there are; `--tempo-input` goes over the preset's (so the bad value is not read).
    @Test func aPresetsUnknownTempoInputIsOneLineAndTheOptionOverridesIt() throws {
        let scratch = try ScratchDirectory()
        let preset = try scratch.write("rig.yaml", "inputs:\n  - name: kick\n  - name: bass\ntempo_input: snare\n")
        let refused = try SpectrumProcess.run(["run", "--preset", preset, "--server", "spectrum-no-such-server"])
        #expect(refused.status == 1)
        #expect(refused.standardErrorLines == ["spectrum: \(preset):4: tempo_input: expected the name of an input, got snare, none of kick, bass"], "\(refused.standardError)")
        let overridden = try SpectrumProcess.run(["run", "--preset", preset, "--tempo-input", "bass", "--server", "spectrum-no-such-server"])
        #expect(overridden.status == 1, "no server, so it stops there")
        #expect(!overridden.standardError.contains("tempo_input") && overridden.standardError.contains("spectrum-no-such-server"), "\(overridden.standardError)")
    }

    /// An unknown name is one line naming the option, the value and the inputs there are.
    @Test func anUnknownTempoInputIsOneLine() throws {
        let result = try SpectrumProcess.run(["run", "--input", "kick", "--input", "bass", "--tempo-input", "snare", "--server", "spectrum-no-such-server"])
        #expect(result.status == 1)
        #expect(result.standardErrorLines == ["spectrum: --tempo-input snare: expected the name of an input, got none of kick, bass"], "\(result.standardError)")
    }

    /// The tempo input cannot be removed over OSC control (the MIDI clock reads its slot).
    @Test func theTempoInputCannotBeRemoved() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let controlPort = ControlCommandTests.freePort()
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--input", "kick", "--input", "bass", "--tempo-input", "bass",
                                            "--control", "\(controlPort)", "--quiet", "--duration", "3"])
        // The control socket is bound after the client starts: what is sent before is lost.
        #expect(spectrum.waitForStandardError(containing: "taking OSC control on"), "no control socket")
        ControlCommandTests.send("/spectrum/control/input/remove", port: controlPort) { lo_message_add_string($0, "bass") }
        _ = spectrum.waitForStandardError(containing: "input bass: it drives the tempo outputs")
        #expect(try server.listPorts().contains("spectrum:bass"), "the tempo input was removed")
        let result = try #require(spectrum.waitForExit(within: 10), "spectrum did not stop")
        #expect(result.standardError.contains("input bass: it drives the tempo outputs (--tempo-input), expected another input"), "\(result.standardError)")
    }
}
