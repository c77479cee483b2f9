import Foundation
import Glibc

/// What colours the terminal may be sent, from the environment (https://no-color.org and TERM).
enum ColourSupport: Equatable {
    /// No escape codes for colour or weight: NO_COLOR is set, or TERM is dumb, empty or unset.
    case none
    /// The 8 ANSI colours (SGR 30–37, bold).
    case basic
    /// The xterm 256-colour palette (TERM names a 256-colour terminal, or COLORTERM is set).
    case extended

    static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) -> ColourSupport {
        if let noColour = environment["NO_COLOR"], !noColour.isEmpty { return .none }
        let term = environment["TERM"] ?? ""
        if term.isEmpty || term == "dumb" { return .none }
        if term.contains("256color") || !(environment["COLORTERM"] ?? "").isEmpty { return .extended }
        return .basic
    }
}

/// The terminal as a full screen: alternate screen, hidden cursor, keys without Enter; all
/// restored by `leave()`. Main thread only.
///
/// Resizes: SIGWINCH is blocked from `init` on, so every thread started afterwards (JACK's
/// real-time thread, the publisher) inherits the block and is never interrupted by it; the main
/// thread takes the pending signal in `takeResize()`. Create the screen before the session.
final class TerminalScreen {
    private var savedAttributes = termios()
    private var isRaw = false
    private var shownLines: [String] = []
    private var mustClear = true
    private(set) var size: (columns: Int, rows: Int)

    init() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGWINCH)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        size = Self.size()
    }

    /// Why a full-screen view cannot be drawn here (standard output is not a terminal, or
    /// TERM=dumb, which has no cursor addressing), or nil when it can.
    static func unusableReason(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if isatty(STDOUT_FILENO) != 1 { return "standard output is not a terminal" }
        if environment["TERM"] == "dumb" { return "TERM=dumb cannot draw a full screen" }
        return nil
    }

    func enter() {
        if isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &savedAttributes) == 0 {
            var raw = savedAttributes
            raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
                bytes[Int(VMIN)] = 0
                bytes[Int(VTIME)] = 0
            }
            isRaw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
        }
        writeStandardOutput("\u{1B}[?1049h\u{1B}[?25l\u{1B}[2J")
        mustClear = true
    }

    func leave() {
        // Cleared first: after a resize, tmux 3.3 leaves the alternate screen's rows on the
        // restored screen.
        writeStandardOutput("\u{1B}[0m\u{1B}[2J\u{1B}[?25h\u{1B}[?1049l")
        if isRaw { tcsetattr(STDIN_FILENO, TCSANOW, &savedAttributes) }
        isRaw = false
    }

    /// The keys pressed since the last call (never blocks).
    func readKeys() -> [UInt8] {
        guard isRaw else { return [] }
        var keys: [UInt8] = []
        var byte: UInt8 = 0
        while read(STDIN_FILENO, &byte, 1) == 1 { keys.append(byte) }
        return keys
    }

    /// True when the terminal was resized since the last call (a SIGWINCH was pending); then
    /// `size` is new and the next `draw` repaints the whole screen.
    func takeResize() -> Bool {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGWINCH)
        var noWait = timespec(tv_sec: 0, tv_nsec: 0)
        var resized = false
        while sigtimedwait(&signals, nil, &noWait) == SIGWINCH { resized = true }
        if resized {
            size = Self.size()
            mustClear = true
        }
        return resized
    }

    /// Standard output's terminal size; 80×24 when it is not a terminal.
    static func size() -> (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    static func columns() -> Int { size().columns }

    /// Shows `lines` from the top row, rewriting only the rows that changed since the last
    /// draw (over SSH a full 200×50 repaint 25 times a second would be megabytes). Each line
    /// must fit the width: a wrapped line would shift the rows below it.
    func draw(_ lines: [String]) {
        var output = mustClear ? "\u{1B}[0m\u{1B}[2J" : ""
        for (row, line) in lines.enumerated() where mustClear || row >= shownLines.count || shownLines[row] != line {
            output += "\u{1B}[\(row + 1);1H" + line + "\u{1B}[0m\u{1B}[K"
        }
        if lines.count < shownLines.count { output += "\u{1B}[\(lines.count + 1);1H\u{1B}[J" }
        shownLines = lines
        mustClear = false
        if !output.isEmpty { writeStandardOutput(output) }
    }
}
