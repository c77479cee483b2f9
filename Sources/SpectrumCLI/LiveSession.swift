import Foundation
import Glibc
import SpectrumDSP
import SpectrumLink
import SpectrumLive
import SpectrumOutput
import SpectrumWeb
import Synchronization
import SpectrumCore

/// A running live analysis: the JACK client, the OSC publisher draining its frames, and the
/// latest frame for a terminal display. Used by `run`, `monitor` and `tune` on the main thread.
final class LiveSession: @unchecked Sendable {
    let client: LiveClient
    let publisher: FramePublisher
    /// The web view and OSCQuery (`--http`), fed from the publisher thread.
    let web: WebServer?
    /// The Ableton Link peer (`--link`), nil without it.
    let link: LinkPeer?
    private let latest = LatestFrame()

    /// What the display shows: the newest frame and the counters.
    struct Snapshot {
        var frame: AnalysisFrame
        var framesReceived: Int
        /// Beat events received so far (the display shows a beat when this changes).
        var beatsReceived: Int
        var status: LiveStatus
        var publisher: PublisherStatistics
        var link: LinkPeer.Status?
    }

    /// Ableton Link: off, a peer that follows the session's join rules, or one that takes the lead.
    enum LinkMode { case off, follow, lead }

    enum Ending {
        case signal(Int32)
        case duration
        case serverShutDown
    }

    /// Where `--http` listens, and the control input it names in OSCQuery.
    struct WebOptions {
        var host: String
        var port: Int
        var control: (host: String, port: UInt16)?
    }

    /// Opens the client (activated and connected), the web server and the Link peer if asked, and starts the
    /// publisher. Throws errors whose description is one line.
    /// `inputs`: the named inputs (`--input`); empty for the one unnamed input. Named inputs
    /// connect only their own sources.
    /// `tempoInput`: the input the summary, MIDI clock, Link and WLED follow (nil: the first).
    /// `awaitsMissingSources`: the inputs' sources that do not exist yet are connected when
    /// they appear (a session's state), not an error.
    init(jack: JackOptions, inputs: [LiveInput] = [], tempoInput: String? = nil, awaitsMissingSources: Bool = false, analysis: AnalysisConfiguration, osc: PublisherConfiguration, web webOptions: WebOptions? = nil,
         midiClock: Bool = false, midiClockDestinations: [String] = [], link linkMode: LinkMode = .off) throws {
        var configuration = LiveConfiguration()
        configuration.clientName = jack.name
        configuration.serverName = jack.server
        configuration.channelCount = jack.channels
        configuration.inputs = jack.noConnect ? inputs.map { LiveInput(name: $0.name, analysis: $0.analysis) } : inputs
        configuration.connections = inputs.isEmpty ? jack.connectionPlan : .none
        configuration.analysis = analysis
        configuration.reconnects = !jack.noReconnect
        configuration.midiClock = midiClock
        configuration.midiClockDestinations = midiClockDestinations
        configuration.tempoInput = tempoInput
        configuration.awaitsMissingSources = awaitsMissingSources
        let client = try LiveClient(configuration: configuration)
        self.client = client
        let latest = self.latest
        let link: LinkPeer?
        do {
            link = linkMode == .off ? nil : try LinkPeer(
                takesLead: linkMode == .lead, beatsPerBar: analysis.rhythm.beatsPerBar,
                leadMilliseconds: { client.analysisConfiguration.rhythm.leadMilliseconds },
                jackNowMicroseconds: { LiveClient.currentTimeMicroseconds() })
        } catch {
            client.stop()
            throw error
        }
        self.link = link
        var osc = osc
        if midiClock { osc.messages.insert(.midiClockStatus) }
        if link != nil { osc.messages.insert(.linkStatus) }
        osc.sampleRateHz = client.sampleRateHz
        osc.inputNames = client.inputSlots
        osc.tempoSlot = tempoInput == nil ? nil : client.tempoSlot
        osc.bandCentreFrequenciesHz = analysis.spectrum.bandCentreFrequenciesHz
        let web: WebServer?
        do {
            web = try webOptions.map { options in
                try WebServer(configuration: WebServerConfiguration(
                    host: options.host, port: options.port, name: client.clientName,
                    addressSpace: osc.addressSpace(bandCount: osc.bandCount), control: options.control,
                    sampleRateHz: client.sampleRateHz, bandCentreFrequenciesHz: analysis.spectrum.bandCentreFrequenciesHz,
                    inputNames: osc.inputNames))
            }
        } catch {
            link?.stop()
            client.stop()
            throw error
        }
        self.web = web
        do {
            publisher = try FramePublisher(
                configuration: osc, ring: client.frames, beats: client.beatMailboxes,
                captureClock: CaptureClock { LiveClient.currentTimeMicroseconds() },
                status: {
                    let status = client.status()
                    var published = PublisherStatus(sampleRateHz: Int(status.sampleRateHz), periodFrames: status.periodFrames,
                                                    xruns: Int(status.xruns), droppedFrames: Int(status.framesDropped),
                                                    dspLoadPercent: Float(status.dspLoadPercent),
                                                    worstCallbackMicroseconds: Float(status.callbackCostMaximumMicroseconds),
                                                    serverRunning: status.serverLostSeconds == nil, reconnections: status.reconnections,
                                                    serverLostSeconds: Float(status.serverLostSeconds ?? 0))
                    if let clock = status.midiClock {
                        published.midiClockRunning = clock.isRunning
                        published.midiClockBpm = Float(clock.bpm)
                        published.midiClockTicks = Int(clamping: clock.ticks)
                        published.midiClockPhaseErrorMilliseconds = Float(clock.phaseErrorMilliseconds)
                    }
                    if let linkStatus = link?.status {
                        published.linkPeers = linkStatus.peers
                        published.linkLeading = linkStatus.isLeading
                        published.linkBpm = Float(linkStatus.sessionBpm)
                        published.linkPhaseErrorMilliseconds = Float(linkStatus.phaseErrorMilliseconds)
                    }
                    return published
                },
                frameObserver: { frame in
                    latest.store(frame)
                    link?.offer(frame)
                },
                inputFrameObserver: { frame in web?.publish(frame) })
            try publisher.start()
        } catch {
            web?.stop()
            link?.stop()
            client.stop()
            throw error
        }
    }

