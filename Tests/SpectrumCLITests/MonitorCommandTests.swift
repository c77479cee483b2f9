import Foundation
import SpectrumDSP
import SpectrumTestSupport
import Testing

/// `spectrum monitor` end to end, as a user over SSH sees it: a private jackd (dummy driver),
/// a 1 kHz tone, the real binary in a tmux pane read back with capture-pane. Serialized: JACK
/// allows only a few servers per machine.
@Suite(.serialized) struct MonitorCommandTests {
    static let toneHz = 1_000.0

    /// The columns that show `band` when `bandCount` bands are folded to `width` columns: column
    /// c holds bands ⌊c·B/W⌋ ..< ⌊(c+1)·B/W⌋ (at least one), the rule docs/monitor.md states.
    static func columns(showing band: Int, bandCount: Int, width: Int) -> [Int] {
        (0..<width).filter { column in
            let start = min(column * bandCount / width, bandCount - 1)
            let end = min(max((column + 1) * bandCount / width, start + 1), bandCount)
            return (start..<end).contains(band)
        }
    }

    static func rows(_ screen: String) -> [[Character]] {
        screen.split(separator: "\n", omittingEmptySubsequences: false).map(Array.init)
    }

    /// The plot's rows: below the header and the status line, above the axis.
    static func plotRows(_ screen: String, rows: Int) -> ArraySlice<[Character]> {
        let lines = Self.rows(screen)
        return lines.count >= rows ? lines[2..<(rows - 1)] : []
    }

    /// How high each column's bar stands, in eighths of a row (the peak marks do not count).
    static func barHeights(_ screen: String, columns: Int, rows: Int) -> [Int] {
        let eighths: [Character: Int] = ["▁": 1, "▂": 2, "▃": 3, "▄": 4, "▅": 5, "▆": 6, "▇": 7, "█": 8]
        let plot = plotRows(screen, rows: rows)
        return (0..<columns).map { column in plot.reduce(0) { $0 + (column < $1.count ? eighths[$1[column]] ?? 0 : 0) } }
    }

    /// How much ink each spectrogram column holds: the sum of its cells' places on the ramp.
    static func inkPerColumn(_ screen: String, columns: Int, rows: Int) -> [Int] {
        let ramp = Array(" .:-=+*#%@")
        let plot = plotRows(screen, rows: rows)
        return (0..<columns).map { column in plot.reduce(0) { $0 + (column < $1.count ? ramp.firstIndex(of: $1[column]) ?? 0 : 0) } }
    }

