import Foundation
import Glibc
import SpectrumControl
import SpectrumCore
import SpectrumOutput
import SpectrumTestSupport
import SpectrumWeb
import Testing

/// The web server in-process on 127.0.0.1 (an ephemeral port): a stuck client never holds up
/// the publisher or the other clients; the OSCQuery tree follows the address table.
@Suite(.serialized) struct WebServerTests {
    static func server(control: Bool = false) throws -> WebServer {
        try WebServer(configuration: WebServerConfiguration(
            host: "127.0.0.1", port: 0, name: "test", addressSpace: OSCAddressSpace(), control: control ? ("127.0.0.1", 7771) : nil,
            sampleRateHz: 48_000, bandCentreFrequenciesHz: []))
    }

    @Test func aStuckClientIsDroppedAndNeitherThePublisherNorTheOthersWait() throws {
        let web = try Self.server()
        defer { web.stop() }
        let reading = try RawWebSocketClient(port: web.boundPort)
        reading.drain()
        let stuck = try RawWebSocketClient(port: web.boundPort, receiveBufferBytes: 4096)
        defer { reading.close(); stuck.close() }
        let deadline = Date().addingTimeInterval(10)
        while web.statistics.viewClients < 2, Date() < deadline { usleep(10_000) }
        try #require(web.statistics.viewClients == 2)

        var frame = AnalysisFrame()
        frame.bandCount = 128
        let frameCount = 600
        let frameBytes = ViewFrameEncoder.byteCount(bandCount: 128) + 4   // + the WebSocket header
        var slowestPublishSeconds = 0.0
        let pacingDeadline = Date().addingTimeInterval(30)
        for index in 0..<frameCount {
            // Never more than 16 frames ahead of the reading client (its own frames may wait up
            // to 4 in the server, the rest in its socket): a reader thread that a loaded machine
            // starves is then not a slow client. The stuck one, which never reads, still fills.
            while reading.bytes.load(ordering: .relaxed) < (index - 16) * frameBytes, Date() < pacingDeadline { usleep(1_000) }
            frame.streamFrame = Int64(index * 800)
            let start = Date()
            web.publish(frame)
            slowestPublishSeconds = max(slowestPublishSeconds, Date().timeIntervalSince(start))
            usleep(2_000)   // faster than 60 Hz: the stuck socket fills within the run
        }
        let settle = Date().addingTimeInterval(10)
        while reading.bytes.load(ordering: .relaxed) < frameCount * frameBytes, Date() < settle { usleep(10_000) }
        let statistics = web.statistics
        // publish only hands over: even on a loaded machine far under a frame's 16.7 ms.
        #expect(slowestPublishSeconds < 0.2, "publish took \(slowestPublishSeconds) s")
        #expect(reading.bytes.load(ordering: .relaxed) >= frameCount * frameBytes, "the reading client got \(reading.bytes.load(ordering: .relaxed)) bytes")
        #expect(statistics.framesDropped > 0 && statistics.framesDropped < frameCount, "dropped \(statistics.framesDropped)")
        #expect(statistics.framesSent + statistics.framesDropped == 2 * frameCount)
    }

    @Test func theTreeIsTheAddressTableWithTheControlsReadWrite() throws {
        let space = OSCAddressSpace()
        let tree = OSCQueryTree(addressSpace: space, controls: ControlAddress.all)
        for entry in space.entries {
            let node = try #require(tree.node(at: entry.address), "\(entry.address)")
            #expect(node.method?.typeTags == entry.typeTags)
            #expect(node.method?.access == .readOnly)
        }
        #expect(tree.node(at: "/spectrum/control/reference")?.method?.access == .readWrite)
        #expect(tree.node(at: "/spectrum/control/reference")?.method?.ranges == [415...466])
        #expect(tree.node(at: "/spectrum/control/tap")?.method?.access == .writeOnly)
        #expect(tree.node(at: "/spectrum/level")?.children.map(\.name) == ["db"])
        #expect(tree.node(at: "/spectrum/nothing") == nil)
        #expect(tree.node(at: "/spectrum/bands/more") == nil)
        let withoutControl = OSCQueryTree(addressSpace: space, controls: [])
        #expect(withoutControl.node(at: "/spectrum/control") == nil)
    }

