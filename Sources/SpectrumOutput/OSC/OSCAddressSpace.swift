/// The OSC address space, as code: the one source of truth that the publisher sends, that
/// `spectrum osc-spec` prints and that docs/osc.md contains verbatim (a test checks it).
///
/// Everything here allocates; build it once at startup, never per frame.

import SpectrumCore

/// One kind of message the publisher can send. The publisher builds exactly these, under the
/// addresses that `OSCAddressSpace` gives them.
public enum OSCMessageKind: String, CaseIterable, Sendable {
    case bands
    case peaks
    case groups
    case level
    case levelDecibels
    case waveform
    case status
    case targetStatus
    case serverStatus
    case midiClockStatus
    case linkStatus
    case pitchActive
    case pitch
    case note
    case writtenNote
    case strobe
    case string
    case stringCents
    case onset
    case tempo
    case beatPhase
    case beat

    /// The address below the prefix.
    public var suffix: String {
        switch self {
        case .bands: "/bands"
        case .peaks: "/peaks"
        case .groups: "/groups"
        case .level: "/level"
        case .levelDecibels: "/level/db"
        case .waveform: "/waveform"
        case .status: "/status"
        case .pitchActive: "/pitch/active"
        case .pitch: "/pitch"
        case .note: "/note"
        case .writtenNote: "/note/written"
        case .strobe: "/pitch/strobe"
        case .string: "/pitch/string"
        case .stringCents: "/pitch/string/cents"
        case .onset: "/onset"
        case .tempo: "/tempo"
        case .beatPhase: "/beat/phase"
        case .beat: "/beat"
        case .targetStatus: "/status/target"
        case .serverStatus: "/status/server"
        case .midiClockStatus: "/status/midi_clock"
        case .linkStatus: "/status/link"
        }
    }

    /// On unless switched off; the waveform is opt-in (`--waveform`): at 512 floats it triples
    /// the packet size and only visual tools want it. The MIDI clock's status comes with
    /// `--midi-clock`, Link's with `--link`.
    public var isEnabledByDefault: Bool { self != .waveform && self != .midiClockStatus && self != .linkStatus }

    /// The health messages: with named inputs they stay under the prefix (once per second for
    /// the whole client), while every other kind is sent under `prefix/NAME` for each input.
    public var isStatus: Bool { [.status, .targetStatus, .serverStatus, .midiClockStatus, .linkStatus].contains(self) }
}

/// A set of message kinds (which ones the publisher sends).
public struct OSCMessageSet: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ kind: OSCMessageKind) {
        rawValue = 1 << UInt32(OSCMessageKind.allCases.firstIndex(of: kind)!)
    }

    public func contains(_ kind: OSCMessageKind) -> Bool { contains(OSCMessageSet(kind)) }

    public static let bands = OSCMessageSet(.bands)
    public static let peaks = OSCMessageSet(.peaks)
    public static let groups = OSCMessageSet(.groups)
    public static let level = OSCMessageSet(.level)
    public static let levelDecibels = OSCMessageSet(.levelDecibels)
    public static let waveform = OSCMessageSet(.waveform)
    public static let status = OSCMessageSet(.status)
    public static let pitchActive = OSCMessageSet(.pitchActive)
    public static let pitch = OSCMessageSet(.pitch)
    public static let note = OSCMessageSet(.note)
    public static let writtenNote = OSCMessageSet(.writtenNote)
    public static let strobe = OSCMessageSet(.strobe)
    public static let string = OSCMessageSet(.string)
    public static let stringCents = OSCMessageSet(.stringCents)
    public static let onset = OSCMessageSet(.onset)
    public static let tempo = OSCMessageSet(.tempo)
    public static let beatPhase = OSCMessageSet(.beatPhase)
    public static let beat = OSCMessageSet(.beat)
    public static let targetStatus = OSCMessageSet(.targetStatus)
    public static let serverStatus = OSCMessageSet(.serverStatus)
    public static let midiClockStatus = OSCMessageSet(.midiClockStatus)
    public static let linkStatus = OSCMessageSet(.linkStatus)

    public static let all = OSCMessageSet(OSCMessageKind.allCases.map(OSCMessageSet.init))
    /// Everything except the waveform and the MIDI clock's and Link's status.
    public static let `default` = OSCMessageSet(OSCMessageKind.allCases.filter(\.isEnabledByDefault).map(OSCMessageSet.init))
}

