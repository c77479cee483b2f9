// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc
import Synchronization

/// A stand-in for nsmd (New Session Manager, API 1.1.2), which Debian 12 does not package: it
/// takes one client's announce and drives it (open, save), and is as strict as nsmd's method
/// table: every message's address and types must be one nsmd accepts from a client, and it must
/// come from the port the client announced from. Anything else is a `violations` entry (a test
/// asserts there are none). Parses and builds messages with liblo, as nsmd does, independently
/// of the client's own OSC code.
///
/// Binds 127.0.0.1 only. A thread receives; every wait has a timeout. For tests.
public final class FakeNSMServer: @unchecked Sendable {
    public struct Message: Equatable, Sendable {
        public var address: String
        public var types: String
        public var strings: [String]
        public var ints: [Int32]
        public var senderPort: UInt16
    }

    /// `NSM_URL` for the client.
    public var url: String { "osc.udp://127.0.0.1:\(port)/" }
    public let port: UInt16
    private let descriptor: Int32
    private let state = Mutex<(messages: [Message], violations: [String], clientPort: UInt16?)>(([], [], nil))
    private let stopRequested = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// What nsmd accepts from a client: address → type tags (nsmd 1.6, `nsmd.cpp`'s methods).
    static let accepted: [String: String] = [
        "/nsm/server/announce": "sssiii",
        "/reply": "ss",
        "/error": "sis",
        "/nsm/client/is_dirty": "",
        "/nsm/client/is_clean": "",
        "/nsm/client/message": "is",
        "/nsm/client/progress": "f",
        "/nsm/client/label": "s",
    ]

    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw RigPeerError(description: "fake NSM: socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else {
            close(descriptor)
            throw RigPeerError(description: "fake NSM: bind 127.0.0.1: \(String(cString: strerror(errno)))")
        }
        self.descriptor = descriptor
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in
            receiveUntilStopped()
            finished.signal()
        }
        thread.name = "fake-nsmd"
        thread.start()
    }

    deinit {
        stop()
        close(descriptor)
    }

    public func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
    }

    public var messages: [Message] { state.withLock { $0.messages } }
    public var violations: [String] { state.withLock { $0.violations } }
    /// The port the client announced from (where commands go).
    public var clientPort: UInt16? { state.withLock { $0.clientPort } }

    /// Waits until a message to `address` (the `n`-th, counting from 1) has come; nil on timeout.
    @discardableResult
    public func waitFor(_ address: String, count: Int = 1, timeoutSeconds: Double = 10, where matches: (Message) -> Bool = { _ in true }) -> Message? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        repeat {
            let found = messages.filter { $0.address == address && matches($0) }
            if found.count >= count { return found[count - 1] }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    /// `/nsm/client/open s:path s:display_name s:client_id`.
    public func open(path: String, displayName: String, clientID: String) {
        send("/nsm/client/open", strings: [path, displayName, clientID])
    }

    /// `/nsm/client/save`.
    public func save() { send("/nsm/client/save", strings: []) }

    /// The announce refused: `/error "/nsm/server/announce" i s`.
    public func refuseAnnounce(code: Int32 = -2, message: String = "incompatible API version") {
        send("/error", strings: ["/nsm/server/announce"], int: code, trailing: message)
    }

    // MARK: Internals

    private func send(_ address: String, strings: [String], int: Int32? = nil, trailing: String? = nil) {
        guard let port = clientPort, let message = lo_message_new() else {
            record(violation: "\(address) not sent: no client has announced")
            return
        }
        defer { lo_message_free(message) }
        for text in strings { lo_message_add_string(message, text) }
        if let int { lo_message_add_int32(message, int) }
        if let trailing { lo_message_add_string(message, trailing) }
        var size = 0
        guard let bytes = lo_message_serialise(message, address, nil, &size) else { return }
        defer { free(bytes) }
        var destination = sockaddr_in()
        destination.sin_family = sa_family_t(AF_INET)
        destination.sin_addr.s_addr = inet_addr("127.0.0.1")
        destination.sin_port = port.bigEndian
        _ = withUnsafePointer(to: &destination) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, bytes, size, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    private func record(violation: String) { state.withLock { $0.violations.append(violation) } }

    private func receiveUntilStopped() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while !stopRequested.load(ordering: .acquiring) {
            guard poll(&poller, 1, 50) > 0 else { continue }
            var sender = sockaddr_in()
            var senderLength = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &sender) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT), $0, &senderLength) }
            }
            guard count > 0 else { continue }
            handle(Array(buffer[..<count]), senderPort: UInt16(bigEndian: sender.sin_port))
        }
    }

    private func handle(_ bytes: [UInt8], senderPort: UInt16) {
        var result: Int32 = 0
        var copy = bytes
        guard let path = copy.withUnsafeMutableBytes({ lo_get_path($0.baseAddress, $0.count) }).map({ String(cString: $0) }),
              let message = copy.withUnsafeMutableBytes({ lo_message_deserialise($0.baseAddress, $0.count, &result) }) else {
            record(violation: "a datagram of \(bytes.count) bytes that is not an OSC message (liblo error \(result))")
            return
        }
        defer { lo_message_free(message) }
        let types = lo_message_get_types(message).map { String(cString: $0) } ?? ""
        var strings: [String] = [], ints: [Int32] = []
        if let arguments = lo_message_get_argv(message) {
            for (index, tag) in types.enumerated() {
                guard let argument = arguments[index] else { continue }
                switch tag {
                case "s": strings.append(String(cString: UnsafeRawPointer(argument).assumingMemoryBound(to: CChar.self)))
                case "i": ints.append(argument.pointee.i)
                default: break
                }
            }
        }
        let received = Message(address: path, types: types, strings: strings, ints: ints, senderPort: senderPort)
        state.withLock { $0.messages.append(received) }
        check(received)
    }

    /// nsmd's rules for one message from the client.
    private func check(_ message: Message) {
        guard let types = Self.accepted[message.address] else {
            record(violation: "\(message.address): not an address nsmd accepts from a client")
            return
        }
        guard message.types == types else {
            record(violation: "\(message.address): types \"\(message.types)\", nsmd expects \"\(types)\"")
            return
        }
        let announcedFrom = state.withLock { $0.clientPort }
        if message.address == "/nsm/server/announce" {
            guard announcedFrom == nil else { return record(violation: "a second announce") }
            guard message.ints[0] == 1 else { return record(violation: "announce: API major \(message.ints[0]), nsmd speaks 1") }
            state.withLock { $0.clientPort = message.senderPort }
            send("/reply", strings: ["/nsm/server/announce", "hi", "Fake NSM", ":server-control:"])
            return
        }
        guard let announcedFrom else { return record(violation: "\(message.address) before the announce") }
        guard message.senderPort == announcedFrom else {
            return record(violation: "\(message.address) from port \(message.senderPort), the client announced from \(announcedFrom)")
        }
        if message.address == "/reply" || message.address == "/error",
           !["/nsm/client/open", "/nsm/client/save"].contains(message.strings[0]) {
            record(violation: "\(message.address) to \"\(message.strings[0])\": nsmd expects replies to /nsm/client/open or /nsm/client/save")
        }
    }
}
