import CLo
import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// The rig-peer harnesses against the real programs: olad and QLC+ inside a private network
/// namespace, fed OSC from inside it with liblo, read back through their own HTTP and WebSocket
/// APIs. Serialized: each test starts a daemon, and the machine has two cores.
@Suite(.serialized) struct RigPeerTests {
    @Test(.enabled(if: PrivateOLA.isInstalled, "olad is not installed (Debian package ola; scripts/install-deps)"),
          .enabled(if: PrivateNetwork.unavailableReason == nil, "needs root, unshare, nsenter and ip for a private network namespace"))
    func olaSetsTheSlotAnOSCFloatAddresses() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let ola = try PrivateOLA(network: network)
        defer { ola.stop() }

        let slots = try sendUntil(
            { try sendOSC("\(ola.oscAddress)/3", 0.5, port: ola.oscPort, in: network) },
            read: { try ola.dmx() }, accept: { $0.count >= 3 && $0[2] == 127 })
        #expect(slots.count >= 3 && slots[2] == 127, "0.5 × 255, truncated")
        #expect(slots.prefix(2).allSatisfy { $0 == 0 }, "slots 1 and 2 untouched")
    }

    @Test(.enabled(if: PrivateQLCPlus.isInstalled, "qlcplus is not installed (Debian package qlcplus; scripts/install-deps)"),
          .enabled(if: PrivateNetwork.unavailableReason == nil, "needs root, unshare, nsenter and ip for a private network namespace"))
    func qlcPlusSlidersFollowTheirOSCAddresses() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let qlc = try PrivateQLCPlus(network: network, oscAddresses: ["/spectrum/level", "/spectrum/beat"])
        defer { qlc.stop() }
        #expect(try qlc.sliderValue(oscAddress: "/spectrum/level") == 0)
        #expect(try qlc.sliderValue(oscAddress: "/spectrum/beat") == 0)

        func drive(_ address: String, to value: Float, expecting expected: Int) throws {
            let read = try sendUntil(
                { try sendOSC(address, value, port: qlc.oscPort, in: network) },
                read: { try qlc.sliderValue(oscAddress: address) }, accept: { $0 == expected })
            #expect(read == expected, "\(address) \(value)")
        }
        try drive("/spectrum/level", to: 0.5, expecting: 127)
        try drive("/spectrum/beat", to: 1, expecting: 255)
        #expect(try qlc.sliderValue(oscAddress: "/spectrum/level") == 127, "each address moves only its own slider")
        // A trigger latches the slider until it is sent back to 0.
        try drive("/spectrum/beat", to: 0, expecting: 0)
        try drive("/spectrum/level", to: 0, expecting: 0)
    }

    @Test func qlcPlusInputChannelIsQtsISO3309Checksum() {
        // The CRC-16/X.25 check value, and a path whose channel QLC+ 4.12.6 itself matched.
        #expect(PrivateQLCPlus.inputChannel(oscAddress: "123456789") == 0x906E)
        #expect(PrivateQLCPlus.inputChannel(oscAddress: "/spectrum/level") == 49295)
    }
}

/// Sends one float message to 127.0.0.1:`port` from inside `network` (liblo opens its socket on
/// the first send, on the network's thread, so it lives in the namespace).
private func sendOSC(_ path: String, _ value: Float, port: UInt16, in network: PrivateNetwork) throws {
    try network.run {
        guard let address = lo_address_new("127.0.0.1", String(port)) else { throw OSCSendError(path: path) }
        defer { lo_address_free(address) }
        let message = lo_message_new()
        defer { lo_message_free(message) }
        lo_message_add_float(message, value)
        guard lo_send_message(address, path, message) >= 0 else { throw OSCSendError(path: path) }
    }
}

private struct OSCSendError: Error, CustomStringConvertible {
    let path: String
    var description: String { "could not send \(path)" }
}

/// Sends and reads every 20 ms until `accept` holds or `timeoutSeconds` pass, and returns the
/// last reading: on a loaded machine a peer may take a while, and UDP gives no acknowledgement,
/// so the message is repeated rather than trusted to one datagram.
private func sendUntil<T>(_ send: () throws -> Void, read: () throws -> T, accept: (T) -> Bool, timeoutSeconds: Double = 10) throws -> T {
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while true {
        try send()
        let value = try read()
        if accept(value) || Date() > deadline { return value }
        usleep(20_000)
    }
}