    @Test func withNamedInputsTheTreeListsEachInputUnderItsNameAndTheStatusUnderThePrefix() throws {
        let space = OSCAddressSpace()
        let tree = OSCQueryTree(addressSpace: space, controls: ControlAddress.all, inputNames: ["kick", "bass"])
        for entry in space.entries {
            if entry.kind.isStatus {
                #expect(tree.node(at: entry.address)?.method?.typeTags == entry.typeTags, "\(entry.address)")
                #expect(tree.node(at: "/spectrum/kick" + entry.kind.suffix) == nil)
            } else {
                for name in ["kick", "bass"] {
                    let node = tree.node(at: "/spectrum/\(name)" + entry.kind.suffix)
                    #expect(node?.method?.typeTags == entry.typeTags, "/spectrum/\(name)\(entry.kind.suffix)")
                    #expect(node?.method?.access == .readOnly)
                }
                #expect(tree.node(at: entry.address) == nil, "\(entry.address) is not sent with named inputs")
            }
        }
        #expect(tree.node(at: "/spectrum/control/reference")?.method?.access == .readWrite)
        // The tempo input, switched at run time: one string, read-write.
        let tempoInput = tree.node(at: "/spectrum/control/tempo_input")?.method
        #expect(tempoInput?.access == .readWrite && tempoInput?.typeTags == "s" && tempoInput?.units == ["input name"])
        #expect(tree.node(at: "/spectrum")?.children.map(\.name).prefix(2) == ["kick", "bass"])
    }

    @Test func inputsAddedAndRemovedAtRunTimeChangeTheTreeAndEachInputHasItsOwnValues() throws {
        let configuration = WebServerConfiguration(host: "127.0.0.1", port: 0, name: "test", addressSpace: OSCAddressSpace(), control: nil,
                                                   sampleRateHz: 48_000, bandCentreFrequenciesHz: [], inputNames: ["kick", nil])
        let web = try WebServer(configuration: configuration)
        defer { web.stop() }
        #expect(web.tree.node(at: "/spectrum/kick/bands") != nil)
        #expect(web.tree.node(at: "/spectrum/bass") == nil)
        try web.setInput(slot: 1, name: "bass")
        #expect(web.tree.node(at: "/spectrum/bass/bands") != nil)

        var frame = AnalysisFrame()
        frame.bandCount = 128
        frame.level.vu = 0.25
        frame.inputIndex = 0
        web.publish(frame)
        frame.level.vu = 0.75
        frame.inputIndex = 1
        web.publish(frame)
        let kick = try LoopbackHTTP.get(port: web.boundPort, path: "/spectrum/kick/level?VALUE")
        let bass = try LoopbackHTTP.get(port: web.boundPort, path: "/spectrum/bass/level?VALUE")
        #expect(kick.status == 200 && kick.body.contains("0.25"), "\(kick)")
        #expect(bass.status == 200 && bass.body.contains("0.75"), "\(bass)")
        #expect(try LoopbackHTTP.get(port: web.boundPort, path: "/spectrum/level").status == 404)

        try web.setInput(slot: 0, name: nil)
        #expect(web.tree.node(at: "/spectrum/kick") == nil)
        #expect(try LoopbackHTTP.get(port: web.boundPort, path: "/spectrum/kick/level").status == 404)
        #expect(try LoopbackHTTP.get(port: web.boundPort, path: "/spectrum/bass/level").status == 200)
        #expect(throws: WebServerError.self) { try web.setInput(slot: 2, name: "vocal") }
        let unnamed = try Self.server()
        defer { unnamed.stop() }
        #expect(throws: WebServerError.self) { try unnamed.setInput(slot: 0, name: "kick") }
    }

