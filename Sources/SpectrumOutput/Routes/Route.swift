/// Routes: any analysis value to any OSC message, scaled, pulsed and paced the way a desk
/// wants it. A `Rig` is a named list of routes plus how its messages travel (bundled or plain,
/// which time tag). Rigs come from YAML files (`presets/rigs/*.yaml`, parsed by
/// SpectrumPresets) or, for today's address space, from `OSCAddressSpace` itself.
///
/// Plain values; everything here is built once at start, never per frame.

/// What a route reads from each frame. Vector sources give one value per band, group, point or
/// target; the others give one value.
public enum RouteSource: Sendable, Equatable, Hashable {
    /// Bands, 1-based and inclusive; nil: every band.
    case bands(ClosedRange<Int>?)
    case peaks(ClosedRange<Int>?)
    /// Group `index` (1-based) of `count`, or every group (`index` nil). `count` nil: the rig's
    /// group count (`--groups`).
    case groups(index: Int?, count: Int?)
    case level(LevelField)
    /// 1 while the event's pulse is held, else 0 (a flash and a return for every desk).
    case pulse(EventKind)
    /// The onset's strength while its pulse is held, else 0.
    case onsetStrength
    case beatPhase, beatInBar, beatCount, bpm, tempoConfidence
    case pitchHz, pitchMidi, pitchCents, pitchConfidence, pitchActive
    /// The note's name ("A4"), a text value; "" without a note.
    case noteName
    /// The note in the player's key (`--transpose`), text; "" without a note.
    case writtenNoteName
    /// The strobe's position, 0..<1 (0 without a note).
    case pitchStrobe
    /// String mode: the nearest open string's name ("A2"), text; "" without a note or string mode.
    case stringName
    /// String mode: cents from that string (0 without a note or string mode).
    case stringCents
    case waveform
    case status(StatusField)
    /// One value per OSC target: its 1-based index, `HOST:PORT`, state (ok, refused,
    /// unreachable, error, idle), datagrams sent, send errors.
    case target(TargetField)

    public enum LevelField: String, Sendable, CaseIterable { case vu, rms, peak, rmsDecibels = "rms_db", peakDecibels = "peak_db" }
    public enum EventKind: String, Sendable, CaseIterable { case onset, beat, downbeat }
    public enum StatusField: String, Sendable, CaseIterable {
        case sampleRateHz = "sample_rate_hz", periodFrames = "period_frames", xruns, droppedFrames = "dropped_frames"
        case dspLoadPercent = "dsp_load_percent", callbackMicroseconds = "callback_us"
        /// Input samples that were NaN or infinite (analysed as 0) since the start.
        case nonFiniteSamples = "non_finite_samples"
        /// 1 while the JACK server runs, 0 while it is lost.
        case serverRunning = "server_running"
        /// Times the JACK server came back since the start.
        case reconnections
        /// Seconds since the server was lost (0 while it runs).
        case serverLostSeconds = "server_lost_s"
        /// 1 while the MIDI clock runs (after FA), else 0.
        case midiClockRunning = "midi_clock_running"
        /// The MIDI clock's tempo (0 while stopped).
        case midiClockBpm = "midi_clock_bpm"
        /// F8 ticks sent since the start.
        case midiClockTicks = "midi_clock_ticks"
        /// The latest tick's distance from the beat grid, ms.
        case midiClockPhaseErrorMilliseconds = "midi_clock_phase_error_ms"
        /// Other peers in the Ableton Link session.
        case linkPeers = "link_peers"
        /// 1 when spectrum sets the session's tempo and beat.
        case linkLeading = "link_leading"
        /// The Link session's tempo.
        case linkBpm = "link_bpm"
        /// The session's beat against the detected beat, ms.
        case linkPhaseErrorMilliseconds = "link_phase_error_ms"
    }
    public enum TargetField: String, Sendable, CaseIterable { case index, address, state, sent, errors }

