import CLo
import Foundation
import Glibc
@testable import SpectrumControl
import Synchronization
import Testing

/// What the handler saw, and a loopback client that sends OSC and reads the replies.
final class Recorded<Value: Sendable>: Sendable {
    let value: Mutex<[Value]>
    init() { value = Mutex([]) }
    func append(_ item: Value) { value.withLock { $0.append(item) } }
    func withLock<R>(_ body: ([Value]) -> R) -> R { value.withLock { body($0) } }
}

final class ControlHarness: @unchecked Sendable {
    let applied = Recorded<ControlCommand>()
    let replies = Recorded<ControlReply>()
    let server: ControlServer
    let client: Int32

    init(refusePresets: Bool = true) throws {
        let applied = self.applied, replies = self.replies
        server = try ControlServer(port: 0, prefix: "/spectrum", apply: { command in
            if refusePresets, case .preset(let name) = command { return .failure(ControlRejection("no preset \(name)")) }
            applied.append(command)
            return .success("done")
        }, onReply: { reply in replies.append(reply) })
        server.start()
        client = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = server.port.bigEndian
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        server.stop()
        close(client)
    }

    func send(_ bytes: [UInt8]) { _ = bytes.withUnsafeBytes { Glibc.send(client, $0.baseAddress, $0.count, 0) } }

    func send(_ path: String, _ build: (lo_message) -> Void = { _ in }) {
        let message = lo_message_new()!
        defer { lo_message_free(message) }
        build(message)
        var size = 0
        let bytes = lo_message_serialise(message, path, nil, &size)!
        defer { free(bytes) }
        send(Array(UnsafeRawBufferPointer(start: bytes, count: size)))
    }

    /// Waits until `count` replies arrived (or 5 s).
    func waitForReplies(_ count: Int) -> [ControlReply] {
        let deadline = Date().addingTimeInterval(5)
        while replies.withLock({ $0.count }) < count, Date() < deadline { usleep(2000) }
        return replies.withLock { $0 }
    }

    /// The reply datagram sent back to this client (path and strings), or nil.
    func readReply() -> (path: String, strings: [String])? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(client, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        var result: Int32 = 0
        guard let message = lo_message_deserialise(&buffer, count, &result) else { return nil }
        defer { lo_message_free(message) }
        let path = String(cString: buffer.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self) })
        let argv = lo_message_get_argv(message)!
        let strings = (0..<Int(lo_message_get_argc(message))).map { String(cString: UnsafeRawPointer(argv[$0]!).assumingMemoryBound(to: CChar.self)) }
        return (path, strings)
    }
}

