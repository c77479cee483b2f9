import CLo
import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// The private network namespace the multicast tests run in: it must really be separate from the
/// host's loopback, and multicast through 127.0.0.1 must be delivered on its lo.
@Suite(.enabled(if: PrivateNetwork.unavailableReason == nil, "needs root, unshare, nsenter and ip for a private network namespace"))
struct PrivateNetworkTests {
    @Test func socketsOpenedInsideCannotReachLoopbackOutside() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let outside = try UDPTestSocket(bindingTo: "127.0.0.1", port: 0)
        // The same port is free inside: a separate loopback, not the host's.
        let (inside, sender) = try network.run {
            (try UDPTestSocket(bindingTo: "127.0.0.1", port: outside.port), try UDPTestSocket(bindingTo: "127.0.0.1", port: 0))
        }
        #expect(sender.send(Array("hello".utf8), to: "127.0.0.1", port: outside.port) == 5)
        #expect(inside.receive(timeoutMilliseconds: 1000) == Array("hello".utf8), "a socket bound inside receives it")
        #expect(outside.receive(timeoutMilliseconds: 200) == nil, "the host's loopback never sees it")
    }

    @Test func multicastThroughLoopbackIsDeliveredInside() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let group = "239.0.0.1"
        let (member, sender) = try network.run {
            let member = try UDPTestSocket(bindingTo: "0.0.0.0", port: 0)
            try member.join(group: group, interface: "127.0.0.1")
            let sender = try UDPTestSocket(bindingTo: "127.0.0.1", port: 0)
            try sender.setMulticastInterface("127.0.0.1")
            return (member, sender)
        }
        #expect(sender.send(Array("group".utf8), to: group, port: member.port) == 5)
        #expect(member.receive(timeoutMilliseconds: 1000) == Array("group".utf8))
    }

    @Test func commandsRunInsideSeeOnlyLoopback() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let argv = network.command(["ip", "-o", "link", "show"])
        #expect(argv.prefix(3) == ["nsenter", "--net=/proc/\(network.holderPID)/ns/net", "--"])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = argv
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let interfaces = text.split(separator: "\n").map { $0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces) }
        #expect(interfaces == ["lo"])
        #expect(text.contains("UP"))
    }

    @Test func runRethrowsTheBodysErrorAndLeavesTheCallerOutside() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        struct Expected: Error {}
        #expect(throws: Expected.self) { try network.run { throw Expected() } }
        let inside = try network.run { try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self/ns/net") }
        let caller = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self/ns/net")
        #expect(inside != caller)
        #expect(caller == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")), "the calling thread never changes namespace")
    }

    @Test func stopIsIdempotentAndEndsTheHolder() throws {
        let network = try PrivateNetwork()
        network.stop()
        network.stop()
        #expect(kill(network.holderPID, 0) != 0, "the holder is gone")
    }
}

/// A blocking IPv4 UDP socket for these tests; closed on deinit.
final class UDPTestSocket: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible { let description: String }

    let descriptor: Int32
    let port: UInt16

    init(bindingTo host: String, port requested: UInt16) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(host, requested)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            let text = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "bind \(host):\(requested): \(text)")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }

    func join(group: String, interface: String) throws {
        var request = ip_mreq(imr_multiaddr: in_addr(s_addr: inet_addr(group)), imr_interface: in_addr(s_addr: inet_addr(interface)))
        guard setsockopt(descriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 else {
            throw Failure(description: "IP_ADD_MEMBERSHIP \(group) on \(interface): \(String(cString: strerror(errno)))")
        }
    }

    func setMulticastInterface(_ interface: String) throws {
        var address = in_addr(s_addr: inet_addr(interface))
        guard setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_IF, &address, socklen_t(MemoryLayout<in_addr>.size)) == 0 else {
            throw Failure(description: "IP_MULTICAST_IF \(interface): \(String(cString: strerror(errno)))")
        }
    }

    /// Bytes sent, or -1.
    func send(_ bytes: [UInt8], to host: String, port: UInt16) -> Int {
        var address = Self.address(host, port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// One datagram, or nil when none arrives within the timeout.
    func receive(timeoutMilliseconds: Int32) -> [UInt8]? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = recv(descriptor, &buffer, buffer.count, 0)
        return count >= 0 ? Array(buffer[0..<count]) : nil
    }

    private static func address(_ host: String, _ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = port.bigEndian
        return address
    }
}