    /// The JSON of a text message (the hello, `inputs`).
    static func json(_ message: (opcode: UInt8, payload: [UInt8])) throws -> [String: Any] {
        try #require(message.opcode == 1, "expected a text message, got opcode \(message.opcode)")
        return try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any])
    }

    /// The VU (offset 8) of a binary view frame.
    static func vu(_ message: (opcode: UInt8, payload: [UInt8])) throws -> Float {
        try #require(message.opcode == 2 && message.payload.count == ViewFrameEncoder.byteCount(bandCount: 128), "expected a view frame")
        return Float(bitPattern: message.payload[8..<12].reversed().reduce(0) { $0 << 8 | UInt32($1) })
    }

    @Test func eachPageGetsTheFramesOfTheInputItAsksForAndHearsOfInputsAddedAndRemoved() throws {
        let configuration = WebServerConfiguration(host: "127.0.0.1", port: 0, name: "test", addressSpace: OSCAddressSpace(), control: nil,
                                                   sampleRateHz: 48_000, bandCentreFrequenciesHz: [], inputNames: ["kick", "bass", nil])
        let web = try WebServer(configuration: configuration)
        defer { web.stop() }
        let bass = try RawWebSocketClient(port: web.boundPort, path: "/view?input=bass")
        let first = try RawWebSocketClient(port: web.boundPort)
        let vocal = try RawWebSocketClient(port: web.boundPort, path: "/view?input=vocal")
        defer { bass.close(); first.close(); vocal.close() }
        let bassHello = try Self.json(bass.readMessage())
        #expect(bassHello["type"] as? String == "hello")
        #expect(bassHello["inputs"] as? [String] == ["kick", "bass"])
        #expect(bassHello["input"] as? String == "bass")
        #expect(try Self.json(first.readMessage())["input"] as? String == "kick")
        // An input not there: the first one's frames until it is added.
        #expect(try Self.json(vocal.readMessage())["input"] as? String == "kick")
        let deadline = Date().addingTimeInterval(10)
        while web.statistics.viewClients < 3, Date() < deadline { usleep(10_000) }
        try #require(web.statistics.viewClients == 3)

        var frame = AnalysisFrame()
        frame.bandCount = 128
        func publish(slot: Int32, vu: Float) {
            frame.inputIndex = slot
            frame.level.vu = vu
            web.publish(frame)
        }
        publish(slot: 0, vu: 0.25)
        publish(slot: 1, vu: 0.75)
        #expect(try Self.vu(bass.readMessage()) == 0.75)
        #expect(try Self.vu(first.readMessage()) == 0.25)
        #expect(try Self.vu(vocal.readMessage()) == 0.25)

        try web.setInput(slot: 2, name: "vocal")
        for client in [bass, first, vocal] {
            let inputs = try Self.json(client.readMessage())
            #expect(inputs["type"] as? String == "inputs")
            #expect(inputs["inputs"] as? [String] == ["kick", "bass", "vocal"])
        }
        publish(slot: 2, vu: 0.5)
        publish(slot: 1, vu: 0.75)
        publish(slot: 0, vu: 0.25)
        #expect(try Self.vu(vocal.readMessage()) == 0.5)
        #expect(try Self.vu(bass.readMessage()) == 0.75)
        #expect(try Self.vu(first.readMessage()) == 0.25)

        // The bass removed: its page falls back to the first input and is told so.
        try web.setInput(slot: 1, name: nil)
        let afterRemoval = try Self.json(bass.readMessage())
        #expect(afterRemoval["inputs"] as? [String] == ["kick", "vocal"])
        #expect(afterRemoval["input"] as? String == "kick")
        publish(slot: 0, vu: 0.125)
        #expect(try Self.vu(bass.readMessage()) == 0.125)
    }

    @Test func oneUnnamedInputSaysNoInputs() throws {
        let web = try Self.server()
        defer { web.stop() }
        let page = try RawWebSocketClient(port: web.boundPort, path: "/view?input=kick")
        defer { page.close() }
        let hello = try Self.json(page.readMessage())
        #expect(hello["inputs"] as? [String] == [])
        #expect(hello["input"] == nil)
        let deadline = Date().addingTimeInterval(10)
        while web.statistics.viewClients < 1, Date() < deadline { usleep(10_000) }
        var frame = AnalysisFrame()
        frame.bandCount = 128
        frame.level.vu = 0.5
        web.publish(frame)
        #expect(try Self.vu(page.readMessage()) == 0.5)
    }
}
