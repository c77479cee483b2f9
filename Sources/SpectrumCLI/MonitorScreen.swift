import Foundation
import SpectrumCore
import SpectrumOutput

/// What `spectrum monitor` shows, as lines for a terminal of a given size: a header, a status
/// line (VU meter, note, tempo with a beat flash), the bands as bars or a spectrogram, and a
/// frequency axis. Pure apart from the spectrogram's history; main thread only.
///
/// Bands are folded to the terminal's width with `BandGrouping`, the rule of the OSC `/groups`
/// and of rig groups: column c reads the **maximum** of its bands (a tone keeps its full height
/// however many bands share its column); with more columns than bands, neighbouring columns
/// repeat a band.
struct MonitorScreen {
    enum Mode: String {
        case bars, spectrogram

        var next: Mode { self == .bars ? .spectrogram : .bars }
    }

    /// What one screen is drawn from.
    struct Reading {
        var frame: AnalysisFrame
        /// Show the beat flash (a beat arrived within the flash time).
        var beatFlash: Bool
        var sources: [String]
        var sampleRateHz: Double
        var periodFrames: Int
    }

    let clientName: String
    let colours: ColourSupport
    /// Centre frequency of each analysis band, lowest first (for the axis labels).
    let bandCentreFrequenciesHz: [Double]
    var mode: Mode
    /// Spectrogram rows, newest first: each the bands (not yet folded, so a resize re-folds
    /// the whole history).
    private(set) var history: [[Float]] = []
    static let historyCapacity = 512
    static let minimumSize = (columns: 20, rows: 8)
    /// Rows above and below the plot: header, status line; axis.
    static let rowsAroundPlot = 3

    init(clientName: String, colours: ColourSupport, bandCentreFrequenciesHz: [Double], mode: Mode) {
        self.clientName = clientName
        self.colours = colours
        self.bandCentreFrequenciesHz = bandCentreFrequenciesHz
        self.mode = mode
    }

    /// Adds one spectrogram row (the caller decides how often: a row per fixed time step).
    mutating func appendHistory(_ bands: [Float]) {
        history.insert(bands, at: 0)
        if history.count > Self.historyCapacity { history.removeLast() }
    }

    /// The screen for a terminal of `size`: one string per row, each at most `size.columns`
    /// visible characters (colour codes aside), `size.rows` rows.
    func lines(_ reading: Reading, size: (columns: Int, rows: Int)) -> [String] {
        let width = size.columns
        guard width >= Self.minimumSize.columns, size.rows >= Self.minimumSize.rows else {
            return [String("terminal too small: \(Self.minimumSize.columns)×\(Self.minimumSize.rows) at least".prefix(max(width, 1)))]
        }
        let plotRows = size.rows - Self.rowsAroundPlot
        var lines = [header(reading, width: width).rendered(width: width, colours: colours),
                     status(reading, width: width).rendered(width: width, colours: colours)]
        switch mode {
        case .bars:
            let bands = Self.bands(reading.frame.bands, count: reading.frame.bandCount)
            let peaks = Self.bands(reading.frame.peaks, count: reading.frame.bandCount)
            lines += barRows(values: Self.fold(bands, columns: width), peaks: Self.fold(peaks, columns: width), height: plotRows)
        case .spectrogram:
            lines += spectrogramRows(width: width, height: plotRows)
        }
        lines.append(axis(width: width, bandCount: reading.frame.bandCount))
        return lines
    }

    // MARK: Folding

    /// The first `count` values of a frame's `bands` or `peaks`.
    static func bands(_ values: InlineArray<256, Float>, count: Int) -> [Float] {
        (0..<min(max(count, 0), AnalysisFrame.maximumBandCount)).map { values[$0] }
    }

    /// The bands folded to `columns` columns, each the maximum of its bands, 0..1.
    static func fold(_ bands: [Float], columns: Int) -> [Float] {
        guard !bands.isEmpty, columns > 0 else { return [Float](repeating: 0, count: max(columns, 0)) }
        var folded = [Float](repeating: 0, count: columns)
        bands.withUnsafeBufferPointer { bands in
            folded.withUnsafeMutableBufferPointer { BandGrouping(groupCount: columns).group(bands: bands, into: $0) }
        }
        return folded
    }

    // MARK: Bars