    /// The name used in rig files, e.g. `bands 1-16`, `group 3 of 8`, `level.rms_db`, `beat`.
    public var name: String {
        func range(_ range: ClosedRange<Int>?) -> String { range.map { $0.lowerBound == $0.upperBound ? " \($0.lowerBound)" : " \($0.lowerBound)-\($0.upperBound)" } ?? "" }
        switch self {
        case .bands(let bands): return (bands?.count == 1 ? "band" : "bands") + range(bands)
        case .peaks(let bands): return (bands?.count == 1 ? "peak" : "peaks") + range(bands)
        case .groups(let index?, let count): return "group \(index)" + (count.map { " of \($0)" } ?? "")
        case .groups(nil, let count): return "groups" + (count.map { " of \($0)" } ?? "")
        case .level(.vu): return "level"
        case .level(let field): return "level.\(field.rawValue)"
        case .pulse(let event): return event.rawValue
        case .onsetStrength: return "onset.strength"
        case .beatPhase: return "beat.phase"
        case .beatInBar: return "beat.in_bar"
        case .beatCount: return "beat.count"
        case .bpm: return "bpm"
        case .tempoConfidence: return "tempo.confidence"
        case .pitchHz: return "pitch.hz"
        case .pitchMidi: return "pitch.midi"
        case .pitchCents: return "pitch.cents"
        case .pitchConfidence: return "pitch.confidence"
        case .pitchActive: return "pitch.active"
        case .noteName: return "note"
        case .writtenNoteName: return "note.written"
        case .pitchStrobe: return "pitch.strobe"
        case .stringName: return "pitch.string"
        case .stringCents: return "pitch.string_cents"
        case .waveform: return "waveform"
        case .status(let field): return "status.\(field.rawValue)"
        case .target(let field): return "target.\(field.rawValue)"
        }
    }

    /// Every scalar source name, for error messages and docs.
    public static let scalarNames: [String] = [
        "level", "level.rms", "level.peak", "level.rms_db", "level.peak_db", "onset", "onset.strength", "beat", "downbeat",
        "beat.phase", "beat.in_bar", "beat.count", "bpm", "tempo.confidence", "pitch.hz", "pitch.midi", "pitch.cents",
        "pitch.confidence", "pitch.active", "note",
    ] + StatusField.allCases.map { "status.\($0.rawValue)" }

    /// What the forms with numbers look like, for error messages.
    public static let vectorForms = "band N, bands [A-B], peak N, peaks [A-B], group N of M, groups [of M], waveform, target.index|address|state|sent|errors"

