import ArgumentParser
import SpectrumDSP
import SpectrumPresets

/// `--preset NAME|PATH`, shared by every command that runs the analysis (`analyze`, `run`).
struct PresetOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "A preset name, looked up as <name>.yaml in $SPECTRUM_PRESETS_DIR, ./presets, then the Spectrum checkout's presets/ (e.g. music, stage); or a path to a YAML preset file (contains '/' or ends in .yaml). Default: the built-in defaults.",
        valueName: "name|path"))
    var preset: String?

    /// The configuration to run: the defaults, or the preset applied on top of them. Throws a
    /// `PresetNotFoundError` or a one-line `PresetError`. Reads files; not real-time safe —
    /// call while preparing, before the analysis starts.
    func loadConfiguration() throws -> AnalysisConfiguration {
        guard let path = try presetPath() else { return AnalysisConfiguration() }
        return try PresetLoader.load(path: path)
    }

    /// The preset file `--preset` names, nil without one.
    func presetPath() throws -> String? {
        try preset.map { try PresetLocator.forCurrentProcess().resolve($0) }
    }
}
