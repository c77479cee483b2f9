import Foundation
@testable import SpectrumCLI
import SpectrumCore
import Testing

/// The terminal views' layout as pure functions: the tuner's needle against its scale, the
/// monitor's folding, eighth blocks, spectrogram and colour policy.
@Suite struct TerminalViewTests {
    static func plain(_ line: String) -> String {
        line.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
    }

    static func tunerFrame(cents: Float) -> AnalysisFrame {
        var frame = AnalysisFrame()
        frame.pitch = PitchReading(frequencyHz: 440 * Float(pow(2, Double(cents) / 1200)), midiNote: 69 + cents / 100,
                                   noteNumber: 69, cents: cents, confidence: 0.99)
        frame.level = LevelReading(rms: 0.1, peak: 0.14, rmsDecibels: -20, peakDecibels: -17, vu: 0.67)
        return frame
    }

    /// The needle for −40, −10, 0, +10, +40 cents stands in the column of that mark on the
    /// whole tuner screen (as drawn, colours stripped), with the mark's label above it.
    @Test(arguments: [-40, -10, 0, 10, 40])
    func theNeedleStandsUnderItsMark(cents: Int) throws {
        for colours in [ColourSupport.basic, .none] {
            let screen = TunerScreen(referenceHz: 440, silenceGateDecibels: -60, clientName: "spectrum", colours: colours)
            let lines = screen.lines(Self.tunerFrame(cents: Float(cents)), sources: [], size: (80, 24)).map { Array(Self.plain($0)) }
            let needleRow = try #require(lines.firstIndex { $0.contains("▲") })
            let needleColumn = try #require(lines[needleRow].firstIndex(of: "▲"))
            let ticks = lines[needleRow - 1]
            let labels = lines[needleRow - 2]
            #expect(needleColumn < ticks.count && "┼╋".contains(ticks[needleColumn]), "\(cents) cents: the needle is in column \(needleColumn), not under a mark: \(String(ticks))")
            let label = Array(cents == 0 ? "0" : String(format: "%+d", cents))
            let labelStart = needleColumn - label.count / 2
            #expect(labelStart >= 0 && labelStart + label.count <= labels.count && Array(labels[labelStart..<labelStart + label.count]) == label,
                    "\(cents) cents: the label above the needle is not \(String(label)): \(String(labels))")
        }
    }

    @Test func theScaleIsTwoCentsAColumnAndCentred() {
        #expect(TunerScale.column(cents: 10) - TunerScale.column(cents: 0) == 5)
        #expect(TunerScale.column(cents: -99) == TunerScale.column(cents: -50))
        #expect(TunerScale.column(cents: 1) == TunerScale.column(cents: 0) + 1, "1 cent rounds to the next column (0.5 up)")
        let ticks = Array(TunerScale.ticks)
        #expect(ticks[TunerScale.column(cents: 0)] == "╋")
        // Centred in the tuner's 78 columns, the 0 mark within one column of the middle.
        #expect(abs(TunerScreen.scaleIndent + TunerScale.column(cents: 0) - TunerScreen.width / 2) <= 1)
        #expect(TunerScale.width <= TunerScreen.width)
    }

    // MARK: Monitor

    @Test func eighthBlocksFillFromTheBottom() {
        #expect(MonitorScreen.column(value: 0, peak: 0, height: 2) == [" ", " "])
        #expect(MonitorScreen.column(value: 0.5, peak: 0, height: 2) == [" ", "█"])
        #expect(MonitorScreen.column(value: 0.75, peak: 0, height: 2) == ["▄", "█"])
        #expect(MonitorScreen.column(value: 1 / 16, peak: 0, height: 2) == [" ", "▁"])
        #expect(MonitorScreen.column(value: 1, peak: 1, height: 3) == ["█", "█", "█"])
        // A peak above the bar marks its cell; one inside the bar's top cell is not drawn.
        #expect(MonitorScreen.column(value: 0.25, peak: 0.9, height: 4) == ["▔", " ", " ", "█"])
        #expect(MonitorScreen.column(value: 0.2, peak: 0.24, height: 4) == [" ", " ", " ", "▆"])
        #expect(MonitorScreen.column(value: .nan, peak: .nan, height: 2) == [" ", " "])
    }

    /// Each column is the maximum of its bands, the OSC /groups rule: folded to 80 columns, a
    /// single loud band keeps its full height; with 200 columns, bands repeat.
    @Test func bandsFoldToTheWidthByMaximum() {
        var bands = [Float](repeating: 0.1, count: 128)
        bands[77] = 0.9
        let narrow = MonitorScreen.fold(bands, columns: 80)
        #expect(narrow.count == 80)
        #expect(narrow.max() == 0.9)
        #expect(narrow.firstIndex(of: 0.9) == 77 * 80 / 128)
        let wide = MonitorScreen.fold(bands, columns: 200)
        #expect(wide.indices.filter { wide[$0] == 0.9 } == [121], "band 77 of 128 over 200 columns: column 121 (⌊121·128/200⌋ = 77)")
        bands[78] = 0.8
        let wider = MonitorScreen.fold(bands, columns: 200)
        #expect(wider.indices.filter { wider[$0] == 0.8 } == [122, 123], "band 78: columns 122 and 123")
    }

    static func reading(bands: [Float], beat: Bool = false) -> MonitorScreen.Reading {
        var frame = AnalysisFrame()
        frame.bandCount = bands.count
        for (index, value) in bands.enumerated() { frame.bands[index] = value; frame.peaks[index] = value }
        frame.level = LevelReading(rms: 0.35, peak: 0.5, rmsDecibels: -9, peakDecibels: -6, vu: 0.85)
        frame.pitch = PitchReading(frequencyHz: 1000, midiNote: 83.21, noteNumber: 83, cents: 21, confidence: 0.99)
        frame.tempo = TempoReading(bpm: 120, confidence: 0.8, phase: 0.1)
        return MonitorScreen.Reading(frame: frame, beatFlash: beat, sources: ["system:capture_1"], sampleRateHz: 48_000, periodFrames: 256)
    }

    static let centres = (0..<128).map { 20 * pow(1000, (Double($0) + 0.5) / 128) }

    @Test(arguments: [(80, 24), (200, 50), (20, 8)])
    func barsFillTheScreenExactly(columns: Int, rows: Int) throws {
        var bands = [Float](repeating: 0.05, count: 128)
        bands[77] = 1
        let screen = MonitorScreen(clientName: "spectrum", colours: .basic, bandCentreFrequenciesHz: Self.centres, mode: .bars)
        let lines = screen.lines(Self.reading(bands: bands, beat: true), size: (columns, rows)).map(Self.plain)
        #expect(lines.count == rows)
        #expect(lines.allSatisfy { $0.count <= columns }, "\(lines.map(\.count))")
        #expect(lines[0].hasSuffix("q: quit"), "\(lines[0])")
        if columns >= 80 { #expect(lines[1].contains("B5") && lines[1].contains("120.0 BPM ●"), "\(lines[1])") }
        // The loud band's column reaches the top of the plot; the others stay near the floor.
        let plot = lines[2..<(rows - 1)].map(Array.init)
        let tallest = try #require((0..<columns).max { column, other in
            plot.filter { column < $0.count && $0[column] == "█" }.count < plot.filter { other < $0.count && $0[other] == "█" }.count
        })
        #expect(MonitorScreen.fold(bands, columns: columns)[tallest] == 1)
        #expect(plot.first.map { tallest < $0.count && $0[tallest] != " " } == true)
    }

    @Test func aTinyTerminalGetsOneLineSayingSo() {
        let screen = MonitorScreen(clientName: "spectrum", colours: .none, bandCentreFrequenciesHz: Self.centres, mode: .bars)
        let lines = screen.lines(Self.reading(bands: [Float](repeating: 0.5, count: 128)), size: (19, 30))
        #expect(lines.count == 1 && lines[0].hasPrefix("terminal too small") && lines[0].count <= 19, "\(lines)")
    }

    /// Newest row on top, each row the history folded to the current width; intensity as ink.
    @Test func theSpectrogramScrollsAndRefoldsOnResize() {
        var screen = MonitorScreen(clientName: "spectrum", colours: .none, bandCentreFrequenciesHz: Self.centres, mode: .spectrogram)
        var old = [Float](repeating: 0, count: 128)
        old[10] = 1
        var new = [Float](repeating: 0, count: 128)
        new[100] = 1
        screen.appendHistory(old)
        screen.appendHistory(new)
        for columns in [80, 128, 200] {
            let lines = screen.lines(Self.reading(bands: new), size: (columns, 24))
            #expect(Array(lines[2]).firstIndex(of: "@") == MonitorScreen.fold(new, columns: columns).firstIndex(of: 1))
            #expect(Array(lines[3]).firstIndex(of: "@") == MonitorScreen.fold(old, columns: columns).firstIndex(of: 1))
            #expect(lines[4].isEmpty, "no history below the oldest row")
            #expect(lines.allSatisfy { !$0.contains("\u{1B}") }, "no escape codes without colour")
        }
        #expect(MonitorScreen.intensityIndex(0) == 0 && MonitorScreen.intensityIndex(1) == 9 && MonitorScreen.intensityIndex(.nan) == 0)
    }

    @Test func colourFollowsNoColorAndTerm() {
        #expect(ColourSupport.detect(environment: ["TERM": "xterm-256color", "NO_COLOR": "1"]) == .none)
        #expect(ColourSupport.detect(environment: ["TERM": "xterm-256color", "NO_COLOR": ""]) == .extended, "an empty NO_COLOR does not count (no-color.org)")
        #expect(ColourSupport.detect(environment: ["TERM": "dumb"]) == .none)
        #expect(ColourSupport.detect(environment: [:]) == .none)
        #expect(ColourSupport.detect(environment: ["TERM": "screen"]) == .basic)
        #expect(ColourSupport.detect(environment: ["TERM": "xterm", "COLORTERM": "truecolor"]) == .extended)
        #expect(TerminalScreen.unusableReason(environment: ["TERM": "dumb"]) != nil)
    }

    @Test func styledTextCutsToTheVisibleWidth() {
        var text = StyledText()
        text.append("abc", style: "31")
        text.append("def", style: "31")
        text.append("ghi")
        #expect(text.rendered(width: 5, colours: .basic) == "\u{1B}[0m\u{1B}[31mabcde\u{1B}[0m")
        #expect(text.rendered(width: 100, colours: .none) == "abcdefghi")
    }
}
