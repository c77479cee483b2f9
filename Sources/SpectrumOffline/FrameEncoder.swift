import SpectrumDSP
import SpectrumCore

/// The text formats `spectrum analyze` writes. Any thread.
public enum FrameFormat: String, CaseIterable, Sendable {
    /// One JSON object per line (JSON Lines); schema in docs/analyze.md.
    case json
    /// A header row, then one comma-separated row per frame.
    case csv
}

/// Turns analysis frames into bytes: hand-formatted fixed-point numbers appended to a byte
/// buffer, no `JSONEncoder`, no `String` per number, so writing keeps up with an analysis
/// running hundreds of times faster than real time. Numbers are rounded (0..1 values to 4
/// decimals, dB to 2, time to 6), trailing zeros dropped, never NaN or infinite.
/// Not real-time safe (the buffer grows); for offline hosts, one thread at a time.
public struct FrameEncoder: Sendable {
    public let format: FrameFormat
    public let bandCount: Int
    public let sampleRateHz: Double
    /// Whether the tuner ran, so that `"pitch"` appears (an object, or null without a note).
    public let includesPitch: Bool
    /// Whether onsets, tempo and beats ran, so that `"onset"`, `"tempo"` and `"beat"` appear.
    public let includesRhythm: Bool

    public init(format: FrameFormat, bandCount: Int, sampleRateHz: Double, includesPitch: Bool = false, includesRhythm: Bool = false) {
        self.format = format
        self.bandCount = bandCount
        self.sampleRateHz = sampleRateHz
        self.includesPitch = includesPitch
        self.includesRhythm = includesRhythm
    }

    /// The CSV header row; nothing for JSON Lines.
    public func appendHeader(to buffer: inout [UInt8]) {
        guard format == .csv else { return }
        buffer.append(contentsOf: "time".utf8)
        for band in 0..<bandCount {
            buffer.append(contentsOf: ",band_".utf8)
            Self.appendInteger(UInt64(band), to: &buffer)
        }
        for band in 0..<bandCount {
            buffer.append(contentsOf: ",peak_".utf8)
            Self.appendInteger(UInt64(band), to: &buffer)
        }
        buffer.append(contentsOf: ",rms,peak,dbfs,vu".utf8)
        if includesPitch { buffer.append(contentsOf: ",pitch_hz,pitch_midi,pitch_note,pitch_cents,pitch_confidence,pitch_written,pitch_strobe,pitch_string,pitch_string_cents".utf8) }
        if includesRhythm { buffer.append(contentsOf: ",onset,onset_time,tempo_bpm,tempo_confidence,tempo_phase,beat_time,beat_count,beat_in_bar".utf8) }
        buffer.append(UInt8(ascii: "\n"))
    }

