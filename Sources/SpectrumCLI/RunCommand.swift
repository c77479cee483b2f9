import ArgumentParser
import Foundation
import SpectrumControl
import SpectrumDSP
import SpectrumLive
import SpectrumOutput
import SpectrumPresets

/// `spectrum run`: the live analyser. Main thread: wiring, the summary and the exit; the
/// analysis runs in the JACK process callback, OSC on the publisher thread.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Analyse JACK input in real time and send it over OSC.",
        discussion: """
            Joins a running JACK server (it never starts one), analyses the input (or each \
            --input, under <prefix>/NAME) inside the \
            process callback, and sends one OSC bundle per frame (60 per second by default) to \
            every --osc target: 128 bands, peaks, grouped bands for lights, level, pitch, \
            onsets, the tempo (BPM) and beat phase, and a status message once per second; every \
            beat also goes out at once as a /beat message (count, beat in the bar, BPM). `spectrum osc-spec` prints the address space. \
            A one-line summary shows what is being sent (`spectrum monitor` is the full-screen \
            view); the last line gives the JACK callback's own time against the period. Stop with Ctrl-C (exit 0). If the \
            JACK server goes away, spectrum keeps its outputs up (no frames; /status/server \
            says the server is lost), reconnects as soon as the server is back, and restores \
            its connections, including those made by others; --no-reconnect exits 1 instead. \
            Under a session manager (NSM_URL set), the session's client id is the JACK name and \
            its state is kept in the session (docs/deploy.md). \
            With --http, a web view (bars, curve, circular, spectrogram, 3D surface, waveform, \
            level, tuner, tempo) is served at http://HOST:PORT/ for any browser, and OSCQuery \
            on the same port lets VJ tools discover the addresses (docs/web.md).

            Examples:
              spectrum run --osc 127.0.0.1:9000
              spectrum run --name kick --prefix /kick --connect system:capture_1 \\
                --osc 192.168.1.20:7700
              spectrum run --osc 239.0.0.1:9000 --osc-interface eth0 --preset stage
              spectrum run --http 8080            # then open http://127.0.0.1:8080/
              spectrum run --midi-clock --link     # tempo out: MIDI clock and Ableton Link
              spectrum run --input kick=system:capture_1 --input bass=system:capture_2 \\
                --osc 127.0.0.1:9000               # /spectrum/kick/…, /spectrum/bass/…
            """
    )

    @OptionGroup(title: "JACK") var jack: JackOptions

    @Option(name: .customLong("input"), help: ArgumentHelp(
        "A named input (repeatable): its own port (spectrum:NAME), analyser and addresses <prefix>/NAME/…, connected from SOURCE_PORT if given and reconnected like --connect. One process and client for all; their hops are staggered. Names: letters, digits, _ and -. Replaces a preset's inputs: list.",
        valueName: "name[=source_port]"))
    var inputTexts: [String] = []

    @OptionGroup(title: "OSC output") var osc: OscOptions
    @OptionGroup(title: "Analysis") var presetOptions: PresetOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisOverrides
    @OptionGroup(title: "Tempo out") var tempoOut: TempoOutOptions

    @Option(parsing: .unconditional, help: ArgumentHelp("Stop after this many seconds (default: run until Ctrl-C).", valueName: "seconds"))
    var duration: Double?

    @Flag(help: "No live summary on standard output (errors and the final line still go to standard error).")
    var quiet = false

    @Option(name: .customLong("control"), help: ArgumentHelp(
        "Take OSC control on [HOST:]PORT (host 127.0.0.1 unless given): <prefix>/control/relearn, /tap, /reference f, /lead_ms f, /bpm_range ff, /preset s, /blackout i, /input/add ss (name, source; with --input), /input/remove s, /tempo_input s. Each is answered on <prefix>/status/control (docs/osc.md).",
        valueName: "[host:]port"))
    var control: String?

    @Option(name: .customLong("http"), help: ArgumentHelp(
        "Serve the web view and OSCQuery on [HOST:]PORT (host 127.0.0.1 unless given; 0.0.0.0 for phones on the LAN): the page at /, frames over a WebSocket, the address space as OSCQuery JSON (docs/web.md).",
        valueName: "[host:]port"))
    var http: String?

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration \(duration): expected a number of seconds above 0") }
        do {
            try LiveInput.validate(try inputs())
        } catch {
            throw ValidationError(error.description)
        }
        if !inputTexts.isEmpty && !jack.connections.isEmpty {
            throw ValidationError("--connect: cannot be combined with --input; give each input its source as --input NAME=SOURCE_PORT")
        }
        if !inputTexts.isEmpty && jack.channels > 1 && inputTexts.count * jack.channels > LiveConfiguration.maximumChannelCount {
            throw ValidationError("--input: \(inputTexts.count) inputs of \(jack.channels) channels, expected at most \(LiveConfiguration.maximumChannelCount) ports in all")
        }
        if jack.noConnect && !tempoOut.midiClockDestinations.isEmpty {
            throw ValidationError("--no-connect: expected either --midi-clock-connect or --no-connect, got both")
        }
        if let control, Self.controlEndpoint(control) == nil {
            throw ValidationError("--control \(control): expected [HOST:]PORT with a port from 1 to 65535, e.g. 7771 or 127.0.0.1:7771")
        }
        if let http, Self.controlEndpoint(http) == nil {
            throw ValidationError("--http \(http): expected [HOST:]PORT with a port from 1 to 65535, e.g. 8080 or 0.0.0.0:8080")
        }
    }

    /// The `--input` values parsed; throws the first bad one's line.
    func inputs() throws(LiveClientError) -> [LiveInput] {
        try inputTexts.map { text throws(LiveClientError) in try LiveInput.parse(text).get() }
    }

    /// The inputs to run: `--input` when given, else the preset's `inputs:` list (checked, its
    /// file named in the error line).
    func inputs(presetPath: String?) throws -> [LiveInput] {
        guard inputTexts.isEmpty, let presetPath else { return try inputs() }
        let inputs = try InputsLoader.load(path: presetPath).map { LiveInput(name: $0.name, sources: $0.sources, analysis: $0.analysis) }
        try LiveInput.validate(inputs, origin: "\(presetPath): inputs:")
        if !inputs.isEmpty && !jack.connections.isEmpty {
            throw ValidationError("--connect: cannot be combined with the inputs of \(presetPath); give each input its source there")
        }
        return inputs
    }

    /// `[HOST:]PORT` → (host, port); host 127.0.0.1 unless given.
    static func controlEndpoint(_ text: String) -> (host: String, port: UInt16)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let port = UInt16(parts.last!), port > 0 else { return nil }
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        return host.isEmpty ? nil : (host, port)
    }

    func run() throws {
        // Under a session manager: no JACK client before /nsm/client/open; its client id is the
        // JACK name, and connections are the session's (jackpatch), not the physical ports.
        let managed: ManagedSession?
        do { managed = try ManagedSession.joinIfRequested() } catch { throw oneLineFailure("spectrum: \(error)") }
        var jack = self.jack
        if let managed { jack.name = managed.open.clientID }
        let configuration: AnalysisConfiguration
        let publisherConfiguration: PublisherConfiguration
        let session: LiveSession
        do {
            let commandLine = try analysis.apply(to: presetOptions.loadConfiguration())
            let commandLineInputs = try inputs(presetPath: presetOptions.presetPath())
            // The tempo input: a session state's `tempo_input:`, else --tempo-input, else the
            // preset's `tempo_input:` (a file's name checked here, so its error names the file).
            let presetTempoInput = try tempoOut.tempoInput == nil ? presetOptions.presetPath().flatMap { path throws(PresetError) in try InputsLoader.declaredTempoInput(path: path) } : nil
            try presetTempoInput?.check(inputNames: commandLineInputs.map(\.name))
            // Only a name among the inputs goes into a session's first state: a wrong
            // --tempo-input is refused by the client below and must not outlive this run.
            let commandLineTempoInput = (tempoOut.tempoInput ?? presetTempoInput?.name).flatMap { name in commandLineInputs.contains { $0.name == name } ? name : nil }
            let inputs: [LiveInput]
            let stateTempoInput: PresetTempoInput?
            (configuration, inputs, stateTempoInput) = try managed?.loadState(commandLine: commandLine, commandLineInputs: commandLineInputs,
                                                                              commandLineTempoInput: commandLineTempoInput,
                                                                              commandLinePreset: presetOptions.presetPath()) ?? (commandLine, commandLineInputs, nil)
            let fileTempoInput = stateTempoInput ?? (tempoOut.tempoInput == nil ? presetTempoInput : nil)
            try fileTempoInput?.check(inputNames: inputs.map(\.name))
            let tempoInput = fileTempoInput?.name ?? tempoOut.tempoInput
            if let managed, !inputs.isEmpty, !jack.connections.isEmpty {
                throw ValidationError("--connect: cannot be combined with the inputs of \(managed.stateURL.path); give each input its source there")
            }
            // The unnamed input's physical default is not connected under NSM (the session
            // restores connections); named inputs connect their own sources, the session's state.
            if managed != nil, jack.connections.isEmpty, inputs.isEmpty { jack.noConnect = true }
            let presetPath = try managed?.stateURL.path ?? presetOptions.presetPath()
            publisherConfiguration = try osc.publisherConfiguration(outputRateHz: configuration.outputRateHz, bandCount: configuration.spectrum.bandCount, presetPath: presetPath)
            let controlEndpoint = control.flatMap(Self.controlEndpoint)
            let web = http.flatMap(Self.controlEndpoint).map { LiveSession.WebOptions(host: $0.host, port: Int($0.port), control: controlEndpoint) }
            session = try LiveSession(jack: jack, inputs: inputs, tempoInput: tempoInput, awaitsMissingSources: managed != nil, analysis: configuration, osc: publisherConfiguration, web: web, midiClock: tempoOut.midiClock,
                                     midiClockDestinations: tempoOut.midiClockDestinations,
                                     link: tempoOut.link ? (tempoOut.linkLead ? .lead : .follow) : .off)
        } catch {
            managed?.refuse(.general, "\(error)")
            throw oneLineFailure("spectrum: \(error)")
        }
        managed?.opened(clientName: session.client.clientName, currentConfiguration: { session.client.analysisConfiguration },
                        currentInputs: { session.client.inputSlots == [""] ? nil : session.client.namedInputs },
                        currentTempoInput: { session.client.tempoInput })
        defer { managed?.stop() }
        var controlServer: ControlServer?
        let applier = ControlApplier(client: session.client, publisher: session.publisher, web: session.web, onSettingsChanged: { managed?.settingsChanged() })
        if let control, let endpoint = Self.controlEndpoint(control) {
            do {
                controlServer = try ControlServer(host: endpoint.host, port: endpoint.port, prefix: publisherConfiguration.prefix,
                                                  apply: { applier.apply($0) }, onReply: { applier.report($0) })
            } catch {
                session.stop()
                throw oneLineFailure("spectrum: \(error)")
            }
            controlServer?.start()
        }
        report(session, jack: jack, control: controlServer, managed: managed)
        let announcement = session.web.map { ServiceAnnouncement(web: $0) }
        defer { announcement?.stop() }
        var summary = LiveSummary(targetCount: publisherConfiguration.targets.count)
        let ending = session.run(durationSeconds: duration, refreshSeconds: 0.1) { snapshot in
            summary.controlNote = applier.lastReply.withLock { $0 }.map { ($0.accepted ? "ctl ok: " : "ctl error: ") + $0.text }
            if !quiet { summary.render(snapshot) }
        }
        controlServer?.stop()
        if !quiet { summary.finish() }
        try finish(session, ending, jack: jack)
    }

    private func report(_ session: LiveSession, jack: JackOptions, control: ControlServer?, managed: ManagedSession?) {
        let client = session.client
        var lines: [String] = []
        if let managed {
            lines.append("spectrum: in the NSM session at \(managed.nsm.url) (\(managed.nsm.serverName ?? "server")): client id \(managed.open.clientID), state \(managed.stateURL.path)")
        }
        lines += ["spectrum: JACK client '\(client.clientName)'"
            + (client.clientNameWasChanged ? " (JACK renamed it from '\(jack.name)')" : "")
            + ", ports \(client.portNames.joined(separator: ", ")), \(Int(client.sampleRateHz)) Hz"]
        lines.append(client.connectedSources.isEmpty
            ? "spectrum: no input connected (patch with jack_connect, --connect or --input NAME=SOURCE_PORT)"
            : "spectrum: connected from \(client.connectedSources.joined(separator: ", "))")
        let configuration = session.publisher.configuration
        if configuration.targets.isEmpty && configuration.wledTargets.isEmpty {
            lines.append("spectrum: analysing only; add --osc HOST:PORT to send OSC")
        }
        if !configuration.targets.isEmpty {
            lines.append("spectrum: sending OSC to " + configuration.targets.map { target in
                let rig = configuration.rig(for: target)
                return "\(target) (rig \(rig.name)\(rig.name == Rig.spectrumName ? " under \(configuration.prefix)" : ""))"
            }.joined(separator: ", "))
        }
        if let web = session.web {
            lines.append("spectrum: web view at \(web.url) (OSCQuery on the same port)")
        }
        if let midiClockPort = client.midiClockPortName {
            let destinations = tempoOut.midiClockDestinations.isEmpty ? "" : " to \(tempoOut.midiClockDestinations.joined(separator: ", "))"
            lines.append("spectrum: MIDI clock on \(midiClockPort)\(destinations) (starts on the first downbeat once the tempo locks)")
        }
        if session.link != nil {
            lines.append("spectrum: Ableton Link peer" + (tempoOut.linkLead ? ", taking the lead of the session" : ", following a running session's tempo (--link-lead takes it over)"))
        }
        if let control {
            lines.append("spectrum: taking OSC control on \(control.host):\(control.port) under \(configuration.prefix)/control/")
        }
        if !configuration.wledTargets.isEmpty {
            lines.append("spectrum: sending WLED audio sync v2 to \(configuration.wledTargets.map(\.description).joined(separator: ", "))")
        }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }

    private func finish(_ session: LiveSession, _ ending: LiveSession.Ending, jack: JackOptions) throws {
        let statistics = session.publisher.statistics
        let status = session.client.status()
        let errors = statistics.targets.reduce(0) { $0 + $1.sendErrors }
        let health = statistics.targets.isEmpty ? "" : " (" + statistics.targets.map { "\($0.target) \($0.state.rawValue)" }.joined(separator: ", ") + ")"
        let nonFinite = session.snapshot.frame.nonFiniteSampleCount
        let totals = "\(statistics.framesPublished) frames sent, \(status.framesDropped) dropped, \(status.xruns) xruns, \(errors) send errors\(health)"
            + (nonFinite > 0 ? ", \(nonFinite) non-finite input samples (NaN or infinite, analysed as 0)" : "")
            + (session.web.map { web in
                let counts = web.statistics
                return ", web: \(counts.framesSent) frames to pages, \(counts.framesDropped) dropped for slow ones, \(counts.oscMessagesSent) OSC messages to listeners"
            } ?? "")
            + "; " + LiveSummary.callbackCost(status)
        switch ending {
        case .signal, .duration:
            FileHandle.standardError.write(Data("spectrum: stopped: \(totals)\n".utf8))
        case .serverShutDown:
            throw oneLineFailure("spectrum: the JACK server\(jack.server.map { " '\($0)'" } ?? "") shut down; exiting (\(totals))")
        }
    }
}

