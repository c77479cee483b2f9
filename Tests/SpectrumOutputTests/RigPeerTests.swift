import CLo
import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// The rig-peer harnesses against the real programs: olad inside a private network namespace,
/// fed OSC from inside it with liblo, read back through its own HTTP API. Serialized: each test
/// starts a daemon, and the machine has two cores.
@Suite(.serialized) struct RigPeerTests {
    @Test(.enabled(if: PrivateOLA.isInstalled, "olad is not installed (Debian package ola; scripts/install-deps)"))
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
