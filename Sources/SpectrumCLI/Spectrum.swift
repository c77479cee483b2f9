import ArgumentParser

@main
struct Spectrum: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spectrum",
        abstract: "Real-time audio analyser for JACK: spectrum, level, pitch, onsets and tempo, sent over OSC.",
        subcommands: [AnalyzeCommand.self, OscSpecCommand.self]
    )
}
