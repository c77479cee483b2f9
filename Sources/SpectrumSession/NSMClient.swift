import Foundation
import Glibc
import Synchronization

/// Where the session manager listens: `NSM_URL`, e.g. `osc.udp://127.0.0.1:17311/`.
public struct NSMURL: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var description: String { "osc.udp://\(host):\(port)/" }

    /// nil when `NSM_URL` is unset or empty (no session manager); throws one line when it is
    /// not an `osc.udp://HOST:PORT/` URL.
    public static func from(environment: [String: String]) throws(NSMError) -> NSMURL? {
        guard let text = environment["NSM_URL"], !text.isEmpty else { return nil }
        let scheme = "osc.udp://"
        var rest = Substring(text)
        guard rest.hasPrefix(scheme) else { throw NSMError("NSM_URL \"\(text)\": expected osc.udp://HOST:PORT/") }
        rest = rest.dropFirst(scheme.count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard let colon = rest.lastIndex(of: ":"), let port = UInt16(rest[rest.index(after: colon)...]), port > 0,
              !rest[..<colon].isEmpty, !rest[..<colon].contains("/") else {
            throw NSMError("NSM_URL \"\(text)\": expected osc.udp://HOST:PORT/ with a port from 1 to 65535")
        }
        return NSMURL(host: String(rest[..<colon]), port: port)
    }
}

/// A failure to talk to the session manager, in one line.
public struct NSMError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What `/nsm/client/open` gives: where to keep the state, the name shown, and the client id
/// (the exact JACK client name to use).
public struct NSMOpen: Equatable, Sendable {
    public var path: String
    public var displayName: String
    public var clientID: String
}

/// NSM's error codes (API 1.1.2), for `/error` replies.
public enum NSMErrorCode: Int32, Sendable {
    case general = -1
    case incompatibleAPI = -2
    case blacklisted = -3
    case launchFailed = -4
    case noSuchFile = -5
    case noSessionOpen = -6
    case unsavedChanges = -7
    case notNow = -8
    case badProject = -9
    case createFailed = -10
    case saveFailed = -11
}

/// Why a save failed, for `/error "/nsm/client/save"`.
public struct NSMFailure: Error, Equatable, Sendable {
    public var code: NSMErrorCode
    public var message: String
    public init(_ code: NSMErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}

/// A client of the New Session Manager (API 1.1.2). One UDP socket, used to announce and to
/// answer, so the server's replies and commands come back to the port it saw: bound to
/// 127.0.0.1 when the server is on loopback, else to every address (port chosen by the kernel).
///
/// The order a client must follow: `announce`, `waitForOpen` (open no JACK client before it),
/// set up under the given client id and path, `replyOpen` or `errorOpen`, then `start` to
/// answer `save` while running; `markDirty`/`markClean` as settings change and are saved.
/// Quitting is SIGTERM (the host's business). Thread-safe; not for the real-time thread.
public final class NSMClient: @unchecked Sendable {
    public let url: NSMURL
    private let descriptor: Int32
    private let server: sockaddr_storage
    private let serverLength: socklen_t
    private let stopRequested = Atomic<Bool>(false)
    private let listenerFinished = DispatchSemaphore(value: 0)
    private let listening = Atomic<Bool>(false)
    private let state = Mutex(State())

    private struct State {
        var serverName: String?
        var serverCapabilities: String?
        var isDirty = false
        /// Messages the client did not expect (counted, ignored).
        var unknownMessages = 0
    }

    /// The server's name and capabilities from its announce reply.
    public var serverName: String? { state.withLock { $0.serverName } }
    public var serverCapabilities: String? { state.withLock { $0.serverCapabilities } }
    public var unknownMessages: Int { state.withLock { $0.unknownMessages } }