    /// Parses a source name as written in a rig file; nil when it names nothing.
    public init?(parsing text: String) {
        let words = text.split(separator: " ").map(String.init)
        guard let head = words.first else { return nil }
        func bandRange(_ words: ArraySlice<String>, single: Bool) -> ClosedRange<Int>?? {
            if words.isEmpty { return single ? nil : .some(nil) }
            guard words.count == 1 else { return nil }
            let parts = words.first!.split(separator: "-", omittingEmptySubsequences: false)
            guard let low = Int(parts[0]), low >= 1 else { return nil }
            if parts.count == 1 { return .some(low...low) }
            guard !single, parts.count == 2, let high = Int(parts[1]), high >= low else { return nil }
            return .some(low...high)
        }
        switch head {
        case "band", "bands", "peak", "peaks":
            guard let range = bandRange(words.dropFirst(), single: head == "band" || head == "peak") else { return nil }
            self = head.hasPrefix("band") ? .bands(range) : .peaks(range)
            return
        case "group", "groups":
            var rest = words.dropFirst()
            var index: Int?
            if head == "group" {
                guard let first = rest.first, let value = Int(first), value >= 1 else { return nil }
                index = value
                rest = rest.dropFirst()
            }
            var count: Int?
            if !rest.isEmpty {
                guard rest.count == 2, rest.first == "of", let value = Int(rest.last!), OSCAddressSpace.groupCountRange.contains(value) else { return nil }
                count = value
            }
            if let index, let count, index > count { return nil }
            self = .groups(index: index, count: count)
            return
        default:
            guard words.count == 1 else { return nil }
        }
        switch head {
        case "level", "level.vu": self = .level(.vu)
        case "onset", "beat", "downbeat": self = .pulse(EventKind(rawValue: head)!)
        case "onset.strength": self = .onsetStrength
        case "beat.phase": self = .beatPhase
        case "beat.in_bar": self = .beatInBar
        case "beat.count": self = .beatCount
        case "bpm", "tempo", "tempo.bpm": self = .bpm
        case "tempo.confidence": self = .tempoConfidence
        case "pitch", "pitch.hz": self = .pitchHz
        case "pitch.midi": self = .pitchMidi
        case "pitch.cents", "cents": self = .pitchCents
        case "pitch.confidence": self = .pitchConfidence
        case "pitch.active": self = .pitchActive
        case "note", "pitch.note": self = .noteName
        case "note.written": self = .writtenNoteName
        case "pitch.strobe": self = .pitchStrobe
        case "pitch.string": self = .stringName
        case "pitch.string_cents": self = .stringCents
        case "waveform": self = .waveform
        default:
            let parts = head.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return nil }
            switch parts[0] {
            case "level": guard let field = LevelField(rawValue: parts[1]) else { return nil }; self = .level(field)
            case "status": guard let field = StatusField(rawValue: parts[1]) else { return nil }; self = .status(field)
            case "target": guard let field = TargetField(rawValue: parts[1]) else { return nil }; self = .target(field)
            default: return nil
            }
        }
    }

    /// True for sources that give one value per band, group, point or target (even when there
    /// is only one of them).
    public var isVector: Bool {
        switch self {
        case .bands, .peaks, .waveform, .target: true
        case .groups(let index, _): index == nil
        default: false
        }
    }

    /// True for sources that give text rather than a number.
    public var isText: Bool {
        switch self {
        case .noteName, .writtenNoteName, .stringName, .target(.address), .target(.state): true
        default: false
        }
    }

    /// The range the value naturally lies in: the default input range of a scaling.
    public var naturalRange: ClosedRange<Double> {
        switch self {
        case .level(.rmsDecibels), .level(.peakDecibels): -60...0
        case .bpm: 0...300
        case .pitchHz: 0...4200
        case .pitchMidi: 0...127
        case .pitchCents, .stringCents: -50...50
        case .waveform: -1...1
        case .beatInBar: 0...16
        case .beatCount, .status, .target: 0...Double(Int32.max)
        default: 0...1
        }
    }
}

/// How numbers become the message's values.
public struct RouteScaling: Sendable, Equatable, Hashable {
    public enum Curve: String, Sendable, CaseIterable {
        /// Straight from the input range to the output range.
        case linear
        /// The normalised input raised to `exponent` first: a perceptual fade for dimmers.
        case exponential
        /// A linear amplitude (level.rms, level.peak) read in dB over the input range in dB.
        case decibels = "db"
    }
    /// Input range; nil: the source's natural range (used only when `to` or a curve asks).
    public var from: ClosedRange<Double>?
    /// Output range; nil: no scaling unless `from` is given (then 0..1).
    public var to: ClosedRange<Double>?
    public var curve: Curve = .linear
    /// For the exponential curve.
    public var exponent: Double = 2
    /// Clamp the result to the output range (default). Off: values beyond the input range
    /// map beyond the output range; non-finite values still become the range's low end.
    public var clamp = true

    public init(from: ClosedRange<Double>? = nil, to: ClosedRange<Double>? = nil, curve: Curve = .linear, exponent: Double = 2, clamp: Bool = true) {
        self.from = from
        self.to = to
        self.curve = curve
        self.exponent = exponent
        self.clamp = clamp
    }

    public static let none = RouteScaling()

    /// True when values pass unchanged (apart from the non-finite guard).
    public var isIdentity: Bool { from == nil && to == nil && curve == .linear }
}

/// One source of a route with its own scaling.
public struct RouteValue: Sendable, Equatable, Hashable {
    public var source: RouteSource
    public var scaling: RouteScaling

    public init(_ source: RouteSource, scaling: RouteScaling = .none) {
        self.source = source
        self.scaling = scaling
    }
}

/// How the values travel as OSC arguments.
public enum RouteArguments: Sendable, Equatable, Hashable {
    /// One type tag per value, cycled when there are fewer tags than values: `f`, `i`, `T`
    /// (true/false: `T` or `F` on the wire, true from 0.5 up), `s`.
    case tags([Character])
    /// The values as bytes 0..255 in one blob (a DMX universe).
    case blob