    /// " ▁▂▃▄▅▆▇█": a cell filled by 0 … 8 eighths from the bottom.
    static let eighths: [Character] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
    /// The peak mark: the top eighth of a cell.
    static let peakMark: Character = "▔"

    /// Cells of a column of `height` rows showing `value` (0..1), top row first; the peak
    /// marks the cell its level falls in when that cell is above the bar's top.
    static func column(value: Float, peak: Float, height: Int) -> [Character] {
        let value = OSCValueGuard.unit(value), peak = OSCValueGuard.unit(peak)
        let eighthCount = Int((value * Float(height * 8)).rounded())
        let peakCell = min(Int(peak * Float(height)), height - 1)
        let topFilledCell = (eighthCount + 7) / 8 - 1
        return (0..<height).reversed().map { cell in
            let fill = min(max(eighthCount - cell * 8, 0), 8)
            if fill == 0 && cell == peakCell && cell > topFilledCell && peak > 0.02 { return peakMark }
            return eighths[fill]
        }
    }

    private func barRows(values: [Float], peaks: [Float], height: Int) -> [String] {
        let columns = zip(values, peaks).map { Self.column(value: $0, peak: $1, height: height) }
        return (0..<height).map { row in
            let rowFraction = Float(height - row) / Float(height)
            var line = StyledText()
            for column in columns {
                let cell = column[row]
                line.append(String(cell), style: cell == Self.peakMark ? peakStyle : barStyle(rowFraction: rowFraction))
            }
            return line.rendered(width: values.count, colours: colours)
        }
    }

    /// Bars go from blue at the bottom through cyan and green to yellow at the top.
    private func barStyle(rowFraction: Float) -> String? {
        switch colours {
        case .none: return nil
        case .basic: return rowFraction > 0.85 ? "33" : (rowFraction > 0.6 ? "32" : "36")
        case .extended:
            let palette = [27, 33, 39, 45, 51, 50, 49, 48, 84, 120, 156, 192, 228, 227, 226]
            return "38;5;\(palette[min(Int(rowFraction * Float(palette.count)), palette.count - 1)])"
        }
    }

    private var peakStyle: String? { colours == .none ? nil : "1;37" }

    // MARK: Spectrogram

    /// " .:-=+*#%@": intensity as ink, so the spectrogram reads without colour too.
    static let intensityRamp: [Character] = [" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"]

    static func intensityIndex(_ value: Float) -> Int {
        min(Int(OSCValueGuard.unit(value) * Float(intensityRamp.count)), intensityRamp.count - 1)
    }

    private func spectrogramRows(width: Int, height: Int) -> [String] {
        (0..<height).map { row in
            guard row < history.count else { return "" }
            var line = StyledText()
            for value in Self.fold(history[row], columns: width) {
                let index = Self.intensityIndex(value)
                line.append(String(Self.intensityRamp[index]), style: heatStyle(index))
            }
            return line.rendered(width: width, colours: colours)
        }
    }

    /// Dark blue (quiet) through magenta and red to yellow and white (loud).
    private func heatStyle(_ index: Int) -> String? {
        guard index > 0 else { return nil }  // a blank cell needs no colour
        switch colours {
        case .none: return nil
        case .basic: return ["34", "34", "34", "35", "35", "31", "31", "33", "1;33", "1;37"][index]
        case .extended: return "38;5;\([17, 19, 21, 57, 93, 129, 165, 197, 208, 226][index])"
        }
    }

    // MARK: Text lines

    private func header(_ reading: Reading, width: Int) -> StyledText {
        // "q: quit" stays visible: the sources give way first, then the title, the rate, the
        // mode and "m: mode".
        var rightParts = [String(format: "%g kHz/%d", reading.sampleRateHz / 1000, reading.periodFrames), mode.rawValue, "m: mode", "q: quit"]
        while rightParts.count > 1, 2 * rightParts.count + rightParts.joined().count > width - 16 { rightParts.removeFirst() }
        let right = rightParts.map { "  " + $0 }.joined()
        let input = reading.sources.isEmpty ? "  no input connected" : "  in: " + reading.sources.joined(separator: ", ")
        let room = max(0, width - right.count)
        var line = StyledText()
        line.append(String("Spectrum".prefix(room)), style: colours == .none ? nil : "1")
        line.append(String((" monitor " + clientName + input).prefix(room - line.visibleCount)))
        line.pad(to: width - right.count)
        line.append(right)
        return line
    }

