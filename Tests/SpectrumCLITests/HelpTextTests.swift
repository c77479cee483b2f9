import Foundation
import Testing

/// The help texts say what Spectrum does: onsets, tempo and beats as well as the spectrum, and
/// `analyze --help` lists every key of its JSON output (docs/analyze.md).
@Suite struct HelpTextTests {
    static func help(_ arguments: [String]) throws -> String {
        let result = try SpectrumProcess.run(arguments + ["--help"])
        #expect(result.status == 0, "\(result.standardError)")
        // Collapsed to single spaces: ArgumentParser wraps the text at the terminal's width.
        return result.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    @Test(arguments: [[], ["run"]])
    func theAnalysisIsNamedInFull(command: [String]) throws {
        let text = try Self.help(command)
        for word in ["onsets", "tempo", "beat", "pitch", "OSC"] {
            #expect(text.localizedCaseInsensitiveContains(word), "`spectrum \(command.joined()) --help` does not mention \(word): \(text)")
        }
    }

    @Test func theTopLevelHelpListsEverySubcommand() throws {
        let text = try Self.help([])
        for command in ["run", "monitor", "tune", "analyze", "osc-spec"] { #expect(text.contains(" \(command) "), "\(command): \(text)") }
    }

    @Test func analyzeHelpListsEveryOutputKey() throws {
        let text = try Self.help(["analyze"])
        for key in ["time", "bands", "peaks", "level", "pitch", "onset", "onset_time", "tempo", "beat"] {
            #expect(text.contains("\"\(key)\":"), "`analyze --help` does not list the \"\(key)\" key: \(text)")
        }
        for field in ["\"bpm\"", "\"phase\"", "\"count\"", "\"in_bar\"", "\"confidence\""] { #expect(text.contains(field), "\(field): \(text)") }
    }

    @Test func monitorHelpNamesItsKeysAndModes() throws {
        let text = try Self.help(["monitor"])
        for phrase in ["--mode", "bars|spectrogram", "q quits", "NO_COLOR", "--connect", "--server", "--osc"] {
            #expect(text.contains(phrase), "\(phrase): \(text)")
        }
    }

    @Test func tuneHelpNamesItsStrobeAndModes() throws {
        let text = try Self.help(["tune"])
        for phrase in ["strobe", "--transpose", "--temperament", "--root", "--strings", "guitar-drop-d", "--reference", "--gate-db", "q or Ctrl-C"] {
            #expect(text.contains(phrase), "\(phrase): \(text)")
        }
    }

    /// A full-screen view into a pipe is refused in one line (before JACK is touched).
    @Test func theMonitorWantsATerminal() throws {
        let result = try SpectrumProcess.run(["monitor", "--server", "spectrum-no-such-server-\(getpid())"])
        #expect(result.status == 1)
        #expect(result.standardError == "spectrum: monitor: standard output is not a terminal; `spectrum run` prints a line summary instead\n", "\(result.standardError)")
    }
}