    public static let allowedTags: Set<Character> = ["f", "i", "T", "s"]
}

/// When a route sends.
public struct SendPolicy: Sendable, Equatable, Hashable {
    public enum Mode: String, Sendable, CaseIterable {
        case everyFrame = "every_frame"
        /// Only when the encoded values differ from the last ones sent.
        case onChange = "on_change"
    }
    public var mode: Mode = .everyFrame
    /// At most this many messages per second (counted in frames of audio time); nil: no limit.
    /// With `on_change`, a change held back by the limit is sent when the limit allows.
    public var maximumRateHz: Double?

    public init(mode: Mode = .everyFrame, maximumRateHz: Double? = nil) {
        self.mode = mode
        self.maximumRateHz = maximumRateHz
    }
}

/// A frame-level condition for sending at all.
public enum RouteCondition: String, Sendable, CaseIterable {
    /// While a note sounds.
    case pitchActive = "pitch.active"
    /// While a note sounds in string mode (the nearest string is known).
    case stringActive = "pitch.string.active"
    /// Frames with an onset.
    case onset
    /// At each beat (sent early, from the beat mailbox, when the host has one).
    case beat
    /// At each beat that is the first of its bar.
    case downbeat
    /// While a tempo is locked.
    case tempoLocked = "tempo.locked"
    /// Once per second of audio, with the host's status.
    case status
}

/// One route: values → one OSC message (or one per element).
public struct Route: Sendable, Equatable, Hashable {
    public var values: [RouteValue]
    /// The address; `{prefix}` is the rig's prefix, `{n}` the element number (one message per
    /// element: band, group, target…, numbered from `firstNumber`).
    public var address: String
    public var arguments: RouteArguments
    /// One message per element of the vector sources (implied by `{n}` in the address).
    public var perElement: Bool
    public var firstNumber: Int
    public var condition: RouteCondition?
    public var policy: SendPolicy
    /// For numbers sent as text (type `s`): the text with `{value}` standing for the number,
    /// e.g. `Master 3.1 At {value}` for a desk's command line.
    public var format: String?
    /// How long an event pulse stays at 1 (at least one frame).
    public var holdMilliseconds: Double
    /// The named input (`--input NAME`) whose frames and beats feed this route; nil: the first
    /// input's (slot 0).
    public var input: String?
    /// Where the route was written (for errors), when it came from a file.
    public var line: Int?

    public static let defaultHoldMilliseconds = 30.0

    public init(values: [RouteValue], address: String, arguments: RouteArguments = .tags(["f"]), perElement: Bool? = nil, firstNumber: Int = 1,
                condition: RouteCondition? = nil, policy: SendPolicy = SendPolicy(), format: String? = nil, holdMilliseconds: Double = Route.defaultHoldMilliseconds, input: String? = nil, line: Int? = nil) {
        self.values = values
        self.address = address
        self.arguments = arguments
        self.perElement = perElement ?? address.contains("{n}")
        self.firstNumber = firstNumber
        self.condition = condition
        self.policy = policy
        self.format = format
        self.holdMilliseconds = holdMilliseconds
        self.input = input
        self.line = line
    }
}

/// A named set of routes and how its messages travel.
public struct Rig: Sendable, Equatable, Hashable {
    public enum TimeTag: String, Sendable, CaseIterable {
        /// "Now": receivers act at once (OLA and liblo hold future-tagged bundles back).
        case immediate
        /// The frame's acoustic time on the wall clock (for receivers that align to it).
        case capture
    }
    public var name: String
    /// One bundle per frame (true) or plain messages (grandMA3 ignores bundles).
    public var bundled: Bool
    public var timeTag: TimeTag
    /// Groups for `groups` sources that do not say `of N` (`--groups`).
    public var groupCount: Int
    public var routes: [Route]

    public init(name: String, bundled: Bool = true, timeTag: TimeTag = .immediate, groupCount: Int = OSCAddressSpace.defaultGroupCount, routes: [Route]) {
        self.name = name
        self.bundled = bundled
        self.timeTag = timeTag
        self.groupCount = groupCount
        self.routes = routes
    }

    /// The name of the built-in rig: today's address space under `--prefix`.
    public static let spectrumName = "spectrum"
}