/// One argument (or a run of `count` arguments of the same meaning) of a message.
public struct OSCArgumentSpec: Sendable, Equatable {
    public var name: String
    /// OSC type tag of each argument of the run: "f" or "i".
    public var typeTag: Character
    public var count: Int
    public var unit: String
    public var range: String

    public init(name: String, typeTag: Character, count: Int = 1, unit: String, range: String) {
        self.name = name
        self.typeTag = typeTag
        self.count = count
        self.unit = unit
        self.range = range
    }
}

extension OSCArgumentSpec {
    /// The numeric bounds written in `range` when it reads "MIN..MAX" (e.g. `0..1`, `−120..+24`,
    /// the last range of `0 or 60..180`); nil for open or textual ranges (`≥ 0`, `text`). Derived
    /// from the same text `spectrum osc-spec` prints, so OSCQuery's RANGE cannot drift from it.
    public var numericBounds: ClosedRange<Double>? {
        let lastAlternative = range.split(separator: " ").last.map(String.init) ?? range
        let parts = lastAlternative.replacing("\u{2212}", with: "-").replacing("+", with: "").split(separator: "..", omittingEmptySubsequences: false)
        guard parts.count == 2, let low = Double(parts[0]), let high = Double(parts[1]), low <= high else { return nil }
        return low...high
    }
}

/// One address of the table.
public struct OSCAddressEntry: Sendable, Equatable {
    public var kind: OSCMessageKind
    /// Full address, prefix included, e.g. `/spectrum/level`.
    public var address: String
    public var arguments: [OSCArgumentSpec]
    public var rate: String
    public var description: String
    /// An `oscdump`-style line (long argument lists shortened with "…").
    public var example: String
    public var enabledByDefault: Bool

    /// The complete type tag string as it appears on the wire, e.g. "iiiiff".
    public var typeTags: String {
        String(arguments.flatMap { Array(repeating: $0.typeTag, count: $0.count) })
    }

    /// The type tags for reading: the full string up to 8 arguments (`iiiiff`), longer runs
    /// written as `f×128`.
    public var displayTypeTags: String {
        let full = typeTags
        guard full.count > 8 else { return full }
        return arguments.map { $0.count > 4 ? "\($0.typeTag)×\($0.count)" : String(repeating: $0.typeTag, count: $0.count) }
            .joined(separator: " ")
    }
}

/// The table of every address under `prefix`, for a given band count, group count and rate.
public struct OSCAddressSpace: Sendable, Equatable {
    public static let defaultPrefix = "/spectrum"
    public static let defaultGroupCount = 8
    public static let groupCountRange = 1...64

    public let prefix: String
    public let bandCount: Int
    public let groupCount: Int
    public let outputRateHz: Double
    public let entries: [OSCAddressEntry]

