import Foundation
import SpectrumDSP
import SpectrumTestSupport
import Testing
@testable import SpectrumOutput

@Suite struct OSCAddressSpaceTests {
    /// docs/osc.md holds the generated table verbatim between the markers.
    @Test func docsContainTheGeneratedTable() throws {
        let docs = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/osc.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- osc-spec:begin -->\n"))
        let end = try #require(text.range(of: "<!-- osc-spec:end -->"))
        let documented = String(text[begin.upperBound..<end.lowerBound])
        let generated = OSCAddressSpace().markdown()
        #expect(documented == generated, "docs/osc.md is out of date: paste the output of `spectrum osc-spec` between the markers")
    }

    @Test func everyKindHasOneEntryUnderThePrefix() {
        let space = OSCAddressSpace(prefix: "/kick", bandCount: 64, groupCount: 16)
        #expect(space.entries.map(\.kind) == OSCMessageKind.allCases)
        #expect(Set(space.entries.map(\.address)).count == space.entries.count)
        for entry in space.entries {
            #expect(entry.address.hasPrefix("/kick/"))
            #expect(entry.example.hasPrefix(entry.address + " "))
        }
        #expect(space.entry(.bands).typeTags == String(repeating: "f", count: 64))
        #expect(space.entry(.groups).typeTags == String(repeating: "f", count: 16))
        #expect(space.entry(.levelDecibels).typeTags == "ff")
        #expect(space.entry(.status).typeTags == "iiiiffi")
        #expect(space.entry(.waveform).typeTags.count == 512)
        #expect(space.entry(.bands).displayTypeTags == "f×64")
        #expect(!space.entry(.waveform).enabledByDefault)
    }

    @Test func numericMessagesCarryOnlyFloatsAndIntsAndTextHasItsOwnAddresses() {
        let text: Set<OSCMessageKind> = [.note, .writtenNote, .string, .targetStatus]
        for entry in OSCAddressSpace().entries where !text.contains(entry.kind) {
            #expect(entry.typeTags.allSatisfy { $0 == "f" || $0 == "i" }, "\(entry.address)")
        }
        #expect(OSCAddressSpace().entry(.note).typeTags == "s")
        #expect(OSCAddressSpace().entry(.writtenNote).typeTags == "s" && OSCAddressSpace().entry(.string).typeTags == "s")
        #expect(OSCAddressSpace().entry(.targetStatus).typeTags == "issii")
    }

    /// The spectrum rig is the table: every enabled entry becomes one route with its address
    /// and type tags, so what `osc-spec` prints is what is sent.
    @Test func theSpectrumRigSendsWhatTheTableSays() throws {
        let space = OSCAddressSpace(prefix: "/kick", bandCount: 64, groupCount: 16)
        let rig = space.rig(messages: .all)
        #expect(rig.routes.count == OSCMessageKind.allCases.count)
        for route in rig.routes {
            let address = route.address.replacingOccurrences(of: "{prefix}", with: "/kick")
            let entry = try #require(space.entries.first { $0.address == address }, "\(address)")
            let compiled = try CompiledRoute(route, index: 0, rig: rig, prefix: "/kick", bandCount: 64, outputRateHz: 60, targetCount: 2)
            let tags: String
            switch route.arguments {
            case .tags(let given): tags = given.count == 1 ? String(repeating: given[0], count: compiled.valuesPerMessage) : String(given)
            case .blob: tags = "b"
            }
            #expect(tags == entry.typeTags, "\(address)")
        }
    }

