import Glibc
import Testing
@testable import SpectrumOutput

@Suite struct OSCTargetTests {
    @Test(arguments: [
        ("127.0.0.1:9000", "127.0.0.1", 9000),
        ("localhost:1", "localhost", 1),
        ("lights.local:65535", "lights.local", 65535),
        ("[::1]:9000", "::1", 9000),
        ("[ff02::1]:7000", "ff02::1", 7000),
        ("239.255.0.1:7000", "239.255.0.1", 7000),
    ])
    func parsesHostAndPort(text: String, host: String, port: Int) throws {
        let target = try OSCTarget(parsing: text)
        #expect(target.host == host)
        #expect(Int(target.port) == port)
        #expect(target.description == text)
    }

    @Test(arguments: [
        ("localhost", #"--osc "localhost": expected HOST:PORT, e.g. 127.0.0.1:9000"#),
        (":9000", #"--osc ":9000": expected HOST:PORT, e.g. 127.0.0.1:9000"#),
        ("", #"--osc "": expected HOST:PORT, e.g. 127.0.0.1:9000"#),
        ("host:", #"--osc "host:": expected a port number 1–65535 after the colon, e.g. 127.0.0.1:9000"#),
        ("host:0", #"--osc "host:0": expected a port number 1–65535 after the colon, e.g. 127.0.0.1:9000"#),
        ("host:65536", #"--osc "host:65536": expected a port number 1–65535 after the colon, e.g. 127.0.0.1:9000"#),
        ("host:90a", #"--osc "host:90a": expected a port number 1–65535 after the colon, e.g. 127.0.0.1:9000"#),
        ("host:-1", #"--osc "host:-1": expected a port number 1–65535 after the colon, e.g. 127.0.0.1:9000"#),
        ("::1:9000", #"--osc "::1:9000": put an IPv6 address in brackets, e.g. [::1]:9000"#),
        ("[::1:9000", #"--osc "[::1:9000": missing ] after the IPv6 address, e.g. [::1]:9000"#),
        ("[::1]9000", #"--osc "[::1]9000": expected HOST:PORT, e.g. 127.0.0.1:9000"#),
        ("[lights]:9000", #"--osc "[lights]:9000": "lights" is not an IPv6 address"#),
        ("my host:9000", #"--osc "my host:9000": expected HOST:PORT, e.g. 127.0.0.1:9000"#),
    ])
    func malformedTargetsGiveOneLineErrors(text: String, expected: String) {
        #expect(throws: OSCConfigurationError(expected)) { try OSCTarget(parsing: text) }
        #expect(!expected.contains("\n"))
    }

    @Test func resolvesNamesOnceToNumericAddresses() throws {
        let local = try OSCTarget(parsing: "localhost:9000").resolve()
        #expect(local.numericHost == "127.0.0.1")
        #expect(local.family == AF_INET)
        #expect(!local.isMulticast)
        let v6 = try OSCTarget(parsing: "[::1]:9000").resolve()
        #expect(v6.numericHost == "::1")
        #expect(v6.family == AF_INET6)
    }

    @Test func recognisesMulticastGroups() throws {
        #expect(try OSCTarget(parsing: "224.0.0.1:9000").resolve().isMulticast)
        #expect(try OSCTarget(parsing: "239.255.255.250:9000").resolve().isMulticast)
        #expect(try !OSCTarget(parsing: "240.0.0.1:9000").resolve().isMulticast)
        #expect(try !OSCTarget(parsing: "223.255.255.255:9000").resolve().isMulticast)
        #expect(try OSCTarget(parsing: "[ff02::1]:9000").resolve().isMulticast)
    }

    @Test func unresolvableHostIsAOneLineError() {
        do {
            _ = try OSCTarget(parsing: "no-such-host.invalid:9000").resolve()
            Issue.record("resolved an .invalid name")
        } catch {
            let text = String(describing: error)
            #expect(text.hasPrefix(#"--osc "no-such-host.invalid:9000": cannot resolve host "no-such-host.invalid" ("#))
            #expect(!text.contains("\n"))
        }
    }

    @Test func configurationErrorsNameTheOption() {
        var configuration = PublisherConfiguration(targets: [])
        configuration.prefix = "spectrum"
        #expect(throws: OSCConfigurationError(#"--prefix "spectrum": expected an OSC address such as /spectrum or /kick (starts with /, parts of letters, digits, _ - .)"#)) {
            try configuration.validate()
        }
        configuration.prefix = "/kick"
        configuration.groupCount = 65
        #expect(throws: OSCConfigurationError("--groups 65: expected a number of groups from 1 to 64")) { try configuration.validate() }
        configuration.groupCount = 64
        configuration.multicastTTL = 0
        #expect(throws: OSCConfigurationError("--osc-ttl 0: expected a TTL from 1 to 255")) { try configuration.validate() }
        configuration.multicastTTL = 1
        #expect(throws: Never.self) { try configuration.validate() }
    }

    @Test func unknownMulticastInterfaceIsAOneLineError() {
        var configuration = PublisherConfiguration(targets: [OSCTarget(host: "239.255.0.1", port: 9000)])
        configuration.multicastInterface = "nosuchif0"
        let ring = FrameRingHolder()
        #expect(throws: OSCConfigurationError("--osc-interface \"nosuchif0\": no such network interface (expected a name such as eth0 or an IPv4 address of this host)")) {
            _ = try FramePublisher(configuration: configuration, ring: ring.ring)
        }
    }

    @Test(arguments: ["/spectrum", "/kick", "/a/b_c-d.e", "/x1"])
    func acceptsPrefixes(prefix: String) { #expect(OSCAddressSpace.isValidPrefix(prefix)) }

    @Test(arguments: ["", "/", "spectrum", "/spectrum/", "/a//b", "/a b", "/a#", "/a*", "/a,b", "/a?", "/a[1]", "/a{b}", "/é"])
    func rejectsPrefixes(prefix: String) { #expect(!OSCAddressSpace.isValidPrefix(prefix)) }
}

import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// Owns a ring for one test and frees it.
final class FrameRingHolder {
    let ring: FrameRing
    init(capacity: Int = 64) { ring = FrameRing(capacity: capacity) }
    deinit { ring.deallocate() }
}
