import Foundation
import SpectrumDSP
import SpectrumLink
import SpectrumLive
import SpectrumOutput

/// The one-line live summary of `spectrum run`: what is being analysed and sent, redrawn in
/// place on a terminal, or one line per second when standard output is a pipe or a file.
struct LiveSummary {
    let targetCount: Int
    let isTerminal = isatty(STDOUT_FILENO) == 1
    private var lastLine = Date.distantPast
    private var lastFrames = 0
    private var lastFrameTime = Date()
    private var framesPerSecond = 0.0
    private var beatsShown = 0
    /// The latest control answer, shown at the end of the line.
    var controlNote: String?

    init(targetCount: Int) { self.targetCount = targetCount }

    mutating func render(_ snapshot: LiveSession.Snapshot) {
        let now = Date()
        let elapsed = now.timeIntervalSince(lastFrameTime)
        if elapsed >= 1 {
            framesPerSecond = Double(snapshot.framesReceived - lastFrames) / elapsed
            lastFrames = snapshot.framesReceived
            lastFrameTime = now
        }
        let beatSinceLastDraw = snapshot.beatsReceived != beatsShown
        if isTerminal {
            beatsShown = snapshot.beatsReceived
            // Cut to the terminal's width: a wrapped line could not be redrawn in place.
            let line = Self.line(snapshot, framesPerSecond: framesPerSecond, targetCount: targetCount, beat: beatSinceLastDraw) + (controlNote.map { " | \($0)" } ?? "")
            writeStandardOutput("\r\u{1B}[K" + String(line.prefix(max(20, TerminalScreen.columns() - 1))))
        } else if now.timeIntervalSince(lastLine) >= 1 {
            lastLine = now
            beatsShown = snapshot.beatsReceived
            writeStandardOutput(Self.line(snapshot, framesPerSecond: framesPerSecond, targetCount: targetCount, beat: beatSinceLastDraw) + (controlNote.map { " | \($0)" } ?? "") + "\n")
        }
    }

    mutating func finish() {
        if isTerminal { writeStandardOutput("\n") }
    }

    /// E.g. `48 kHz/256 | VU ███████░░░  -9.0 dBFS | A4 +0¢ 440.0 Hz | 120.0 BPM ● | ▁▂█▅▃▂▁▁ | 60.0 fps → 1 target | xruns 0 drops 0`
    /// (● when a beat fell since the previous line); with `--midi-clock`, `MIDI ▶ 120.0` (or
    /// `MIDI ■` while stopped) after the tempo.
    static func line(_ snapshot: LiveSession.Snapshot, framesPerSecond: Double, targetCount: Int, beat: Bool) -> String {
        let frame = snapshot.frame
        let status = snapshot.status
        let level = frame.level
        let pitch = frame.pitch
        let note = pitch.noteName.map {
            "\($0.padding(toLength: 3, withPad: " ", startingAt: 0)) \(String(format: "%+3d¢ %7.1f Hz", Int(pitch.cents.rounded()), pitch.frequencyHz))"
        } ?? "no note          "
        var groups = [Float](repeating: 0, count: 8)
        withUnsafeBytes(of: frame.bands) { raw in
            let bands = UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: Float.self), count: max(frame.bandCount, 1))
            groups.withUnsafeMutableBufferPointer { BandGrouping(groupCount: 8).group(bands: bands, into: $0) }
        }
        let rate = String(format: "%g kHz/%d", status.sampleRateHz / 1000, status.periodFrames)
        let tempo = frame.tempo.isLocked ? String(format: "%5.1f BPM ", frame.tempo.bpm) + (beat ? "●" : "○") : "  --- BPM  "

        let sending = snapshot.publisher.targets.isEmpty ? "not sending (no --osc)" : "→ " + targetHealth(snapshot.publisher.targets)
        return "\(rate) | VU \(bar(level.vu, width: 10)) \(String(format: "%6.1f dBFS", level.rmsDecibels)) | \(note) | \(tempo) | "
            + (status.midiClock.map { midiClock($0) + " | " } ?? "")
            + (snapshot.link.map { link($0) + " | " } ?? "")
            + "\(sparkline(groups)) | \(String(format: "%.1f fps", framesPerSecond)) \(sending) | xruns \(status.xruns) drops \(status.framesDropped)"
    }

    /// `Link 2 ▶ 120.0` (peers, leading, the session's tempo); `◁` while following.
    static func link(_ status: LinkPeer.Status) -> String {
        String(format: "Link %d %@ %5.1f", status.peers, status.isLeading ? "▶" : "◁", status.sessionBpm)
    }

    /// `MIDI ▶ 120.0` while the clock runs, `MIDI ■` while it is stopped.
    static func midiClock(_ clock: MidiClockStatus) -> String {
        clock.isRunning ? String(format: "MIDI ▶ %5.1f", clock.bpm) : "MIDI ■      "
    }

    /// `1 target ok`, `3 targets ok`, or the count that are fine and each one that is not:
    /// `1 ok, 127.0.0.1:9001 refused`.
    static func targetHealth(_ targets: [TargetStatistics]) -> String {
        let fine = targets.filter { $0.state == .ok || $0.state == .idle }
        if fine.count == targets.count {
            let state = targets.allSatisfy { $0.state == .idle } ? "idle" : "ok"
            return "\(targets.count) target\(targets.count == 1 ? "" : "s") \(state)"
        }
        let problems = targets.filter { $0.state != .ok && $0.state != .idle }.map { "\($0.target) \($0.state.rawValue)" }
        return (fine.isEmpty ? [] : ["\(fine.count) ok"]).joined() + (fine.isEmpty ? "" : ", ") + problems.joined(separator: ", ")
    }

    /// `JACK callback mean 0.11 ms, worst 0.93 ms of the 5.33 ms period`: spectrum's own share
    /// of each JACK cycle (from the callback's cost counters), so that xruns can be told apart
    /// from a slow callback.
    static func callbackCost(_ status: LiveStatus) -> String {
        let periodMilliseconds = status.sampleRateHz > 0 ? Double(status.periodFrames) * 1000 / status.sampleRateHz : 0
        return String(format: "JACK callback mean %.2f ms, worst %.2f ms of the %.2f ms period",
                      status.callbackCostMeanMicroseconds / 1000, status.callbackCostMaximumMicroseconds / 1000, periodMilliseconds)
    }

    static func bar(_ value: Float, width: Int) -> String {
        let filled = Int((min(max(value, 0), 1) * Float(width)).rounded())
        return String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    }

    static func sparkline(_ values: [Float]) -> String {
        let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        return String(values.map { blocks[min(7, max(0, Int(($0 * 7.999).rounded(.down))))] })
    }
}

/// Unbuffered write to standard output (the summary must appear as it is drawn).
func writeStandardOutput(_ text: String) {
    FileHandle.standardOutput.write(Data(text.utf8))
}
