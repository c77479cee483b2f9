import ArgumentParser
import SpectrumDSP
import SpectrumOffline

/// `spectrum analyze FILE`: the offline analysis, one line per output frame. Runs on the main
/// thread; allocates and does file I/O (never used by the live host).
struct AnalyzeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyse a sound file and write one line per output frame (JSON Lines or CSV).",
        discussion: """
            Reads any format libsndfile reads (WAV, AIFF, FLAC, Ogg, MP3, …), mixes all channels \
            to mono, and runs exactly the analysis of the live JACK client: the same bands, \
            peaks, levels, pitch, onsets, tempo and beats, at the same output rate (60 frames \
            per second by default; output.rate_hz in a preset). Each JSON line is
              {"time": s, "bands": [0..1, …], "peaks": [0..1, …],
               "level": {"rms": 0..1, "peak": 0..1, "dbfs": dB, "vu": 0..1},
               "pitch": {"hz", "midi", "note", "cents", "confidence"} or null,
               "onset": strength 0..1 or null, "onset_time": s (the attack, in the samples) or null,
               "tempo": {"bpm", "confidence", "phase"} or null,
               "beat": {"time": s, "count", "in_bar"} or null}
            A key is left out when a preset turns its analysis off (pitch.enabled, \
            rhythm.enabled). The schema and the CSV columns are described in docs/analyze.md.

            Errors are one line on standard error naming the file, and a non-zero exit status.
            """
    )

    @Argument(help: ArgumentHelp("The sound file to analyse.", valueName: "file"))
    var file: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Write the frames to this file instead of standard output ('-' is standard output).", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Output format: json (JSON Lines, one object per frame) or csv (a header row, then one row per frame).", valueName: "json|csv"))
    var format: String = FrameFormat.json.rawValue

    @OptionGroup(title: "Analysis")
    var presetOptions: PresetOptions

    @OptionGroup(title: "Analysis")
    var analysis: AnalysisOverrides

    func run() throws {
        // Checked here rather than by ArgumentParser so that the error is one line, like all others.
        guard let frameFormat = FrameFormat(rawValue: format) else {
            throw oneLineFailure("--format: expected json or csv, got \"\(format)\"", exitCode: .validationFailure)
        }
        let configuration: AnalysisConfiguration
        do {
            configuration = try analysis.apply(to: presetOptions.loadConfiguration())
        } catch {
            throw oneLineFailure(error)
        }
        do {
            try OfflineAnalysis().run(inputPath: file, outputPath: output, format: frameFormat, configuration: configuration)
        } catch {
            throw oneLineFailure(error)
        }
    }
}
