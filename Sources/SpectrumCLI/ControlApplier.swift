import Foundation
import SpectrumControl
import SpectrumDSP
import SpectrumLive
import SpectrumOutput
import SpectrumPresets
import SpectrumWeb
import Synchronization

/// Applies checked control commands to a running session: parameter changes become a new
/// analyser built off the real-time thread (`LiveClient.reconfigure`), blackout goes to the
/// publisher; inputs added or removed go to the client, the publisher and the web server's
/// OSCQuery tree; a new tempo input to the client (the MIDI clock) and the publisher (summary,
/// Link, WLED). Runs on the control thread; the lock only orders commands and taps.
final class ControlApplier: Sendable {
    private let client: LiveClient
    private let publisher: FramePublisher
    private let web: WebServer?
    private let taps = Mutex<[Double]>([])
    /// Called after a setting or an input changed (a session manager then knows there is
    /// something to save).
    private let onSettingsChanged: @Sendable () -> Void
    /// The latest answer, for the live summary.
    let lastReply = Mutex<ControlReply?>(nil)

    /// Taps further apart than this start a new count.
    static let tapResetSeconds = 2.0
    /// A tapped tempo is searched for within this factor either way.
    static let tapRangeFactor = 1.2

    init(client: LiveClient, publisher: FramePublisher, web: WebServer? = nil, onSettingsChanged: @escaping @Sendable () -> Void = {}) {
        self.client = client
        self.publisher = publisher
        self.web = web
        self.onSettingsChanged = onSettingsChanged
    }

    func apply(_ command: ControlCommand) -> Result<String, ControlRejection> {
        var configuration = client.analysisConfiguration
        switch command {
        case .relearn:
            client.relearnTempo()
            return .success("re-learning the tempo")
        case .blackout(let on):
            publisher.setBlackout(on)
            client.holdMidiClock(on)
            return .success(on ? "blackout: every output sent zeros and stopped" : "blackout lifted: outputs resume")
        case .referenceHz(let hz):
            configuration.pitch.referenceHz = hz
            return reconfigure(configuration, "reference A4 = \(ControlServer.format(hz)) Hz")
        case .leadMilliseconds(let milliseconds):
            configuration.rhythm.leadMilliseconds = milliseconds
            return reconfigure(configuration, "beats \(ControlServer.format(milliseconds)) ms early")
        case .bpmRange(let minimum, let maximum):
            setRange(&configuration, minimum: minimum, maximum: maximum)
            return reconfigure(configuration, "tempo range \(ControlServer.format(minimum))–\(ControlServer.format(maximum)) BPM")
        case .tap(let seconds):
            let intervals: [Double] = taps.withLock { times in
                if let last = times.last, seconds - last > Self.tapResetSeconds { times.removeAll() }
                times.append(seconds)
                times = Array(times.suffix(5))
                return zip(times.dropFirst(), times).map { $0 - $1 }
            }
            guard !intervals.isEmpty else { return .success("tap (tap again to set the tempo)") }
            let bpm = 60 / (intervals.reduce(0, +) / Double(intervals.count))
            let minimum = max(30, (bpm / Self.tapRangeFactor).rounded()), maximum = min(400, (bpm * Self.tapRangeFactor).rounded())
            guard minimum < maximum, bpm >= 30, bpm <= 400 else {
                return .failure(ControlRejection("expected taps 0.15 to 2 s apart, got \(String(format: "%.0f", bpm)) BPM"))
            }
            setRange(&configuration, minimum: minimum, maximum: maximum)
            return reconfigure(configuration, String(format: "tap tempo %.1f BPM: the tempo is learnt again within %.0f–%.0f BPM", bpm, minimum, maximum))
        case .addInput(let name, let source):
            do {
                let existed = client.inputNames.contains(name)
                let slot = try client.addInput(LiveInput(name: name, sources: source.isEmpty ? [] : [source]))
                if !existed {
                    try publisher.setInput(slot: slot, name: name)
                    try web?.setInput(slot: slot, name: name)
                }
                onSettingsChanged()
                let prefix = publisher.configuration.prefix
                let connection = source.isEmpty ? "not connected" : "from \(source)"
                return .success(existed ? "input \(name) re-pointed, \(connection)" : "input \(name) added under \(prefix)/\(name), \(connection)")
            } catch {
                return .failure(ControlRejection("\(error)"))
            }
        case .removeInput(let name):
            do {
                let slot = try client.removeInput(named: name)
                try publisher.setInput(slot: slot, name: nil)
                try web?.setInput(slot: slot, name: nil)
                onSettingsChanged()
                return .success("input \(name) removed")
            } catch {
                return .failure(ControlRejection("\(error)"))
            }
        case .tempoInput(let name):
            do {
                let slot = try client.setTempoInput(named: name)
                publisher.setTempoSlot(slot)
                onSettingsChanged()
                return .success("tempo input \(name): the summary, MIDI clock, Link and WLED follow it")
            } catch {
                return .failure(ControlRejection("\(error)"))
            }
        case .preset(let name):
            do {
                let path = try PresetLocator.forCurrentProcess().resolve(name)
                return reconfigure(try PresetLoader.load(path: path), "preset \(name)")
            } catch {
                return .failure(ControlRejection("\(error)"))
            }
        }
    }

    /// The searched and the preferred range both (the preferred one must overlap the other).
    private func setRange(_ configuration: inout AnalysisConfiguration, minimum: Double, maximum: Double) {
        configuration.rhythm.minimumBpm = minimum
        configuration.rhythm.maximumBpm = maximum
        configuration.rhythm.preferredMinimumBpm = max(configuration.rhythm.preferredMinimumBpm, minimum)
        configuration.rhythm.preferredMaximumBpm = min(configuration.rhythm.preferredMaximumBpm, maximum)
        if configuration.rhythm.preferredMinimumBpm >= configuration.rhythm.preferredMaximumBpm {
            configuration.rhythm.preferredMinimumBpm = minimum
            configuration.rhythm.preferredMaximumBpm = maximum
        }
    }

    private func reconfigure(_ configuration: AnalysisConfiguration, _ text: String) -> Result<String, ControlRejection> {
        do {
            try client.reconfigure(configuration)
            onSettingsChanged()
            return .success(text)
        } catch {
            return .failure(ControlRejection("\(error)"))
        }
    }

    /// Reports an answer everywhere it should show: every OSC target, standard error and the
    /// live summary.
    func report(_ reply: ControlReply) {
        publisher.announce(reply.address, reply.accepted ? "ok: \(reply.text)" : "error: \(reply.text)")
        lastReply.withLock { $0 = reply }
        FileHandle.standardError.write(Data("\nspectrum: control \(reply.line)\n".utf8))
    }
}
