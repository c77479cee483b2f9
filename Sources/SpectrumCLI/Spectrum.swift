import ArgumentParser
import Foundation

@main
struct Spectrum: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spectrum",
        abstract: "Real-time audio analyser for JACK: spectrum, level, pitch, onsets, tempo and beats, sent over OSC.",
        discussion: """
            Inside the JACK process callback it computes a 128-band log spectrum, the level, \
            the note (to the cent), onsets, the tempo (BPM) with the beat phase, and a trigger \
            on every beat; it sends them over OSC (or in a lighting desk's or VJ tool's format), \
            shows them in the terminal, and analyses sound files with the same code.

            Examples:
              spectrum run --osc 127.0.0.1:9000          analyse JACK input, send OSC
              spectrum monitor                           full-screen bars, VU, note, BPM
              spectrum tune                              full-screen tuner
              spectrum analyze song.wav > frames.jsonl   the same analysis, offline
            """,
        subcommands: [RunCommand.self, MonitorCommand.self, TuneCommand.self, AnalyzeCommand.self, OscSpecCommand.self]
    )

    /// Like ArgumentParser's `main()`, except that a usage or validation error is ONE line on
    /// standard error (`spectrum: --rate "fast": …`) instead of the error, the usage and a hint:
    /// scripts and lighting rigs log it, people read it. `--help` is unchanged.
    static func main() {
        do {
            // A session manager starts the executable without arguments: that means `run`.
            let sessionStart = CommandLine.arguments.count == 1 && !(ProcessInfo.processInfo.environment["NSM_URL"] ?? "").isEmpty
            var command = try parseAsRoot(sessionStart ? ["run"] : nil)
            try command.run()
        } catch {
            let code = exitCode(for: error)
            let message = self.message(for: error)
            guard code != .success, !message.isEmpty else { exit(withError: error) }
            let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
            FileHandle.standardError.write(Data("spectrum: \(line)\n".utf8))
            Foundation.exit(code.rawValue)
        }
    }
}
