import CLo
import Foundation
import Glibc
import Synchronization

/// A change asked for over OSC control, already checked against its range.
public enum ControlCommand: Equatable, Sendable {
    /// Forget the tempo and learn it again (like SIGUSR1).
    case relearn
    /// One tap of tap tempo; the session turns taps into a tempo.
    case tap(secondsSinceStart: Double)
    case referenceHz(Double)
    case leadMilliseconds(Double)
    case bpmRange(minimum: Double, maximum: Double)
    /// A preset by name or path.
    case preset(String)
    /// true: every output sends zeros and stops; false: resume.
    case blackout(Bool)
    /// Add the named input, or re-point it if it exists; `source` "" connects nothing.
    case addInput(name: String, source: String)
    case removeInput(name: String)
    /// Make the named input drive the tempo outputs (summary, MIDI clock, Link, WLED).
    case tempoInput(name: String)
}

/// What became of one control message, as the sender and `/status/control` are told.
public struct ControlReply: Equatable, Sendable {
    /// The address the message came to, e.g. `/spectrum/control/reference`.
    public var address: String
    public var accepted: Bool
    /// `reference 442 Hz` or `expected 415 to 466 Hz, got 500`.
    public var text: String

    public init(address: String, accepted: Bool, text: String) {
        self.address = address
        self.accepted = accepted
        self.text = text
    }

    /// One line for logs and the live summary.
    public var line: String { "\(address): " + (accepted ? text : "rejected: \(text)") }
}

/// One control address, for discovery (OSCQuery): what `ControlServer` accepts there.
public struct ControlAddress: Sendable, Equatable {
    /// The part after `<prefix>/control/`, e.g. `reference`.
    public var name: String
    /// The OSC type tags it takes ("" for none), e.g. "ff".
    public var typeTags: String
    /// Each argument's accepted range (nil: not a number, or any value).
    public var ranges: [ClosedRange<Double>?]
    /// Each argument's unit.
    public var units: [String]
    public var description: String

    /// The control addresses, in the order of docs/osc.md; the ranges are the ones `ControlServer` checks.
    public static let all: [ControlAddress] = [
        ControlAddress(name: "relearn", typeTags: "", ranges: [], units: [], description: "Forget the tempo and learn it again (like kill -USR1)."),
        ControlAddress(name: "tap", typeTags: "", ranges: [], units: [], description: "Tap tempo: from the second tap, the tempo is learnt again near the tapped one."),
        ControlAddress(name: "reference", typeTags: "f", ranges: [referenceRangeHz], units: ["Hz"], description: "Tuner reference pitch A4."),
        ControlAddress(name: "lead_ms", typeTags: "f", ranges: [leadRangeMilliseconds], units: ["ms"], description: "Report beats this much early."),
        ControlAddress(name: "bpm_range", typeTags: "ff", ranges: [minimumBPMRange, maximumBPMRange], units: ["BPM", "BPM"],
                       description: "Tempo range: minimum below maximum."),
        ControlAddress(name: "preset", typeTags: "s", ranges: [nil], units: ["name or path"], description: "Load a preset by name or path."),
        ControlAddress(name: "blackout", typeTags: "i", ranges: [0...1], units: ["1 = black out, 0 = resume"],
                       description: "1: every output gets one all-zero frame, then nothing; 0: resume."),
        ControlAddress(name: "input/add", typeTags: "ss", ranges: [nil, nil], units: ["input name", "source port or \"\""],
                       description: "Add a named input (port, analyser, <prefix>/NAME/…), or re-point an existing one to this source (with --input only)."),
        ControlAddress(name: "input/remove", typeTags: "s", ranges: [nil], units: ["input name"],
                       description: "Remove a named input: its messages stop, its port goes."),
        ControlAddress(name: "tempo_input", typeTags: "s", ranges: [nil], units: ["input name"],
                       description: "Switch the input whose tempo and beats drive the live summary, the MIDI clock, Link and WLED (with --input only)."),
    ]

    public static let referenceRangeHz: ClosedRange<Double> = 415...466
    public static let leadRangeMilliseconds: ClosedRange<Double> = 0...500
    public static let minimumBPMRange: ClosedRange<Double> = 30...300
    public static let maximumBPMRange: ClosedRange<Double> = 40...400
}

