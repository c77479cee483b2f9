import Foundation
import Glibc
import SpectrumTestSupport
import Testing
@testable import SpectrumSession

@Suite struct NSMURLTests {
    @Test("NSM_URL: unset or empty means no session; osc.udp://HOST:PORT/ with or without the slash")
    func parsesGoodValues() throws {
        #expect(try NSMURL.from(environment: [:]) == nil)
        #expect(try NSMURL.from(environment: ["NSM_URL": ""]) == nil)
        #expect(try NSMURL.from(environment: ["NSM_URL": "osc.udp://127.0.0.1:17311/"]) == NSMURL(host: "127.0.0.1", port: 17311))
        #expect(try NSMURL.from(environment: ["NSM_URL": "osc.udp://studio.local:9000"]) == NSMURL(host: "studio.local", port: 9000))
    }

    @Test("A bad NSM_URL is one line naming the variable, the value and what was expected",
          arguments: ["127.0.0.1:9000", "osc.tcp://127.0.0.1:9000/", "osc.udp://127.0.0.1/", "osc.udp://:9000/", "osc.udp://host:0/", "osc.udp://host:99999/"])
    func refusesBadValues(_ value: String) {
        let error = #expect(throws: NSMError.self) { try NSMURL.from(environment: ["NSM_URL": value]) }
        #expect(error?.description.hasPrefix("NSM_URL \"\(value)\": expected osc.udp://HOST:PORT/") == true)
        #expect(error?.description.contains("\n") == false)
    }
}

@Suite struct OSCDatagramTests {
    @Test("Written and read back; malformed datagrams are nil")
    func roundTripAndMalformed() {
        let message = OSCDatagram("/error", [.string("/nsm/client/save"), .int(-11), .string("disk full"), .float(0.5)])
        #expect(OSCDatagram(bytes: message.bytes) == message)
        #expect(message.bytes.count % 4 == 0)
        #expect(OSCDatagram(bytes: []) == nil)
        #expect(OSCDatagram(bytes: Array(message.bytes.dropLast(4))) == nil)
        #expect(OSCDatagram(bytes: Array("#bundle\0".utf8) + [UInt8](repeating: 0, count: 8)) == nil)
        var unknownType = OSCDatagram("/x", [.int(1)]).bytes
        unknownType[4 + 1] = UInt8(ascii: "q")
        #expect(OSCDatagram(bytes: unknownType) == nil)
    }
}