    /// Waits until the screen is laid out for `columns` (the header reaches the last column,
    /// ending in "q: quit"), names the tone's note, and the strongest column (by `measure`) is
    /// the same on three captures in a row; returns that screen, or nil after 20 s.
    static func settledScreen(_ tmux: TmuxSession, columns: Int, rows: Int, measure: (String) -> [Int]) -> String? {
        var strongest: [Int] = []
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            usleep(200_000)
            let screen = tmux.capture()
            let header = Self.rows(screen).first ?? []
            guard header.count == columns, String(header).hasSuffix("q: quit"), screen.contains("B5") else {
                strongest.removeAll()
                continue
            }
            let values = measure(screen)
            strongest.append(values.indices.max { values[$0] < values[$1] } ?? -1)
            if strongest.suffix(3).count == 3, Set(strongest.suffix(3)).count == 1 { return screen }
        }
        return nil
    }

    /// The tone's columns stand above every other column.
    static func expectToneIsStrongest(_ values: [Int], band: Int, columns: Int, _ screen: String) {
        let toneColumns = Self.columns(showing: band, bandCount: 128, width: columns)
        let tone = toneColumns.map { values[$0] }.max() ?? 0
        let elsewhere = values.indices.filter { !toneColumns.contains($0) }.map { values[$0] }.max() ?? 0
        #expect(tone > elsewhere, "at \(columns) columns the tone's columns \(toneColumns) reach \(tone), another column \(elsewhere):\n\(screen)")
    }

    @Test func barsShowTheToneFollowAResizeAndQuitWithQ() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let tone = try ToneClient(serverName: server.name, frequencyHz: Self.toneHz, amplitude: 0.5)
        defer { tone.stop() }
        let band = try LiveCommandTests.band(of: Self.toneHz)
        let command = "\(SpectrumProcess.executableURL.path) monitor --server \(server.name) --connect \(tone.outputPortName); echo MONITOR-EXITED $?; sleep 10"
        let tmux = try TmuxSession(command, columns: 80, rows: 24, tag: "monitor")
        defer { tmux.stop() }

        for (columns, rows) in [(80, 24), (200, 50)] {
            if columns != 80 { tmux.resize(columns: columns, rows: rows) }
            let measure = { Self.barHeights($0, columns: columns, rows: rows) }
            let settled = Self.settledScreen(tmux, columns: columns, rows: rows, measure: measure)
            let screen = try #require(settled, "never laid out at \(columns)×\(rows) with a steady tallest bar:\n\(tmux.capture())")
            Self.expectToneIsStrongest(measure(screen), band: band, columns: columns, screen)
            let lines = Self.rows(screen)
            #expect(lines.prefix(rows).allSatisfy { $0.count <= columns })
            #expect(String(lines[1]).contains("dBFS") && String(lines[1]).contains("B5") && String(lines[1]).contains("BPM"), "\(screen)")
            // The axis: 1k at the column of 1 kHz's band.
            let axis = String(lines[rows - 1])
            let oneKilohertz = try #require(axis.range(of: "1k"), "no 1k on the axis: \(axis)")
            #expect(Self.columns(showing: band, bandCount: 128, width: columns).contains(axis.distance(from: axis.startIndex, to: oneKilohertz.lowerBound)))
        }

        tmux.sendKeys("q")
        let exited = tmux.waitForScreen(seconds: 5) { $0.contains("MONITOR-EXITED") }
        #expect(exited.contains("MONITOR-EXITED 0"), "q must quit with status 0: \(exited)")
        #expect(exited.trimmingCharacters(in: .whitespacesAndNewlines) == "MONITOR-EXITED 0", "the screen is restored, nothing of the monitor left: \(exited)")
    }

    /// The spectrogram without colour (NO_COLOR): the tone's column holds the most ink, no
    /// colour codes reach the terminal; `m` switches to bars; SIGTERM restores the terminal.
    @Test func theSpectrogramWithoutColourShowsTheToneAndSIGTERMRestoresTheScreen() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let tone = try ToneClient(serverName: server.name, frequencyHz: Self.toneHz, amplitude: 0.5)
        defer { tone.stop() }
        let band = try LiveCommandTests.band(of: Self.toneHz)
        let scratch = try ScratchDirectory()
        let pidFile = scratch.path("monitor.pid")
        let monitor = "\(SpectrumProcess.executableURL.path) monitor --mode spectrogram --server \(server.name) --connect \(tone.outputPortName)"
        let command = "NO_COLOR=1 sh -c 'echo $$ > \(pidFile); exec \(monitor)'; echo MONITOR-EXITED $?; sleep 10"
        let (columns, rows) = (200, 50)
        let tmux = try TmuxSession(command, columns: columns, rows: rows, tag: "spectrogram")
        defer { tmux.stop() }

        let measure = { Self.inkPerColumn($0, columns: columns, rows: rows) }
        let settled = Self.settledScreen(tmux, columns: columns, rows: rows, measure: measure)
        let screen = try #require(settled, "the spectrogram never showed a steady strongest column:\n\(tmux.capture())")
        #expect(screen.contains("spectrogram  m: mode"), "\(screen)")
        Self.expectToneIsStrongest(measure(screen), band: band, columns: columns, screen)
        let escapes = tmux.capture(escapes: true)
        #expect(escapes.range(of: "\u{1B}\\[[0-9;]*[1-9][0-9;]*m", options: .regularExpression) == nil, "NO_COLOR: no colour or weight codes: \(escapes.debugDescription.prefix(400))")

        tmux.sendKeys("m")
        let bars = tmux.waitForScreen(seconds: 5) { $0.contains("bars  m: mode") && Self.barHeights($0, columns: columns, rows: rows).contains { $0 > 0 } }
        #expect(bars.contains("bars  m: mode"), "m switches to bars: \(bars)")

        let pid = try #require(Int32(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGTERM)
        let exited = tmux.waitForScreen(seconds: 5) { $0.contains("MONITOR-EXITED") }
        #expect(exited.trimmingCharacters(in: .whitespacesAndNewlines) == "MONITOR-EXITED 0", "SIGTERM: exit 0 with the screen restored: \(exited)")
    }
}
