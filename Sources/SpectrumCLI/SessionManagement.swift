import Foundation
import SpectrumDSP
import SpectrumLive
import SpectrumPresets
import SpectrumSession

/// `spectrum run` under the New Session Manager (`NSM_URL` set): announce, wait for
/// `/nsm/client/open` before any JACK client exists, then run as the session says — the client
/// id as the exact JACK name, the analysis from the session's `preset.yaml` (created from the
/// command line the first time) with its named inputs (`inputs:`, as they are at each save, so
/// inputs added or removed over OSC control come back as they were), saved atomically on
/// `/nsm/client/save`, dirty when a setting or an input changes over OSC control. Main thread,
/// then the NSM client's own thread for saves.
final class ManagedSession: @unchecked Sendable {
    let nsm: NSMClient
    let open: NSMOpen
    /// `<path>/preset.yaml`: the session's analysis and outputs, a preset file.
    let stateURL: URL

    /// How long to wait for `/nsm/client/open` after announcing.
    static let openTimeoutSeconds = 10.0
    static let capabilities = ":dirty:message:"
    static let stateFileName = "preset.yaml"

    /// nil without `NSM_URL`; else announces and waits for the open (throws one line).
    static func joinIfRequested(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ManagedSession? {
        guard let url = try NSMURL.from(environment: environment) else { return nil }
        let nsm = try NSMClient(url: url)
        try nsm.announce(appName: "Spectrum", capabilities: capabilities, executable: CommandLine.arguments[0])
        let open = try nsm.waitForOpen(timeoutSeconds: openTimeoutSeconds)
        return ManagedSession(nsm: nsm, open: open)
    }

    private init(nsm: NSMClient, open: NSMOpen) {
        self.nsm = nsm
        self.open = open
        stateURL = URL(fileURLWithPath: open.path).appendingPathComponent(Self.stateFileName)
    }

    /// The session's analysis and named inputs: its saved state when there is one (over
    /// `commandLine`; the inputs over `commandLineInputs` when the state has an `inputs:` key,
    /// which a state written before inputs were saved may lack), else the command line's,
    /// written as the session's first state (with the outputs of the command line's preset
    /// file, and `commandLineTempoInput` as its `tempo_input:`). `tempoInput`: the saved state's
    /// `tempo_input:`, which goes over the command line's (nil when the state has none or there
    /// is no state yet). Throws one line naming the state file when it cannot be read or written.
    func loadState(commandLine configuration: AnalysisConfiguration, commandLineInputs: [LiveInput], commandLineTempoInput: String?,
                   commandLinePreset: String?) throws -> (analysis: AnalysisConfiguration, inputs: [LiveInput], tempoInput: PresetTempoInput?) {
        if FileManager.default.fileExists(atPath: stateURL.path) {
            let analysis = try PresetLoader.load(path: stateURL.path, base: configuration)
            let tempoInput = try InputsLoader.declaredTempoInput(path: stateURL.path)
            guard let saved = try InputsLoader.declaredInputs(path: stateURL.path) else { return (analysis, commandLineInputs, tempoInput) }
            let inputs = saved.map { LiveInput(name: $0.name, sources: $0.sources, analysis: $0.analysis) }
            try LiveInput.validate(inputs, origin: "\(stateURL.path): inputs:")
            return (analysis, inputs, tempoInput)
        }
        let presetText = try commandLinePreset.map { try String(contentsOfFile: $0, encoding: .utf8) }
        try SessionStateFile.writeAtomically(Self.stateText(configuration, inputs: commandLineInputs.isEmpty ? nil : commandLineInputs,
                                                            tempoInput: commandLineTempoInput, keepingOutputsOf: presetText), to: stateURL)
        return (configuration, commandLineInputs, nil)
    }

    /// The open succeeded: tell the server, and answer saves from now on with the analysis and
    /// the named inputs at that moment (`currentInputs`: nil for the one unnamed input) and
    /// the tempo input at that moment (`currentTempoInput`, nil: the first input; it changes
    /// with `/control/tempo_input`).
    func opened(clientName: String, currentConfiguration: @escaping @Sendable () -> AnalysisConfiguration,
                currentInputs: @escaping @Sendable () -> [LiveInput]?, currentTempoInput: @escaping @Sendable () -> String?) {
        try? nsm.replyOpen(message: "Spectrum: JACK client '\(clientName)', state in \(stateURL.path)")
        let stateURL = self.stateURL
        nsm.start {
            let previous = try? String(contentsOf: stateURL, encoding: .utf8)
            do {
                try SessionStateFile.writeAtomically(Self.stateText(currentConfiguration(), inputs: currentInputs(), tempoInput: currentTempoInput(), keepingOutputsOf: previous), to: stateURL)
                return .success("saved \(stateURL.path)")
            } catch {
                return .failure(NSMFailure(.saveFailed, "\(error)"))
            }
        }
    }

    /// The open failed: tell the server why.
    func refuse(_ code: NSMErrorCode, _ message: String) {
        try? nsm.errorOpen(code: code, message: message)
    }

    func settingsChanged() { nsm.markDirty() }

    func stop() { nsm.stop() }

    /// `inputs` nil: the `inputs:` (and `tempo_input:`) of `previous` carried over (none for the
    /// one unnamed input); `tempoInput` is written with `inputs`.
    private static func stateText(_ configuration: AnalysisConfiguration, inputs: [LiveInput]?, tempoInput: String?,
                                  keepingOutputsOf previous: String?) -> String {
        PresetWriter.yaml(for: configuration, header: [
            "Spectrum session state (NSM), written when the session is saved.",
            "A preset file: edit it while Spectrum is not running; osc: targets: here add outputs (docs/deploy.md).",
        ], inputs: inputs?.map { PresetInput(name: $0.name, sources: $0.sources, analysis: $0.analysis) }, tempoInput: tempoInput,
           keepingOutputsOf: previous)
    }
}
