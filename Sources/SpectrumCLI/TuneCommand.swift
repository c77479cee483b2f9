import ArgumentParser
import Foundation
import Glibc
import SpectrumDSP
import SpectrumOutput

/// `spectrum tune`: a full-screen terminal tuner, live from JACK (the same analysis and, with
/// --osc, the same OSC output as `run`). Main thread only.
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract: "Full-screen tuner: note, cents needle and frequency, live from JACK.",
        discussion: """
            Green within ±5 cents, yellow within ±15, red beyond. Quit with q or Ctrl-C; the \
            terminal is restored. Works in an 80×24 terminal.

            Examples:
              spectrum tune --connect system:capture_1
              spectrum tune --reference 442
            """
    )

    @OptionGroup(title: "JACK") var jack: JackOptions
    @OptionGroup(title: "OSC output") var osc: OscOptions
    @OptionGroup(title: "Analysis") var presetOptions: PresetOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisOverrides

    func run() throws {
        let configuration: AnalysisConfiguration
        let session: LiveSession
        do {
            configuration = try analysis.apply(to: presetOptions.loadConfiguration())
            guard configuration.pitch.enabled else {
                throw oneLineFailure("spectrum: tune: the preset turns the tuner off (pitch.enabled: false)")
            }
            session = try LiveSession(jack: jack, analysis: configuration,
                                      osc: osc.publisherConfiguration(outputRateHz: configuration.outputRateHz, bandCount: configuration.spectrum.bandCount, presetPath: presetOptions.presetPath()))
        } catch let code as ExitCode {
            throw code
        } catch {
            throw oneLineFailure("spectrum: \(error)")
        }
        let terminal = TerminalScreen()
        let screen = TunerScreen(referenceHz: configuration.pitch.referenceHz,
                                 silenceGateDecibels: Float(configuration.pitch.silenceGateDecibels),
                                 clientName: session.client.clientName,
                                 notation: analysis.notationLabel)
        terminal.enter()
        // The sources are re-read twice a second: the musician may patch in (or out) with
        // another JACK tool while the tuner runs.
        var sources = session.client.connectedSources
        var refreshesUntilSources = 0
        let ending = session.run(durationSeconds: nil, refreshSeconds: 0.05) { snapshot in
            if terminal.readKey().map({ $0 == UInt8(ascii: "q") || $0 == UInt8(ascii: "Q") }) == true {
                StopSignal.request()
            }
            if refreshesUntilSources == 0 {
                sources = session.client.connections().flatMap { $0 }
                refreshesUntilSources = 10
            }
            refreshesUntilSources -= 1
            terminal.draw(screen.lines(snapshot, sources: sources, size: terminal.size()))
        }
        terminal.leave()
        if case .serverShutDown = ending {
            throw oneLineFailure("spectrum: the JACK server\(jack.server.map { " '\($0)'" } ?? "") shut down; exiting")
        }
    }
}

/// What the tuner shows, as plain lines with ANSI colours, for a terminal of `size`.
struct TunerScreen {
    let referenceHz: Double
    let silenceGateDecibels: Float
    let clientName: String
    /// The transposition, temperament and string mode in force ("Bb instrument, guitar"), or empty.
    var notation = ""

    static let width = 78

    /// `sources`: the ports now connected to the tuner's input.
    func lines(_ snapshot: LiveSession.Snapshot, sources: [String], size: (columns: Int, rows: Int)) -> [String] {
        let pitch = snapshot.frame.pitch
        let level = snapshot.frame.level
        var lines: [String] = []
        let input = sources.isEmpty ? "no input connected" : "in: " + sources.joined(separator: ", ")
        lines.append(Self.spread("Spectrum tuner  \(clientName)", "A4 = \(String(format: "%g", referenceHz)) Hz   \(input)"))
        lines.append(notation.isEmpty ? "" : Self.centre(notation, visibleWidth: notation.count))
        if let name = pitch.writtenNoteName {
            // In string mode the target is the nearest string; otherwise the nearest note (of
            // the temperament), shown in the player's key.
            let target = pitch.stringName.map { "string \($0)" } ?? (pitch.writtenNoteNumber != pitch.noteNumber ? "sounding \(pitch.noteName ?? "")" : "")
            let cents = pitch.stringName == nil ? pitch.cents : pitch.stringCents
            let colour = Self.colour(cents: cents)
            for row in BigFont.render(pitch.stringName ?? name) { lines.append(Self.centre(colour + row + Self.reset, visibleWidth: row.count)) }
            lines.append(Self.centre(Self.scale, visibleWidth: Self.scale.count))
            let needle = Self.needle(cents: cents)
            lines.append(Self.centre(colour + needle + Self.reset, visibleWidth: needle.count))
            let strobe = Self.strobe(phase: pitch.strobePhase)
            lines.append(Self.centre(colour + strobe + Self.reset, visibleWidth: strobe.count))
            let verdict = abs(cents) <= 5 ? "in tune" : (cents < 0 ? "flat" : "sharp")
            let readout = String(format: "%@ %+.1f cents   %.2f Hz   confidence %.2f", verdict, cents, pitch.frequencyHz, pitch.confidence)
                + (target.isEmpty ? "" : "   " + target)
            lines.append(Self.centre(colour + readout + Self.reset, visibleWidth: readout.count))
        } else {
            let message = level.rmsDecibels < silenceGateDecibels ? "no signal" : "no clear pitch"
            for row in BigFont.render("-") { lines.append(Self.centre(row, visibleWidth: row.count)) }
            lines.append(Self.centre(Self.scale, visibleWidth: Self.scale.count))
            lines.append("")
            lines.append("")
            lines.append(Self.centre(message, visibleWidth: message.count))
        }
        lines.append("")
        let meter = "level " + LiveSummary.bar(level.vu, width: 30) + String(format: " %6.1f dBFS", level.rmsDecibels)
        lines.append(Self.centre(meter, visibleWidth: meter.count))
        while lines.count < min(size.rows, 24) - 1 { lines.append("") }
        lines.append("q: quit")
        return lines
    }

