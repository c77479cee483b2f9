// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc

/// A stand-in for a WLED controller's audio sync receiver: a UDP socket that applies the
/// acceptance checks of WLED's `usermods/audioreactive/audio_reactive.h` (`receiveAudioData`)
/// to every datagram, counts what WLED would accept and reject, and decodes accepted v2 packets.
///
/// WLED's checks, in its order:
/// 1. `packetSize > 5 && packetSize <= UDPSOUND_MAX_PACKET` (96), else the datagram is dropped;
/// 2. `packetSize == sizeof(audioSyncPacket)` (44) and `isValidUdpSyncVersion(header)`
///    (`strncmp(header, "00002", 6) == 0`: "00002" and a NUL) → a v2 packet;
/// 3. else `packetSize == sizeof(audioSyncPacket_v1)` (88) and
///    `strncmp(header, "00001", 6) == 0` → a v1 packet;
/// 4. else "unknown format": ignored. A sender that packs 40 bytes (no alignment gaps) fails 2.
///
/// Two ways to listen: unicast on 127.0.0.1 (anywhere), or as a member of the multicast group
/// on lo, which the network rule allows only inside a private network namespace
/// (`PrivateNetwork.run`); that initialiser refuses to run elsewhere.
/// Allocates; polled from the test's thread (`receive`, `drain`); not thread-safe.
public final class WLEDReceiver {
    /// The fields of one v2 packet as sent, plus WLED's view of them (`decodeAudioData`).
    public struct Packet: Equatable, Sendable {
        public var reserved: [UInt8]
        public var sampleRaw: Float
        public var sampleSmth: Float
        public var samplePeak: UInt8
        public var frameCounter: UInt8
        public var fftResult: [UInt8]
        public var zeroCrossingCount: UInt16
        public var fftMagnitude: Float
        public var majorPeakHz: Float

        /// What WLED's effects see: `fmaxf(sampleSmth, 0)`.
        public var volumeSmth: Float { fmaxf(sampleSmth, 0) }
        /// `constrain(FFT_MajorPeak, 1, 11025)`: note that NaN passes WLED's constrain, which is
        /// why the sender must never send one.
        public var effectiveMajorPeakHz: Float {
            majorPeakHz < 1 ? 1 : (majorPeakHz > 11025 ? 11025 : majorPeakHz)
        }
    }

    public enum Format: Equatable, Sendable { case v1, v2 }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// WLED's `UDPSOUND_MAX_PACKET`.
    public static let maximumPacketBytes = 96
    public static let v2PacketBytes = 44
    public static let v1PacketBytes = 88

    public let port: UInt16
    private let descriptor: Int32
    /// Accepted v2 packets, decoded, in arrival order.
    public private(set) var packets: [Packet] = []
    /// Accepted v1 packets (counted, not decoded).
    public private(set) var acceptedV1Count = 0
    /// Datagrams WLED would drop or ignore, and their sizes.
    public private(set) var rejectedSizes: [Int] = []
    public var acceptedCount: Int { packets.count + acceptedV1Count }
    public var rejectedCount: Int { rejectedSizes.count }

    /// Listens for unicast datagrams on 127.0.0.1 (`port` 0: a free one).
    public init(port requested: UInt16 = 0) throws {
        (descriptor, port) = try Self.openSocket(bindingTo: "127.0.0.1", port: requested)
    }

    /// Joins `group` on the interface with address `interface` (127.0.0.1: lo), bound to the
    /// group address and `port`. Only inside a private network namespace: call it within
    /// `PrivateNetwork.run` (it throws when the calling thread is in the process's own
    /// network namespace, so a test cannot join a group on the host by mistake).
    public init(multicastGroup group: String, port requested: UInt16, interface: String = "127.0.0.1") throws {
        let threadNamespace = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self/ns/net")
        let processNamespace = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/net")
        guard let threadNamespace, threadNamespace != processNamespace else {
            throw Failure(description: "multicast receivers run only inside a private network namespace (PrivateNetwork.run)")
        }
        (descriptor, port) = try Self.openSocket(bindingTo: group, port: requested)
        var request = ip_mreq(imr_multiaddr: in_addr(s_addr: inet_addr(group)), imr_interface: in_addr(s_addr: inet_addr(interface)))
        guard setsockopt(descriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &request, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 else {
            let text = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot join \(group) on \(interface): \(text)")
        }
    }

    deinit { close(descriptor) }

    /// Receives until `done()` holds or `timeoutSeconds` pass.
    public func receive(timeoutSeconds: Double = 5, until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !done(), Date() < deadline { poll(milliseconds: 5) }
    }

    /// Receives whatever arrives during `seconds`.
    public func drain(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline { poll(milliseconds: 5) }
    }

    /// WLED's acceptance checks on one datagram: its format, or nil when WLED drops it.
    public static func format(of datagram: [UInt8]) -> Format? {
        guard datagram.count > 5, datagram.count <= maximumPacketBytes else { return nil }
        if datagram.count == v2PacketBytes, headerMatches(datagram, "00002") { return .v2 }
        if datagram.count == v1PacketBytes, headerMatches(datagram, "00001") { return .v1 }
        return nil
    }

    /// Decodes a datagram that `format(of:)` accepted as v2 (little-endian, as on the ESP32).
    public static func decode(_ datagram: [UInt8]) -> Packet {
        precondition(datagram.count == v2PacketBytes)
        func float(_ offset: Int) -> Float {
            Float(bitPattern: UInt32(datagram[offset]) | UInt32(datagram[offset + 1]) << 8 | UInt32(datagram[offset + 2]) << 16 | UInt32(datagram[offset + 3]) << 24)
        }
        return Packet(
            reserved: Array(datagram[6..<8]),
            sampleRaw: float(8),
            sampleSmth: float(12),
            samplePeak: datagram[16],
            frameCounter: datagram[17],
            fftResult: Array(datagram[18..<34]),
            zeroCrossingCount: UInt16(datagram[34]) | UInt16(datagram[35]) << 8,
            fftMagnitude: float(36),
            majorPeakHz: float(40))
    }

    /// `strncmp(header, expected, 6) == 0` for a 5-character `expected`: its characters, then
    /// a NUL (strncmp stops comparing at the first NUL in both).
    private static func headerMatches(_ datagram: [UInt8], _ expected: String) -> Bool {
        Array(datagram[0..<6]) == Array(expected.utf8) + [0]
    }

    private func poll(milliseconds: Int32) {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard Glibc.poll(&poller, 1, milliseconds) == 1 else { return }
        var buffer = [UInt8](repeating: 0, count: 2048)
        while true {
            // MSG_TRUNC: the datagram's real length even if it were longer than the buffer.
            let length = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
            guard length >= 0 else { return }
            let datagram = Array(buffer[0..<min(length, buffer.count)])
            switch Self.format(of: datagram) {
            case .v2: packets.append(Self.decode(datagram))
            case .v1: acceptedV1Count += 1
            case nil: rejectedSizes.append(length)
            }
        }
    }

    private static func openSocket(bindingTo host: String, port: UInt16) throws -> (Int32, UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = port.bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            let text = String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot bind \(host):\(port): \(text)")
        }
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
