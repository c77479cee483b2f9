import Foundation
import SpectrumCore
@testable import SpectrumOutput
import SpectrumPresets
import Testing

/// The rigs in presets/rigs/: they load, and what they put on the wire is what each desk takes
/// (bytes written by hand from the OSC spec and the desks' documented addresses).
@Suite struct ShippedRigTests {
    static let rigsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("presets/rigs")

    static func rig(_ name: String) throws -> Rig {
        try RigLoader.load(path: rigsDirectory.appendingPathComponent("\(name).yaml").path)
    }

    @Test func everyShippedRigLoadsAndCompiles() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.rigsDirectory.path).filter { $0.hasSuffix(".yaml") }
        #expect(Set(names) == ["ola.yaml", "qlcplus.yaml", "grandma3.yaml", "resolume.yaml", "touchdesigner.yaml"])
        for name in names {
            _ = try RigProbe(try Self.rig(String(name.dropLast(5))))
        }
    }

    /// grandMA3: plain messages only (it ignores bundles); faders as ints 0..100; the tempo to the
    /// command line once, then not again until it changes and a second has passed.
    @Test func grandMA3GetsPlainMessagesAndARateLimitedCommand() throws {
        let probe = try RigProbe(try Self.rig("grandma3"))
        let first = probe.render(RouteFrames.frame(vu: 0.25, bpm: 128))
        let faders = (0..<8).map { group -> [UInt8] in
            let value = Int32((Float(group * 16 + 15) / 127 * 100).rounded())
            return HandOSC.message("/gma3/Page1/Fader\(201 + group)", [.i(value)])
        }
        #expect(first == faders + [HandOSC.message("/gma3/Page1/Fader209", [.i(25)]), HandOSC.message("/gma3/cmd", [.s("Master 3.1 At 128")])])
        #expect(!first.contains { $0.starts(with: HandOSC.padded("#bundle")) })
        let second = probe.render(RouteFrames.frame(vu: 0.25, bpm: 129.5))
        #expect(second.count == 9, "the command waits a second")
        var later: [[UInt8]] = []
        for _ in 0..<60 { later += probe.render(RouteFrames.frame(vu: 0.25, bpm: 129.5)) }
        #expect(later.filter { $0.starts(with: HandOSC.padded("/gma3/cmd")) } == [HandOSC.message("/gma3/cmd", [.s("Master 3.1 At 129.5")])])
        // No tempo, no command.
        let unlocked = try RigProbe(try Self.rig("grandma3")).render(RouteFrames.frame(bpm: 0))
        #expect(unlocked.count == 9)
    }

    /// Resolume: tempo normalised over 20..500 BPM, resync pressed on the downbeat and released,
    /// opacity 0..1.
    @Test func resolumeGetsNormalisedTempoAndResync() throws {
        let probe = try RigProbe(try Self.rig("resolume"))
        let groups: [Float] = (0..<4).map { Float($0 * 32 + 31) / 127 }
        let opacity = [HandOSC.message("/composition/layers/1/video/opacity", [.f(0.5)])]
            + (0..<4).map { HandOSC.message("/composition/layers/\($0 + 2)/video/opacity", [.f(groups[$0])]) }
        let tempo = HandOSC.message("/composition/tempocontroller/tempo", [.f(Float((128.0 - 20) / 480))])
        #expect(probe.render(RouteFrames.frame(bpm: 128)) == [HandOSC.bundle([tempo, HandOSC.message("/composition/tempocontroller/resync", [.f(0)])] + opacity)])
        let downbeat = probe.render(RouteFrames.frame(bpm: 128, beat: (count: 5, inBar: 1)))
        #expect(downbeat == [HandOSC.bundle([HandOSC.message("/composition/tempocontroller/resync", [.f(1)])] + opacity)])
        _ = probe.render(RouteFrames.frame(bpm: 128))
        #expect(probe.render(RouteFrames.frame(bpm: 128)) == [HandOSC.bundle([HandOSC.message("/composition/tempocontroller/resync", [.f(0)])] + opacity)])
    }

    /// TouchDesigner: floats and ints only, one value per address.
    @Test func touchDesignerGetsOneNumberPerAddress() throws {
        let datagrams = try RigProbe(try Self.rig("touchdesigner")).render(RouteFrames.frame(beat: (count: 2, inBar: 2)))
        #expect(datagrams.count == 1)
        let bundle = datagrams[0]
        var messages: [[UInt8]] = []
        var offset = 16
        while offset < bundle.count {
            let size = Int(UInt32(bigEndian: bundle[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }))
            messages.append(Array(bundle[offset + 4..<offset + 4 + size]))
            offset += 4 + size
        }
        #expect(messages.count == 20)
        for message in messages {
            let path = String(decoding: message.prefix { $0 != 0 }, as: UTF8.self)
            let tagsStart = HandOSC.padded(path).count
            let tags = String(decoding: message[tagsStart...].prefix { $0 != 0 }, as: UTF8.self)
            #expect(tags == ",f" || tags == ",i", "\(path) \(tags)")
        }
        #expect(messages.contains(HandOSC.message("/spectrum/beat/in_bar", [.i(2)])))
        #expect(messages.contains(HandOSC.message("/spectrum/bpm", [.f(120)])))
        #expect(messages.contains(HandOSC.message("/spectrum/beat", [.f(1)])))
    }

    /// OLA: one float per slot under /dmx/universe/1, immediate time tag.
    @Test func olaGetsOneSlotPerValue() throws {
        let datagrams = try RigProbe(try Self.rig("ola")).render(RouteFrames.frame(bpm: 130, onset: true))
        let groups = (0..<8).map { HandOSC.message("/dmx/universe/1/\($0 + 1)", [.f(Float($0 * 16 + 15) / 127)]) }
        #expect(datagrams == [HandOSC.bundle(groups + [
            HandOSC.message("/dmx/universe/1/9", [.f(0.5)]), HandOSC.message("/dmx/universe/1/10", [.f(0)]),
            HandOSC.message("/dmx/universe/1/11", [.f(1)]), HandOSC.message("/dmx/universe/1/12", [.f(0)]),
            HandOSC.message("/dmx/universe/1/13", [.f(0.5)]),
        ])])
    }
}