@Suite(.serialized) struct ControlServerTests {
    @Test func eachAddressBecomesItsCommandAndIsAnswered() throws {
        let harness = try ControlHarness()
        harness.send("/spectrum/control/relearn")
        harness.send("/spectrum/control/reference") { lo_message_add_float($0, 442) }
        harness.send("/spectrum/control/lead_ms") { lo_message_add_int32($0, 40) }
        harness.send("/spectrum/control/bpm_range") { lo_message_add_float($0, 90); lo_message_add_double($0, 160) }
        harness.send("/spectrum/control/blackout") { lo_message_add_int32($0, 1) }
        harness.send("/spectrum/control/blackout") { lo_message_add_float($0, 0) }
        harness.send("/spectrum/control/tempo_input") { lo_message_add_string($0, "dj") }
        harness.send("/spectrum/control/tap")
        let replies = harness.waitForReplies(8)
        #expect(replies.count == 8 && replies.allSatisfy(\.accepted), "\(replies)")
        let applied = harness.applied.withLock { $0 }
        #expect(Array(applied.prefix(7)) == [.relearn, .referenceHz(442), .leadMilliseconds(40), .bpmRange(minimum: 90, maximum: 160), .blackout(true), .blackout(false),
                                             .tempoInput(name: "dj")])
        if case .tap = applied.last {} else { Issue.record("the last command is a tap: \(applied)") }
        let answer = try #require(harness.readReply())
        #expect(answer.path == "/spectrum/status/control" && answer.strings == ["/spectrum/control/relearn", "ok: done"])
    }

    enum Argument: Sendable { case f(Float), i(Int32), s(String) }

    /// A bad value changes nothing and the answer names the address and the range.
    @Test(arguments: [
        ("/spectrum/control/reference", [Argument.f(500)], "expected 415 to 466 Hz, got 500"),
        ("/spectrum/control/reference", [.s("A")], "expected one number, 415 to 466 Hz"),
        ("/spectrum/control/lead_ms", [.f(-1)], "expected 0 to 500 ms, got -1"),
        ("/spectrum/control/bpm_range", [.f(160), .f(90)], "expected a minimum of 30 to 300 BPM below a maximum of 40 to 400 BPM, got 160 90"),
        ("/spectrum/control/blackout", [.i(2)], "expected 1 (black out) or 0 (resume), got 2"),
        ("/spectrum/control/preset", [.i(2)], "expected one string (a preset name or path), got types i"),
        ("/spectrum/control/preset", [.s("nope")], "no preset nope"),
        ("/spectrum/control/tempo_input", [.i(1)], "expected one string (an input name), got types i"),
    ])
    func badValuesChangeNothing(path: String, arguments: [Argument], expected: String) throws {
        let harness = try ControlHarness()
        harness.send(path) { message in
            for argument in arguments {
                switch argument {
                case .f(let value): lo_message_add_float(message, value)
                case .i(let value): lo_message_add_int32(message, value)
                case .s(let value): lo_message_add_string(message, value)
                }
            }
        }
        let replies = harness.waitForReplies(1)
        #expect(replies == [ControlReply(address: path, accepted: false, text: expected)])
        #expect(harness.applied.withLock { $0 }.isEmpty)
        #expect(harness.readReply()?.strings == [path, "error: " + expected])
        #expect(harness.server.statistics.rejected == 1)
    }

    @Test func unknownMalformedAndOversizedAreCountedAndDropped() throws {
        let harness = try ControlHarness()
        harness.send("/spectrum/level") { lo_message_add_float($0, 1) }
        harness.send("/other/control/relearn")
        harness.send(Array("not osc at all!".utf8) + [0])
        harness.send([UInt8](repeating: 0x2f, count: ControlServer.maximumDatagramBytes + 4))
        // A bundle with a future time tag still applies at once; a nested bundle is refused.
        let message = lo_message_new()!
        let bundle = lo_bundle_new(lo_timetag(sec: 0xFFFF_0000, frac: 0))!
        lo_bundle_add_message(bundle, "/spectrum/control/relearn", message)
        var size = 0
        let bytes = lo_bundle_serialise(bundle, nil, &size)!
        harness.send(Array(UnsafeRawBufferPointer(start: bytes, count: size)))
        free(bytes)
        lo_bundle_free_recursive(bundle)
        let deadline = Date().addingTimeInterval(5)
        while harness.server.statistics.received < 5, Date() < deadline { usleep(2000) }
        _ = harness.waitForReplies(1)
        let statistics = harness.server.statistics
        #expect(statistics.received == 5)
        #expect(statistics.unknown == 2)
        #expect(statistics.malformed == 1)
        #expect(statistics.oversized == 1)
        #expect(statistics.accepted == 1, "the bundled relearn")
    }

    /// 10⁶ random and mutated datagrams (loopback, bounded in count and time): no crash, the
    /// counters add up, and the server still answers a valid message afterwards.
    @Test func aMillionRandomAndMutatedPacketsDoNotBreakIt() throws {
        let harness = try ControlHarness()
        var generator = SplitMix(seed: 20261123)
        let valid: [[UInt8]] = [
            ["/spectrum/control/reference", ",f"], ["/spectrum/control/bpm_range", ",ff"], ["/spectrum/control/preset", ",s"],
        ].map { parts in
            parts.flatMap { part -> [UInt8] in var bytes = Array(part.utf8) + [0]; while bytes.count % 4 != 0 { bytes.append(0) }; return bytes }
                + [0x43, 0xDD, 0x00, 0x00, 0x42, 0xB4, 0x00, 0x00]
        }
        let bundleHeader = Array("#bundle".utf8) + [0]
        let total = 1_000_000
        let start = Date()
        var sent = 0
        while sent < total, Date().timeIntervalSince(start) < 120 {
            var packet: [UInt8]
            switch generator.next() % 4 {
            case 0:   // random bytes
                packet = (0..<Int(generator.next() % 64)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            case 1:   // a valid message with flipped bytes
                packet = valid[Int(generator.next() % 3)]
                for _ in 0..<(1 + generator.next() % 4) { packet[Int(generator.next() % UInt64(packet.count))] = UInt8(truncatingIfNeeded: generator.next()) }
            case 2:   // truncated
                packet = Array(valid[Int(generator.next() % 3)].prefix(Int(generator.next() % 40)))
            default:  // a bundle with a random element size
                packet = bundleHeader + [0, 0, 0, 0, 0, 0, 0, 1] + withUnsafeBytes(of: UInt32(truncatingIfNeeded: generator.next() % 128).bigEndian, Array.init) + valid[0]
            }
            harness.send(packet)
            sent += 1
            // Let the server keep up (a full socket buffer only drops packets, which would not be
            // tested): pause when more than 200 are in flight.
            if sent % 100 == 0 {
                let wait = Date().addingTimeInterval(1)
                while harness.server.statistics.received < sent - 200, Date() < wait { usleep(200) }
            }
        }
        #expect(sent == total, "sent \(sent) in 120 s")
        let deadline = Date().addingTimeInterval(10)
        while harness.server.statistics.received < sent, Date() < deadline { usleep(1000) }
        let statistics = harness.server.statistics
        #expect(statistics.received >= sent * 9 / 10, "received \(statistics.received) of \(sent) (UDP may drop a few under load)")
        // Every datagram is accounted for once (a bundle may hold one message besides).
        let outcomes = statistics.malformed + statistics.oversized + statistics.unknown + statistics.accepted + statistics.rejected
        #expect(outcomes >= statistics.received * 9 / 10 && outcomes <= statistics.received * 2, "\(statistics)")
        // State still valid: whatever got through was within its range.
        for command in harness.applied.withLock({ $0 }) {
            switch command {
            case .referenceHz(let hz): #expect((415...466).contains(hz))
            case .leadMilliseconds(let ms): #expect((0...500).contains(ms))
            case .bpmRange(let low, let high): #expect((30...300).contains(low) && (40...400).contains(high) && low < high)
            case .addInput(let name, _), .removeInput(let name), .tempoInput(let name): #expect(!name.isEmpty)
            case .relearn, .tap, .preset, .blackout: break
            }
        }
        let before = harness.replies.withLock { $0.count }
        harness.send("/spectrum/control/relearn")
        #expect(harness.waitForReplies(before + 1).last == ControlReply(address: "/spectrum/control/relearn", accepted: true, text: "done"))
    }

    @Test func aTakenPortIsOneLine() throws {
        let harness = try ControlHarness()
        #expect(throws: ControlError.self) { try ControlServer(port: harness.server.port, prefix: "/s", apply: { _ in .success("") }) }
        do {
            _ = try ControlServer(port: harness.server.port, prefix: "/s", apply: { _ in .success("") })
        } catch {
            #expect("\(error)" == "--control 127.0.0.1:\(harness.server.port): cannot listen there (Address already in use)")
        }
    }
}

/// A small seeded generator, so a failing fuzz run can be repeated.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