/// Counters of the control input; any thread may read them.
public struct ControlStatistics: Equatable, Sendable {
    /// Datagrams read from the socket.
    public var received = 0
    /// Commands applied.
    public var accepted = 0
    /// Well-formed messages to a control address with a value out of range, or that the
    /// session could not apply (e.g. an unknown preset).
    public var rejected = 0
    /// Datagrams that are not OSC (liblo could not parse them).
    public var malformed = 0
    /// Datagrams larger than `ControlServer.maximumDatagramBytes`.
    public var oversized = 0
    /// Well-formed messages to an address that is not a control address (or with other types).
    public var unknown = 0
}

/// The OSC control input, `--control [HOST:]PORT`: a UDP socket on HOST (127.0.0.1 unless
/// given) read by its own thread; each datagram is parsed by liblo (bundles included), checked,
/// and handed to `apply` as a `ControlCommand`. Every message to a control address is answered
/// (to the sender, and through `onReply`) with what it changed or why it changed nothing.
/// Malformed, oversized and unknown datagrams are counted and dropped.
///
/// Addresses, under `prefix`: `/control/relearn`, `/control/tap`, `/control/reference f`
/// (415–466 Hz), `/control/lead_ms f` (0–500), `/control/bpm_range ff` (30–300, 40–400, min <
/// max), `/control/preset s`, `/control/blackout i` (0 or 1), `/control/input/add ss`,
/// `/control/input/remove s`, `/control/tempo_input s`. Numbers may come as f, i, d or h.
///
/// Never on the JACK thread; `apply` runs on the control thread.
public final class ControlServer: @unchecked Sendable {
    public static let maximumDatagramBytes = 4096
    public let host: String
    public let port: UInt16
    public let prefix: String

    private let descriptor: Int32
    private let parser: lo_server
    private let apply: @Sendable (ControlCommand) -> Result<String, ControlRejection>
    private let onReply: @Sendable (ControlReply) -> Void
    private let counters = Mutex(ControlStatistics())
    private let stopRequested = Atomic<Bool>(false)
    private var thread: Thread?
    private let started = Date()
    /// The sender of the datagram being dispatched (for replies); control thread only.
    fileprivate var currentSender = sockaddr_storage()
    fileprivate var currentSenderLength: socklen_t = 0

