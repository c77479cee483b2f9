import Foundation
import Glibc
import SpectrumSubprocess
import Synchronization

/// A real Avahi mDNS responder that only a test can see: a private network and mount namespace
/// (`PrivateNetwork` with private mounts) holding `lo` and a veth pair whose two ends both stay
/// inside it (Avahi ignores loopback-only hosts; multicast over the pair never reaches a real
/// interface), a tmpfs over /run/avahi-daemon (its pid file and socket, hidden from the machine's
/// own Avahi), a private D-Bus system bus on a socket in a temporary directory, and
/// `avahi-daemon` with its own configuration (only the veth interfaces, IPv4, no reflector, no
/// wide area, host name `spectrum-mdns-test`).
///
/// Processes that should talk to it run through `command(_:)` with `environment`
/// (`DBUS_SYSTEM_BUS_ADDRESS`, honoured by avahi-daemon, avahi-publish and avahi-browse).
/// Each daemon runs under a shell child of this process (see `spawn`); both die with this
/// process, and `stop()` ends them by the shell's PID. Needs root, avahi-daemon, dbus-daemon and setpriv;
/// see `unavailableReason`. Allocates, spawns processes; for tests only. Thread-safe.
public final class PrivateAvahi: @unchecked Sendable {
    /// The namespace; its veth ends carry `addresses`.
    public let network: PrivateNetwork
    /// The IPv4 addresses of the two veth ends (`sp-mdns0`, `sp-mdns1`).
    public static let addresses = ["10.211.0.1", "10.211.0.2"]
    /// The private bus, for `DBUS_SYSTEM_BUS_ADDRESS`.
    public let busAddress: String
    /// The environment a process needs to reach this Avahi (add it to its own).
    public var environment: [String: String] { ["DBUS_SYSTEM_BUS_ADDRESS": busAddress] }

    private let directory: URL
    private let daemons = Mutex<(bus: Process?, avahi: Process?)>((nil, nil))
    private let avahiLog = DaemonLog()