    public init(prefix: String = OSCAddressSpace.defaultPrefix, bandCount: Int = 128, groupCount: Int = OSCAddressSpace.defaultGroupCount, outputRateHz: Double = 60) {
        self.prefix = prefix
        self.bandCount = bandCount
        self.groupCount = groupCount
        self.outputRateHz = outputRateHz
        let everyFrame = "every frame (\(Self.formatRate(outputRateHz)) Hz)"
        let statusEvery = BandGrouping.statusIntervalFrames(outputRateHz: outputRateHz)
        let lastBand = bandCount - 1, lastGroup = groupCount - 1
        entries = [
            OSCAddressEntry(
                kind: .bands, address: prefix + OSCMessageKind.bands.suffix,
                arguments: [OSCArgumentSpec(name: "band 0…\(lastBand)", typeTag: "f", count: bandCount, unit: "normalised energy", range: "0..1")],
                rate: everyFrame,
                description: "Smoothed, auto-levelled energy of \(bandCount) log-spaced bands, 20 Hz (first) to 20 kHz (last).",
                example: "\(prefix)/bands " + Self.exampleTags("f", bandCount) + " 0.02 0.41 0.87 0.63 … 0.05",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .peaks, address: prefix + OSCMessageKind.peaks.suffix,
                arguments: [OSCArgumentSpec(name: "peak 0…\(lastBand)", typeTag: "f", count: bandCount, unit: "normalised energy", range: "0..1")],
                rate: everyFrame,
                description: "Falling peak-hold of each band (same order as `\(prefix)/bands`).",
                example: "\(prefix)/peaks " + Self.exampleTags("f", bandCount) + " 0.05 0.44 0.91 0.70 … 0.09",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .groups, address: prefix + OSCMessageKind.groups.suffix,
                arguments: [OSCArgumentSpec(name: "group 0…\(lastGroup)", typeTag: "f", count: groupCount, unit: "normalised energy", range: "0..1")],
                rate: everyFrame,
                description: "The bands in \(groupCount) groups of equal width on the log-frequency axis (equal runs of bands, lowest first); each group's value is the maximum of its bands. For lights and LED strips.",
                example: "\(prefix)/groups " + Self.exampleTags("f", groupCount) + " " + Self.exampleValues(groupCount),
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .level, address: prefix + OSCMessageKind.level.suffix,
                arguments: [OSCArgumentSpec(name: "vu", typeTag: "f", unit: "RMS, −60..0 dBFS mapped linearly", range: "0..1")],
                rate: everyFrame,
                description: "Level for a fader or a light: 0.6 and 0.85 are the meter's yellow and red thresholds.",
                example: "\(prefix)/level f 0.73",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .levelDecibels, address: prefix + OSCMessageKind.levelDecibels.suffix,
                arguments: [
                    OSCArgumentSpec(name: "rms", typeTag: "f", unit: "dBFS", range: "−120..+24"),
                    OSCArgumentSpec(name: "peak", typeTag: "f", unit: "dBFS", range: "−120..+24"),
                ],
                rate: everyFrame,
                description: "RMS over the analysis window and sample peak of the hop, in dBFS; −120 is silence (and what is sent in place of an invalid value).",
                example: "\(prefix)/level/db ff -16.2 -6.5",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .waveform, address: prefix + OSCMessageKind.waveform.suffix,
                arguments: [OSCArgumentSpec(name: "sample 0…\(AnalysisFrame.waveformPointCount - 1)", typeTag: "f", count: AnalysisFrame.waveformPointCount, unit: "sample value", range: "−1..1")],
                rate: everyFrame + ", off unless `--waveform`",
                description: "The newest analysis window downsampled to \(AnalysisFrame.waveformPointCount) points, oldest first, for oscilloscopes.",
                example: "\(prefix)/waveform " + Self.exampleTags("f", AnalysisFrame.waveformPointCount) + " 0.01 0.12 0.25 0.31 … -0.08",
                enabledByDefault: false),
            OSCAddressEntry(
                kind: .status, address: prefix + OSCMessageKind.status.suffix,
                arguments: [
                    OSCArgumentSpec(name: "sample rate", typeTag: "i", unit: "Hz", range: "≥ 0"),
                    OSCArgumentSpec(name: "period", typeTag: "i", unit: "frames", range: "≥ 0"),
                    OSCArgumentSpec(name: "xruns", typeTag: "i", unit: "count since start", range: "≥ 0"),
                    OSCArgumentSpec(name: "dropped", typeTag: "i", unit: "frames since start", range: "≥ 0"),
                    OSCArgumentSpec(name: "dsp load", typeTag: "f", unit: "%", range: "0..100"),
                    OSCArgumentSpec(name: "callback", typeTag: "f", unit: "µs, worst since start", range: "≥ 0"),
                    OSCArgumentSpec(name: "non-finite", typeTag: "i", unit: "input samples that were NaN or infinite, since start", range: "≥ 0"),
                ],
                rate: "once per second of audio (every \(statusEvery) frames)",
                description: "Health of the analyser: JACK sample rate and period, xruns, analysis frames dropped before sending, JACK DSP load, cost of the slowest process callback, and input samples that were not numbers (NaN or infinite: analysed as 0).",
                example: "\(prefix)/status iiiiffi 48000 256 0 0 3.1 41.5 0",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .targetStatus, address: prefix + OSCMessageKind.targetStatus.suffix,
                arguments: [
                    OSCArgumentSpec(name: "target", typeTag: "i", unit: "number, in the order given", range: "≥ 1"),
                    OSCArgumentSpec(name: "address", typeTag: "s", unit: "HOST:PORT", range: "text"),
                    OSCArgumentSpec(name: "state", typeTag: "s", unit: "ok, refused, unreachable, error or idle", range: "text"),
                    OSCArgumentSpec(name: "sent", typeTag: "i", unit: "datagrams since start", range: "≥ 0"),
                    OSCArgumentSpec(name: "errors", typeTag: "i", unit: "failed sends since start", range: "≥ 0"),
                ],
                rate: "once per second of audio, one message per target, with `\(prefix)/status`",
                description: "The health of every OSC target: refused means nothing listens at that port (ICMP port unreachable), unreachable means no route to it.",
                example: "\(prefix)/status/target issii 1 \"127.0.0.1:9000\" \"ok\" 3600 0",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .serverStatus, address: prefix + OSCMessageKind.serverStatus.suffix,
                arguments: [
                    OSCArgumentSpec(name: "running", typeTag: "i", unit: "1 while the JACK server runs, 0 while it is lost", range: "0..1"),
                    OSCArgumentSpec(name: "reconnections", typeTag: "i", unit: "times the server came back since start", range: "≥ 0"),
                    OSCArgumentSpec(name: "lost for", typeTag: "f", unit: "s since the server was lost (0 while it runs)", range: "≥ 0"),
                ],
                rate: "with `\(prefix)/status`; while no audio flows (the server is lost), once per second of wall time, alone",
                description: "The JACK server's state. While it is lost no frames are sent (never stale or zero frames that would black out a rig); this message says so, and for how long, until the server is back and frames resume.",
                example: "\(prefix)/status/server iif 0 3 4.2",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .midiClockStatus, address: prefix + OSCMessageKind.midiClockStatus.suffix,
                arguments: [
                    OSCArgumentSpec(name: "running", typeTag: "i", unit: "1 after FA, 0 after FC or before the first start", range: "0..1"),
                    OSCArgumentSpec(name: "bpm", typeTag: "f", unit: "the clock's tempo, 60 / (24 × tick period); 0 while stopped", range: "0 or 30..400"),
                    OSCArgumentSpec(name: "ticks", typeTag: "i", unit: "F8 sent since start", range: "≥ 0"),
                    OSCArgumentSpec(name: "phase error", typeTag: "f", unit: "ms of the latest tick against the beat grid (positive: the grid is ahead)", range: "any"),
                ],
                rate: "with `\(prefix)/status`, only with `--midi-clock`",
                description: "The MIDI clock on the JACK port `midi_clock`: whether it runs, its glided tempo, the ticks sent, and how far its ticks are from the beat grid (corrected by slewing the tick period).",
                example: "\(prefix)/status/midi_clock ifif 1 120.0 28800 0.02",
                enabledByDefault: false),
            OSCAddressEntry(
                kind: .linkStatus, address: prefix + OSCMessageKind.linkStatus.suffix,
                arguments: [
                    OSCArgumentSpec(name: "peers", typeTag: "i", unit: "other Link peers in the session", range: "≥ 0"),
                    OSCArgumentSpec(name: "leading", typeTag: "i", unit: "1 when spectrum sets the session's tempo and beat", range: "0..1"),
                    OSCArgumentSpec(name: "bpm", typeTag: "f", unit: "the session's tempo", range: "20..999"),
                    OSCArgumentSpec(name: "phase error", typeTag: "f", unit: "ms of the session's beat against the detected beat (positive: the session is early); 0 without a tempo", range: "any"),
                ],
                rate: "with `\(prefix)/status`, only with `--link`",
                description: "The Ableton Link session: how many peers, whether spectrum leads it (it started the session, or `--link-lead`), its tempo, and how far its beat is from the one spectrum hears.",
                example: "\(prefix)/status/link iiff 2 1 120.0 0.3",
                enabledByDefault: false),
            OSCAddressEntry(
                kind: .pitchActive, address: prefix + OSCMessageKind.pitchActive.suffix,
                arguments: [OSCArgumentSpec(name: "active", typeTag: "f", unit: "1 = a note sounds, 0 = no note", range: "0 or 1")],
                rate: everyFrame,
                description: "The explicit note / no-note state: 0 on silence, noise, drums and while a new note settles; then `\(prefix)/pitch` and `\(prefix)/note` stop.",
                example: "\(prefix)/pitch/active f 1.0",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .pitch, address: prefix + OSCMessageKind.pitch.suffix,
                arguments: [
                    OSCArgumentSpec(name: "frequency", typeTag: "f", unit: "Hz", range: "38..2200"),
                    OSCArgumentSpec(name: "midi", typeTag: "f", unit: "fractional MIDI note, 69 = A4", range: "0..127"),
                    OSCArgumentSpec(name: "cents", typeTag: "f", unit: "cents from the nearest note", range: "−50..50"),
                    OSCArgumentSpec(name: "confidence", typeTag: "f", unit: "normalised autocorrelation", range: "0..1"),
                ],
                rate: everyFrame + " while a note sounds",
                description: "The tuner: median of three estimates against the reference pitch (A4 = 440 Hz unless `--reference`).",
                example: "\(prefix)/pitch ffff 440.0 69.0 0.0 0.98",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .note, address: prefix + OSCMessageKind.note.suffix,
                arguments: [OSCArgumentSpec(name: "name", typeTag: "s", unit: "scientific pitch notation, sharps", range: "C-1..G9")],
                rate: everyFrame + " while a note sounds",
                description: "The nearest note's name with its octave, for displays (`E2`, `C#4`, `A4`).",
                example: "\(prefix)/note s \"A4\"",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .writtenNote, address: prefix + OSCMessageKind.writtenNote.suffix,
                arguments: [OSCArgumentSpec(name: "name", typeTag: "s", unit: "scientific pitch notation, sharps", range: "C-1..G9")],
                rate: everyFrame + " while a note sounds",
                description: "The note in the player's key (`--transpose Bb|Eb|F|SEMITONES`: a B♭ trumpet's sounding C4 is its written D4); the same as `\(prefix)/note` without a transposition.",
                example: "\(prefix)/note/written s \"D4\"",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .strobe, address: prefix + OSCMessageKind.strobe.suffix,
                arguments: [OSCArgumentSpec(name: "phase", typeTag: "f", unit: "turns", range: "0..1")],
                rate: everyFrame + " while a note sounds",
                description: "A strobe tuner's band position: it moves a quarter turn per second per cent sharp (backwards when flat) of the tuning target (the string in string mode, else the note, in the temperament) and stands still in tune. Draw a repeating band shifted by phase × its period.",
                example: "\(prefix)/pitch/strobe f 0.375",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .string, address: prefix + OSCMessageKind.string.suffix,
                arguments: [OSCArgumentSpec(name: "string", typeTag: "s", unit: "the nearest open string's note", range: "B0..E5")],
                rate: everyFrame + " while a note sounds in string mode",
                description: "String mode (`--strings guitar|guitar-drop-d|bass|bass-5|violin|viola|cello|ukulele`): the nearest open string.",
                example: "\(prefix)/pitch/string s \"A2\"",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .stringCents, address: prefix + OSCMessageKind.stringCents.suffix,
                arguments: [OSCArgumentSpec(name: "cents", typeTag: "f", unit: "cents from the nearest open string", range: "−1200..1200")],
                rate: everyFrame + " while a note sounds in string mode",
                description: "String mode: how far the note is from that string (equal temperament, the reference pitch).",
                example: "\(prefix)/pitch/string/cents f -3.5",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .onset, address: prefix + OSCMessageKind.onset.suffix,
                arguments: [OSCArgumentSpec(name: "strength", typeTag: "f", unit: "rise above the adaptive threshold", range: "0..1")],
                rate: "on frames with an onset (at most 10 per second), live in a bundle of its own just before the frame's",
                description: "An onset: a sudden rise of spectral energy (a drum hit, a plucked note). Time tag (live): the attack's acoustic time, located in the samples (up to a hop and a half before the frame's).",
                example: "\(prefix)/onset f 0.84",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .tempo, address: prefix + OSCMessageKind.tempo.suffix,
                arguments: [
                    OSCArgumentSpec(name: "bpm", typeTag: "f", unit: "beats per minute, 0 = no tempo locked", range: "0 or 60..180"),
                    OSCArgumentSpec(name: "confidence", typeTag: "f", unit: "onset autocorrelation at the beat period", range: "0..1"),
                ],
                rate: everyFrame,
                description: "The tempo; 0 BPM (explicitly) in silence, on steady sounds and until the tempo locks (~3 s).",
                example: "\(prefix)/tempo ff 128.0 0.71",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .beatPhase, address: prefix + OSCMessageKind.beatPhase.suffix,
                arguments: [OSCArgumentSpec(name: "phase", typeTag: "f", unit: "position within the beat, 0 at each beat event", range: "0..1")],
                rate: everyFrame,
                description: "A ramp for chases and sweeps, locked to the beats; 0 while no tempo is locked.",
                example: "\(prefix)/beat/phase f 0.25",
                enabledByDefault: true),
            OSCAddressEntry(
                kind: .beat, address: prefix + OSCMessageKind.beat.suffix,
                arguments: [
                    OSCArgumentSpec(name: "count", typeTag: "i", unit: "beats since the tempo locked", range: "≥ 1"),
                    OSCArgumentSpec(name: "in bar", typeTag: "i", unit: "beat in the bar (downbeat not detected)", range: "1..beats per bar"),
                    OSCArgumentSpec(name: "bpm", typeTag: "f", unit: "beats per minute", range: "60..180"),
                ],
                rate: "once per beat, in a bundle of its own as soon as the JACK cycle holding the beat (early by `rhythm.lead_ms` if set) is analysed",
                description: "A beat trigger at each predicted beat, for flashes and steps; it does not wait for the end of the frame (within one JACK period plus 2 ms of the beat). Time tag: the beat's acoustic time, or now if that is later.",
                example: "\(prefix)/beat iif 33 1 128.0",
                enabledByDefault: true),
        ]
    }

