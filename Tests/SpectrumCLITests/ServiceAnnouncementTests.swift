import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// The OSCQuery announcement over mDNS (`_oscjson._tcp`, ServiceAnnouncement) against the real
/// parts: `spectrum run --http 0.0.0.0:PORT` on a private jackd, inside PrivateAvahi's network
/// and mount namespace with its own D-Bus system bus and avahi-daemon (nothing reaches a real
/// interface, the machine's own Avahi is untouched); python-oscquery's OSCQueryBrowser
/// (python-zeroconf) and avahi-browse find it there (Tests/WebChecks/mdns_check.py).
@Suite(.serialized, .enabled(if: PrivateAvahi.unavailableReason == nil, "needs root, unshare, nsenter, ip, avahi-daemon, avahi-utils, dbus-daemon and setpriv"))
struct ServiceAnnouncementTests {
    static let httpPort = 18_490
    static let clientName = "spectrum-mdns"

    /// spectrum on `server`, its web server on `host`:httpPort, inside `avahi`'s namespace.
    static func spectrum(on server: PrivateJackServer, avahi: PrivateAvahi, host: String = "0.0.0.0",
                         durationSeconds: Int = 120) throws -> RunningSpectrum {
        try RunningSpectrum(["run", "--server", server.name, "--name", clientName, "--http", "\(host):\(httpPort)",
                             "--duration", String(durationSeconds), "--quiet"],
                            environment: avahi.environment, launcher: avahi.command)
    }

    /// The PIDs of live processes whose parent is `parent` and whose command is `command`
    /// (from /proc/*/stat).
    static func children(of parent: pid_t, named command: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(pid_t.init).filter { status($0)?.parent == parent && isRunning($0, command) }
    }

    /// Command, state and parent PID of `pid` from /proc/PID/stat, nil when it is gone.
    static func status(_ pid: pid_t) -> (command: Substring, state: Character, parent: pid_t)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        let rest = stat[stat.index(after: close)...].split(separator: " ")
        guard rest.count > 1, let state = rest[0].first, let parent = pid_t(rest[1]) else { return nil }
        return (stat[stat.index(after: open)..<close], state, parent)
    }

    /// Whether `pid` is a live (not zombie) process whose command is `command`.
    static func isRunning(_ pid: pid_t, _ command: String) -> Bool {
        guard let status = status(pid) else { return false }
        return status.command == command && status.state != "Z"
    }

    /// The avahi-publish that `spectrum` started, waited for up to 15 s; nil if none came.
    static func publisher(startedBy spectrum: RunningSpectrum) -> pid_t? {
        var publisher: pid_t?
        _ = eventually(within: 15) {
            publisher = children(of: spectrum.process.processIdentifier, named: "avahi-publish").first
            return publisher != nil
        }
        return publisher
    }

    @Test func oscQueryBrowserAndAvahiFindTheWebServerAndTheAnnouncementEndsWithSpectrum() throws {
        let python = try WebViewTests.python()
        let server = try PrivateJackServer()
        defer { server.stop() }
        let avahi = try PrivateAvahi()
        defer { avahi.stop() }
        let spectrum = try Self.spectrum(on: server, avahi: avahi)
        let publisher = Self.publisher(startedBy: spectrum)
        #expect(publisher != nil, "spectrum started no avahi-publish")

        let checker = Process()
        // timeout: a checker that hangs fails the test instead of holding it.
        let commandLine = avahi.command(["timeout", "120", python, WebViewTests.repository.appendingPathComponent("Tests/WebChecks/mdns_check.py").path,
                                         "--name", Self.clientName, "--port", String(Self.httpPort)])
        checker.executableURL = URL(fileURLWithPath: "/usr/bin/" + commandLine[0])
        checker.arguments = Array(commandLine.dropFirst())
        checker.environment = ProcessInfo.processInfo.environment.merging(avahi.environment) { $1 }
        let input = Pipe()
        let output = Pipe()
        checker.standardInput = input
        checker.standardOutput = output
        checker.standardError = output
        try checker.run()
        // Read up to "found" (or the end, on a failure), then stop spectrum and let it go on.
        var text = ""
        while !text.contains("found\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        spectrum.signal(SIGINT)
        signal(SIGPIPE, SIG_IGN)   // the checker may have failed and gone: no signal for writing to it
        try? input.fileHandleForWriting.write(contentsOf: Data("stopped\n".utf8))
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        checker.waitUntilExit()
        // Only now: Foundation notices a child's exit when every copy of its watch socket is
        // closed, and the checker, started while spectrum ran, holds one until it exits.
        let ending = spectrum.waitForExit(within: 15)

        #expect(ending?.status == 0, "spectrum: \(ending?.standardError ?? "did not exit")")
        #expect(checker.terminationStatus == 0, "\(text)\navahi-daemon: \(avahi.daemonLog)")
        #expect(text.contains("ok: OSCQueryBrowser found \(Self.clientName)._oscjson._tcp.local."), "\(text)")
        #expect(text.contains("ok: avahi-browse resolved \(Self.clientName) to port \(Self.httpPort)"), "\(text)")
        #expect(text.contains("ok: OSCQueryBrowser saw the service removed"), "\(text)")
        let errors = ending?.standardError ?? ""
        #expect(errors.contains("spectrum: mDNS: announcing '\(Self.clientName)' as _oscjson._tcp on port \(Self.httpPort)"), "\(errors)")
        // avahi-publish's own line, passed on.
        #expect(errors.contains("spectrum: mDNS: avahi-publish: Established under name '\(Self.clientName)'"), "\(errors)")
        if let publisher { #expect(!Self.isRunning(publisher, "avahi-publish"), "avahi-publish (PID \(publisher)) outlived spectrum") }
    }

    @Test func aKilledSpectrumLeavesNoAvahiPublishBehind() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let avahi = try PrivateAvahi()
        defer { avahi.stop() }
        let spectrum = try Self.spectrum(on: server, avahi: avahi)
        let publisher = try #require(Self.publisher(startedBy: spectrum), "spectrum started no avahi-publish")
        spectrum.signal(SIGKILL)
        _ = spectrum.waitForExit(within: 5)
        // Without the parent-death signal it would go on announcing a server that is gone.
        #expect(eventually(within: 5) { !Self.isRunning(publisher, "avahi-publish") },
                "avahi-publish (PID \(publisher)) outlived a killed spectrum")
        if Self.isRunning(publisher, "avahi-publish") { kill(publisher, SIGKILL) }
    }

    @Test func withoutAnAvahiDaemonOrOnLoopbackOneLineSaysTheAnnouncementIsSkipped() throws {
        let server = try PrivateJackServer()
        defer { server.stop() }
        let avahi = try PrivateAvahi(startDaemon: false)
        defer { avahi.stop() }
        for (host, reason) in [("0.0.0.0", "no Avahi daemon runs"), ("127.0.0.1", "the server listens on loopback only")] {
            let spectrum = try Self.spectrum(on: server, avahi: avahi, host: host, durationSeconds: 1)
            let ending = spectrum.waitForExit(within: 20)
            #expect(ending?.status == 0, "spectrum: \(ending?.standardError ?? "did not exit")")
            let mDNSLines = (ending?.standardError ?? "").split(separator: "\n").filter { $0.contains("mDNS") }
            #expect(mDNSLines == ["spectrum: mDNS (_oscjson._tcp) skipped: \(reason)"[...]], "\(ending?.standardError ?? "")")
        }
    }
}