    /// Binds the socket (throws one line naming `--control` and the cause). `apply` changes the
    /// session and says what it did, or why not; `onReply` sees every answer.
    public init(host: String = "127.0.0.1", port: UInt16, prefix: String,
                apply: @escaping @Sendable (ControlCommand) -> Result<String, ControlRejection>,
                onReply: @escaping @Sendable (ControlReply) -> Void = { _ in }) throws {
        self.host = host
        self.prefix = prefix
        self.apply = apply
        self.onReply = onReply
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let address = list else {
            throw ControlError("--control \(host):\(port): cannot resolve \(host) (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        let socketDescriptor = socket(address.pointee.ai_family, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard socketDescriptor >= 0 else { throw ControlError("--control: cannot open a UDP socket (\(String(cString: strerror(errno))))") }
        guard bind(socketDescriptor, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(socketDescriptor)
            throw ControlError("--control \(host):\(port): cannot listen there (\(reason))")
        }
        // Room for a burst of commands (a fader swept fast sends hundreds).
        var bufferBytes: Int32 = 1 << 20
        _ = setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVBUF, &bufferBytes, socklen_t(MemoryLayout<Int32>.size))
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) } }
        self.port = withUnsafeBytes(of: &bound) { bytes in
            // sin_port and sin6_port sit at the same offset.
            UInt16(bigEndian: bytes.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_port)!, as: UInt16.self))
        }
        descriptor = socketDescriptor
        // liblo only parses and dispatches here: its own UDP server would bind the wildcard
        // address, so it gets a Unix-domain socket that nothing sends to.
        let parserPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("spectrum-control-\(getpid())-\(UInt64.random(in: 0...UInt64.max))").path
        guard let parser = lo_server_new_with_proto(parserPath, Int32(LO_UNIX), controlParserError) else {
            close(socketDescriptor)
            throw ControlError("--control: cannot create the OSC parser")
        }
        unlink(parserPath)
        self.parser = parser
        lo_server_add_method(parser, nil, nil, controlMethod, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        stop()
        close(descriptor)
        lo_server_free(parser)
    }

    public var statistics: ControlStatistics { counters.withLock { $0 } }

    /// Starts the control thread. Idempotent.
    public func start() {
        guard thread == nil else { return }
        let thread = Thread { [self] in run() }
        thread.name = "spectrum-control"
        self.thread = thread
        thread.start()
    }

    /// Stops the control thread (within ~100 ms). Idempotent.
    public func stop() {
        guard let thread else { return }
        stopRequested.store(true, ordering: .releasing)
        while !thread.isFinished { usleep(1000) }
        self.thread = nil
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while !stopRequested.load(ordering: .acquiring) {
            guard poll(&poller, 1, 100) > 0 else { continue }
            currentSenderLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let count = withUnsafeMutablePointer(to: &currentSender) { sender in
                sender.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT), $0, &currentSenderLength)
                }
            }
            guard count >= 0 else { continue }
            counters.withLock { $0.received += 1 }
            guard count <= Self.maximumDatagramBytes else {
                counters.withLock { $0.oversized += 1 }
                continue
            }
            guard Self.prepareForDispatch(&buffer, count: count) else {
                counters.withLock { $0.malformed += 1 }
                continue
            }
            if lo_server_dispatch_data(parser, &buffer, count) < 0 {
                counters.withLock { $0.malformed += 1 }
            }
        }
    }

    /// A message, or a bundle of messages: control applies at once, so a bundle's time tag
    /// becomes "immediately" (liblo would otherwise hold a future bundle, and never release
    /// it, since this parser is never polled). Nested bundles and anything that is neither
    /// are refused (counted as malformed).
    static func prepareForDispatch(_ buffer: inout [UInt8], count: Int) -> Bool {
        guard count >= 4, count % 4 == 0 else { return false }
        if buffer[0] == UInt8(ascii: "/") { return true }
        let header = Array("#bundle".utf8) + [0]
        guard count >= 16, Array(buffer[0..<8]) == header else { return false }
        for index in 8..<15 { buffer[index] = 0 }
        buffer[15] = 1
        var offset = 16
        while offset < count {
            guard offset + 4 <= count else { return false }
            let size = Int(UInt32(buffer[offset]) << 24 | UInt32(buffer[offset + 1]) << 16 | UInt32(buffer[offset + 2]) << 8 | UInt32(buffer[offset + 3]))
            offset += 4
            guard size > 0, size % 4 == 0, size <= count - offset, buffer[offset] == UInt8(ascii: "/") else { return false }
            offset += size
        }
        return true
    }

    // MARK: Messages

    fileprivate func handle(path: String, types: String, arguments: [ControlArgument]) {
        guard path.hasPrefix(prefix + "/control/") else {
            counters.withLock { $0.unknown += 1 }
            return
        }
        let name = String(path.dropFirst(prefix.count + "/control/".count))
        let command: Result<ControlCommand, ControlRejection>
        switch name {
        case "relearn": command = .success(.relearn)
        case "tap": command = .success(.tap(secondsSinceStart: Date().timeIntervalSince(started)))
        case "reference": command = number(arguments, in: ControlAddress.referenceRangeHz, unit: "Hz").map(ControlCommand.referenceHz)
        case "lead_ms": command = number(arguments, in: ControlAddress.leadRangeMilliseconds, unit: "ms").map(ControlCommand.leadMilliseconds)
        case "bpm_range":
            if arguments.count == 2, let low = arguments[0].number, let high = arguments[1].number {
                if !ControlAddress.minimumBPMRange.contains(low) || !ControlAddress.maximumBPMRange.contains(high) || !(low < high) {
                    command = .failure(ControlRejection("expected a minimum of 30 to 300 BPM below a maximum of 40 to 400 BPM, got \(Self.format(low)) \(Self.format(high))"))
                } else {
                    command = .success(.bpmRange(minimum: low, maximum: high))
                }
            } else {
                command = .failure(ControlRejection("expected two numbers (minimum and maximum BPM), got \(Self.describe(types))"))
            }
        case "preset":
            if arguments.count == 1, case .text(let text) = arguments[0], !text.isEmpty {
                command = .success(.preset(text))
            } else {
                command = .failure(ControlRejection("expected one string (a preset name or path), got \(Self.describe(types))"))
            }
        case "input/add":
            if arguments.count == 2, case .text(let name) = arguments[0], case .text(let source) = arguments[1], !name.isEmpty {
                command = .success(.addInput(name: name, source: source))
            } else {
                command = .failure(ControlRejection("expected two strings (an input name and a source port, or \"\"), got \(Self.describe(types))"))
            }
        case "input/remove":
            if arguments.count == 1, case .text(let name) = arguments[0], !name.isEmpty {
                command = .success(.removeInput(name: name))
            } else {
                command = .failure(ControlRejection("expected one string (an input name), got \(Self.describe(types))"))
            }
        case "tempo_input":
            if arguments.count == 1, case .text(let name) = arguments[0], !name.isEmpty {
                command = .success(.tempoInput(name: name))
            } else {
                command = .failure(ControlRejection("expected one string (an input name), got \(Self.describe(types))"))
            }
        case "blackout":
            if arguments.count == 1, let value = arguments[0].number, value == 0 || value == 1 {
                command = .success(.blackout(value == 1))
            } else {
                command = .failure(ControlRejection("expected 1 (black out) or 0 (resume), got \(arguments.first?.number.map(Self.format) ?? Self.describe(types))"))
            }
        default:
            counters.withLock { $0.unknown += 1 }
            return
        }
        let reply: ControlReply
        switch command.flatMap(apply) {
        case .success(let text):
            counters.withLock { $0.accepted += 1 }
            reply = ControlReply(address: path, accepted: true, text: text)
        case .failure(let rejection):
            counters.withLock { $0.rejected += 1 }
            reply = ControlReply(address: path, accepted: false, text: rejection.description)
        }
        sendReply(reply)
        onReply(reply)
    }

    private func number(_ arguments: [ControlArgument], in range: ClosedRange<Double>, unit: String) -> Result<Double, ControlRejection> {
        guard arguments.count == 1, let value = arguments[0].number else {
            return .failure(ControlRejection("expected one number, \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)) \(unit)"))
        }
        guard range.contains(value) else {
            return .failure(ControlRejection("expected \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)) \(unit), got \(Self.format(value))"))
        }
        return .success(value)
    }

    /// Answers the sender with `<prefix>/status/control ss` (address, what happened).
    private func sendReply(_ reply: ControlReply) {
        guard currentSenderLength > 0, let message = lo_message_new() else { return }
        defer { lo_message_free(message) }
        lo_message_add_string(message, reply.address)
        lo_message_add_string(message, reply.accepted ? "ok: \(reply.text)" : "error: \(reply.text)")
        let path = prefix + "/status/control"
        var size = 0
        guard let bytes = lo_message_serialise(message, path, nil, &size) else { return }
        defer { free(bytes) }
        _ = withUnsafePointer(to: &currentSender) { sender in
            sender.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(descriptor, bytes, size, Int32(MSG_DONTWAIT), $0, currentSenderLength)
            }
        }
    }

    /// A number as the answers write it: whole numbers without decimals.
    public static func format(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : String(value)
    }

    static func describe(_ types: String) -> String {
        types.isEmpty ? "no arguments" : "types \(types)"
    }
}