/// Command-line overrides of preset values that people change per gig.
struct AnalysisOverrides: ParsableArguments {
    @Option(parsing: .unconditional, help: ArgumentHelp("Output frames per second, 10–240 (default: the preset's output.rate_hz, 60).", valueName: "hz"))
    var rate: Double?

    @Option(name: .customLong("reference"), parsing: .unconditional, help: ArgumentHelp("Tuner reference pitch A4 in Hz, 415–466 (default: the preset's pitch.reference_hz, 440).", valueName: "hz"))
    var referenceHz: Double?

    @Option(parsing: .unconditional, help: ArgumentHelp("Transposing instrument: the tuner shows the note in the player's key (Bb: trumpet, clarinet, soprano and tenor sax; Eb: alto sax; F: horn), or the semitones the written note lies above the sounding one (-48 to 48).", valueName: "Bb|Eb|F|semitones"))
    var transpose: String?

    @Option(help: ArgumentHelp("A 12-note temperament from a Scala .scl file (e.g. temperaments/werckmeister-iii.scl): notes and cents are measured against it, A kept at the reference pitch.", valueName: "file.scl"))
    var temperament: String?

    @Option(help: ArgumentHelp("The note the temperament's first degree (1/1) sits on (default C).", valueName: "note"))
    var root: String?