    /// −50 … +50 cents, 41 columns, a tick every 25 cents.
    static let scale = "-50       -25        0        +25       +50"
    static func needle(cents: Float) -> String {
        let position = Int(((min(max(cents, -50), 50) + 50) / 100 * 40).rounded()) + 1
        return String(repeating: " ", count: position) + "▲"
    }

    /// The strobe: a band of 41 columns, blocks of 4 on and 4 off, shifted by `phase` of its
    /// 8-column period; it drifts right when sharp, left when flat, and stands in tune.
    static func strobe(phase: Float) -> String {
        let shift = Int((phase * 8).rounded(.down)) % 8
        return "[" + String((0..<41).map { ((($0 - shift) % 8 + 8) % 8) < 4 ? "█" : " " }) + "]"
    }

    static let reset = "\u{1B}[0m"
    static func colour(cents: Float) -> String {
        switch abs(cents) {
        case ...5: return "\u{1B}[1;32m"
        case ...15: return "\u{1B}[1;33m"
        default: return "\u{1B}[1;31m"
        }
    }

    static func centre(_ text: String, visibleWidth: Int) -> String {
        String(repeating: " ", count: max(0, (width - visibleWidth) / 2)) + text
    }

    static func spread(_ left: String, _ right: String) -> String {
        let room = width - left.count - right.count
        guard room > 0 else { return String((left + "  " + right).prefix(width)) }
        return left + String(repeating: " ", count: room) + right
    }
}

/// A 5-row block font for note names: A–G, #, digits, '-'.
enum BigFont {
    static let glyphs: [Character: [String]] = [
        "A": [" ███ ", "█   █", "█████", "█   █", "█   █"],
        "B": ["████ ", "█   █", "████ ", "█   █", "████ "],
        "C": [" ████", "█    ", "█    ", "█    ", " ████"],
        "D": ["████ ", "█   █", "█   █", "█   █", "████ "],
        "E": ["█████", "█    ", "████ ", "█    ", "█████"],
        "F": ["█████", "█    ", "████ ", "█    ", "█    "],
        "G": [" ████", "█    ", "█  ██", "█   █", " ████"],
        "#": [" █ █ ", "█████", " █ █ ", "█████", " █ █ "],
        "-": ["     ", "     ", "█████", "     ", "     "],
        "0": [" ███ ", "█  ██", "█ █ █", "██  █", " ███ "],
        "1": ["  █  ", " ██  ", "  █  ", "  █  ", " ███ "],
        "2": [" ███ ", "█   █", "  ██ ", " █   ", "█████"],
        "3": ["████ ", "    █", " ███ ", "    █", "████ "],
        "4": ["█   █", "█   █", "█████", "    █", "    █"],
        "5": ["█████", "█    ", "████ ", "    █", "████ "],
        "6": [" ███ ", "█    ", "████ ", "█   █", " ███ "],
        "7": ["█████", "    █", "   █ ", "  █  ", "  █  "],
        "8": [" ███ ", "█   █", " ███ ", "█   █", " ███ "],
        "9": [" ███ ", "█   █", " ████", "    █", " ███ "],
    ]

    static func render(_ text: String) -> [String] {
        (0..<5).map { row in text.map { glyphs[$0]?[row] ?? "     " }.joined(separator: " ") }
    }
}

/// The terminal as a full screen: alternate screen, hidden cursor, keys without Enter; all
/// restored by `leave()`.
final class TerminalScreen {
    private var savedAttributes = termios()
    private var isRaw = false

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
    }

    func leave() {
        writeStandardOutput("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        if isRaw { tcsetattr(STDIN_FILENO, TCSANOW, &savedAttributes) }
        isRaw = false
    }

    /// A key pressed since the last call, if any (never blocks).
    func readKey() -> UInt8? {
        guard isRaw else { return nil }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    func size() -> (columns: Int, rows: Int) { Self.size() }

    /// Standard output's terminal size; 80×24 when it is not a terminal.
    static func size() -> (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    static func columns() -> Int { size().columns }

    func draw(_ lines: [String]) {
        writeStandardOutput("\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J")
    }
}
