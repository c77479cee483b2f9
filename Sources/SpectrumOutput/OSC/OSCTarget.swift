// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Glibc

/// A configuration error with a one-line description naming the value and what was expected,
/// e.g. `--osc "localhost": expected HOST:PORT, e.g. 127.0.0.1:9000`.
public struct OSCConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Where to send: `HOST:PORT`, where HOST is an IPv4 address, a host name or a bracketed IPv6
/// address (`[::1]:9000`). An IPv4 group in 224.0.0.0/4 (or IPv6 ff00::/8) is multicast; the
/// interface and TTL for multicast come from `PublisherConfiguration`.
///
/// Parsing does no I/O. `resolve()` looks the host up once (getaddrinfo) and keeps the numeric
/// address, so a slow or dead DNS never stalls sending.
public struct OSCTarget: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The host as written, without IPv6 brackets.
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// `HOST:PORT` as the user would write it.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Parses `HOST:PORT` / `[IPv6]:PORT`. `optionName` is only used in the error message.
    public init(parsing text: String, optionName: String = "--osc") throws {
        let quoted = "\(optionName) \"\(text)\""
        let expected = "\(quoted): expected HOST:PORT, e.g. 127.0.0.1:9000"
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw OSCConfigurationError("\(quoted): missing ] after the IPv6 address, e.g. [::1]:9000")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw OSCConfigurationError(expected) }
            portPart = rest.dropFirst()
            guard Self.isIPv6Literal(String(hostPart)) else {
                throw OSCConfigurationError("\(quoted): \"\(hostPart)\" is not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw OSCConfigurationError(expected) }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart.contains(":") {
                throw OSCConfigurationError("\(quoted): put an IPv6 address in brackets, e.g. [::1]:9000")
            }
        }
        guard !hostPart.isEmpty, !hostPart.contains(where: { $0 == " " || $0 == "\t" }) else {
            throw OSCConfigurationError(expected)
        }
        guard !portPart.isEmpty, portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber),
              let port = Int(portPart), (1...65535).contains(port)
        else {
            throw OSCConfigurationError("\(quoted): expected a port number 1–65535 after the colon, e.g. 127.0.0.1:9000")
        }
        self.init(host: String(hostPart), port: UInt16(port))
    }

    /// Looks the host up once (getaddrinfo; blocking, call at startup). Prefers an IPv4 result
    /// for names, since most OSC receivers listen on IPv4; write `[IPv6]:PORT` for IPv6.
    public func resolve(optionName: String = "--osc") throws -> ResolvedOSCTarget {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            throw OSCConfigurationError("\(optionName) \"\(description)\": cannot resolve host \"\(host)\" (\(reason))")
        }
        defer { freeaddrinfo(list) }
        var chosen = first
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let entry = candidate {
            if entry.pointee.ai_family == AF_INET { chosen = entry; break }
            candidate = entry.pointee.ai_next
        }
        var storage = sockaddr_storage()
        let length = chosen.pointee.ai_addrlen
        withUnsafeMutableBytes(of: &storage) { bytes in
            bytes.copyMemory(from: UnsafeRawBufferPointer(start: chosen.pointee.ai_addr, count: Int(length)))
        }
        return ResolvedOSCTarget(target: self, storage: storage, length: length)
    }

    static func isIPv6Literal(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}

/// A target with its numeric socket address, resolved once at startup.
public struct ResolvedOSCTarget: @unchecked Sendable, CustomStringConvertible {
    public let target: OSCTarget
    let storage: sockaddr_storage
    let length: socklen_t

    init(target: OSCTarget, storage: sockaddr_storage, length: socklen_t) {
        self.target = target
        self.storage = storage
        self.length = length
    }

    /// AF_INET or AF_INET6.
    public var family: Int32 { Int32(storage.ss_family) }

    /// The numeric address, e.g. "127.0.0.1" or "ff02::1".
    public var numericHost: String {
        var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var copy = storage
        let status = withUnsafePointer(to: &copy) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo($0, length, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST)
            }
        }
        guard status == 0 else { return target.host }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True for IPv4 224.0.0.0/4 and IPv6 ff00::/8.
    public var isMulticast: Bool {
        var copy = storage
        return withUnsafeBytes(of: &copy) { bytes in
            if family == AF_INET {
                let address = bytes.load(fromByteOffset: MemoryLayout<sockaddr_in>.offset(of: \.sin_addr)!, as: in_addr.self)
                let firstOctet = UInt8(truncatingIfNeeded: UInt32(bigEndian: address.s_addr) >> 24)
                return firstOctet & 0xF0 == 0xE0
            }
            if family == AF_INET6 {
                return bytes[MemoryLayout<sockaddr_in6>.offset(of: \.sin6_addr)!] == 0xFF
            }
            return false
        }
    }

    public var description: String {
        target.host == numericHost ? target.description : "\(target) (\(numericHost))"
    }
}