/// Every bad route is one line naming the file, the line and the key.
@Suite struct RigFileErrorTests {
    static func error(_ yaml: String) -> String {
        let path = NSTemporaryDirectory() + "rig-\(UUID().uuidString).yaml"
        FileManager.default.createFile(atPath: path, contents: Data(yaml.utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try RigLoader.load(path: path)
            return "no error"
        } catch {
            return "\(error)".replacingOccurrences(of: path, with: "FILE")
        }
    }

    @Test(arguments: [
        ("routes:\n  - source: banana\n    address: /a\n", "FILE:2: routes.source: expected a source"),
        ("routes:\n  - source: level\n    address: a/b\n", "FILE:3: routes.address: expected an OSC address"),
        ("routes:\n  - source: level\n    address: /a\n    type: x\n", "FILE:4: routes.type: expected f, i, T"),
        ("routes:\n  - source: bpm\n    address: /a\n    from: [200, 60]\n", "FILE:4: routes.from: expected [low, high] with low < high, got a list"),
        ("routes:\n  - source: bpm\n    address: /a\n    send: sometimes\n", "FILE:4: routes.send: expected every_frame or on_change, got the text \"sometimes\""),
        ("routes:\n  - source: bpm\n    address: /a\n    colour: red\n", "FILE:4: routes.colour: expected one of source, address"),
        ("routes:\n  - source: beat\n    address: /a\n    hold_ms: -3\n", "FILE:4: routes.hold_ms: expected 0 to 10000 ms"),
        ("routes:\n  - source: beat\n    address: /a\n    when: sunrise\n", "FILE:4: routes.when: expected one of pitch.active, pitch.string.active, onset"),
        ("routes:\n  - source: beat\n    address: /a\n    max_rate_hz: 0\n", "FILE:4: routes.max_rate_hz: expected a rate above 0"),
        ("routes:\n  - source: beat\n    address: /a\n    input: 3\n", "FILE:4: routes.input: expected the name of an input (--input NAME)"),
        ("rig:\n  bundle: maybe\nroutes:\n  - source: beat\n    address: /a\n", "FILE:2: rig.bundle: expected true or false"),
        ("rig:\n  time_tag: later\nroutes:\n  - source: beat\n    address: /a\n", "FILE:2: rig.time_tag: expected immediate or capture"),
        ("routes: 3\n", "FILE:1: routes: expected a list of routes"),
        ("routes:\n  - address: /a\n", "FILE:2: routes.source: expected a source"),
        ("rig:\n  bundle: true\n", "FILE: routes: expected a list of routes, got none"),
    ])
    func badRoutesAreOneLine(yaml: String, expected: String) {
        let message = Self.error(yaml)
        #expect(message.hasPrefix(expected), "\(message)")
        #expect(!message.contains("\n"))
    }

    @Test func aRouteNamesItsInput() throws {
        let path = NSTemporaryDirectory() + "rig-\(UUID().uuidString).yaml"
        FileManager.default.createFile(atPath: path, contents: Data("routes:\n  - source: level\n    address: /kick\n    input: kick\n  - source: level\n    address: /any\n".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rig = try RigLoader.load(path: path)
        #expect(rig.routes.map(\.input) == ["kick", nil])
    }
}