    /// Sets the namespace up, starts the bus and, with `startDaemon`, avahi-daemon, waiting (up
    /// to `readyTimeoutSeconds`) until avahi-daemon logs "Server startup complete". Without
    /// `startDaemon` /run/avahi-daemon is an empty tmpfs: no Avahi daemon runs as far as the
    /// processes inside can tell. Throws with avahi-daemon's log when it does not come up.
    public init(startDaemon: Bool = true, readyTimeoutSeconds: Double = 15) throws {
        network = try PrivateNetwork(privateMounts: true, setup: [
            "ip link add sp-mdns0 type veth peer name sp-mdns1",
            "ip addr add \(Self.addresses[0])/24 dev sp-mdns0",
            "ip addr add \(Self.addresses[1])/24 dev sp-mdns1",
            "ip link set sp-mdns0 up",
            "ip link set sp-mdns1 up",
            "mkdir -p /run/avahi-daemon",
            "mount -t tmpfs -o mode=0755 spectrum-avahi /run/avahi-daemon",
        ])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-avahi-\(UUID().uuidString)")
        busAddress = "unix:path=\(directory.path)/system_bus_socket"
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
            try startBus()
            if startDaemon { try startAvahi(readyTimeoutSeconds: readyTimeoutSeconds) }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// `argv` run inside the namespace (network and mounts).
    public func command(_ argv: [String]) -> [String] { network.command(argv) }

    /// Stops avahi-daemon by PID (SIGTERM, then SIGKILL after 5 s) and reaps it; the bus and
    /// the namespace stay. Idempotent.
    public func stopDaemon() {
        let avahi = daemons.withLock { daemons in
            defer { daemons.avahi = nil }
            return daemons.avahi
        }
        if let avahi { Self.end(avahi) }
    }

    /// Stops avahi-daemon, the bus and the namespace, and removes the temporary directory.
    /// Idempotent; any thread.
    public func stop() {
        stopDaemon()
        let bus = daemons.withLock { daemons in
            defer { daemons.bus = nil }
            return daemons.bus
        }
        if let bus { Self.end(bus) }
        network.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// What avahi-daemon wrote to standard error so far (for failure messages).
    public var daemonLog: String { avahiLog.text.withLock { $0 } }

    /// Why a private Avahi cannot run here, or nil.
    public static let unavailableReason: String? = {
        if let reason = PrivateNetwork.unavailableReason { return reason }
        for tool in ["avahi-daemon", "avahi-publish", "avahi-browse", "dbus-daemon", "setpriv"]
        where !FileManager.default.isExecutableFile(atPath: PrivateNetwork.tool(tool)) {
            return "needs \(tool) (Debian: avahi-daemon, avahi-utils, dbus-daemon, util-linux)"
        }
        return nil
    }()

    private func startBus() throws {
        let configuration = directory.appendingPathComponent("bus.conf")
        // A permissive policy: only this test's processes can reach the socket's directory.
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>\(busAddress)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*"/>
                <allow receive_sender="*"/>
              </policy>
            </busconfig>
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let bus = try spawn(["dbus-daemon", "--config-file=\(configuration.path)", "--nofork", "--nopidfile", "--print-address"])
        daemons.withLock { $0.bus = bus.process }
        // It prints its address once it listens.
        let address = bus.output.fileHandleForReading.availableData
        guard !address.isEmpty else { throw PrivateNetwork.Failure(description: "dbus-daemon exited before it listened") }
    }

    private func startAvahi(readyTimeoutSeconds: Double) throws {
        let configuration = directory.appendingPathComponent("avahi-daemon.conf")
        try """
            [server]
            host-name=spectrum-mdns-test
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=sp-mdns0,sp-mdns1
            enable-dbus=yes
            [wide-area]
            enable-wide-area=no
            [publish]
            publish-hinfo=no
            publish-workstation=no
            [reflector]
            enable-reflector=no
            """.write(to: configuration, atomically: true, encoding: .utf8)
        // Foreground (no -D): it logs to standard error and stays this process's child.
        let avahi = try spawn(["avahi-daemon", "--file=\(configuration.path)", "--no-chroot", "--no-rlimits"], errorsToOutput: true)
        daemons.withLock { $0.avahi = avahi.process }
        let log = avahiLog
        let reader = avahi.output.fileHandleForReading
        Thread {
            while true {
                let data = reader.availableData
                if data.isEmpty { return }
                log.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }.start()
        let deadline = Date().addingTimeInterval(readyTimeoutSeconds)
        while !daemonLog.contains("Server startup complete") {
            guard avahi.process.isRunning, Date() < deadline else {
                throw PrivateNetwork.Failure(description: "avahi-daemon did not start within \(readyTimeoutSeconds) s: \(daemonLog)")
            }
            usleep(10_000)
        }
    }

    /// Starts `argv` inside the namespace, with the bus address, as the child of a small shell
    /// that stays its parent: both daemons close every inherited descriptor at startup, and
    /// Foundation takes a closed watch descriptor for an exit and then blocks in waitpid on the
    /// live daemon, after which it notices no other child's exit. The shell keeps the descriptor;
    /// SIGTERM to it ends the daemon (TERM, waited for). The shell dies with this process and the
    /// daemon with the shell (`setpriv --pdeathsig KILL` on both). Started with no signal
    /// blocked: a test thread's mask (SIGTERM blocked) would be inherited and defeat the trap.
    private func spawn(_ argv: [String], errorsToOutput: Bool = false) throws -> (process: Process, output: Pipe) {
        let script = #"setpriv --pdeathsig KILL -- "$@" & daemon=$!; trap 'kill -TERM $daemon; wait $daemon; exit 0' TERM; wait $daemon"#
        let commandLine = command(["setpriv", "--pdeathsig", "KILL", "--", "sh", "-c", script, "sh"] + argv)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PrivateNetwork.tool(commandLine[0]))
        process.arguments = Array(commandLine.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorsToOutput ? output : FileHandle.nullDevice
        try process.runWithNoSignalBlocked()
        return (process, output)
    }

    private static func end(_ process: Process) {
        guard process.isRunning else { process.waitUntilExit(); return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// avahi-daemon's standard error, appended by a reader thread.
private final class DaemonLog: Sendable {
    let text = Mutex<String>("")
}