    @Test func defaultSetLeavesTheWaveformAndTheTempoOutStatusOut() {
        let optIn: [OSCMessageKind] = [.waveform, .midiClockStatus, .linkStatus]
        for kind in optIn { #expect(!OSCMessageSet.default.contains(kind) && OSCMessageSet.all.contains(kind)) }
        for kind in OSCMessageKind.allCases where !optIn.contains(kind) { #expect(OSCMessageSet.default.contains(kind)) }
    }

    /// Sizes that docs/osc.md states: with 128 bands the default bundle (no note) is about 1.5 KB (two IP
    /// fragments on Ethernet); without `/peaks` it fits one Ethernet frame (1472 bytes of UDP
    /// payload); the waveform adds about 2.6 KB.
    @Test func bundleSizesAreAsDocumented() {
        let frame = SyntheticFrames.frame(0)
        func size(_ messages: OSCMessageSet, withStatus: Bool = false) -> Int {
            let renderer = try! RigRenderer(rig: OSCAddressSpace().rig(messages: messages), prefix: "/spectrum", bandCount: 128,
                                            outputRateHz: 60, targetCount: 1)
            var size = 0
            var context = RenderContext()
            context.isStatusFrame = withStatus
            context.targets = [TargetHealth(address: "127.0.0.1:9000", state: .ok, sent: 3600, errors: 0)]
            renderer.render(frame, context: context, timeTag: .immediate) { size = $0.count }
            return size
        }
        #expect(size(.default) == 1580)
        #expect(size(.default, withStatus: true) - size(.default) == 180, "/status, one /status/target and /status/server, once a second")
        #expect(size(OSCMessageSet.default.subtracting(.peaks)) <= 1472)
        #expect(size(.all) - size(.default) == 2588)
    }
}

@Suite struct BandGroupingTests {
    @Test func equalRunsOfBands() {
        let grouping = BandGrouping(groupCount: 8)
        #expect((0..<8).map { grouping.bands(ofGroup: $0, bandCount: 128) } == (0..<8).map { $0 * 16..<($0 + 1) * 16 })
    }

    @Test func unevenCountsCoverEveryBandOnce() {
        for (bands, groups) in [(10, 3), (128, 7), (100, 64), (256, 64), (1, 1)] {
            let grouping = BandGrouping(groupCount: groups)
            let ranges = (0..<groups).map { grouping.bands(ofGroup: $0, bandCount: bands) }
            #expect(ranges.first?.lowerBound == 0)
            #expect(ranges.last?.upperBound == bands)
            for (a, b) in zip(ranges, ranges.dropFirst()) { #expect(a.upperBound == b.lowerBound) }
            let sizes = ranges.map(\.count)
            #expect(sizes.max()! - sizes.min()! <= 1 && sizes.min()! >= 1)
        }
    }

    @Test func moreGroupsThanBandsRepeatBands() {
        let grouping = BandGrouping(groupCount: 8)
        let ranges = (0..<8).map { grouping.bands(ofGroup: $0, bandCount: 4) }
        #expect(ranges.allSatisfy { $0.count == 1 })
        #expect(ranges.map(\.lowerBound) == [0, 0, 1, 1, 2, 2, 3, 3])
    }

    @Test func groupValueIsTheMaximumGuarded() {
        let grouping = BandGrouping(groupCount: 2)
        let bands: [Float] = [0.1, 0.7, .nan, 0.2, 1.5, -0.3, .infinity, 0.4]
        var groups = [Float](repeating: -1, count: 2)
        bands.withUnsafeBufferPointer { input in
            groups.withUnsafeMutableBufferPointer { grouping.group(bands: input, into: $0) }
        }
        #expect(groups == [0.7, 1.0])
    }

    @Test func valueGuards() {
        #expect(OSCValueGuard.unit(.nan) == 0)
        #expect(OSCValueGuard.unit(-.infinity) == 0)
        #expect(OSCValueGuard.unit(2) == 1)
        #expect(OSCValueGuard.decibels(.nan) == -120)
        #expect(OSCValueGuard.decibels(-300) == -120)
        #expect(OSCValueGuard.decibels(3) == 3)
        #expect(OSCValueGuard.sample(-.infinity) == 0)
        #expect(OSCValueGuard.sample(-3) == -1)
        #expect(OSCValueGuard.count(-5) == 0)
        #expect(OSCValueGuard.count(Int.max) == Int32.max)
    }
}

@Suite struct OSCTimeTagTests {
    @Test func captureTimeShiftsTheWallClock() {
        let wall = OSCTimeTag(seconds: 3_900_000_000, fraction: 0x8000_0000)  // x.5 s
        let tag = OSCTimeTag.converting(captureMicroseconds: 9_750_000, captureClockNowMicroseconds: 10_000_000, wallNow: wall)
        #expect(abs(tag.secondsValue - (wall.secondsValue - 0.25)) < 1e-6)
        // A frame time ahead of the clock (a software source, zero capture latency) is sent as
        // "now", never in the future.
        let later = OSCTimeTag.converting(captureMicroseconds: 10_001_000, captureClockNowMicroseconds: 10_000_000, wallNow: wall)
        #expect(later == wall)
    }

    @Test func zeroCaptureTimeIsImmediate() {
        #expect(OSCTimeTag.converting(captureMicroseconds: 0, captureClockNowMicroseconds: 5, wallNow: .now()) == .immediate)
        #expect(OSCTimeTag.immediate == OSCTimeTag(seconds: 0, fraction: 1))
    }

    @Test func nowIsNTPTime() {
        let unix = Date().timeIntervalSince1970
        #expect(abs(OSCTimeTag.now().secondsValue - 2_208_988_800 - unix) < 0.5)
    }
}
