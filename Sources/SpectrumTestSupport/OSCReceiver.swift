import CLo
import Foundation
import Glibc
import SpectrumDSP
import SpectrumOutput

/// A real OSC receiver on loopback: a liblo server on a free UDP port, with bundle handlers to
/// group messages per bundle and a catch-all method handler to decode them.
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
    public private(set) var bundles: [Bundle] = []
    /// Messages that arrived outside any bundle.
    public private(set) var looseMessages: [Message] = []
    private var openBundle: Bundle?

    public init() {
        server = lo_server_new_with_proto(nil, Int32(LO_UDP), nil)!
        port = UInt16(lo_server_get_port(server))
        // Bursts (frames pushed faster than real time) must not overflow the receiver: 4 MB
        // (net.core.rmem_max here) holds over a thousand bundles.
        var bufferBytes: Int32 = 4 << 20
        _ = setsockopt(lo_server_get_socket_fd(server), SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        let context = Unmanaged.passUnretained(self).toOpaque()
        lo_server_add_bundle_handlers(server, receiverBundleStart, receiverBundleEnd, context)
        lo_server_add_method(server, nil, nil, receiverMethod, context)
    }

    deinit { lo_server_free(server) }

    public var target: OSCTarget { OSCTarget(host: "127.0.0.1", port: port) }

    /// Receives until `done()` holds or `timeoutSeconds` pass.
    public func receive(timeoutSeconds: Double = 5, until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while !done(), Date() < deadline {
            _ = lo_server_recv_noblock(server, 5)
        }
    }

    /// Receives whatever arrives during `seconds`.
    public func drain(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline { _ = lo_server_recv_noblock(server, 5) }
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