    public init(url: NSMURL) throws(NSMError) {
        self.url = url
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard status == 0, let first = list else {
            throw NSMError("NSM_URL \(url): cannot resolve \(url.host) (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var server = sockaddr_storage()
        memcpy(&server, first.pointee.ai_addr, Int(first.pointee.ai_addrlen))
        self.server = server
        serverLength = first.pointee.ai_addrlen
        let socketDescriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard socketDescriptor >= 0 else { throw NSMError("NSM: cannot open a UDP socket (\(String(cString: strerror(errno))))") }
        let serverAddress = first.pointee.ai_addr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
        let isLoopback = UInt32(bigEndian: serverAddress) >> 24 == 127
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = isLoopback ? inet_addr("127.0.0.1") : INADDR_ANY
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(socketDescriptor)
            throw NSMError("NSM: cannot bind a UDP socket (\(reason))")
        }
        descriptor = socketDescriptor
    }

    deinit {
        stop()
        close(descriptor)
    }

    /// The local port the server sees (for tests and logs).
    public var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) } }
        return UInt16(bigEndian: address.sin_port)
    }

    /// `/nsm/server/announce sssiii`: application name, capabilities (e.g. `:dirty:message:`),
    /// executable, API 1.2, process id.
    public func announce(appName: String, capabilities: String, executable: String, pid: Int32 = getpid()) throws(NSMError) {
        try send(OSCDatagram("/nsm/server/announce", [.string(appName), .string(capabilities), .string(executable),
                                                      .int(Self.apiMajor), .int(Self.apiMinor), .int(pid)]))
    }

    public static let apiMajor: Int32 = 1
    public static let apiMinor: Int32 = 2

    /// Waits for `/nsm/client/open sss` (taking the announce reply on the way). Throws one line
    /// when the server refuses the announce or nothing comes within `timeoutSeconds`.
    public func waitForOpen(timeoutSeconds: Double) throws(NSMError) -> NSMOpen {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            guard let message = receive(timeoutMilliseconds: Int32(max(1, min(100, deadline.timeIntervalSinceNow * 1000)))) else { continue }
            switch (message.address, message.typeTags) {
            case ("/reply", "ssss") where message.string(0) == "/nsm/server/announce":
                state.withLock {
                    $0.serverName = message.string(2)
                    $0.serverCapabilities = message.string(3)
                }
            case ("/error", "sis") where message.string(0) == "/nsm/server/announce":
                throw NSMError("NSM server at \(url) refused the announce (error \(message.int(1)!)): \(message.string(2)!)")
            case ("/nsm/client/open", "sss"):
                return NSMOpen(path: message.string(0)!, displayName: message.string(1)!, clientID: message.string(2)!)
            default:
                state.withLock { $0.unknownMessages += 1 }
            }
        }
        throw NSMError("NSM_URL \(url): no /nsm/client/open came within \(Int(timeoutSeconds)) s of the announce")
    }

    /// `/reply "/nsm/client/open" s`: the session may go on.
    public func replyOpen(message: String) throws(NSMError) {
        try send(OSCDatagram("/reply", [.string("/nsm/client/open"), .string(message)]))
    }

    /// `/error "/nsm/client/open" i s`: this client cannot open the session.
    public func errorOpen(code: NSMErrorCode, message: String) throws(NSMError) {
        try send(OSCDatagram("/error", [.string("/nsm/client/open"), .int(code.rawValue), .string(message)]))
    }

    /// Starts the listening thread: `/nsm/client/save` calls `onSave` and is answered with
    /// `/reply` or `/error`; `session_is_loaded` is taken; anything else is counted. Idempotent.
    public func start(onSave: @escaping @Sendable () -> Result<String, NSMFailure>) {
        guard !listening.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            while !stopRequested.load(ordering: .acquiring) {
                guard let message = receive(timeoutMilliseconds: 100) else { continue }
                switch (message.address, message.typeTags) {
                case ("/nsm/client/save", ""):
                    switch onSave() {
                    case .success(let text):
                        try? send(OSCDatagram("/reply", [.string("/nsm/client/save"), .string(text)]))
                        setDirty(false)
                    case .failure(let failure):
                        try? send(OSCDatagram("/error", [.string("/nsm/client/save"), .int(failure.code.rawValue), .string(failure.message)]))
                    }
                case ("/nsm/client/session_is_loaded", ""):
                    break
                default:
                    state.withLock { $0.unknownMessages += 1 }
                }
            }
            listenerFinished.signal()
        }
        thread.name = "spectrum-nsm"
        thread.start()
    }

    /// Stops the listening thread (within ~100 ms). Idempotent.
    public func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if listening.load(ordering: .acquiring) { listenerFinished.wait() }
    }

    /// Settings changed since the last save: `/nsm/client/is_dirty`, once per change of state.
    public func markDirty() { setDirty(true) }

    /// Everything is saved: `/nsm/client/is_clean`, once per change of state.
    public func markClean() { setDirty(false) }

    /// `/nsm/client/message is`: a line for the session manager's log (priority 0–3).
    public func message(priority: Int32, text: String) {
        try? send(OSCDatagram("/nsm/client/message", [.int(priority), .string(text)]))
    }

    private func setDirty(_ dirty: Bool) {
        let changed = state.withLock { state in
            defer { state.isDirty = dirty }
            return state.isDirty != dirty
        }
        if changed { try? send(OSCDatagram(dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean")) }
    }

    func send(_ message: OSCDatagram) throws(NSMError) {
        let bytes = message.bytes
        var server = self.server
        let sent = withUnsafePointer(to: &server) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, bytes, bytes.count, 0, $0, serverLength) }
        }
        guard sent == bytes.count else {
            throw NSMError("NSM: cannot send \(message.address) to \(url) (\(String(cString: strerror(errno))))")
        }
    }

    /// The next well-formed message from the server, or nil after `timeoutMilliseconds`.
    /// Datagrams from other senders and malformed ones are dropped.
    private func receive(timeoutMilliseconds: Int32) -> OSCDatagram? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMilliseconds) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var sender = sockaddr_in()
        var senderLength = socklen_t(MemoryLayout<sockaddr_in>.size)
        let count = withUnsafeMutablePointer(to: &sender) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT), $0, &senderLength) }
        }
        guard count > 0 else { return nil }
        let expected = withUnsafeBytes(of: server) { $0.load(as: sockaddr_in.self) }
        guard sender.sin_port == expected.sin_port, sender.sin_addr.s_addr == expected.sin_addr.s_addr,
              let message = OSCDatagram(bytes: Array(buffer[..<count])) else {
            state.withLock { $0.unknownMessages += 1 }
            return nil
        }
        return message
    }
}
