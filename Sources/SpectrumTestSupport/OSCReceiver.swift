import CLo
import Foundation
import Glibc
import SpectrumDSP
import SpectrumOutput

/// A real OSC receiver on loopback: a UDP socket on a free port of 127.0.0.1 whose datagrams a
/// liblo server parses and dispatches (`lo_server_dispatch_data`), with bundle handlers to
/// group messages per bundle and a catch-all method handler to decode them.
///
/// Why not liblo's own UDP server: Debian's liblo 0.31 binds it to the wildcard address
/// (0.0.0.0), which the network rule (rig-protocols.md) keeps out of the host's namespace, and
/// has no way to bind it to 127.0.0.1. The liblo server here is a Unix-domain socket that
/// nothing sends to: it only parses, dispatches, and holds bundles tagged in the future until due.
/// Polled from the test's thread (`receive`); not thread-safe.
public final class OSCReceiver {
    public struct Message: Equatable {
        public var path: String
        public var types: String
        /// Every numeric argument as a Double (floats and ints); strings are in `strings`.
        public var values: [Double]
        public var floats: [Float]
        public var strings: [String] = []
    }

    public struct Bundle {
        public var timeTag: OSCTimeTag
        /// When the bundle was received (wall clock), for rate measurements.
        public var arrival = Date()
        public var messages: [Message] = []
        public func message(_ path: String) -> Message? { messages.first { $0.path == path } }
    }

    public let server: lo_server
    public let port: UInt16
    private let descriptor: Int32
    private var datagram = [UInt8](repeating: 0, count: 65_536)
    public private(set) var bundles: [Bundle] = []
    /// Messages that arrived outside any bundle.
    public private(set) var looseMessages: [Message] = []
    private var openBundle: Bundle?

    public init() {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("spectrum-osc-receiver-\(getpid())-\(UInt64.random(in: 0...UInt64.max))").path
        server = lo_server_new_with_proto(path, Int32(LO_UNIX), nil)!
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        precondition(descriptor >= 0, "socket: \(String(cString: strerror(errno)))")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        precondition(bound, "bind 127.0.0.1: \(String(cString: strerror(errno)))")
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
        // Bursts (frames pushed faster than real time) must not overflow the receiver: 4 MB
        // (net.core.rmem_max here) holds over a thousand bundles.
        var bufferBytes: Int32 = 4 << 20
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        let context = Unmanaged.passUnretained(self).toOpaque()
        lo_server_add_bundle_handlers(server, receiverBundleStart, receiverBundleEnd, context)
        lo_server_add_method(server, nil, nil, receiverMethod, context)
    }

    deinit {
        close(descriptor)
        lo_server_free(server)
    }

    public var target: OSCTarget { OSCTarget(host: "127.0.0.1", port: port) }

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

    /// Waits up to `milliseconds` for datagrams, hands each to liblo, then lets liblo dispatch
    /// the future-tagged messages that are now due.
    private func poll(milliseconds: Int32) {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        if Glibc.poll(&poller, 1, milliseconds) == 1 {
            while true {
                let count = datagram.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { break }
                _ = datagram.withUnsafeMutableBytes { lo_server_dispatch_data(server, $0.baseAddress, count) }
            }
        }
        _ = lo_server_recv_noblock(server, 0)
    }

    fileprivate func bundleStarted(_ tag: lo_timetag) {
        openBundle = Bundle(timeTag: OSCTimeTag(seconds: tag.sec, fraction: tag.frac))
    }

    fileprivate func bundleEnded() {
        if let openBundle { bundles.append(openBundle) }
        openBundle = nil
    }

    fileprivate func received(path: String, types: String, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, argc: Int32) {
        var values: [Double] = []
        var floats: [Float] = []
        var strings: [String] = []
        for (index, tag) in types.utf8.enumerated() where index < argc {
            let argument = argv![index]!.pointee
            switch tag {
            case UInt8(ascii: "f"): values.append(Double(argument.f)); floats.append(argument.f)
            case UInt8(ascii: "i"): values.append(Double(argument.i))
            case UInt8(ascii: "s"):
                strings.append(String(cString: UnsafeRawPointer(argv![index]!).assumingMemoryBound(to: CChar.self)))
            default: values.append(.nan)
            }
        }
        let message = Message(path: path, types: types, values: values, floats: floats, strings: strings)
        if openBundle != nil { openBundle!.messages.append(message) } else { looseMessages.append(message) }
    }
}

private func receiverBundleStart(_ time: lo_timetag, _ context: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<OSCReceiver>.fromOpaque(context!).takeUnretainedValue().bundleStarted(time)
    return 0
}

private func receiverBundleEnd(_ context: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<OSCReceiver>.fromOpaque(context!).takeUnretainedValue().bundleEnded()
    return 0
}

private func receiverMethod(_ path: UnsafePointer<CChar>?, _ types: UnsafePointer<CChar>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, _ argc: Int32, _ message: lo_message?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    Unmanaged<OSCReceiver>.fromOpaque(context!).takeUnretainedValue()
        .received(path: String(cString: path!), types: String(cString: types!), argv: argv, argc: argc)
    return 0
}

/// A UDP port on loopback where nothing listens (bound, read, closed).
public func closedUDPPort() -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            _ = bind(descriptor, $0, length)
            _ = getsockname(descriptor, $0, &length)
        }
    }
    close(descriptor)
    return UInt16(bigEndian: address.sin_port)
}

