import Foundation
import SpectrumCore
@testable import SpectrumOutput
import Testing

/// OSC bytes written by hand from the OSC 1.0 spec (not by liblo), to check what the rigs put
/// on the wire.
enum HandOSC {
    static func padded(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8) + [0]
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    enum Argument { case f(Float), i(Int32), s(String), t, F }

    static func message(_ path: String, _ arguments: [Argument]) -> [UInt8] {
        var tags = ","
        var data: [UInt8] = []
        for argument in arguments {
            switch argument {
            case .f(let value): tags += "f"; data += withUnsafeBytes(of: value.bitPattern.bigEndian, Array.init)
            case .i(let value): tags += "i"; data += withUnsafeBytes(of: value.bigEndian, Array.init)
            case .s(let value): tags += "s"; data += padded(value)
            case .t: tags += "T"
            case .F: tags += "F"
            }
        }
        return padded(path) + padded(tags) + data
    }

    static func bundle(_ messages: [[UInt8]]) -> [UInt8] {
        var bytes = padded("#bundle") + [0, 0, 0, 0, 0, 0, 0, 1]
        for message in messages { bytes += withUnsafeBytes(of: UInt32(message.count).bigEndian, Array.init) + message }
        return bytes
    }
}

/// Renders frames through a rig and collects the datagrams, as the publisher would send them.
final class RigProbe {
    let renderer: RigRenderer
    var context = RenderContext()

    init(_ rig: Rig, prefix: String = "/spectrum", outputRateHz: Double = 60, targets: Int = 1) throws {
        renderer = try RigRenderer(rig: rig, prefix: prefix, bandCount: 128, outputRateHz: outputRateHz, targetCount: targets)
    }

    func render(_ frame: AnalysisFrame) -> [[UInt8]] {
        var datagrams: [[UInt8]] = []
        renderer.render(frame, context: context, timeTag: .immediate) { datagrams.append(Array($0)) }
        return datagrams
    }
}

enum RouteFrames {
    /// Bands rising 0…1 across the spectrum, a level, a locked tempo.
    static func frame(vu: Float = 0.5, bpm: Float = 120, onset: Bool = false, beat: (count: Int32, inBar: Int32)? = nil) -> AnalysisFrame {
        var frame = AnalysisFrame()
        frame.bandCount = 128
        for band in 0..<128 { frame.bands[band] = Float(band) / 127 }
        frame.level = LevelReading(rms: 0.1, peak: 0.2, rmsDecibels: -20, peakDecibels: -14, vu: vu)
        frame.tempo = TempoReading(bpm: bpm, confidence: 0.8, phase: 0.25)
        if onset { frame.onset = OnsetReading(strength: 0.7, timeFrames: 100) }
        if let beat { frame.beat = BeatReading(isBeat: true, timeFrames: Double(beat.count) * 24_000, count: beat.count, inBar: beat.inBar) }
        return frame
    }
}

