// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Glibc

/// Non-blocking UDP sockets, one per target, that send the bytes liblo serialised.
///
/// Why not `lo_address` + `lo_send_bundle`: Debian's liblo 0.31 is built without IPv6
/// ("Address family for hostname not supported"), its UDP sockets block, and it resolves host
/// names when the address is first used. Owning the socket gives IPv6, `MSG_DONTWAIT` (a full
/// send buffer drops a packet instead of stalling the publisher), per-target errno, and the
/// same multicast options liblo sets (`IP_MULTICAST_IF`/`IP_MULTICAST_TTL`, as
/// `lo_address_set_iface`/`lo_address_set_ttl` do).
///
/// Owned by the publisher thread after `init`; not thread-safe.
final class UDPTransport {
    private struct Endpoint {
        var resolved: ResolvedOSCTarget
        var socket: Int32
    }

    private var endpoints: [Endpoint] = []

    /// Opens one socket per target and applies the multicast options. Throws a one-line error
    /// (and closes what it opened) when a socket or an option fails.
    init(targets: [ResolvedOSCTarget], multicastInterface: String?, multicastTTL: Int) throws {
        do {
            for target in targets {
                let descriptor = socket(target.family, Int32(SOCK_DGRAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
                guard descriptor >= 0 else {
                    throw OSCConfigurationError("--osc \"\(target.target)\": cannot open a UDP socket (\(Self.errorText(errno)))")
                }
                endpoints.append(Endpoint(resolved: target, socket: descriptor))
                var on: Int32 = 1
                _ = setsockopt(descriptor, SOL_SOCKET, SO_BROADCAST, &on, socklen_t(MemoryLayout<Int32>.size))
                if target.isMulticast {
                    try Self.configureMulticast(descriptor, target: target, interface: multicastInterface, ttl: multicastTTL)
                }
                // Connected, so that ICMP "port unreachable" comes back as ECONNREFUSED on the
                // next send and is counted: "nothing listens at HOST:PORT" becomes visible.
                let connected = target.withSocketAddress { address, length in Glibc.connect(descriptor, address, length) }
                guard connected == 0 else {
                    throw OSCConfigurationError("--osc \"\(target.target)\": cannot reach it (\(Self.errorText(errno)))")
                }
            }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    func close() {
        for endpoint in endpoints { _ = Glibc.close(endpoint.socket) }
        endpoints.removeAll()
    }

    var count: Int { endpoints.count }

    /// Sends `bytes` to target `index` without blocking. Returns 0 on success, else errno
    /// (EAGAIN when the socket buffer is full, ECONNREFUSED, ENETUNREACH, …).
    func send(_ bytes: UnsafeRawBufferPointer, to index: Int) -> Int32 {
        let endpoint = endpoints[index]
        let sent = Glibc.send(endpoint.socket, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
        if sent < 0 { return errno }
        return sent == bytes.count ? 0 : EMSGSIZE
    }

    private static func configureMulticast(_ descriptor: Int32, target: ResolvedOSCTarget, interface: String?, ttl: Int) throws {
        let where_ = "--osc \"\(target.target)\""
        if target.family == AF_INET {
            var hops = UInt8(clamping: ttl)
            guard setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_TTL, &hops, 1) == 0 else {
                throw OSCConfigurationError("\(where_): cannot set the multicast TTL to \(ttl) (\(errorText(errno)))")
            }
            var loop: UInt8 = 1
            _ = setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, &loop, 1)
            if let interface {
                var request = ip_mreqn()
                var address = in_addr()
                if inet_pton(AF_INET, interface, &address) == 1 {
                    request.imr_address = address
                } else {
                    let index = if_nametoindex(interface)
                    guard index != 0 else {
                        throw OSCConfigurationError("--osc-interface \"\(interface)\": no such network interface (expected a name such as eth0 or an IPv4 address of this host)")
                    }
                    request.imr_ifindex = Int32(index)
                }
                guard setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_IF, &request, socklen_t(MemoryLayout<ip_mreqn>.size)) == 0 else {
                    throw OSCConfigurationError("--osc-interface \"\(interface)\": cannot send multicast through it (\(errorText(errno)))")
                }
            }
        } else {
            var hops = Int32(ttl)
            guard setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_MULTICAST_HOPS, &hops, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw OSCConfigurationError("\(where_): cannot set the multicast hop limit to \(ttl) (\(errorText(errno)))")
            }
            if let interface {
                var index = UInt32(if_nametoindex(interface))
                guard index != 0 else {
                    throw OSCConfigurationError("--osc-interface \"\(interface)\": no such network interface (IPv6 multicast needs an interface name such as eth0)")
                }
                guard setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_MULTICAST_IF, &index, socklen_t(MemoryLayout<UInt32>.size)) == 0 else {
                    throw OSCConfigurationError("--osc-interface \"\(interface)\": cannot send multicast through it (\(errorText(errno)))")
                }
            }
        }
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}

extension ResolvedOSCTarget {
    func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
