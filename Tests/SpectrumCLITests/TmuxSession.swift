import Foundation
import Testing

/// A detached tmux session on a private tmux server (its own socket, `-L`), for driving the
/// full-screen commands as a user's terminal would: capture the pane, send keys, resize. The
/// server is killed on `stop()` and in deinit, so nothing is left behind and other tests' tmux
/// sessions are never touched.
final class TmuxSession {
    let name: String
    private let socket: String
    private let tmuxPath: String

    /// Starts `command` (run by the shell) in a `columns`×`rows` window.
    init(_ command: String, columns: Int, rows: Int, tag: String) throws {
        let tmux = ["/usr/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
        tmuxPath = try #require(tmux, "tmux is installed by scripts/install-deps")
        name = "spectrum-\(tag)-\(getpid())"
        socket = name
        run(["new-session", "-d", "-s", name, "-x", "\(columns)", "-y", "\(rows)", command], output: false)
    }

    deinit { stop() }

    /// Kills the private server and removes its socket file (tmux 3.3 leaves it behind).
    func stop() {
        run(["kill-server"], output: false)
        let directory = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(directory)/tmux-\(getuid())/\(socket)")
    }

    /// The pane's text (no escape codes unless `escapes`), one line per row, trailing blanks cut.
    func capture(escapes: Bool = false) -> String {
        run(["capture-pane", "-p"] + (escapes ? ["-e"] : []) + ["-t", name])
    }

    func sendKeys(_ keys: String) { run(["send-keys", "-t", name, keys], output: false) }

    func resize(columns: Int, rows: Int) {
        run(["resize-window", "-t", name, "-x", "\(columns)", "-y", "\(rows)"], output: false)
    }

    /// Captures every 0.1 s until `condition` holds on a capture or `seconds` pass; returns the
    /// last capture.
    @discardableResult
    func waitForScreen(seconds: Double, until condition: (String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var screen = capture()
        while !condition(screen) && Date() < deadline {
            usleep(100_000)
            screen = capture()
        }
        return screen
    }

    /// Runs tmux through popen/pclose (fork, exec, waitpid). Not Foundation's Process:
    /// `tmux new-session -d` forks the tmux server and exits at once, and Process's exit
    /// monitoring sometimes missed that exit and waited forever (seen twice here).
    @discardableResult
    private func run(_ arguments: [String], output wantsOutput: Bool = true) -> String {
        let quoted = ([tmuxPath, "-L", socket] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let line = quoted.joined(separator: " ") + " 2>/dev/null </dev/null"
        guard wantsOutput else {
            // No pipe at all: the server that new-session forks must not inherit one.
            _ = system(line + " >/dev/null")
            return ""
        }
        guard let pipe = popen(line, "r") else { return "" }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        pclose(pipe)
        return String(decoding: output, as: UTF8.self)
    }
}