    /// `VU ████████░░░░ -12.3 dBFS │ A4 +3¢ 440.0 Hz │ 120.0 BPM ● beat`.
    private func status(_ reading: Reading, width: Int) -> StyledText {
        let frame = reading.frame
        var line = StyledText()
        line.append("VU ")
        let meterWidth = min(30, max(8, width / 4))
        let filled = Int((OSCValueGuard.unit(frame.level.vu) * Float(meterWidth)).rounded())
        for cell in 0..<meterWidth {
            let position = (Float(cell) + 0.5) / Float(meterWidth)
            line.append(cell < filled ? "█" : "░", style: meterStyle(position: position, filled: cell < filled))
        }
        line.append(String(format: " %6.1f dBFS │ ", frame.level.rmsDecibels))
        if let note = frame.pitch.noteName {
            let text = String(format: "%@ %+3d¢ %7.1f Hz", note.padding(toLength: 3, withPad: " ", startingAt: 0),
                              Int(frame.pitch.cents.rounded()), frame.pitch.frequencyHz)
            line.append(text, style: colours == .none ? nil : TunerScreen.colourCode(cents: frame.pitch.cents))
        } else {
            line.append("no note           ")
        }
        line.append(" │ ")
        line.append(frame.tempo.isLocked ? String(format: "%5.1f BPM ", frame.tempo.bpm) : "  --- BPM ")
        if reading.beatFlash {
            line.append("● beat", style: colours == .none ? nil : "1;31")
        } else {
            line.append("○     ")
        }
        return line
    }

    /// The VU meter's thresholds (seed 002): green below 0.6, yellow below 0.85, red above.
    private func meterStyle(position: Float, filled: Bool) -> String? {
        guard colours != .none else { return nil }
        guard filled else { return "2" }
        return position < 0.6 ? "32" : (position < 0.85 ? "33" : "31")
    }

    /// Frequency labels ("50", "100", … "10k") starting at the column of their band.
    private func axis(width: Int, bandCount: Int) -> String {
        var row = [Character](repeating: " ", count: width)
        var free = 0
        let count = min(bandCount, bandCentreFrequenciesHz.count)
        guard count > 0 else { return "" }
        let grouping = BandGrouping(groupCount: width)
        for (frequencyHz, label) in [(50.0, "50"), (100, "100"), (200, "200"), (500, "500"), (1000, "1k"), (2000, "2k"),
                                     (5000, "5k"), (10000, "10k"), (20000, "20k")] {
            guard let band = bandCentreFrequenciesHz.prefix(count).firstIndex(where: { $0 >= frequencyHz }),
                  let column = (0..<width).first(where: { grouping.bands(ofGroup: $0, bandCount: count).contains(band) }),
                  column >= free, column + label.count <= width else { continue }
            for (offset, character) in label.enumerated() { row[column + offset] = character }
            free = column + label.count + 1
        }
        return String(row).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }
}

/// A line of text with colour spans, rendered with an SGR code only where the style changes and
/// cut to a visible width (escape codes do not count). Pure.
struct StyledText {
    private var cells: [(text: String, style: String?)] = []
    private(set) var visibleCount = 0

    mutating func append(_ text: String, style: String? = nil) {
        if let last = cells.indices.last, cells[last].style == style {
            cells[last].text += text
        } else {
            cells.append((text, style))
        }
        visibleCount += text.count
    }

    /// Spaces up to `column` (nothing when already there or beyond).
    mutating func pad(to column: Int) {
        if column > visibleCount { append(String(repeating: " ", count: column - visibleCount)) }
    }

    func rendered(width: Int, colours: ColourSupport) -> String {
        var output = ""
        var remaining = width
        var current: String?
        for cell in cells where remaining > 0 {
            let text = cell.text.count > remaining ? String(cell.text.prefix(remaining)) : cell.text
            remaining -= text.count
            let style = colours == .none ? nil : cell.style
            if style != current {
                output += "\u{1B}[0m" + (style.map { "\u{1B}[\($0)m" } ?? "")
                current = style
            }
            output += text
        }
        if current != nil { output += "\u{1B}[0m" }
        return output
    }
}