    public func entry(_ kind: OSCMessageKind) -> OSCAddressEntry {
        entries.first { $0.kind == kind }!
    }

    /// Sections of the documentation, in order, with the kinds they contain.
    public static let sections: [(title: String, kinds: [OSCMessageKind])] = [
        ("Spectrum", [.bands, .peaks, .groups]),
        ("Level", [.level, .levelDecibels]),
        ("Tuner", [.pitchActive, .pitch, .note, .writtenNote, .strobe, .string, .stringCents]),
        ("Rhythm", [.onset, .tempo, .beatPhase, .beat]),
        ("Waveform", [.waveform]),
        ("Status", [.status, .targetStatus, .serverStatus, .midiClockStatus, .linkStatus]),
    ]

    /// The tables in Markdown, one per section, each followed by its `oscdump` examples.
    /// docs/osc.md holds this text verbatim for the defaults.
    public func markdown() -> String {
        var lines: [String] = []
        for section in Self.sections {
            lines.append("### \(section.title)")
            lines.append("")
            lines.append("| Address | Types | Arguments (name, unit, range) | Rate | Description |")
            lines.append("| --- | --- | --- | --- | --- |")
            let sectionEntries = section.kinds.map(entry)
            for item in sectionEntries {
                let arguments = item.arguments.map { "\($0.name) (\($0.unit), \($0.range))" }.joined(separator: "; ")
                lines.append("| `\(item.address)` | `\(item.displayTypeTags)` | \(arguments) | \(item.rate) | \(item.description) |")
            }
            lines.append("")
            lines.append("```")
            lines.append(contentsOf: sectionEntries.map(\.example))
            lines.append("```")
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    static func formatRate(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }

    static func exampleTags(_ tag: Character, _ count: Int) -> String {
        count > 6 ? String(repeating: tag, count: 4) + "…" : String(repeating: tag, count: count)
    }

    static func exampleValues(_ count: Int) -> String {
        let sample = ["0.91", "0.78", "0.55", "0.62", "0.40", "0.33", "0.21", "0.12"]
        if count <= 6 { return (0..<count).map { sample[$0 % sample.count] }.joined(separator: " ") }
        return sample.prefix(4).joined(separator: " ") + " … " + sample[7]
    }

    /// Checks a full address: `/`-separated parts of letters, digits and `_ - .` (what every
    /// desk accepts; no OSC pattern characters, no spaces).
    public static func isValidAddress(_ address: String) -> Bool {
        isValidPrefix(address)
    }

    /// Checks an address prefix: `/` followed by one or more `/`-separated parts made of
    /// letters, digits and `_ - .`; no trailing `/`.
    public static func isValidPrefix(_ prefix: String) -> Bool {
        guard prefix.hasPrefix("/"), !prefix.hasSuffix("/") else { return false }
        let parts = prefix.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            !part.isEmpty && part.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "_-.".unicodeScalars.contains(scalar))
            }
        }
    }
}