    @Option(help: ArgumentHelp("String mode: the nearest open string and the cents from it: guitar, guitar-drop-d, bass, bass-5, violin, viola, cello or ukulele.", valueName: "instrument"))
    var strings: String?

    @Option(name: .customLong("gate-db"), parsing: .unconditional, help: ArgumentHelp("A fixed tuner gate: windows quieter than this RMS level in dBFS (−120 to −10) have no note, in place of the gate relative to the input's noise floor (pitch.gate_above_noise_floor_db).", valueName: "dBFS"))
    var gateDecibels: Double?

    func validate() throws {
        if let rate, !(10...240).contains(rate) { throw ValidationError("--rate \(rate): expected 10 to 240 frames per second") }
        if let referenceHz, !(415...466).contains(referenceHz) { throw ValidationError("--reference \(referenceHz): expected 415 to 466 Hz") }
        if let gateDecibels, !(-120...(-10)).contains(gateDecibels) { throw ValidationError("--gate-db \(gateDecibels): expected -120 to -10 dBFS") }
        if let transpose, transposeSemitones == nil {
            throw ValidationError("--transpose \(transpose): expected Bb, Eb, F or a whole number of semitones from -48 to 48")
        }
        if let strings, stringNotes == nil {
            throw ValidationError("--strings \(strings): expected one of \(StringTunings.all.map(\.name).joined(separator: ", "))")
        }
        if let root {
            guard temperament != nil else { throw ValidationError("--root \(root): needs --temperament FILE") }
            guard Temperament.pitchClass(of: root) != nil else {
                throw ValidationError("--root \(root): expected a note name, C to B with an optional # or b (e.g. C, Eb, F#)")
            }
        }
    }

