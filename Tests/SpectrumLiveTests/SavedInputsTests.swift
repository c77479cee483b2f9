import Foundation
import SpectrumDSP
import SpectrumTestSupport
import Testing
@testable import SpectrumLive

extension LiveTests {
@Suite("Inputs as a session saves them")
struct SavedInputs {
    @Test("namedInputs gives each input's remembered connections in the order its sources connect them (2 channels: the channels' first sources, then their second), one made by hand included, and its own settings")
    func namedInputsAreWhatStartsThemAgain() async throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let extra = try ToneClient(serverName: server.name, clientName: "extra")
        defer { extra.stop() }
        var configuration = liveConfiguration(server: server, channels: 2)
        let own = AnalysisOverrides([.init(path: "pitch.reference_hz", valueText: "415") { $0.pitch.referenceHz = 415 }])
        configuration.inputs = [LiveInput(name: "pads", sources: ["system:capture_1", "system:capture_2"]), LiveInput(name: "vocal", analysis: own)]
        let client = try LiveClient(configuration: configuration)
        defer { client.stop() }
        try server.connect(extra.outputPortName, "spectrum:pads_1")
        #expect(await eventually(within: 5) { client.rememberedConnections().count == 3 }, "\(client.rememberedConnections())")
        let saved = client.namedInputs
        #expect(saved == [LiveInput(name: "pads", sources: ["system:capture_1", "system:capture_2", extra.outputPortName]), LiveInput(name: "vocal", analysis: own)])
        // Started again from what was saved: the same connections.
        client.stop()
        configuration.inputs = saved
        let again = try LiveClient(configuration: configuration)
        defer { again.stop() }
        // The server applies a connection in its own time: poll, then show what it holds.
        let restored: [Set<String>] = [["system:capture_1", extra.outputPortName], ["system:capture_2"], [], []]
        #expect(await eventually(within: 5) { again.connections().map(Set.init) == restored }, "\(again.connections())")
    }
}
}
