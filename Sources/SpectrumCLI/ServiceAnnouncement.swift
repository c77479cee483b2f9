import Foundation
import SpectrumWeb

/// mDNS/DNS-SD for OSCQuery (`_oscjson._tcp`), best effort: through `avahi-publish` while an
/// Avahi daemon runs and the server listens beyond loopback; otherwise one line on standard
/// error says why it is skipped. Main thread.
final class ServiceAnnouncement {
    private var process: Process?

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
        guard let tool = ["/usr/bin/avahi-publish", "/usr/local/bin/avahi-publish"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            note("mDNS (_oscjson._tcp) skipped: avahi-publish is not installed (Debian: avahi-utils)")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-s", web.configuration.name, "_oscjson._tcp", String(web.boundPort)]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            self.process = process
            note("mDNS: announcing '\(web.configuration.name)' as _oscjson._tcp on port \(web.boundPort)")
        } catch {
            note("mDNS (_oscjson._tcp) skipped: cannot run \(tool) (\(error.localizedDescription))")
        }
    }

    func stop() {
        guard let process, process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    private func note(_ text: String) {
        FileHandle.standardError.write(Data("spectrum: \(text)\n".utf8))
    }
}