    /// One frame as one line (JSON object or CSV row), newline included.
    public func append(_ frame: borrowing AnalysisFrame, to buffer: inout [UInt8]) {
        let count = min(bandCount, frame.bandCount)
        let timeSeconds = Double(frame.streamFrame) / sampleRateHz
        let level = frame.level
        switch format {
        case .json:
            buffer.append(contentsOf: #"{"time":"#.utf8)
            Self.appendFixed(timeSeconds, decimals: 6, to: &buffer)
            buffer.append(contentsOf: #","bands":["#.utf8)
            for band in 0..<count {
                if band > 0 { buffer.append(UInt8(ascii: ",")) }
                Self.appendUnit(frame.bands[band], to: &buffer)
            }
            buffer.append(contentsOf: #"],"peaks":["#.utf8)
            for band in 0..<count {
                if band > 0 { buffer.append(UInt8(ascii: ",")) }
                Self.appendUnit(frame.peaks[band], to: &buffer)
            }
            buffer.append(contentsOf: #"],"level":{"rms":"#.utf8)
            Self.appendUnit(level.rms, to: &buffer)
            buffer.append(contentsOf: #","peak":"#.utf8)
            Self.appendUnit(level.peak, to: &buffer)
            buffer.append(contentsOf: #","dbfs":"#.utf8)
            Self.appendDecibels(level.rmsDecibels, to: &buffer)
            buffer.append(contentsOf: #","vu":"#.utf8)
            Self.appendUnit(level.vu, to: &buffer)
            buffer.append(UInt8(ascii: "}"))
            if includesPitch {
                let pitch = frame.pitch
                if pitch.hasNote {
                    buffer.append(contentsOf: #","pitch":{"hz":"#.utf8)
                    Self.appendFixed(Double(pitch.frequencyHz), decimals: 3, to: &buffer)
                    buffer.append(contentsOf: #","midi":"#.utf8)
                    Self.appendFixed(Double(pitch.midiNote), decimals: 4, to: &buffer)
                    buffer.append(contentsOf: #","note":""#.utf8)
                    Self.appendNoteName(pitch.noteNumber, to: &buffer)
                    buffer.append(contentsOf: #"","cents":"#.utf8)
                    Self.appendFixed(Double(pitch.cents), decimals: 2, to: &buffer)
                    buffer.append(contentsOf: #","confidence":"#.utf8)
                    Self.appendUnit(pitch.confidence, to: &buffer)
                    buffer.append(contentsOf: #","written":""#.utf8)
                    Self.appendNoteName(pitch.writtenNoteNumber, to: &buffer)
                    buffer.append(contentsOf: #"","strobe":"#.utf8)
                    Self.appendFixed(Double(pitch.strobePhase), decimals: 4, to: &buffer)
                    if pitch.stringNoteNumber >= 0 {
                        buffer.append(contentsOf: #","string":""#.utf8)
                        Self.appendNoteName(pitch.stringNoteNumber, to: &buffer)
                        buffer.append(contentsOf: #"","string_cents":"#.utf8)
                        Self.appendFixed(Double(pitch.stringCents), decimals: 2, to: &buffer)
                    }
                    buffer.append(UInt8(ascii: "}"))
                } else {
                    buffer.append(contentsOf: #","pitch":null"#.utf8)
                }
            }
            if includesRhythm {
                buffer.append(contentsOf: #","onset":"#.utf8)
                if frame.onset.isOnset {
                    Self.appendUnit(frame.onset.strength, to: &buffer)
                    buffer.append(contentsOf: #","onset_time":"#.utf8)
                    Self.appendFixed(frame.onset.timeFrames / sampleRateHz, decimals: 6, to: &buffer)
                } else {
                    buffer.append(contentsOf: #"null,"onset_time":null"#.utf8)
                }
                let tempo = frame.tempo
                if tempo.isLocked {
                    buffer.append(contentsOf: #","tempo":{"bpm":"#.utf8)
                    Self.appendFixed(Double(tempo.bpm), decimals: 2, to: &buffer)
                    buffer.append(contentsOf: #","confidence":"#.utf8)
                    Self.appendUnit(tempo.confidence, to: &buffer)
                    buffer.append(contentsOf: #","phase":"#.utf8)
                    Self.appendUnit(tempo.phase, to: &buffer)
                    buffer.append(UInt8(ascii: "}"))
                } else {
                    buffer.append(contentsOf: #","tempo":null"#.utf8)
                }
                let beat = frame.beat
                if beat.isBeat {
                    buffer.append(contentsOf: #","beat":{"time":"#.utf8)
                    Self.appendFixed(beat.timeFrames / sampleRateHz, decimals: 6, to: &buffer)
                    buffer.append(contentsOf: #","count":"#.utf8)
                    Self.appendInteger(UInt64(max(beat.count, 0)), to: &buffer)
                    buffer.append(contentsOf: #","in_bar":"#.utf8)
                    Self.appendInteger(UInt64(max(beat.inBar, 0)), to: &buffer)
                    buffer.append(UInt8(ascii: "}"))
                } else {
                    buffer.append(contentsOf: #","beat":null"#.utf8)
                }
            }
            buffer.append(contentsOf: "}\n".utf8)
        case .csv:
            Self.appendFixed(timeSeconds, decimals: 6, to: &buffer)
            for band in 0..<count {
                buffer.append(UInt8(ascii: ","))
                Self.appendUnit(frame.bands[band], to: &buffer)
            }
            for band in 0..<count {
                buffer.append(UInt8(ascii: ","))
                Self.appendUnit(frame.peaks[band], to: &buffer)
            }
            buffer.append(UInt8(ascii: ","))
            Self.appendUnit(level.rms, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            Self.appendUnit(level.peak, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            Self.appendDecibels(level.rmsDecibels, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            Self.appendUnit(level.vu, to: &buffer)
            if includesPitch {
                let pitch = frame.pitch
                if pitch.hasNote {
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(Double(pitch.frequencyHz), decimals: 3, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(Double(pitch.midiNote), decimals: 4, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendNoteName(pitch.noteNumber, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(Double(pitch.cents), decimals: 2, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendUnit(pitch.confidence, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendNoteName(pitch.writtenNoteNumber, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(Double(pitch.strobePhase), decimals: 4, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    if pitch.stringNoteNumber >= 0 {
                        Self.appendNoteName(pitch.stringNoteNumber, to: &buffer)
                        buffer.append(UInt8(ascii: ","))
                        Self.appendFixed(Double(pitch.stringCents), decimals: 2, to: &buffer)
                    } else {
                        buffer.append(UInt8(ascii: ","))
                    }
                } else {
                    buffer.append(contentsOf: ",,,,,,,,,".utf8)
                }
            }
            if includesRhythm {
                buffer.append(UInt8(ascii: ","))
                if frame.onset.isOnset {
                    Self.appendUnit(frame.onset.strength, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(frame.onset.timeFrames / sampleRateHz, decimals: 6, to: &buffer)
                } else {
                    buffer.append(UInt8(ascii: ","))
                }
                let tempo = frame.tempo
                if tempo.isLocked {
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(Double(tempo.bpm), decimals: 2, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendUnit(tempo.confidence, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendUnit(tempo.phase, to: &buffer)
                } else {
                    buffer.append(contentsOf: ",,,".utf8)
                }
                let beat = frame.beat
                if beat.isBeat {
                    buffer.append(UInt8(ascii: ","))
                    Self.appendFixed(beat.timeFrames / sampleRateHz, decimals: 6, to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendInteger(UInt64(max(beat.count, 0)), to: &buffer)
                    buffer.append(UInt8(ascii: ","))
                    Self.appendInteger(UInt64(max(beat.inBar, 0)), to: &buffer)
                } else {
                    buffer.append(contentsOf: ",,,".utf8)
                }
            }
            buffer.append(UInt8(ascii: "\n"))
        }
    }

    // MARK: Numbers (pure functions of their arguments; any thread, not real-time safe: the buffer may grow)

    /// Scientific pitch notation for a MIDI note number ("A4", "C#-1").
    static func appendNoteName(_ noteNumber: Int32, to buffer: inout [UInt8]) {
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        buffer.append(contentsOf: names[Int(noteNumber) % 12].utf8)
        let octave = Int(noteNumber) / 12 - 1
        if octave < 0 { buffer.append(UInt8(ascii: "-")) }
        appendInteger(UInt64(abs(octave)), to: &buffer)
    }

    /// A 0..1 value (clamped; NaN reads 0) with 4 decimals.
    @inline(__always)
    public static func appendUnit(_ value: Float, to buffer: inout [UInt8]) {
        let clamped = value.isNaN ? 0 : min(max(Double(value), 0), 1)
        appendFixed(clamped, decimals: 4, to: &buffer)
    }

    /// A level in dB with 2 decimals; NaN and −∞ read −120 (the analysis floor), +∞ reads 120.
    @inline(__always)
    public static func appendDecibels(_ value: Float, to buffer: inout [UInt8]) {
        let finite = value.isNaN ? -120 : min(max(Double(value), -120), 120)
        appendFixed(finite, decimals: 2, to: &buffer)
    }

    private static let powersOfTen: [UInt64] = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]

    /// `value` rounded to `decimals` (0…8) places, written without an exponent or trailing zeros
    /// ("0.25", "-3.1", "0"). Non-finite values write 0; magnitudes are capped at 1e9.
    public static func appendFixed(_ value: Double, decimals: Int, to buffer: inout [UInt8]) {
        let scale = powersOfTen[decimals]
        let magnitude = value.isFinite ? min(abs(value), 1e9) : 0
        let scaled = UInt64((magnitude * Double(scale)).rounded())
        if scaled == 0 {
            buffer.append(UInt8(ascii: "0"))
            return
        }
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        appendInteger(scaled / scale, to: &buffer)
        var fraction = scaled % scale
        guard fraction != 0 else { return }
        var digits = decimals
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        buffer.append(UInt8(ascii: "."))
        appendInteger(fraction, width: digits, to: &buffer)
    }

    /// Decimal digits of `value`, left-padded with zeros to `width`.
    public static func appendInteger(_ value: UInt64, width: Int = 1, to buffer: inout [UInt8]) {
        var digitCount = 1
        var rest = value / 10
        while rest > 0 {
            digitCount += 1
            rest /= 10
        }
        let total = max(digitCount, width)
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: total))
        var remaining = value
        var index = start + total - 1
        while remaining > 0 {
            buffer[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
            remaining /= 10
            index -= 1
        }
    }
}
