import Foundation
import Glibc
import SpectrumSubprocess
import SpectrumWeb

/// mDNS/DNS-SD for OSCQuery (`_oscjson._tcp`): through `avahi-publish` while an Avahi daemon
/// runs and the server listens beyond loopback; otherwise one line on standard error says why it
/// is skipped. avahi-publish's own lines (the name it established, a renaming after a name
/// conflict, a lost daemon) are passed on to standard error prefixed `spectrum: mDNS: `.
/// avahi-publish runs under `setpriv --pdeathsig TERM`, so it ends with spectrum even when
/// spectrum is killed (otherwise it would go on announcing a server that is gone), and it is
/// started with no signal blocked (`runWithNoSignalBlocked`): spectrum started by a parent that
/// blocks SIGTERM (a test runner's worker thread did) would otherwise hand the mask on, and
/// neither `stop()`'s SIGTERM nor the parent-death signal would end it.
/// Created and stopped on the main thread (the parent-death signal follows the thread that
/// started the child, and the main thread lives as long as the process).
final class ServiceAnnouncement {
    private var process: Process?
    private var relay: Thread?

    init(web: WebServer) {
        let host = web.configuration.host
        if host == "127.0.0.1" || host == "localhost" || host == "::1" {
            note("mDNS (_oscjson._tcp) skipped: the server listens on loopback only")
            return
        }
        guard FileManager.default.fileExists(atPath: "/run/avahi-daemon/pid") else {
            note("mDNS (_oscjson._tcp) skipped: no Avahi daemon runs")
            return
        }
        guard let tool = Self.executable("avahi-publish") else {
            note("mDNS (_oscjson._tcp) skipped: avahi-publish is not installed (Debian: avahi-utils)")
            return
        }
        guard let setpriv = Self.executable("setpriv") else {
            note("mDNS (_oscjson._tcp) skipped: setpriv is not installed (Debian: util-linux)")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments = ["--pdeathsig", "TERM", "--", tool, "-s", web.configuration.name, "_oscjson._tcp", String(web.boundPort)]
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.runWithNoSignalBlocked()
            self.process = process
            note("mDNS: announcing '\(web.configuration.name)' as _oscjson._tcp on port \(web.boundPort)")
        } catch {
            note("mDNS (_oscjson._tcp) skipped: cannot run \(tool) (\(error.localizedDescription))")
            return
        }
        let reader = output.fileHandleForReading
        let relay = Thread {
            var pending = Data()
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                pending += data
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    if !line.isEmpty { Self.note("mDNS: avahi-publish: \(line)") }
                }
            }
        }
        relay.name = "spectrum-mdns"
        relay.start()
        self.relay = relay
    }

    /// Withdraws the announcement: avahi-publish gets SIGTERM and is reaped (the daemon then
    /// sends the goodbye packets). Main thread.
    func stop() {
        guard let process else { return }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        while let relay, !relay.isFinished { usleep(1_000) }
    }

    private static func executable(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + name }.first(where: FileManager.default.isExecutableFile(atPath:))
    }

    private func note(_ text: String) { Self.note(text) }

    private static func note(_ text: String) {
        FileHandle.standardError.write(Data("spectrum: \(text)\n".utf8))
    }
}
