import Foundation
import CLo
import Glibc
import SpectrumDSP
import SpectrumTestSupport
import Synchronization
import Testing
import SpectrumCore
@testable import SpectrumOutput

/// End to end: synthetic frames → FrameRing → FramePublisher → UDP on loopback → a liblo server.
/// Serialized: the timing test should not share two cores with the others.
@Suite(.serialized) struct FramePublisherTests {
    static let testStatus = PublisherStatus(sampleRateHz: 48000, periodFrames: 256, xruns: 3, droppedFrames: 1, dspLoadPercent: 4.5, worstCallbackMicroseconds: 41.25)

    private func makePublisher(_ receivers: [OSCReceiver], extraTargets: [OSCTarget] = [], ring: FrameRingHolder, beats: BeatMailbox? = nil,
                               messages: OSCMessageSet = .default, groups: Int = 8, clock: CaptureClock? = nil) throws -> FramePublisher {
        var configuration = PublisherConfiguration(targets: receivers.map(\.target) + extraTargets, groupCount: groups, messages: messages)
        configuration.outputRateHz = 60
        let status = Self.testStatus
        return try FramePublisher(configuration: configuration, ring: ring.ring, beats: beats.map { [$0] } ?? [], captureClock: clock, status: { status })
    }

    @Test func aBeatFromTheMailboxGoesOutAloneAndOnlyOnce() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let beats = BeatMailbox()
        defer { beats.deallocate() }
        let publisher = try makePublisher([receiver], ring: ring, beats: beats)
        try publisher.start()
        // Frame 2 carries a beat. It was posted to the mailbox first, as the live host does.
        let frames = (0..<4).map { SyntheticFrames.frame($0) }
        let early = try #require(frames.first { $0.beat.isBeat })
        beats.post(BeatMailbox.Event(beat: early.beat, bpm: 128, captureTimeMicroseconds: 0))
        // A beat the mailbox never carried (e.g. overwritten) still rides in its frame.
        var missed = SyntheticFrames.frame(6)
        missed.beat.timeFrames += 1
        for frame in frames + [missed] { SyntheticFrames.push(frame, into: ring.ring) }
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 6 }
        receiver.drain(seconds: 0.05)
        publisher.stop()

        #expect(receiver.bundles.count == 6)
        let first = try #require(receiver.bundles.first)
        #expect(first.messages.map(\.path) == ["/spectrum/beat"], "the mailbox's beat goes first, alone")
        #expect(first.message("/spectrum/beat")?.values == [Double(early.beat.count), Double(early.beat.inBar), 128])
        let frameBundles = receiver.bundles.dropFirst()
        #expect(frameBundles.allSatisfy { $0.message("/spectrum/bands") != nil })
        #expect(frameBundles.filter { $0.message("/spectrum/beat") != nil }.count == 1, "only the missed beat rides in its frame")
        #expect(frameBundles.last?.message("/spectrum/beat") != nil)
    }

    @Test func routesThatNameAnInputCarryThatInputAndTheOthersTheFirst() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        var configuration = PublisherConfiguration(targets: [receiver.target])
        configuration.inputNames = ["kick", "bass"]
        configuration.rig = Rig(name: "desk", routes: [
            Route(values: [RouteValue(.level(.vu))], address: "/desk/kick", input: "kick"),
            Route(values: [RouteValue(.level(.vu))], address: "/desk/bass", input: "bass"),
            Route(values: [RouteValue(.level(.vu))], address: "/desk/first"),
        ])
        let publisher = try FramePublisher(configuration: configuration, ring: ring.ring)
        try publisher.start()
        for index in 0..<6 {
            var frame = SyntheticFrames.frame(index)
            frame.inputIndex = Int32(index % 2)
            frame.level.vu = index % 2 == 0 ? 0.25 : 0.75
            SyntheticFrames.push(frame, into: ring.ring)
        }
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 6 }
        receiver.drain(seconds: 0.05)
        let bundles = receiver.bundles

        // Removed, bass's routes fall silent; added again under that name, they are fed again.
        func pushBass(_ vu: Float) {
            var frame = SyntheticFrames.frame(10)
            frame.inputIndex = 1
            frame.level.vu = vu
            SyntheticFrames.push(frame, into: ring.ring)
            publisher.flush()
        }
        try publisher.setInput(slot: 1, name: nil)
        publisher.flush()
        pushBass(0.5)
        try publisher.setInput(slot: 1, name: "bass")
        publisher.flush()
        pushBass(0.625)
        receiver.receive { receiver.bundles.count >= 7 }
        receiver.drain(seconds: 0.05)
        publisher.stop()
        #expect(receiver.bundles.dropFirst(6).compactMap { $0.message("/desk/bass")?.values.first } == [0.625])

        #expect(bundles.count == 6)
        let kick = bundles.compactMap { $0.message("/desk/kick")?.values.first }
        let bass = bundles.compactMap { $0.message("/desk/bass")?.values.first }
        let first = bundles.compactMap { $0.message("/desk/first")?.values.first }
        #expect(kick == [0.25, 0.25, 0.25])
        #expect(bass == [0.75, 0.75, 0.75])
        #expect(first == [0.25, 0.25, 0.25], "a route without input follows the first input")
        #expect(bundles.allSatisfy { $0.message("/desk/bass") == nil || $0.message("/desk/kick") == nil }, "one input's frame per bundle")

        configuration.rig?.routes.append(Route(values: [RouteValue(.level(.vu))], address: "/desk/vocal", input: "vocal", line: 12))
        #expect(throws: OSCConfigurationError("rig desk, route at line 12: input vocal: no such input; the inputs are kick, bass")) { try configuration.validate() }
        configuration.inputNames = [""]
        #expect(throws: OSCConfigurationError("rig desk: input kick: routes name inputs only with named inputs (--input kick)")) { try configuration.validate() }
    }

    @Test func oneBundlePerFrameWithEveryEnabledAddress() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let publisher = try makePublisher([receiver], ring: ring)
        try publisher.start()
        let frames = (0..<10).map { SyntheticFrames.frame($0) }
        for frame in frames { SyntheticFrames.push(frame, into: ring.ring) }
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 10 }
        receiver.drain(seconds: 0.05)
        publisher.stop()

        #expect(receiver.bundles.count == 10)
        #expect(receiver.looseMessages.isEmpty)
        let space = OSCAddressSpace()
        for (bundle, frame) in zip(receiver.bundles, frames) {
            let paths = bundle.messages.map(\.path)
            var expected = ["/spectrum/bands", "/spectrum/peaks", "/spectrum/groups", "/spectrum/level", "/spectrum/level/db", "/spectrum/pitch/active"]
            if frame.pitch.hasNote { expected += ["/spectrum/pitch", "/spectrum/note", "/spectrum/note/written", "/spectrum/pitch/strobe"] }
            if frame.pitch.stringName != nil { expected += ["/spectrum/pitch/string", "/spectrum/pitch/string/cents"] }
            if frame.onset.isOnset { expected.append("/spectrum/onset") }
            expected += ["/spectrum/tempo", "/spectrum/beat/phase"]
            if frame.beat.isBeat { expected.append("/spectrum/beat") }
            if bundle.message("/spectrum/status") != nil { expected += ["/spectrum/status", "/spectrum/status/target", "/spectrum/status/server"] }
            #expect(paths == expected)
            for message in bundle.messages {
                let kind = try #require(space.entries.first { $0.address == message.path })
                #expect(message.types == kind.typeTags, "\(message.path)")
            }
            let bands = try #require(bundle.message("/spectrum/bands")).floats
            #expect(bands == (0..<128).map { frame.bands[$0] })
            let peaks = try #require(bundle.message("/spectrum/peaks")).floats
            #expect(peaks == (0..<128).map { frame.peaks[$0] })
            let groups = try #require(bundle.message("/spectrum/groups")).floats
            #expect(groups == (0..<8).map { group in (group * 16..<(group + 1) * 16).map { frame.bands[$0] }.max()! })
            #expect(try #require(bundle.message("/spectrum/level")).floats == [frame.level.vu])
            #expect(try #require(bundle.message("/spectrum/level/db")).floats == [frame.level.rmsDecibels, frame.level.peakDecibels])
            #expect(bundle.timeTag == .immediate)
            // The tuner: an explicit note / no-note state, pitch and name only with a note.
            #expect(try #require(bundle.message("/spectrum/pitch/active")).floats == [frame.pitch.hasNote ? 1 : 0])
            // Rhythm: tempo and phase every frame (0 while not locked), onset and beat as events.
            let tempo = try #require(bundle.message("/spectrum/tempo")).floats
            #expect(tempo == (frame.tempo.isLocked ? [128, 0.7] : [0, 0]))
            #expect(try #require(bundle.message("/spectrum/beat/phase")).floats == [frame.tempo.isLocked ? frame.tempo.phase : 0])
            if frame.beat.isBeat {
                #expect(try #require(bundle.message("/spectrum/beat")).values == [Double(frame.beat.count), Double(frame.beat.inBar), 128])
                #expect(try #require(bundle.message("/spectrum/onset")).floats == [0.8])
            }
            if frame.pitch.hasNote {
                #expect(try #require(bundle.message("/spectrum/pitch")).floats == [440.51, 69.02, 2, 0.97])
                #expect(try #require(bundle.message("/spectrum/note")).strings == ["A4"])
            }
        }
        let status = try #require(receiver.bundles[0].message("/spectrum/status"))
        #expect(status.values == [48000, 256, 3, 1, 4.5, 41.25, 0])
        let statistics = publisher.statistics
        #expect(statistics.framesPublished == 10)
        #expect(statistics.targets.map(\.datagramsSent) == [10])
        #expect(statistics.targets.map(\.sendErrors) == [0])
    }

    @Test func groupsFollowTheConfiguredCount() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let publisher = try makePublisher([receiver], ring: ring, messages: [.groups], groups: 5)
        try publisher.start()
        let frame = SyntheticFrames.frame(3, bandCount: 12)
        SyntheticFrames.push(frame, into: ring.ring)
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 1 }
        publisher.stop()
        let bundle = try #require(receiver.bundles.first)
        #expect(bundle.messages.map(\.path) == ["/spectrum/groups"])
        // 12 bands in 5 groups: 0..<2, 2..<4, 4..<7, 7..<9, 9..<12.
        let ranges = [0..<2, 2..<4, 4..<7, 7..<9, 9..<12]
        #expect(try #require(bundle.message("/spectrum/groups")).floats == ranges.map { $0.map { frame.bands[$0] }.max()! })
    }

    @Test func waveformIsOptIn() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let publisher = try makePublisher([receiver], ring: ring, messages: OSCMessageSet.default.union(OSCMessageSet(.waveform)))
        try publisher.start()
        let frame = SyntheticFrames.frame(1)
        SyntheticFrames.push(frame, into: ring.ring)
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 1 }
        publisher.stop()
        let waveform = try #require(receiver.bundles.first?.message("/spectrum/waveform"))
        #expect(waveform.types == String(repeating: "f", count: 512))
        #expect(waveform.floats == (0..<512).map { frame.waveform[$0] })
    }

    @Test func statusOncePerSecondOfAudioFrames() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder(capacity: 256)
        let publisher = try makePublisher([receiver], ring: ring)
        // Faster than real time (as under freewheel): pacing follows the frames, not the clock.
        for index in 0..<150 { SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring) }
        try publisher.start()
        receiver.receive { receiver.bundles.count >= 150 }
        publisher.stop()
        #expect(receiver.bundles.count == 150)
        let withStatus = receiver.bundles.indices.filter { receiver.bundles[$0].message("/spectrum/status") != nil }
        #expect(withStatus == [0, 60, 120])
        #expect(publisher.statistics.statusMessagesSent == 3)
    }

    @Test func twoTargetsBothReceiveEverything() throws {
        let first = OSCReceiver(), second = OSCReceiver()
        let ring = FrameRingHolder()
        let publisher = try makePublisher([first, second], ring: ring)
        try publisher.start()
        for index in 0..<20 { SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring) }
        publisher.flush()
        publisher.stop()
        first.receive { first.bundles.count >= 20 }
        second.receive { second.bundles.count >= 20 }
        #expect(first.bundles.count == 20)
        #expect(second.bundles.count == 20)
        for (a, b) in zip(first.bundles, second.bundles) { #expect(a.messages == b.messages) }
    }

    @Test func nonFiniteValuesNeverReachTheWire() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let publisher = try makePublisher([receiver], ring: ring, messages: .all)
        try publisher.start()
        var frame = SyntheticFrames.frame(0)
        frame.bands[0] = .nan
        frame.bands[1] = .infinity
        frame.bands[2] = -.infinity
        frame.bands[3] = 7
        frame.peaks[5] = .nan
        frame.level = LevelReading(rms: .nan, peak: .nan, rmsDecibels: .nan, peakDecibels: -.infinity, vu: .nan)
        frame.waveform[9] = .nan
        frame.waveform[10] = 4
        SyntheticFrames.push(frame, into: ring.ring)
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 1 }
        publisher.stop()
        let bundle = try #require(receiver.bundles.first)
        for message in bundle.messages {
            #expect(message.values.allSatisfy { $0.isFinite }, "\(message.path)")
        }
        let bands = try #require(bundle.message("/spectrum/bands")).floats
        #expect(Array(bands[0..<4]) == [0, 0, 0, 1])
        #expect(bands.allSatisfy { (0...1).contains($0) })
        #expect(try #require(bundle.message("/spectrum/peaks")).floats[5] == 0)
        #expect(try #require(bundle.message("/spectrum/level")).floats == [0])
        #expect(try #require(bundle.message("/spectrum/level/db")).floats == [-120, -120])
        let waveform = try #require(bundle.message("/spectrum/waveform")).floats
        #expect(waveform[9] == 0 && waveform[10] == 1)
    }

    @Test func closedPortAndUnreachableTargetsDoNotStopDelivery() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let dead = [OSCTarget(host: "127.0.0.1", port: closedUDPPort()), OSCTarget(host: "192.0.2.123", port: 9)]
        let publisher = try makePublisher([receiver], extraTargets: dead, ring: ring)
        try publisher.start()
        for index in 0..<30 {
            SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring)
            usleep(1000)
        }
        publisher.flush()
        receiver.receive { receiver.bundles.count >= 30 }
        publisher.stop()
        #expect(receiver.bundles.count == 30)
        let statistics = publisher.statistics
        #expect(statistics.framesPublished == 30)
        #expect(statistics.targets[0].datagramsSent == 30)
        #expect(statistics.targets[0].sendErrors == 0)
        // Whatever the kernel reports for the dead targets is counted, never fatal.
        for target in statistics.targets.dropFirst() {
            #expect(target.datagramsSent + target.sendErrors == 30)
        }
    }

    @Test func timeTagsCarryTheCaptureTime() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let jackNow: UInt64 = 5_000_000_000
        let publisher = try makePublisher([receiver], ring: ring, clock: CaptureClock { jackNow })
        try publisher.start()
        let before = OSCTimeTag.now().secondsValue
        SyntheticFrames.push(SyntheticFrames.frame(0, captureTimeMicroseconds: jackNow - 250_000), into: ring.ring)
        SyntheticFrames.push(SyntheticFrames.frame(1, captureTimeMicroseconds: jackNow - 233_333), into: ring.ring)
        SyntheticFrames.push(SyntheticFrames.frame(2, captureTimeMicroseconds: 0), into: ring.ring)
        publisher.flush()
        let after = OSCTimeTag.now().secondsValue
        receiver.receive { receiver.bundles.count >= 3 }
        publisher.stop()
        #expect(receiver.bundles.count == 3)
        guard receiver.bundles.count == 3 else { return }
        let first = receiver.bundles[0].timeTag.secondsValue
        let second = receiver.bundles[1].timeTag.secondsValue
        #expect(first >= before - 0.250 - 0.001 && first <= after - 0.250 + 0.001)
        #expect(second >= before - 0.233_333 - 0.001 && second <= after - 0.233_333 + 0.001)
        #expect(receiver.bundles[2].timeTag == .immediate)
    }

    /// Live, an onset goes first in a bundle of its own tagged with its attack (located in the
    /// samples, before the frame's newest sample); the frame's bundle leaves it out. Its
    /// argument is unchanged (`f` strength). Without an acoustic time (offline) it stays in
    /// the frame's bundle.
    @Test func anOnsetGoesAloneTaggedWithItsAttack() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder()
        let jackNow: UInt64 = 5_000_000_000
        let publisher = try makePublisher([receiver], ring: ring, clock: CaptureClock { jackNow })
        try publisher.start()
        let before = OSCTimeTag.now().secondsValue
        var withOnset = SyntheticFrames.frame(2, captureTimeMicroseconds: jackNow - 100_000)
        withOnset.onset.captureTimeMicroseconds = jackNow - 121_000
        SyntheticFrames.push(withOnset, into: ring.ring)
        SyntheticFrames.push(SyntheticFrames.frame(3, captureTimeMicroseconds: jackNow - 83_333), into: ring.ring)
        var offline = SyntheticFrames.frame(6, captureTimeMicroseconds: jackNow - 50_000)
        offline.onset.captureTimeMicroseconds = 0
        SyntheticFrames.push(offline, into: ring.ring)
        publisher.flush()
        let after = OSCTimeTag.now().secondsValue
        receiver.receive { receiver.bundles.count >= 4 }
        receiver.drain(seconds: 0.05)
        publisher.stop()
        #expect(receiver.bundles.count == 4)
        guard receiver.bundles.count == 4 else { return }
        let onset = receiver.bundles[0]
        #expect(onset.messages.map(\.path) == ["/spectrum/onset"])
        #expect(onset.message("/spectrum/onset")?.types == "f")
        #expect(onset.message("/spectrum/onset")?.floats == [0.8])
        let onsetTag = onset.timeTag.secondsValue
        #expect(onsetTag >= before - 0.121 - 0.001 && onsetTag <= after - 0.121 + 0.001)
        let frame = receiver.bundles[1]
        #expect(frame.message("/spectrum/onset") == nil, "the onset rode in its frame too")
        #expect(frame.message("/spectrum/beat") != nil && frame.message("/spectrum/bands") != nil)
        #expect(abs(frame.timeTag.secondsValue - onsetTag - 0.021) < 0.000_01, "the frame's tag 21 ms after the onset's")
        #expect(receiver.bundles[2].message("/spectrum/onset") == nil)
        #expect(receiver.bundles[3].message("/spectrum/onset")?.floats == [0.8], "without its own time the onset stays in its frame")
    }

    /// The two clocks are read as one instant: a capture clock that jumps 5 ms between its
    /// reads (the thread preempted, as on a loaded machine) is read again, and the wall time is
    /// paired with the midpoint of the tight pair, not with a reading 5 ms off.
    @Test func theClocksAreReadTogetherDespiteAPreemption() {
        let reads = Mutex(0)
        let clock = CaptureClock {
            reads.withLock { count in
                count += 1
                // Reads 1 and 2 bracket the first wall reading 5 ms apart; later ones 10 µs apart.
                switch count {
                case 1: return 1_000_000
                case 2: return 1_005_000
                default: return 2_000_000 + UInt64(count) * 10
                }
            }
        }
        let wallBefore = OSCTimeTag.now().secondsValue
        let (captureNow, wall) = clock.readWithWallClock()
        #expect(captureNow == 2_000_035, "the second pair (reads 3 and 4), its midpoint")
        #expect(wall.secondsValue >= wallBefore && wall.secondsValue < wallBefore + 1)
        #expect(reads.withLock { $0 } == 4, "stops at the first tight pair")
    }

    @Test func noFramesLostOnLoopbackAtSixtyPerSecond() throws {
        let receiver = OSCReceiver()
        // 4 s of frames, as the live ring holds: a publisher thread that a loaded machine
        // starves for a second must not lose frames before they reach the loopback.
        let ring = FrameRingHolder(capacity: 256)
        let publisher = try makePublisher([receiver], ring: ring, messages: .all)
        try publisher.start()
        let frameCount = 120
        // A producer at 60 frames/s of wall time, as the live host would push.
        let producer = Thread { [ring = ring.ring] in
            let start = Date()
            for index in 0..<frameCount {
                let due = start.addingTimeInterval(Double(index) / 60)
                let wait = due.timeIntervalSinceNow
                if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
                SyntheticFrames.push(SyntheticFrames.frame(index), into: ring)
            }
        }
        producer.start()
        receiver.receive(timeoutSeconds: 20) { receiver.bundles.count >= frameCount }
        receiver.drain(seconds: 0.1)
        publisher.stop()
        #expect(receiver.bundles.count == frameCount)
        #expect(publisher.statistics.targets[0].sendErrors == 0)
        // Every frame's bands arrived, in order.
        for (index, bundle) in receiver.bundles.enumerated() {
            #expect(bundle.message("/spectrum/bands")?.floats.first == SyntheticFrames.frame(index).bands[0])
        }
    }

    @Test func stopSendsWhatIsPending() throws {
        let receiver = OSCReceiver()
        let ring = FrameRingHolder(capacity: 128)
        let publisher = try makePublisher([receiver], ring: ring)
        try publisher.start()
        // 60 bundles fit the receiver's socket buffer while nobody reads it.
        for index in 0..<60 { SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring) }
        publisher.stop()
        #expect(publisher.statistics.framesPublished == 60)
        #expect(ring.ring.count == 0)
        receiver.receive { receiver.bundles.count >= 60 }
        #expect(receiver.bundles.count == 60)
        publisher.stop()  // twice is fine
        #expect(!publisher.isRunning)
    }

    @Test func ipv6TargetReceivesBundles() throws {
        // liblo's server here is IPv4-only; a plain socket on ::1 counts datagrams.
        let descriptor = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound)
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let ring = FrameRingHolder()
        let target = try OSCTarget(parsing: "[::1]:\(UInt16(bigEndian: address.sin6_port))")
        let publisher = try FramePublisher(configuration: PublisherConfiguration(targets: [target]), ring: ring.ring)
        try publisher.start()
        for index in 0..<3 { SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring) }
        publisher.stop()
        var buffer = [UInt8](repeating: 0, count: 65536)
        var received = 0
        for _ in 0..<3 where recv(descriptor, &buffer, buffer.count, 0) > 16 {
            if Array(buffer[0..<8]) == Array("#bundle\0".utf8) { received += 1 }
        }
        #expect(received == 3)
    }

    /// Inside a private network (the network rule: no multicast through a real interface):
    /// nobody joined the group, but the options and the sends must succeed.
    @Test(.enabled(if: PrivateNetwork.unavailableReason == nil, "needs root and unshare for a private network namespace"))
    func multicastThroughAChosenInterface() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let ring = FrameRingHolder()
        var configuration = PublisherConfiguration(targets: [OSCTarget(host: "239.255.77.77", port: 9000)])
        configuration.multicastInterface = "127.0.0.1"
        configuration.multicastTTL = 1
        // The publisher opens its sockets in init: made inside, they send inside.
        let publisher = try network.run { try FramePublisher(configuration: configuration, ring: ring.ring) }
        #expect(publisher.targets[0].isMulticast)
        try publisher.start()
        for index in 0..<5 { SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring) }
        publisher.stop()
        let statistics = publisher.statistics.targets[0]
        #expect(statistics.datagramsSent == 5)
        #expect(statistics.sendErrors == 0)
    }

    /// A liblo multicast server joined on lo gets the bundles sent through 127.0.0.1, all inside a
    /// private network namespace whose only interface is lo: nothing reaches a real interface.
    @Test(.enabled(if: PrivateNetwork.unavailableReason == nil, "needs root and unshare for a private network namespace"))
    func multicastGroupMembersReceiveBundles() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let group = "239.255.77.78"
        let port = 9000
        let ring = FrameRingHolder()
        var configuration = PublisherConfiguration(targets: [OSCTarget(host: group, port: UInt16(port))])
        configuration.multicastInterface = "127.0.0.1"
        // #require is not used inside `run`: its thread has no test context to record an issue in.
        let (joined, publisher) = try network.run {
            (lo_server_new_multicast_iface(group, String(port), nil, "127.0.0.1", nil), try FramePublisher(configuration: configuration, ring: ring.ring))
        }
        let server = try #require(joined, "a liblo server joined to \(group) on lo")
        defer { lo_server_free(server) }
        let counter = MulticastCounter()
        lo_server_add_method(server, "/spectrum/level", "f", { _, _, _, _, _, context in
            Unmanaged<MulticastCounter>.fromOpaque(context!).takeUnretainedValue().count += 1
            return 0
        }, Unmanaged.passUnretained(counter).toOpaque())

        try publisher.start()
        for index in 0..<5 { SyntheticFrames.push(SyntheticFrames.frame(index), into: ring.ring) }
        publisher.flush()
        let deadline = Date().addingTimeInterval(3)
        while counter.count < 5, Date() < deadline { _ = lo_server_recv_noblock(server, 5) }
        publisher.stop()
        #expect(counter.count == 5)
        #expect(publisher.statistics.targets[0].sendErrors == 0)
    }
}

final class MulticastCounter { var count = 0 }