/// One OSC argument of a control message.
enum ControlArgument {
    case number(Double)
    case text(String)
    case other

    var number: Double? {
        if case .number(let value) = self, value.isFinite { return value }
        return nil
    }
}

/// Why a control message changed nothing: the part after "expected" or the session's reason.
public struct ControlRejection: Error, CustomStringConvertible, Equatable, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A control input that cannot start, as one line.
public struct ControlError: Error, CustomStringConvertible, Equatable, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// liblo's catch-all method: decodes the arguments and hands them to the server.
private func controlMethod(_ path: UnsafePointer<CChar>?, _ types: UnsafePointer<CChar>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                           _ argc: Int32, _ message: lo_message?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let path, let context else { return 0 }
    let server = Unmanaged<ControlServer>.fromOpaque(context).takeUnretainedValue()
    let typeString = types.map { String(cString: $0) } ?? ""
    var arguments: [ControlArgument] = []
    for (index, tag) in typeString.utf8.enumerated() where index < Int(argc) {
        guard let argument = argv?[index] else { arguments.append(.other); continue }
        switch tag {
        case UInt8(ascii: "f"): arguments.append(.number(Double(argument.pointee.f)))
        case UInt8(ascii: "d"): arguments.append(.number(argument.pointee.d))
        case UInt8(ascii: "i"): arguments.append(.number(Double(argument.pointee.i)))
        case UInt8(ascii: "h"): arguments.append(.number(Double(argument.pointee.h)))
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            arguments.append(.text(String(cString: UnsafeRawPointer(argument).assumingMemoryBound(to: CChar.self))))
        default: arguments.append(.other)
        }
    }
    server.handle(path: String(cString: path), types: typeString, arguments: arguments)
    return 0
}

/// liblo reports parse errors here; they are counted by the dispatch result instead.
private func controlParserError(_ number: Int32, _ message: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?) {}
