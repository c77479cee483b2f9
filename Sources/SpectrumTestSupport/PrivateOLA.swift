// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc

/// A private OLA daemon (`olad`, Debian `ola` 0.10.9) as a real OSC → DMX peer for end-to-end
/// tests: OSC input port 0 patched to universe 1 at `oscAddress`, the universe read back over
/// olad's HTTP API (`dmx(universe:)`).
///
/// olad binds its OSC port and its HTTP port on 0.0.0.0 (checked with `ss`; only the RPC port
/// is on 127.0.0.1), so it runs inside a `PrivateNetwork`; send to it from inside the same
/// network. It refuses to run as root, so it runs as the `olad` user the package creates, in a
/// temporary configuration directory owned by that user. Every plugin but OSC is disabled before
/// the first start: olad enables plugins by default and several broadcast on every interface.
/// Allocates, spawns processes; for tests only. Thread-safe.
public final class PrivateOLA: @unchecked Sendable {
    /// True if `olad` is installed (Debian package `ola`, see scripts/install-deps).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/olad") }

    /// The UDP port olad's OSC plugin listens on.
    public let oscPort: UInt16
    /// The port of olad's HTTP API (`/get_dmx`, `/json/…`).
    public let httpPort: UInt16
    /// Universe 1's OSC address: `<oscAddress>/<slot 1…512>` with one float 0…1 (×255, truncated)
    /// or one int 0…255 sets a slot; the address alone with a blob sets the whole universe.
    public let oscAddress = "/dmx/universe/1"

    private let network: PrivateNetwork
    private let configurationDirectory: URL
    private let daemon: PeerProcess

    /// Every plugin olad 0.10.9 ships but OSC.
    private static let disabledPlugins = [
        "artnet", "dummy", "e131", "espnet", "ftdidmx", "gpio", "karate", "kinet", "milinst", "opendmx",
        "openpixelcontrol", "pathport", "renard", "sandnet", "shownet", "spi", "stageprofi", "uartdmx", "usbdmx", "usbserial",
    ]

    /// Writes the configuration, starts olad inside `network` and waits (polling every 20 ms) until
    /// universe 1 shows its OSC input port, so a message sent after `init` returns is received.
    public init(network: PrivateNetwork, readyTimeoutSeconds: Double = 10) throws {
        guard let user = getpwnam("olad") else {
            throw RigPeerError(description: "no olad user: install the Debian package ola (scripts/install-deps)")
        }
        let (userID, groupID) = (user.pointee.pw_uid, user.pointee.pw_gid)
        self.network = network
        oscPort = try freeLoopbackPort(SOCK_DGRAM, in: network)
        httpPort = try freeLoopbackPort(SOCK_STREAM, in: network)
        let rpcPort = try freeLoopbackPort(SOCK_STREAM, in: network)
        configurationDirectory = try makeTemporaryDirectory(prefix: "spectrum-ola")

        do {
            var files = Dictionary(uniqueKeysWithValues: Self.disabledPlugins.map { ("ola-\($0).conf", "enabled = false\n") })
            files["ola-osc.conf"] = "enabled = true\nudp_listen_port = \(oscPort)\ninput_ports = 1\noutput_ports = 0\nport_0_address = /dmx/universe/%d\n"
            // Device 14 is the OSC plugin's, port 0 its input: patch it to universe 1.
            files["ola-port.conf"] = "14-1-I-0 = 1\n"
            for (name, text) in files {
                let url = configurationDirectory.appendingPathComponent(name)
                try text.write(to: url, atomically: false, encoding: .utf8)
                guard chown(url.path, userID, groupID) == 0 else { throw RigPeerError(description: "chown \(url.path): \(String(cString: strerror(errno)))") }
            }
            guard chown(configurationDirectory.path, userID, groupID) == 0 else {
                throw RigPeerError(description: "chown \(configurationDirectory.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(at: configurationDirectory)
            throw error
        }

        // setpriv execs olad, so the PID is olad's; the log stays outside the directory olad owns.
        let argv = ["setpriv", "--reuid=\(userID)", "--regid=\(groupID)", "--clear-groups",
                    "olad", "-c", configurationDirectory.path, "-l", "3", "-p", String(httpPort), "-r", String(rpcPort),
                    "--no-register-with-dns-sd"]
        do {
            daemon = try PeerProcess(name: "olad", argv: network.command(argv), environment: ProcessInfo.processInfo.environment,
                                     logURL: configurationDirectory.appendingPathExtension("log"))
        } catch {
            try? FileManager.default.removeItem(at: configurationDirectory)
            throw error
        }

        let deadline = Date().addingTimeInterval(readyTimeoutSeconds)
        while true {
            do {
                try daemon.checkRunning(during: "during start-up")
                let info = try? httpGet(port: httpPort, path: "/json/universe_info?id=1", in: network, timeoutSeconds: 1)
                if info?.contains("OSC Device") == true { break }
                guard Date() < deadline else {
                    throw RigPeerError(description: "olad not ready after \(readyTimeoutSeconds) s (universe 1 has no OSC input): \(daemon.logTail())")
                }
                usleep(20_000)
            } catch {
                stop()
                throw error
            }
        }
    }

    deinit { stop() }

    /// The universe's slots as olad holds them (`/get_dmx?u=N`); empty until something was
    /// received. Blocks up to `timeoutSeconds` for the answer.
    public func dmx(universe: Int = 1, timeoutSeconds: Double = 5) throws -> [UInt8] {
        let body = try httpGet(port: httpPort, path: "/get_dmx?u=\(universe)", in: network, timeoutSeconds: timeoutSeconds)
        guard let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
              let slots = object["dmx"] as? [Int] else {
            throw RigPeerError(description: "olad's get_dmx answered \(body.prefix(120).debugDescription)")
        }
        if let error = object["error"] as? String, !error.isEmpty {
            throw RigPeerError(description: "olad's get_dmx: \(error)")
        }
        return slots.map { UInt8(clamping: $0) }
    }

    /// Stops olad by PID (SIGTERM, SIGKILL after 5 s) and removes its configuration. Idempotent.
    public func stop() {
        daemon.stop()
        try? FileManager.default.removeItem(at: configurationDirectory)
        try? FileManager.default.removeItem(at: configurationDirectory.appendingPathExtension("log"))
    }
}
