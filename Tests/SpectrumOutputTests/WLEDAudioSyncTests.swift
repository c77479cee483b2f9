import CAllocationCounter
import Foundation
import Glibc
import SpectrumCore
import SpectrumDSP
import SpectrumOutput
import SpectrumTestSupport
import Testing

/// WLED audio sync v2: exact bytes, channel mapping, rate limit, sanitising, and acceptance by a
/// receiver applying WLED's own checks.
struct WLEDAudioSyncTests {
    /// Centres of the default layout (128 bands, 20 Hz–20 kHz, equal ratios), written out here
    /// rather than read from the analyser, so the golden packet depends on the spec only.
    static let defaultCentresHz: [Double] = (0..<128).map { 20 * pow(1000, (Double($0) + 0.5) / 128) }

    static func encode(_ frame: AnalysisFrame, with encoder: WLEDAudioSyncEncoder) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0xAA, count: WLEDAudioSyncEncoder.packetByteCount)
        let sent = bytes.withUnsafeMutableBytes { encoder.packet(for: frame, into: $0) }
        return sent ? bytes : nil
    }

    @Test func goldenPacketForAKnownFrame() throws {
        #expect(Self.defaultCentresHz[19] > 43 && Self.defaultCentresHz[19] < 86, "band 19 (57 Hz) is in channel 0")
        #expect(Self.defaultCentresHz[59] > 430 && Self.defaultCentresHz[59] < 560, "band 59 (496 Hz) is in channel 5")
        var frame = AnalysisFrame()
        frame.streamFrame = 48_000
        frame.bandCount = 128
        frame.bands[19] = 1.0
        frame.bands[59] = 0.5
        frame.level = LevelReading(rms: 0.1, peak: 0.2, rmsDecibels: -20, peakDecibels: -14, vu: 0.5)
        frame.onset = OnsetReading(strength: 0.5, timeFrames: 47_900)
        frame.pitch = PitchReading(frequencyHz: 440, midiNote: 69, noteNumber: 69, cents: 0, confidence: 0.9)
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)

        // By hand from the spec: 127.5 = 0x42FF0000, 2040 = 0x44FF0000, 440 = 0x43DC0000.
        let expected: [UInt8] = [
            0x30, 0x30, 0x30, 0x30, 0x32, 0x00,  // "00002\0"
            0x00, 0x00,                          // reserved
            0x00, 0x00, 0xFF, 0x42,              // sampleRaw 127.5 (vu 0.5 × 255)
            0x00, 0x00, 0xFF, 0x42,              // sampleSmth 127.5 (the first frame starts the smoothing)
            0x01,                                // samplePeak: an onset
            0x00,                                // frame counter
            0xFE, 0, 0, 0, 0, 0x7F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // GEQ: channel 0 = 1.0 × 254, channel 5 = 0.5 × 254
            0x00, 0x00,                          // zero crossings
            0x00, 0x00, 0xFF, 0x44,              // FFT magnitude 2040 (loudest band 1.0 × 2040)
            0x00, 0x00, 0xDC, 0x43,              // major peak 440 Hz (the tuner's note)
        ]
        let packet = try #require(Self.encode(frame, with: encoder))
        #expect(packet.count == 44)
        #expect(packet == expected)
    }

    @Test func withoutANoteTheMajorPeakIsTheLoudestBandsCentre() throws {
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)
        var frame = AnalysisFrame()
        frame.bandCount = 128
        frame.bands[59] = 0.9
        frame.bands[19] = 0.3
        frame.bands[120] = 1.0  // 13.6 kHz: above WLED's 11025 Hz, not a candidate
        let packet = WLEDReceiver.decode(try #require(Self.encode(frame, with: encoder)))
        #expect(abs(packet.majorPeakHz - Float(Self.defaultCentresHz[59])) < 0.01)
        #expect(abs(packet.fftMagnitude - 0.9 * 2040) < 0.01)
        #expect(packet.samplePeak == 0)
    }

    /// A real analyser on a 1 kHz sine: WLED channel 7 (818–1120 Hz) is the brightest, the
    /// others stay well below it, and the major peak reads the tone.
    @Test func aToneLightsItsGEQChannel() throws {
        var analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: 48_000)
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: analyzer.bandCentreFrequenciesHz, sampleRateHz: analyzer.sampleRateHz)
        let frames = OfflineDriver.frames(&analyzer, signal: TestSignals.sine(frequencyHz: 1000, sampleRateHz: 48_000, seconds: 1.5))
        var last: WLEDReceiver.Packet?
        for frame in frames {
            if let bytes = Self.encode(frame, with: encoder) { last = WLEDReceiver.decode(bytes) }
        }
        let packet = try #require(last)
        let brightest = packet.fftResult.indices.max { packet.fftResult[$0] < packet.fftResult[$1] }!
        #expect(brightest == 7, "GEQ \(packet.fftResult)")
        #expect(packet.fftResult[7] >= 200)
        for channel in packet.fftResult.indices where abs(channel - 7) > 1 {
            #expect(Int(packet.fftResult[channel]) < Int(packet.fftResult[7]) / 2, "channel \(channel): GEQ \(packet.fftResult)")
        }
        #expect(abs(packet.majorPeakHz - 1000) < 60, "major peak \(packet.majorPeakHz) Hz")
        #expect(packet.sampleRaw > 100, "a −9 dBFS sine is loud")
    }

    @Test(arguments: [(48_000.0, 60.0), (48_000.0, 120.0), (44_100.0, 60.0), (44_100.0, 120.0)])
    func atMostFiftyPacketsPerSecondOfStreamTime(sampleRateHz: Double, frameRateHz: Double) {
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: sampleRateHz)
        let hopFrames = Int64((sampleRateHz / frameRateHz).rounded())
        var sentAt: [Int64] = []
        var counters: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 44)
        let seconds = 10.0
        var streamFrame: Int64 = 0
        while Double(streamFrame) < seconds * sampleRateHz {
            // A stall of 1 s in the middle: the grid restarts instead of bursting to catch up.
            if streamFrame == hopFrames * 300 { streamFrame += Int64(sampleRateHz) }
            var frame = AnalysisFrame()
            frame.streamFrame = streamFrame
            if buffer.withUnsafeMutableBytes({ encoder.packet(for: frame, into: $0) }) {
                sentAt.append(streamFrame)
                counters.append(buffer[17])
            }
            streamFrame += hopFrames
        }
        // In every one-second window of stream time: at most 50.
        let second = Int64(sampleRateHz)
        var worst = 0
        for (index, start) in sentAt.enumerated() {
            worst = max(worst, sentAt[index...].prefix { $0 < start + second }.count)
        }
        #expect(worst <= 50, "\(worst) packets in one second")
        // And the limit is used: close to 50/s over the 9 s of frames (not 30 or 40).
        #expect(Double(sentAt.count) >= 0.95 * 50 * 9, "\(sentAt.count) packets")
        // Never closer than WLED's 10 ms poll.
        let closest = zip(sentAt, sentAt.dropFirst()).map { $1 - $0 }.min()!
        #expect(Double(closest) / sampleRateHz >= 0.010, "\(closest) frames apart")
        #expect(counters == (0..<counters.count).map { UInt8(truncatingIfNeeded: $0) }, "the counter counts packets and wraps")
    }

    @Test func anOnsetInASkippedFrameIsSentWithTheNextPacket() throws {
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)
        var frame = AnalysisFrame()
        #expect(Self.encode(frame, with: encoder) != nil)
        frame.streamFrame = 400
        frame.onset = OnsetReading(strength: 0.7, timeFrames: 300)
        #expect(Self.encode(frame, with: encoder) == nil, "400 frames after the first packet: too early")
        frame.streamFrame = 960
        frame.onset = .none
        let packet = WLEDReceiver.decode(try #require(Self.encode(frame, with: encoder)))
        #expect(packet.samplePeak == 1)
        frame.streamFrame = 1920
        let next = WLEDReceiver.decode(try #require(Self.encode(frame, with: encoder)))
        #expect(next.samplePeak == 0, "sent once")
    }

    /// sampleSmth follows a step with the named time constant, on stream time: the same
    /// after 100 ms whether frames come at 60 or 120 per second.
    @Test(arguments: [60.0, 120.0])
    func smoothingIsAOnePoleOnStreamTime(frameRateHz: Double) throws {
        let parameters = WLEDAudioSyncEncoder.Parameters()
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000, parameters: parameters)
        var frame = AnalysisFrame()
        _ = Self.encode(frame, with: encoder)  // starts at 0
        frame.level.vu = 1
        let hopFrames = Int64(48_000 / frameRateHz)
        var last: WLEDReceiver.Packet?
        for index in 1...Int(frameRateHz / 10) {  // 100 ms of frames
            frame.streamFrame = Int64(index) * hopFrames
            if let bytes = Self.encode(frame, with: encoder) { last = WLEDReceiver.decode(bytes) }
        }
        let packet = try #require(last)
        let expected = 255 * (1 - exp(-100 / parameters.smoothingMilliseconds))
        #expect(packet.sampleRaw == 255)
        #expect(abs(Double(packet.sampleSmth) - expected) < 0.5, "\(packet.sampleSmth) against \(expected)")
    }

    @Test func nonFiniteFramesGiveValidPackets() throws {
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)
        let poison: [Float] = [.nan, .infinity, -.infinity, -1, 7]
        for (index, value) in poison.enumerated() {
            var frame = AnalysisFrame()
            frame.streamFrame = Int64(index) * 960
            frame.bandCount = 128
            for band in 0..<128 { frame.bands[band] = band % 2 == 0 ? value : .nan }
            frame.level = LevelReading(rms: value, peak: value, rmsDecibels: value, peakDecibels: value, vu: value)
            frame.pitch = PitchReading(frequencyHz: value * 1000, midiNote: value, noteNumber: 60, cents: value, confidence: value)
            frame.onset = OnsetReading(strength: value, timeFrames: Double(value))
            let bytes = try #require(Self.encode(frame, with: encoder), "frame \(index)")
            #expect(WLEDReceiver.format(of: bytes) == .v2)
            let packet = WLEDReceiver.decode(bytes)
            let floats = [packet.sampleRaw, packet.sampleSmth, packet.fftMagnitude, packet.majorPeakHz]
            #expect(floats.allSatisfy { $0.isFinite }, "\(value): \(floats)")
            #expect((0...255).contains(packet.sampleRaw) && (0...255).contains(packet.sampleSmth), "\(value)")
            #expect(packet.fftMagnitude >= 0 && packet.fftMagnitude <= 2040, "\(value)")
            #expect((1...11025).contains(packet.majorPeakHz), "\(value): \(packet.majorPeakHz)")
            #expect(packet.fftResult.allSatisfy { $0 <= 254 }, "\(value)")
            #expect(packet.samplePeak <= 1)
        }
    }

    /// The publisher calls the encoder for every frame: no heap traffic per frame, whatever the
    /// frame holds (levels, onsets, notes, NaN) and whether it is sent or skipped.
    @Test func encodingAllocatesNothing() {
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)
        var frames = (0..<600).map { SyntheticFrames.frame($0) }
        frames[7].bands[3] = .nan
        frames[9].level.vu = .infinity
        frames[11].pitch.frequencyHz = .nan
        let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: 44, alignment: 4)
        defer { packet.deallocate() }
        let tally = UnsafeMutablePointer<allocation_tally>.allocate(capacity: 1)
        tally.initialize(to: allocation_tally(allocations: 0, frees: 0))
        defer { tally.deallocate() }
        var sent = 0
        frames.withUnsafeBufferPointer { frames in
            // Once before counting: the first call initialises the static constants (lazy globals).
            _ = encoder.packet(for: frames[0], into: packet)
            allocation_counter_enter(tally)
            for index in frames.indices where encoder.packet(for: frames[index], into: packet) { sent += 1 }
            allocation_counter_exit()
        }
        #expect(allocation_tally_allocations(tally) == 0)
        #expect(allocation_tally_frees(tally) == 0)
        #expect(sent == 500, "600 frames at 60 per second: 50 packets per second")
    }

    @Test func aChannelWithoutBandCentresReadsTheNearestBand() {
        // 16 bands over 20 Hz–20 kHz: 0.6 octave each, so some WLED channels hold no centre.
        let coarse = (0..<16).map { 20 * pow(1000, (Double($0) + 0.5) / 16) }
        let channels = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: coarse, sampleRateHz: 48_000).channelBands
        #expect(channels.allSatisfy { !$0.isEmpty })
        // Bands that start above the lowest channels leave those channels dark.
        let high = [1000.0, 2000, 4000]
        let sparse = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: high, sampleRateHz: 48_000).channelBands
        #expect(sparse[0].isEmpty && sparse[6].isEmpty)
        #expect(sparse[8] == 0..<1, "1000 Hz lies in 818–1120 Hz")
        #expect(sparse[15].isEmpty, "above the highest centre: dark")
    }

    // MARK: A receiver applying WLED's checks

    @Test func theReceiverAcceptsOurPacketsAndRejectsWrongSizes() throws {
        let receiver = try WLEDReceiver()
        let sender = try UDPTestSocket(bindingTo: "127.0.0.1", port: 0)
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)
        var sent: [[UInt8]] = []
        for index in 0..<5 {
            var frame = SyntheticFrames.frame(index)
            frame.streamFrame = Int64(index) * 960
            let bytes = try #require(Self.encode(frame, with: encoder))
            sent.append(bytes)
            #expect(sender.send(bytes, to: "127.0.0.1", port: receiver.port) == 44)
        }
        // A sender that packs the struct without its alignment gaps (40 bytes), a v2 header on
        // 88 bytes, and a 44-byte packet with the v1 header: all ignored by WLED.
        let packed = Array(sent[0][0..<6]) + Array(sent[0][8..<34]) + Array(sent[0][36..<44])
        #expect(packed.count == 40)
        #expect(sender.send(packed, to: "127.0.0.1", port: receiver.port) == 40)
        #expect(sender.send(sent[0] + sent[0], to: "127.0.0.1", port: receiver.port) == 88)
        #expect(sender.send(Array("00001".utf8) + [0] + sent[0][6...], to: "127.0.0.1", port: receiver.port) == 44)
        // An 88-byte v1 packet is what WLED still accepts as v1.
        #expect(sender.send(Array("00001".utf8) + [0] + [UInt8](repeating: 0, count: 82), to: "127.0.0.1", port: receiver.port) == 88)
        receiver.receive { receiver.acceptedCount + receiver.rejectedCount >= 9 }
        receiver.drain(seconds: 0.05)

        #expect(receiver.packets.count == 5)
        #expect(receiver.packets == sent.map(WLEDReceiver.decode))
        #expect(receiver.packets.map(\.frameCounter) == [0, 1, 2, 3, 4])
        #expect(receiver.acceptedV1Count == 1)
        #expect(receiver.rejectedSizes == [40, 88, 44])
    }

    @Test func wledHeaderChecksAreStrncmpOfSixBytes() {
        var packet = [UInt8](repeating: 0, count: 44)
        packet.replaceSubrange(0..<6, with: Array("00002".utf8) + [0])
        #expect(WLEDReceiver.format(of: packet) == .v2)
        packet[5] = UInt8(ascii: "x")  // "00002x": strncmp sees a sixth character
        #expect(WLEDReceiver.format(of: packet) == nil)
        #expect(WLEDReceiver.format(of: Array(packet[0..<5])) == nil, "5 bytes or fewer are dropped unread")
        #expect(WLEDReceiver.format(of: [UInt8](repeating: 0x30, count: 97)) == nil, "over UDPSOUND_MAX_PACKET")
    }

    /// The real path: multicast to 239.0.0.1:11988 through lo, inside a private network
    /// namespace, to a receiver that joined the group there.
    @Test(.enabled(if: PrivateNetwork.unavailableReason == nil, "needs root and unshare for a private network namespace"))
    func multicastPacketsReachAGroupMemberOnLoopback() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let (receiver, sender) = try network.run {
            let receiver = try WLEDReceiver(multicastGroup: WLEDAudioSyncEncoder.multicastGroup, port: WLEDAudioSyncEncoder.defaultPort)
            let sender = try UDPTestSocket(bindingTo: "127.0.0.1", port: 0)
            try sender.setMulticastInterface("127.0.0.1")
            return (receiver, sender)
        }
        let encoder = WLEDAudioSyncEncoder(bandCentreFrequenciesHz: Self.defaultCentresHz, sampleRateHz: 48_000)
        for index in 0..<3 {
            var frame = SyntheticFrames.frame(index)
            frame.streamFrame = Int64(index) * 960
            let bytes = try #require(Self.encode(frame, with: encoder))
            #expect(sender.send(bytes, to: WLEDAudioSyncEncoder.multicastGroup, port: WLEDAudioSyncEncoder.defaultPort) == 44)
        }
        receiver.receive { receiver.packets.count >= 3 }
        #expect(receiver.packets.count == 3)
        #expect(receiver.rejectedCount == 0)
    }

    @Test func multicastReceiversRefuseTheHostNetwork() {
        #expect(throws: WLEDReceiver.Failure.self) {
            try WLEDReceiver(multicastGroup: WLEDAudioSyncEncoder.multicastGroup, port: WLEDAudioSyncEncoder.defaultPort)
        }
    }
}