    /// `--transpose` in semitones; nil without it or when it is not one (`validate` refuses that).
    private var transposeSemitones: Int? { transpose.flatMap(Transposition.semitones) }
    /// `--strings`' open strings; nil without it or for an unknown instrument (`validate` refuses that).
    private var stringNotes: [Int]? { strings.flatMap(StringTunings.notes(named:)) }

    /// The transposition, temperament and string mode asked for, for the tuner's header
    /// ("Bb instrument   werckmeister-iii.scl on C   guitar strings"); empty without them.
    var notationLabel: String {
        var parts: [String] = []
        if let transpose { parts.append(Int(transpose) == nil ? "\(transpose) instrument" : "written \(transpose) semitones up") }
        if let temperament { parts.append("\((temperament as NSString).lastPathComponent) on \(root ?? "C")") }
        if let strings { parts.append("\(strings) strings") }
        return parts.joined(separator: "   ")
    }

    /// `configuration` with the command line's values (checked by `validate`); throws one line
    /// for a temperament file that cannot be used.
    func apply(to configuration: AnalysisConfiguration) throws -> AnalysisConfiguration {
        var result = configuration
        if let rate { result.outputRateHz = rate }
        if let referenceHz { result.pitch.referenceHz = referenceHz }
        if let gateDecibels {
            result.pitch.silenceGateDecibels = gateDecibels
            result.pitch.noiseFloorGate = false
        }
        if let transposeSemitones { result.pitch.transposeSemitones = transposeSemitones }
        if let stringNotes { result.pitch.stringNotes = stringNotes }
        if let temperament {
            result.pitch.temperamentCents = try Temperament(contentsOf: temperament, root: root ?? "C").offsetsCents
        }
        return result
    }
}
