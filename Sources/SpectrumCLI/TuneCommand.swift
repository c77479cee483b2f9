import ArgumentParser
import Foundation
import Glibc
import SpectrumCore
import SpectrumDSP
import SpectrumOutput

/// `spectrum tune`: a full-screen terminal tuner, live from JACK (the same analysis and, with
/// --osc, the same OSC output as `run`). Main thread only.
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract: "Full-screen tuner: note, cents needle, strobe and frequency, live from JACK.",
        discussion: """
            Green within ±5 cents, yellow within ±15, red beyond. The strobe band under the \
            needle drifts right while sharp, left while flat, and stands still in tune. Quit \
            with q or Ctrl-C; the terminal is restored. Works in an 80×24 terminal.

            Examples:
              spectrum tune --connect system:capture_1
              spectrum tune --reference 442
              spectrum tune --transpose Bb                   # a B♭ trumpet's written notes
              spectrum tune --strings guitar-drop-d          # nearest string and its offset
              spectrum tune --temperament temperaments/werckmeister-iii.scl --root C
            """
    )

    @OptionGroup(title: "JACK") var jack: JackOptions
    @OptionGroup(title: "OSC output") var osc: OscOptions
    @OptionGroup(title: "Analysis") var presetOptions: PresetOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisOverrides

    func run() throws {
        if let reason = TerminalScreen.unusableReason() {
            throw oneLineFailure("spectrum: tune: \(reason); `spectrum run` prints a line summary instead")
        }
        let configuration: AnalysisConfiguration
        let session: LiveSession
        // Before the session: its threads inherit the blocked SIGWINCH.
        let terminal = TerminalScreen()
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
        let screen = TunerScreen(referenceHz: configuration.pitch.referenceHz,
                                 silenceGateDecibels: Float(configuration.pitch.silenceGateDecibels),
                                 clientName: session.client.clientName, colours: ColourSupport.detect(),
                                 notation: analysis.notationLabel)
        terminal.enter()
        // The sources are re-read twice a second: the musician may patch in (or out) with
        // another JACK tool while the tuner runs.
        var sources = session.client.connectedSources
        var refreshesUntilSources = 0
        let ending = session.run(durationSeconds: nil, refreshSeconds: 0.05) { snapshot in
            if terminal.readKeys().contains(where: { $0 == UInt8(ascii: "q") || $0 == UInt8(ascii: "Q") }) {
                StopSignal.request()
            }
            if refreshesUntilSources == 0 {
                sources = session.client.connections().flatMap { $0 }
                refreshesUntilSources = 10
            }
            refreshesUntilSources -= 1
            _ = terminal.takeResize()
            terminal.draw(screen.lines(snapshot.frame, sources: sources, size: terminal.size))
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
    let colours: ColourSupport
    /// The transposition, temperament and string mode in force ("Bb instrument, guitar"), or empty.
    var notation = ""

    static let width = 78

    /// `sources`: the ports now connected to the tuner's input.
    func lines(_ frame: AnalysisFrame, sources: [String], size: (columns: Int, rows: Int)) -> [String] {
        let pitch = frame.pitch
        let level = frame.level
        var lines: [String] = []
        let input = sources.isEmpty ? "no input connected" : "in: " + sources.joined(separator: ", ")
        lines.append(Self.spread("Spectrum tuner  \(clientName)", "A4 = \(String(format: "%g", referenceHz)) Hz   \(input)"))
        lines.append(notation.isEmpty ? "" : Self.centre(notation, visibleWidth: notation.count))
        // The scale, the needle and the strobe share one left edge (the scale's), so the
        // needle's column is the scale's column for its cents.
        let scaleIndent = String(repeating: " ", count: Self.scaleIndent)
        if let name = pitch.writtenNoteName {
            // In string mode the target is the nearest string; otherwise the nearest note (of
            // the temperament), shown in the player's key.
            let target = pitch.stringName.map { "string \($0)" } ?? (pitch.writtenNoteNumber != pitch.noteNumber ? "sounding \(pitch.noteName ?? "")" : "")
            let cents = pitch.stringName == nil ? pitch.cents : pitch.stringCents
            let colour = colours == .none ? "" : Self.colour(cents: cents)
            let reset = colours == .none ? "" : Self.reset
            for row in BigFont.render(pitch.stringName ?? name) { lines.append(Self.centre(colour + row + reset, visibleWidth: row.count)) }
            lines.append("")
            lines.append(scaleIndent + TunerScale.labels)
            lines.append(scaleIndent + TunerScale.ticks)
            lines.append(scaleIndent + colour + TunerScale.needle(cents: cents) + reset)
            lines.append(scaleIndent + colour + Self.strobe(phase: pitch.strobePhase) + reset)
            let verdict = abs(cents) <= 5 ? "in tune" : (cents < 0 ? "flat" : "sharp")
            let readout = String(format: "%@ %+.1f cents   %.2f Hz   confidence %.2f", verdict, cents, pitch.frequencyHz, pitch.confidence)
                + (target.isEmpty ? "" : "   " + target)
            lines.append(Self.centre(colour + readout + reset, visibleWidth: readout.count))
        } else {
            let message = level.rmsDecibels < silenceGateDecibels ? "no signal" : "no clear pitch"
            for row in BigFont.render("-") { lines.append(Self.centre(row, visibleWidth: row.count)) }
            lines.append("")
            lines.append(scaleIndent + TunerScale.labels)
            lines.append(scaleIndent + TunerScale.ticks)
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

    /// Where the scale starts: centred in the screen's width by the scale's own width.
    static let scaleIndent = (width - TunerScale.width) / 2

    /// The strobe: a band as wide as the scale, blocks of 4 on and 4 off, shifted by `phase` of
    /// its 8-column period; it drifts right when sharp, left when flat, and stands in tune.
    static func strobe(phase: Float) -> String {
        let shift = phase.isFinite ? Int((phase * 8).rounded(.down)) % 8 : 0
        return String((0..<TunerScale.width).map { ((($0 - shift) % 8 + 8) % 8) < 4 ? "█" : " " })
    }

    static let reset = "\u{1B}[0m"
    static func colour(cents: Float) -> String { "\u{1B}[" + colourCode(cents: cents) + "m" }

    /// The SGR code for a note `cents` off: green within ±5, yellow within ±15, red beyond.
    static func colourCode(cents: Float) -> String {
        switch abs(cents) {
        case ...5: return "1;32"
        case ...15: return "1;33"
        default: return "1;31"
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

/// The tuner's cents scale and its needle, as text with one shared left edge: −50 … +50 cents,
/// 2 cents a column, a tick and a label every 10 cents. The needle for `c` cents stands in
/// column `column(cents: c)` of the scale's own text, under the tick for `c` when `c` is a
/// multiple of 10. Pure; any thread.
enum TunerScale {
    static let centsPerColumn: Float = 2
    static let markStepCents = 10
    /// Room left of the −50 tick for its label's sign.
    static let margin = 1
    /// Up to the end of the "+50" label, centred on the last tick.
    static let width = column(cents: 50) + 2

    /// The column (from the scale's left edge) of `cents`, clamped to −50 … +50.
    static func column(cents: Float) -> Int {
        let cents = cents.isFinite ? min(max(cents, -50), 50) : 0
        return margin + Int(((cents + 50) / centsPerColumn).rounded())
    }

    /// "-50  -40 …   0  +10 … +50": each label centred on its tick's column.
    static let labels: String = {
        var row = [Character](repeating: " ", count: width)
        for cents in stride(from: -50, through: 50, by: markStepCents) {
            let label = Array(cents == 0 ? "0" : String(format: "%+d", cents))
            let start = column(cents: Float(cents)) - label.count / 2
            for (offset, character) in label.enumerated() where (0..<width).contains(start + offset) { row[start + offset] = character }
        }
        return String(row).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }()

    /// A rule with a mark under each label, the one at 0 heavier.
    static let ticks: String = {
        var row = [Character](repeating: "─", count: column(cents: 50) + 1)
        for index in 0..<margin { row[index] = " " }
        for cents in stride(from: -50, through: 50, by: markStepCents) { row[column(cents: Float(cents))] = cents == 0 ? "╋" : "┼" }
        return String(row)
    }()

    static func needle(cents: Float) -> String {
        String(repeating: " ", count: column(cents: cents)) + "▲"
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
