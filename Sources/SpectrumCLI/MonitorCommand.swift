import ArgumentParser
import Foundation
import SpectrumDSP

/// `spectrum monitor`: a full-screen terminal view of the live analysis (bars or a
/// spectrogram, the VU meter, the note, the tempo with a beat flash), for a box reached over
/// SSH. The same JACK options, analysis and (with --osc) OSC output as `run`. Main thread only.
struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Full-screen terminal view: spectrum bars or spectrogram, VU meter, note, tempo and beats, live from JACK.",
        discussion: """
            The 128 bands are folded to the terminal's width (each column shows the loudest of \
            its bands, as the OSC /groups do), drawn with eighth blocks, with falling peaks. The \
            status line has the VU meter (green, yellow above 0.6, red above 0.85), the note \
            with cents, and the tempo with a flash on every beat. The spectrogram scrolls \
            down, a row every 0.1 s, intensity as characters (and colours). Follows terminal \
            resizes. Keys: m switches the mode, q quits (exit 0; Ctrl-C too); the terminal is \
            restored. Without colour when NO_COLOR is set or TERM has none; refuses TERM=dumb.

            Examples:
              spectrum monitor --connect system:capture_1
              spectrum monitor --mode spectrogram --osc 127.0.0.1:9000
            """
    )

    @OptionGroup(title: "JACK") var jack: JackOptions
    @OptionGroup(title: "OSC output") var osc: OscOptions
    @OptionGroup(title: "Analysis") var presetOptions: PresetOptions
    @OptionGroup(title: "Analysis") var analysis: AnalysisOverrides

    @Option(help: ArgumentHelp("What the plot shows: bars (the bands now) or spectrogram (the bands over time).", valueName: "bars|spectrogram"))
    var mode: String = MonitorScreen.Mode.bars.rawValue

    /// The time one spectrogram row covers.
    static let spectrogramRowSeconds = 0.1
    /// How long the beat marker stays lit after a beat.
    static let beatFlashSeconds = 0.15
    /// 25 redraws a second: smooth enough for bars, light enough for SSH.
    static let refreshSeconds = 0.04

    func validate() throws {
        guard MonitorScreen.Mode(rawValue: mode) != nil else {
            throw ValidationError("--mode \(mode): expected bars or spectrogram")
        }
    }

    func run() throws {
        if let reason = TerminalScreen.unusableReason() {
            throw oneLineFailure("spectrum: monitor: \(reason); `spectrum run` prints a line summary instead")
        }
        // Before the session: its threads inherit the blocked SIGWINCH.
        let terminal = TerminalScreen()
        let configuration: AnalysisConfiguration
        let session: LiveSession
        do {
            configuration = try analysis.apply(to: presetOptions.loadConfiguration())
            session = try LiveSession(jack: jack, analysis: configuration,
                                      osc: osc.publisherConfiguration(outputRateHz: configuration.outputRateHz, bandCount: configuration.spectrum.bandCount, presetPath: presetOptions.presetPath()))
        } catch {
            throw oneLineFailure("spectrum: \(error)")
        }
        var screen = MonitorScreen(clientName: session.client.clientName, colours: ColourSupport.detect(),
                                   bandCentreFrequenciesHz: configuration.spectrum.bandCentreFrequenciesHz,
                                   mode: MonitorScreen.Mode(rawValue: mode) ?? .bars)
        terminal.enter()
        var sources = session.client.connectedSources
        var sourcesReadAt = Date.distantPast
        var beatsSeen = 0
        var lastBeatAt = Date.distantPast
        var rowStartedAt = Date()
        var rowBands: [Float] = []
        let ending = session.run(durationSeconds: nil, refreshSeconds: Self.refreshSeconds) { snapshot in
            let now = Date()
            for key in terminal.readKeys() {
                switch key {
                case UInt8(ascii: "q"), UInt8(ascii: "Q"): StopSignal.request()
                case UInt8(ascii: "m"), UInt8(ascii: "M"): screen.mode = screen.mode.next
                default: break
                }
            }
            // Re-read twice a second: someone may patch in (or out) with another JACK tool.
            if now.timeIntervalSince(sourcesReadAt) >= 0.5 {
                sources = session.client.connections().flatMap { $0 }
                sourcesReadAt = now
            }
            if snapshot.beatsReceived != beatsSeen {
                beatsSeen = snapshot.beatsReceived
                lastBeatAt = now
            }
            // A spectrogram row holds the loudest value of each band over its time step.
            let bands = MonitorScreen.bands(snapshot.frame.bands, count: snapshot.frame.bandCount)
            rowBands = rowBands.count == bands.count ? zip(rowBands, bands).map { max($0, $1) } : bands
            if now.timeIntervalSince(rowStartedAt) >= Self.spectrogramRowSeconds {
                screen.appendHistory(rowBands)
                rowBands = []
                rowStartedAt = now
            }
            _ = terminal.takeResize()
            let reading = MonitorScreen.Reading(frame: snapshot.frame, beatFlash: now.timeIntervalSince(lastBeatAt) < Self.beatFlashSeconds,
                                                sources: sources, sampleRateHz: snapshot.status.sampleRateHz, periodFrames: snapshot.status.periodFrames)
            terminal.draw(screen.lines(reading, size: terminal.size))
        }
        terminal.leave()
        if case .serverShutDown = ending {
            throw oneLineFailure("spectrum: the JACK server\(jack.server.map { " '\($0)'" } ?? "") shut down; exiting")
        }
    }
}