@Suite(.serialized) struct NSMHandshakeTests {
    func client(for server: FakeNSMServer) throws -> NSMClient {
        try NSMClient(url: try #require(try NSMURL.from(environment: ["NSM_URL": server.url])))
    }

    @Test("Announce, open, save (ok and failed), dirty and clean once per change: every message as strict nsmd wants it")
    func wholeSession() throws {
        let server = try FakeNSMServer()
        defer { server.stop() }
        let nsm = try client(for: server)
        defer { nsm.stop() }
        try nsm.announce(appName: "Spectrum", capabilities: ":dirty:message:", executable: "spectrum", pid: 4242)
        let announce = try #require(server.waitFor("/nsm/server/announce"))
        #expect(announce.strings == ["Spectrum", ":dirty:message:", "spectrum"] && announce.ints == [1, 2, 4242])
        #expect(announce.senderPort == nsm.localPort)

        server.open(path: "/tmp/session/spectrum.nABCD", displayName: "Spectrum", clientID: "spectrum.nABCD")
        let open = try nsm.waitForOpen(timeoutSeconds: 5)
        #expect(open == NSMOpen(path: "/tmp/session/spectrum.nABCD", displayName: "Spectrum", clientID: "spectrum.nABCD"))
        #expect(nsm.serverName == "Fake NSM" && nsm.serverCapabilities == ":server-control:")
        try nsm.replyOpen(message: "ready")
        #expect(server.waitFor("/reply")?.strings == ["/nsm/client/open", "ready"])

        let saves = SaveOutcomes([.success("saved"), .failure(NSMFailure(.saveFailed, "disk full"))])
        nsm.start { saves.next() }
        nsm.markDirty()
        nsm.markDirty()
        #expect(server.waitFor("/nsm/client/is_dirty") != nil)
        server.save()
        #expect(server.waitFor("/reply", count: 2)?.strings == ["/nsm/client/save", "saved"])
        #expect(server.waitFor("/nsm/client/is_clean") != nil, "a successful save makes the client clean")
        nsm.markDirty()
        server.save()
        let error = try #require(server.waitFor("/error"))
        #expect(error.strings == ["/nsm/client/save", "disk full"] && error.ints == [-11])
        nsm.message(priority: 1, text: "hello")
        #expect(server.waitFor("/nsm/client/message")?.ints == [1])
        #expect(server.messages.filter { $0.address == "/nsm/client/is_dirty" }.count == 2, "one is_dirty per change of state")
        #expect(server.violations.isEmpty, "\(server.violations)")
    }

    @Test("A refused announce is one line with the server's message")
    func refusedAnnounce() throws {
        let server = try FakeNSMServer()
        defer { server.stop() }
        let nsm = try client(for: server)
        try nsm.announce(appName: "Spectrum", capabilities: ":dirty:", executable: "spectrum")
        server.waitFor("/nsm/server/announce")
        server.refuseAnnounce(message: "incompatible API version")
        let error = #expect(throws: NSMError.self) { try nsm.waitForOpen(timeoutSeconds: 5) }
        #expect(error?.description.contains("refused the announce (error -2): incompatible API version") == true)
    }

    @Test("No open within the time: one line, no hang")
    func noOpen() throws {
        let server = try FakeNSMServer()
        defer { server.stop() }
        let nsm = try client(for: server)
        try nsm.announce(appName: "Spectrum", capabilities: ":dirty:", executable: "spectrum")
        let started = Date()
        let error = #expect(throws: NSMError.self) { try nsm.waitForOpen(timeoutSeconds: 0.5) }
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(error?.description.contains("no /nsm/client/open came within") == true)
    }

    @Test("Garbage sent to the client's socket is counted and dropped, not a crash")
    func garbage() throws {
        let server = try FakeNSMServer()
        defer { server.stop() }
        let nsm = try client(for: server)
        defer { nsm.stop() }
        try nsm.announce(appName: "Spectrum", capabilities: ":dirty:", executable: "spectrum")
        server.waitFor("/nsm/server/announce")
        server.open(path: "/tmp/x", displayName: "x", clientID: "x")
        _ = try nsm.waitForOpen(timeoutSeconds: 5)
        nsm.start { .success("ok") }
        // From another socket: random bytes, a truncated message.
        let other = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(other) }
        var destination = sockaddr_in()
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_addr.s_addr = inet_addr("127.0.0.1")
        destination.sin_port = nsm.localPort.bigEndian
        for datagram in [[UInt8](repeating: 0xFF, count: 13), Array("/nsm/client/save\0\0\0\0,s\0\0".utf8)] {
            _ = withUnsafePointer(to: &destination) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(other, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        // Counted on the client's own receiving thread, in its own time: poll.
        let deadline = Date().addingTimeInterval(5)
        while nsm.unknownMessages < 2 && Date() < deadline { usleep(10_000) }
        #expect(nsm.unknownMessages >= 2, "\(nsm.unknownMessages) unknown messages")
        server.save()
        #expect(server.waitFor("/reply", where: { $0.strings.first == "/nsm/client/save" }) != nil, "still answering after garbage")
    }
}

@Suite struct FakeNSMServerStrictnessTests {
    @Test("The fake is as strict as nsmd: wrong types, an unknown address or another port are violations")
    func recordsViolations() throws {
        let server = try FakeNSMServer()
        defer { server.stop() }
        let url = try #require(try NSMURL.from(environment: ["NSM_URL": server.url]))
        let first = try NSMClient(url: url), second = try NSMClient(url: url)
        try first.send(OSCDatagram("/nsm/server/announce", [.string("x"), .string(""), .string("x"), .int(1), .int(2)]))  // sssii
        try first.announce(appName: "x", capabilities: "", executable: "x")
        try first.send(OSCDatagram("/reply", [.string("/nsm/client/open"), .string("ok"), .string("extra")]))
        try first.send(OSCDatagram("/nsm/client/unknown"))
        try second.replyOpen(message: "from another port")
        let deadline = Date().addingTimeInterval(5)
        while server.violations.count < 4 && Date() < deadline { usleep(10_000) }
        let violations = server.violations
        #expect(violations.count == 4, "\(violations)")
        #expect(violations.contains { $0.contains("types \"sssii\"") })
        #expect(violations.contains { $0.contains("types \"sss\"") })
        #expect(violations.contains { $0.contains("/nsm/client/unknown") })
        #expect(violations.contains { $0.contains("the client announced from") })
    }
}

/// Save results handed out in order, then the last one again.
final class SaveOutcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var outcomes: [Result<String, NSMFailure>]
    init(_ outcomes: [Result<String, NSMFailure>]) { self.outcomes = outcomes }
    func next() -> Result<String, NSMFailure> { lock.withLock { outcomes.count > 1 ? outcomes.removeFirst() : outcomes[0] } }
}

@Suite struct SessionStateFileTests {
    @Test("Replaced whole: the new text, no temporary file left, directories created")
    func atomicWrite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("nested/preset.yaml")
        try SessionStateFile.writeAtomically("old\n", to: file)
        try SessionStateFile.writeAtomically(String(repeating: "new\n", count: 10_000), to: file)
        #expect(try String(contentsOf: file, encoding: .utf8) == String(repeating: "new\n", count: 10_000))
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["preset.yaml"])
    }

    @Test("An unwritable place: one line naming it")
    func unwritable() {
        let error = #expect(throws: NSMError.self) { try SessionStateFile.writeAtomically("x", to: URL(fileURLWithPath: "/proc/spectrum/state.yaml")) }
        #expect(error?.description.contains("/proc/spectrum") == true && error?.description.contains("\n") == false)
    }
}
