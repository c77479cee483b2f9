import CLo
import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// `spectrum` under a session manager (NSM API 1.1.2), against the strict fake nsmd (Debian 12
/// has no nsmd) and a private jackd.
@Suite(.serialized) struct SessionManagerTests {
    static func ports(_ server: PrivateJackServer) -> String { (try? server.listPorts()) ?? "" }

    @Test func joinsOpensSavesAndComesBackWithItsState() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let sessionPath = scratch.path("My Session/spectrum.nKXQT")
        let clientID = "spectrum.nKXQT"
        let controlPort = ControlCommandTests.freePort()

        // 1) Started as nsmd would through a launcher that passes options; no JACK client yet.
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let environment = ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name]
        var spectrum = try RunningSpectrum(["run", "--control", "\(controlPort)", "--quiet"], environment: environment)
        let announce = try #require(nsm.waitFor("/nsm/server/announce"), "no announce")
        #expect(announce.strings[0] == "Spectrum" && announce.strings[1] == ":dirty:message:" && announce.ints[0...1] == [1, 2])
        #expect(announce.ints[2] == spectrum.process.processIdentifier)
        usleep(300_000)
        #expect(!Self.ports(server).contains(":in"), "a JACK client before /nsm/client/open: \(Self.ports(server))")

        // 2) Open: the client id is the JACK name; the state is created under the path.
        nsm.open(path: sessionPath, displayName: "Spectrum", clientID: clientID)
        let reply = try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }), "no reply to open")
        #expect(reply.strings[1].contains(clientID))
        #expect(Self.ports(server).contains("\(clientID):in"), "\(Self.ports(server))")
        #expect(server.connections(of: "\(clientID):in").isEmpty, "connections are the session's, not the physical ports")
        let stateFile = sessionPath + "/preset.yaml"
        #expect(try String(contentsOfFile: stateFile, encoding: .utf8).contains("reference_hz: 440"))

        // 3) A change over OSC control: dirty; a save writes it and makes the client clean.
        // The control socket is bound after the reply to open: what is sent before is lost.
        #expect(spectrum.waitForStandardError(containing: "taking OSC control on"), "no control socket")
        ControlCommandTests.send("/spectrum/control/reference", port: controlPort) { lo_message_add_float($0, 442) }
        #expect(nsm.waitFor("/nsm/client/is_dirty") != nil, "no is_dirty after a change")
        nsm.save()
        let saved = try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }), "no reply to save")
        #expect(saved.strings[1].contains("preset.yaml"))
        #expect(nsm.waitFor("/nsm/client/is_clean") != nil)
        #expect(try String(contentsOfFile: stateFile, encoding: .utf8).contains("reference_hz: 442"))

        // 4) Quit is SIGTERM: at once, exit 0.
        let signalled = Date()
        spectrum.signal(SIGTERM)
        let result = try #require(spectrum.waitForExit(within: 5), "spectrum hung on SIGTERM")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(Date().timeIntervalSince(signalled) < 2)
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")

        // 5) Reopened with no arguments at all (as nsmd starts it): the saved state is used, and
        //    a save writes it back unchanged.
        let second = try FakeNSMServer()
        defer { second.stop() }
        spectrum = try RunningSpectrum([], environment: ["NSM_URL": second.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(second.waitFor("/nsm/server/announce") != nil)
        second.open(path: sessionPath, displayName: "Spectrum", clientID: clientID)
        try #require(second.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }) != nil)
        second.save()
        try #require(second.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }) != nil)
        #expect(try String(contentsOfFile: stateFile, encoding: .utf8).contains("reference_hz: 442"), "the saved state was not loaded")
        spectrum.signal(SIGTERM)
        #expect(spectrum.waitForExit(within: 5)?.status == 0)
        #expect(second.violations.isEmpty, "\(second.violations)")
    }

    /// Inputs added and removed over OSC control are the session's: dirty, saved with their
    /// connections, and back (or gone) when the session opens again; a saved source whose
    /// client starts after spectrum (as in a session) is connected when it appears.
    @Test func inputsAddedAndRemovedAtRunTimeComeBackWithTheSession() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let sessionPath = scratch.path("Inputs/spectrum.nINPT")
        let clientID = "spectrum.nINPT"
        let controlPort = ControlCommandTests.freePort()
        let stateFile = sessionPath + "/preset.yaml"

        // 1) Opened with one input from the command line: it is connected from its source (the
        //    session's own state), and the first state holds it.
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let environment = ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name]
        var spectrum = try RunningSpectrum(["run", "--input", "kick=system:capture_1", "--control", "\(controlPort)", "--quiet"], environment: environment)
        try #require(nsm.waitFor("/nsm/server/announce") != nil)
        nsm.open(path: sessionPath, displayName: "Spectrum", clientID: clientID)
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }) != nil, "no reply to open")
        #expect(eventually { server.connections(of: "\(clientID):kick") == ["system:capture_1"] }, "\(server.connections(of: "\(clientID):kick"))")
        let first = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(first.contains("name: \"kick\"") && first.contains("source: \"system:capture_1\""), "\(first)")

        // 2) One input added (from another client of the session), the other removed, over OSC
        //    control: dirty.
        var synth = try ToneClient(serverName: server.name, clientName: "synth")
        defer { synth.stop() }
        // The control socket is bound after the reply to open: what is sent before is lost.
        #expect(spectrum.waitForStandardError(containing: "taking OSC control on"), "no control socket")
        ControlCommandTests.send("/spectrum/control/input/add", port: controlPort) {
            lo_message_add_string($0, "bass")
            lo_message_add_string($0, "synth:out")
        }
        #expect(synth.outputPortName == "synth:out")
        #expect(nsm.waitFor("/nsm/client/is_dirty") != nil, "no is_dirty after an input was added")
        #expect(eventually { server.connections(of: "\(clientID):bass") == ["synth:out"] }, "\(Self.ports(server))")
        ControlCommandTests.send("/spectrum/control/input/remove", port: controlPort) { lo_message_add_string($0, "kick") }
        #expect(eventually { !Self.ports(server).contains("\(clientID):kick") }, "\(Self.ports(server))")

        // 3) Saved: the inputs as they are now.
        nsm.save()
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }) != nil, "no reply to save")
        #expect(nsm.waitFor("/nsm/client/is_clean") != nil)
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(saved.contains("name: \"bass\"") && saved.contains("source: \"synth:out\"") && !saved.contains("kick"), "\(saved)")
        spectrum.signal(SIGTERM)
        #expect(spectrum.waitForExit(within: 5)?.status == 0)
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")
        synth.stop()

        // 4) Opened again with no arguments, as nsmd starts it, before the synth: bass is there,
        //    kick is not; bass is connected once the synth is back.
        let second = try FakeNSMServer()
        defer { second.stop() }
        spectrum = try RunningSpectrum([], environment: ["NSM_URL": second.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(second.waitFor("/nsm/server/announce") != nil)
        second.open(path: sessionPath, displayName: "Spectrum", clientID: clientID)
        try #require(second.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }) != nil, "no reply to the second open")
        #expect(Self.ports(server).contains("\(clientID):bass"), "\(Self.ports(server))")
        #expect(!Self.ports(server).contains("\(clientID):kick") && !Self.ports(server).contains("\(clientID):in"), "\(Self.ports(server))")
        synth = try ToneClient(serverName: server.name, clientName: "synth")
        #expect(eventually { server.connections(of: "\(clientID):bass") == ["synth:out"] }, "\(Self.ports(server))")
        spectrum.signal(SIGTERM)
        #expect(spectrum.waitForExit(within: 5)?.status == 0)
        #expect(second.violations.isEmpty, "\(second.violations)")
    }

    /// A state written before inputs were saved (no `inputs:` key) still opens, with the
    /// command line's inputs; the first save adds them.
    @Test func aStateWithoutInputsTakesTheCommandLinesInputs() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let sessionPath = scratch.path("session/spectrum.nOLD")
        let clientID = "spectrum.nOLD"
        let stateFile = try scratch.write("session/spectrum.nOLD/preset.yaml", "pitch:\n  reference_hz: 441\n")
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let spectrum = try RunningSpectrum(["run", "--input", "vocal=system:capture_2", "--tempo-input", "vocal", "--quiet"],
                                           environment: ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(nsm.waitFor("/nsm/server/announce") != nil)
        nsm.open(path: sessionPath, displayName: "Spectrum", clientID: clientID)
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }) != nil, "no reply to open")
        #expect(eventually { server.connections(of: "\(clientID):vocal") == ["system:capture_2"] }, "\(Self.ports(server))")
        nsm.save()
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }) != nil)
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(saved.contains("reference_hz: 441") && saved.contains("name: \"vocal\"") && saved.contains("tempo_input: \"vocal\""), "\(saved)")
        spectrum.signal(SIGTERM)
        #expect(spectrum.waitForExit(within: 5)?.status == 0)
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")
    }

    /// A state's `tempo_input:` is the session's tempo input when it opens with no arguments (as
    /// nsmd starts it), so the next save writes it again; one that names no input of the state
    /// is refused in one line naming the file, the key, the value and the inputs there are.
    @Test func aSessionsTempoInputComesBackWithIt() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let inputs = "inputs:\n  - name: kick\n  - name: bass\n"
        let stateFile = try scratch.write("session/spectrum.nTEMPO/preset.yaml", inputs + "tempo_input: bass\n")
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let spectrum = try RunningSpectrum([], environment: ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(nsm.waitFor("/nsm/server/announce") != nil)
        nsm.open(path: scratch.path("session/spectrum.nTEMPO"), displayName: "Spectrum", clientID: "spectrum.nTEMPO")
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }) != nil, "no reply to open")
        nsm.save()
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }) != nil)
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(saved.contains("name: \"kick\"") && saved.contains("tempo_input: \"bass\""), "\(saved)")
        spectrum.signal(SIGTERM)
        #expect(spectrum.waitForExit(within: 5)?.status == 0)
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")

        let bad = try scratch.write("session/spectrum.nBADT/preset.yaml", inputs + "tempo_input: snare\n")
        let second = try FakeNSMServer()
        defer { second.stop() }
        let refused = try RunningSpectrum([], environment: ["NSM_URL": second.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(second.waitFor("/nsm/server/announce") != nil)
        second.open(path: scratch.path("session/spectrum.nBADT"), displayName: "Spectrum", clientID: "spectrum.nBADT")
        let error = try #require(second.waitFor("/error"), "no /error for an unknown tempo input")
        #expect(error.strings[0] == "/nsm/client/open" && error.strings[1].contains("tempo_input"))
        let result = try #require(refused.waitForExit(within: 5))
        #expect(result.status == 1)
        #expect(result.standardErrorLines.last == "spectrum: \(bad):4: tempo_input: expected the name of an input, got snare, none of kick, bass", "\(result.standardError)")
        #expect(second.violations.isEmpty, "\(second.violations)")

        // A wrong --tempo-input at a session's first open is refused and not saved in its state.
        let third = try FakeNSMServer()
        defer { third.stop() }
        let wrong = try RunningSpectrum(["run", "--input", "kick", "--tempo-input", "snare"], environment: ["NSM_URL": third.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(third.waitFor("/nsm/server/announce") != nil)
        third.open(path: scratch.path("session/spectrum.nNEWT"), displayName: "Spectrum", clientID: "spectrum.nNEWT")
        #expect(third.waitFor("/error") != nil, "no /error for an unknown --tempo-input")
        #expect(try #require(wrong.waitForExit(within: 5)).status == 1)
        let first = try String(contentsOfFile: scratch.path("session/spectrum.nNEWT/preset.yaml"), encoding: .utf8)
        #expect(first.contains("name: \"kick\"") && !first.contains("tempo_input"), "\(first)")
    }

    /// The tempo input switched over OSC control marks the session dirty and the next save holds
    /// the new name; an unknown name changes nothing (one error line naming it and the inputs).
    @Test func aTempoInputSwitchedAtRunTimeIsSaved() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let sessionPath = scratch.path("Switch/spectrum.nSWCH")
        let stateFile = sessionPath + "/preset.yaml"
        let controlPort = ControlCommandTests.freePort()
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let spectrum = try RunningSpectrum(["run", "--input", "kick", "--input", "bass", "--control", "\(controlPort)", "--quiet"],
                                           environment: ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(nsm.waitFor("/nsm/server/announce") != nil)
        nsm.open(path: sessionPath, displayName: "Spectrum", clientID: "spectrum.nSWCH")
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/open" }) != nil, "no reply to open")
        let first = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(first.contains("name: \"bass\"") && !first.contains("tempo_input"), "\(first)")

        // The control socket is bound after the reply to open: what is sent before is lost.
        #expect(spectrum.waitForStandardError(containing: "taking OSC control on"), "no control socket")
        ControlCommandTests.send("/spectrum/control/tempo_input", port: controlPort) { lo_message_add_string($0, "snare") }
        ControlCommandTests.send("/spectrum/control/tempo_input", port: controlPort) { lo_message_add_string($0, "bass") }
        #expect(nsm.waitFor("/nsm/client/is_dirty") != nil, "no is_dirty after the tempo input was switched")
        nsm.save()
        try #require(nsm.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }) != nil, "no reply to save")
        let saved = try String(contentsOfFile: stateFile, encoding: .utf8)
        #expect(saved.contains("name: \"kick\"") && saved.contains("tempo_input: \"bass\""), "\(saved)")
        // The new tempo input cannot be removed now.
        ControlCommandTests.send("/spectrum/control/input/remove", port: controlPort) { lo_message_add_string($0, "bass") }
        usleep(500_000)
        #expect(Self.ports(server).contains("spectrum.nSWCH:bass"), "\(Self.ports(server))")
        spectrum.signal(SIGTERM)
        let result = try #require(spectrum.waitForExit(within: 5))
        #expect(result.status == 0)
        let errors = result.standardErrorLines.filter { $0.contains("tempo_input: rejected") }
        #expect(errors == ["spectrum: control /spectrum/control/tempo_input: rejected: tempo input snare: expected the name of an input, got none of kick, bass"],
                "\(result.standardError)")
        #expect(result.standardError.contains("input bass: it drives the tempo outputs"), "\(result.standardError)")
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")
    }

    /// A state whose inputs are not a list is refused in one line naming the file and what
    /// was expected.
    @Test func aBrokenInputsListIsRefusedInOneLine() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let sessionPath = scratch.path("session/spectrum.nBADIN")
        _ = try scratch.write("session/spectrum.nBADIN/preset.yaml", "pitch:\n  reference_hz: 440\ninputs: kick\n")
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let spectrum = try RunningSpectrum([], environment: ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(nsm.waitFor("/nsm/server/announce") != nil)
        nsm.open(path: sessionPath, displayName: "Spectrum", clientID: "spectrum.nBADIN")
        let error = try #require(nsm.waitFor("/error"), "no /error for a broken inputs list")
        #expect(error.strings[0] == "/nsm/client/open" && error.strings[1].contains("inputs"))
        let result = try #require(spectrum.waitForExit(within: 5))
        #expect(result.status == 1)
        #expect(result.standardErrorLines.last?.contains("preset.yaml:3: inputs: expected a list of inputs") == true, "\(result.standardError)")
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")
    }

    @Test func aBrokenSessionStateIsRefusedInOneLine() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let scratch = try ScratchDirectory()
        let sessionPath = scratch.path("session/spectrum.nBAD")
        _ = try scratch.write("session/spectrum.nBAD/preset.yaml", "pitch:\n  reference_hz: 9000\n")
        let nsm = try FakeNSMServer()
        defer { nsm.stop() }
        let spectrum = try RunningSpectrum([], environment: ["NSM_URL": nsm.url, "JACK_DEFAULT_SERVER": server.name])
        try #require(nsm.waitFor("/nsm/server/announce") != nil)
        nsm.open(path: sessionPath, displayName: "Spectrum", clientID: "spectrum.nBAD")
        let error = try #require(nsm.waitFor("/error"), "no /error for a broken state")
        #expect(error.strings[0] == "/nsm/client/open" && error.strings[1].contains("reference_hz"))
        let result = try #require(spectrum.waitForExit(within: 5))
        #expect(result.status == 1)
        #expect(result.standardErrorLines.last?.contains("preset.yaml:2: pitch.reference_hz") == true, "\(result.standardError)")
        #expect(nsm.violations.isEmpty, "\(nsm.violations)")
    }

    @Test func aBadNSMURLIsOneLine() throws {
        let result = try SpectrumProcess.run(["run"], environment: ["NSM_URL": "localhost:1234"])
        #expect(result.status == 1)
        #expect(result.standardErrorLines == ["spectrum: NSM_URL \"localhost:1234\": expected osc.udp://HOST:PORT/"])
    }
}