    /// Stops without running (a later start step failed).
    func stop() {
        link?.stop()
        client.stop()
        publisher.stop()
        web?.stop()
    }

    var snapshot: Snapshot {
        let (frame, count, beats) = latest.load()
        return Snapshot(frame: frame, framesReceived: count, beatsReceived: beats, status: client.status(), publisher: publisher.statistics, link: link?.status)
    }

    /// Calls `render` every `refreshSeconds` until SIGINT/SIGTERM, the duration, or the server
    /// going away; then stops the client and flushes the publisher.
    func run(durationSeconds: Double?, refreshSeconds: Double, render: (Snapshot) -> Void) -> Ending {
        StopSignal.install()
        let start = Date()
        var ending = Ending.duration
        var serverReport = ServerReport()
        while true {
            if let signal = StopSignal.received { ending = .signal(signal); break }
            if StopSignal.takeRelearnRequest() {
                client.relearnTempo()
                FileHandle.standardError.write(Data("\nspectrum: re-learning the tempo (SIGUSR1)\n".utf8))
            }
            let status = client.status()
            if status.isShutDown { ending = .serverShutDown; break }
            serverReport.note(status)
            if let durationSeconds, Date().timeIntervalSince(start) >= durationSeconds { ending = .duration; break }
            render(snapshot)
            usleep(UInt32(refreshSeconds * 1_000_000))
        }
        link?.stop()
        client.stop()
        publisher.flush()
        publisher.stop()
        web?.stop()
        return ending
    }
}

/// One line on standard error when the JACK server is lost, when it is back, and when our
/// client was found stuck and reopened.
struct ServerReport {
    private var lost = false
    private var reconnections = 0
    private var stallRecoveries = 0

    mutating func note(_ status: LiveStatus) {
        if status.serverLostSeconds != nil, !lost {
            lost = true
            FileHandle.standardError.write(Data("\nspectrum: the JACK server is gone; outputs keep running (no frames), reconnecting…\n".utf8))
        }
        if status.reconnections > reconnections {
            reconnections = status.reconnections
            lost = false
            FileHandle.standardError.write(Data("\nspectrum: JACK server back: client '\(status.currentClientName)', \(Int(status.sampleRateHz)) Hz, period \(status.periodFrames) (reconnection \(reconnections))\n".utf8))
        }
        if status.stallRecoveries > stallRecoveries {
            stallRecoveries = status.stallRecoveries
            FileHandle.standardError.write(Data("\nspectrum: the JACK server ran on without running our client; reopened it as '\(status.currentClientName)' (recovery \(stallRecoveries))\n".utf8))
        }
    }
}

/// SIGINT and SIGTERM only set a flag that the main loop polls (nothing else is safe in a
/// signal handler).
enum StopSignal {
    private static let number = Atomic<Int32>(0)
    private static let relearn = Atomic<Bool>(false)

    /// True once after each SIGUSR1 (`kill -USR1 PID`: re-learn the tempo).
    static func takeRelearnRequest() -> Bool { relearn.exchange(false, ordering: .relaxed) }

    static var received: Int32? {
        let value = number.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    static func install() {
        signal(SIGINT, stopSignalHandler)
        signal(SIGTERM, stopSignalHandler)
        signal(SIGUSR1, relearnSignalHandler)
        // A parent may have blocked them (the mask is inherited): unblock, or Ctrl-C is lost.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGUSR1)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// Asks the main loop to stop as if interrupted (the tuner's q key).
    static func request() { record(SIGINT) }

    fileprivate static func record(_ signal: Int32) { number.store(signal, ordering: .relaxed) }
    fileprivate static func recordRelearn() { relearn.store(true, ordering: .relaxed) }
}

private func relearnSignalHandler(_ signal: Int32) { StopSignal.recordRelearn() }

/// A global function (not a closure literal) so it is safe as a C signal handler.
private func stopSignalHandler(_ signal: Int32) { StopSignal.record(signal) }

/// The newest frame and how many arrived, written by the publisher thread, read by the display.
final class LatestFrame: Sendable {
    private let state = Mutex<(frame: AnalysisFrame, count: Int, beats: Int)>((AnalysisFrame(), 0, 0))

    func store(_ frame: borrowing AnalysisFrame) {
        let copy = copy frame
        state.withLock { $0 = (copy, $0.count + 1, $0.beats + (copy.beat.isBeat ? 1 : 0)) }
    }

    func load() -> (AnalysisFrame, Int, Int) { state.withLock { ($0.frame, $0.count, $0.beats) } }
}