@Suite struct RouteTests {
    @Test func sourceNamesParseAndPrintBack() {
        for name in ["band 5", "bands 1-16", "bands", "peak 3", "peaks 2-4", "group 3 of 8", "groups", "groups of 4", "group 2",
                     "level", "level.rms_db", "onset", "beat", "downbeat", "beat.phase", "bpm", "pitch.cents", "note", "waveform",
                     "status.xruns", "target.state"] {
            #expect(RouteSource(parsing: name)?.name == name, "\(name)")
        }
        for bad in ["bands 0-3", "bands 5-2", "group 9 of 8", "groups of 65", "level.foo", "banana", "band", "group", "bpm 3"] {
            #expect(RouteSource(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func scalingMapsClampsAndCurves() {
        let bpm = RouteScaling(from: 60...200)
        #expect(RouteMath.scale(130, source: .bpm, scaling: bpm, arguments: .tags(["f"])) == 0.5)
        #expect(RouteMath.scale(400, source: .bpm, scaling: bpm, arguments: .tags(["f"])) == 1)
        #expect(RouteMath.scale(0, source: .bpm, scaling: bpm, arguments: .tags(["f"])) == 0)
        let unclamped = RouteScaling(from: 60...200, clamp: false)
        #expect(RouteMath.scale(270, source: .bpm, scaling: unclamped, arguments: .tags(["f"])) == 1.5)
        let fader = RouteScaling(to: 0...100)
        #expect(RouteMath.scale(0.25, source: .level(.vu), scaling: fader, arguments: .tags(["i"])) == 25)
        let exponential = RouteScaling(curve: .exponential)
        #expect(abs(RouteMath.scale(0.5, source: .level(.vu), scaling: exponential, arguments: .tags(["f"])) - 0.25) < 1e-9)
        let decibels = RouteScaling(curve: .decibels)   // −60..0 dB → 0..1
        #expect(abs(RouteMath.scale(0.1, source: .level(.rms), scaling: decibels, arguments: .tags(["f"])) - 2.0 / 3) < 1e-9)
        // A blob maps the natural range to bytes.
        #expect(RouteMath.scale(1, source: .level(.vu), scaling: .none, arguments: .blob) == 255)
    }

    /// Never NaN or infinity to a desk: a non-finite reading is invalid (an overflow is no
    /// "full scale") and goes as the source's invalid value, whatever the scaling.
    @Test func nonFiniteReadingsBecomeSafeValues() {
        for value in [Double.nan, .infinity, -.infinity] {
            #expect(RouteMath.scale(value, source: .level(.vu), scaling: .none, arguments: .tags(["f"])) == 0)
            #expect(RouteMath.scale(value, source: .level(.rmsDecibels), scaling: .none, arguments: .tags(["f"])) == -120)
            let scaled = RouteMath.scale(value, source: .bpm, scaling: RouteScaling(from: 60...200, clamp: false), arguments: .tags(["f"]))
            #expect(scaled.isFinite)
        }
        var frame = RouteFrames.frame()
        frame.level.vu = .nan
        frame.tempo.bpm = .infinity
        let rig = Rig(name: "t", routes: [Route(values: [RouteValue(.level(.vu)), RouteValue(.bpm, scaling: RouteScaling(from: 60...200))], address: "/x")])
        let datagrams = try! RigProbe(rig).render(frame)
        #expect(datagrams == [HandOSC.bundle([HandOSC.message("/x", [.f(0), .f(0)])])])
    }

    /// A pulse is 1 for its hold (whole frames, at least one) and then 0: a flash and a return.
    @Test func pulsesFlashAndReturn() throws {
        let rig = Rig(name: "t", routes: [Route(values: [RouteValue(.pulse(.onset))], address: "/onset", holdMilliseconds: 50)])
        let probe = try RigProbe(rig)   // 50 ms at 60 Hz: 3 frames
        var values: [[UInt8]] = []
        for index in 0..<6 { values += probe.render(RouteFrames.frame(onset: index == 1)) }
        let one = HandOSC.bundle([HandOSC.message("/onset", [.f(1)])]), zero = HandOSC.bundle([HandOSC.message("/onset", [.f(0)])])
        #expect(values == [zero, one, one, one, zero, zero])
        // The default hold is 30 ms: 2 frames at 60 Hz, 1 at 30 Hz.
        #expect(try CompiledRoute(Route(values: [RouteValue(.pulse(.beat))], address: "/b"), index: 0, rig: rig, prefix: "", bandCount: 128, outputRateHz: 60, targetCount: 0).holdFrames == 2)
        #expect(try CompiledRoute(Route(values: [RouteValue(.pulse(.beat))], address: "/b"), index: 0, rig: rig, prefix: "", bandCount: 128, outputRateHz: 30, targetCount: 0).holdFrames == 1)
    }

    /// A beat from the mailbox fires the beat routes at once; its frame does not fire again.
    @Test func aMailboxBeatFiresOnceAndItsFrameHoldsThePulse() throws {
        let rig = Rig(name: "t", bundled: false, routes: [
            Route(values: [RouteValue(.pulse(.beat))], address: "/pulse", policy: SendPolicy(mode: .onChange)),
            Route(values: [RouteValue(.beatCount), RouteValue(.bpm)], address: "/beat", arguments: .tags(Array("if")), condition: .beat),
            Route(values: [RouteValue(.level(.vu))], address: "/level"),
        ])
        let probe = try RigProbe(rig)
        _ = probe.render(RouteFrames.frame())
        let beat = BeatReading(isBeat: true, timeFrames: 48_000, count: 5, inBar: 1)
        var early: [[UInt8]] = []
        probe.renderer.renderBeat(BeatMailbox.Event(beat: beat, bpm: 121, captureTimeMicroseconds: 0), lastFrame: RouteFrames.frame(), context: probe.context,
                                  timeTag: .immediate) { early.append(Array($0)) }
        #expect(early == [HandOSC.message("/pulse", [.f(1)]), HandOSC.message("/beat", [.i(5), .f(121)])], "the level is not in the beat's datagrams")
        var frameWithBeat = RouteFrames.frame()
        frameWithBeat.beat = beat
        #expect(probe.render(frameWithBeat) == [HandOSC.message("/level", [.f(0.5)])], "pulse unchanged (on_change), /beat not again")
        #expect(probe.render(RouteFrames.frame()) == [HandOSC.message("/level", [.f(0.5)])])
        #expect(probe.render(RouteFrames.frame()) == [HandOSC.message("/pulse", [.f(0)]), HandOSC.message("/level", [.f(0.5)])])
    }

    @Test func onChangeAndMaximumRate() throws {
        let rig = Rig(name: "t", bundled: false, routes: [
            Route(values: [RouteValue(.bpm)], address: "/bpm", policy: SendPolicy(mode: .onChange, maximumRateHz: 1)),
        ])
        let probe = try RigProbe(rig)
        var sent: [Float] = []
        for index in 0..<240 {   // 4 s at 60 Hz; the tempo changes at 0.5 s, 1.67 s and 1.77 s
            let bpm: Float = index < 30 ? 120 : index < 100 ? 124 : index < 106 ? 126 : 128
            if !probe.render(RouteFrames.frame(bpm: bpm)).isEmpty { sent.append(bpm) }
        }
        // 120 at once; 124 held back until a second has passed (1 s); 126 never (superseded
        // before the next second), 128 at 2 s.
        #expect(sent == [120, 124, 128])
    }

    @Test func perElementRoutesNumberTheirAddresses() throws {
        let rig = Rig(name: "t", routes: [Route(values: [RouteValue(.groups(index: nil, count: 4))], address: "/dmx/universe/1/{n}", firstNumber: 5)])
        let datagrams = try RigProbe(rig).render(RouteFrames.frame())
        let groups: [Float] = [31.0 / 127, 63.0 / 127, 95.0 / 127, 1]
        #expect(datagrams == [HandOSC.bundle((0..<4).map { HandOSC.message("/dmx/universe/1/\($0 + 5)", [.f(groups[$0])]) })])
    }

    /// A vector of one element (one target, `bands 5-5`) is still a vector: one message each.
    @Test func aVectorOfOneElementSendsOneMessage() throws {
        let rig = Rig(name: "t", bundled: false, routes: [
            Route(values: [RouteValue(.target(.index)), RouteValue(.target(.state))], address: "/t", arguments: .tags(Array("is")), perElement: true),
        ])
        let probe = try RigProbe(rig, targets: 1)
        probe.context.targets = [TargetHealth(address: "127.0.0.1:9000", state: .refused, sent: 1, errors: 2)]
        #expect(probe.render(RouteFrames.frame()) == [HandOSC.message("/t", [.i(1), .s("refused")])])
        let none = try RigProbe(rig, targets: 0)
        #expect(none.render(RouteFrames.frame()).isEmpty, "no targets, no messages")
    }

    @Test func buildErrorsNameTheRigAndLine() {
        func error(_ route: Route) -> String {
            do {
                _ = try RigProbe(Rig(name: "mine", routes: [route]))
                return ""
            } catch { return "\(error)" }
        }
        #expect(error(Route(values: [RouteValue(.bands(100...200))], address: "/a", line: 7)) == "rig mine, line 7: bands 100-200: expected bands within 1-128 (the analyser's band count)")
        #expect(error(Route(values: [RouteValue(.level(.vu))], address: "/a b", line: 3)).hasPrefix("rig mine, line 3: address /a b: expected an OSC address"))
        #expect(error(Route(values: [RouteValue(.noteName)], address: "/n", line: 2)) == "rig mine, line 2: note is text: expected type s, got f")
        #expect(error(Route(values: [RouteValue(.bpm)], address: "/n", arguments: .tags(["s"]), line: 2)).contains("expected a text source"))
        #expect(error(Route(values: [RouteValue(.level(.vu)), RouteValue(.bpm)], address: "/n", arguments: .tags(Array("iif")), line: 4))
            == "rig mine, line 4: type iif: expected one type tag, or one per value (2)")
        #expect(error(Route(values: [RouteValue(.groups(index: nil, count: 4)), RouteValue(.groups(index: nil, count: 8))], address: "/g/{n}", line: 9))
            == "rig mine, line 9: one message per element needs vectors of one length, got 4 and 8")
    }

    @Test func blobsCarryDMXBytes() throws {
        let rig = Rig(name: "t", routes: [Route(values: [RouteValue(.groups(index: nil, count: 2)), RouteValue(.bpm, scaling: RouteScaling(from: 60...200))],
                                                address: "/dmx/universe/1", arguments: .blob)])
        let datagrams = try RigProbe(rig).render(RouteFrames.frame(bpm: 130))
        let blob: [UInt8] = [0, 0, 0, 3, 126, 255, 128, 0]   // size 3, then 63/127·255, 255, 0.5·255, padding
        #expect(datagrams == [HandOSC.bundle([HandOSC.padded("/dmx/universe/1") + HandOSC.padded(",b") + blob])])
    }
}
