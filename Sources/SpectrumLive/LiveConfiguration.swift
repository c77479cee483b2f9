import SpectrumDSP

/// How a `LiveClient` joins the JACK graph. Plain values; the CLI fills it from its options.
public struct LiveConfiguration: Sendable, Equatable {
    /// Requested JACK client name (`--name`). Truncated to what JACK accepts (63 bytes with
    /// jackd2; see `LiveClient.maximumClientNameBytes`), never inside a UTF-8 character; JACK
    /// may still rename it (`LiveClient.clientName` is the real one).
    public var clientName: String = "spectrum"
    /// JACK server name (`--server`); nil = the default server. A server is never started.
    public var serverName: String? = nil
    /// Input ports per input: 1 → `in`; N > 1 → `in_1` … `in_N`, averaged to mono for the
    /// analysis (with named inputs: `NAME` or `NAME_1` … `NAME_N`).
    public var channelCount: Int = 1
    /// Connections of the ports in order (all inputs' ports, input by input).
    public var connections: LiveConnections = .physicalCapture
    /// Named inputs (`--input NAME[=SOURCE]`), each with its own ports and analyser, its frames
    /// tagged with its index (`AnalysisFrame.inputIndex`). Empty: one unnamed input, ports
    /// `in`/`in_k` as always. Names are validated by `LiveInput.validate`.
    public var inputs: [LiveInput] = []
    /// Offset each input's hops by `AnalyzerExchange.staggerFraction(slot:)` of a hop, so the
    /// inputs' heavy stages fall in different JACK cycles. Off only to measure what it saves
    /// (`SpectrumBench inputs-callback`).
    public var staggersInputHops = true
    public var analysis = AnalysisConfiguration()
    /// Frames the ring holds for the consumer (at 60 frames/s, 256 ≈ 4 s of backlog).
    public var ringCapacity: Int = 256
    /// Frames of the mono mix buffer. Cycles longer than this are processed in chunks, so it
    /// bounds memory, not what JACK may send; 0 = the server's period at start-up.
    public var mixBufferFrames: Int = 0
    /// Silence libjack's own stderr messages (e.g. "Cannot connect to server socket"):
    /// `LiveClient` throws one clear line instead. Process-wide (libjack has one error hook).
    public var quietJackLibrary: Bool = true
    /// When the server goes away, open a new client as soon as it is back (and again after
    /// every restart), restoring the connections (`--no-reconnect` turns it off: `isShutDown`
    /// then tells the caller to stop).
    public var reconnects: Bool = true
    /// A JACK MIDI output port `midi_clock` sending MIDI clock from the beat grid
    /// (`--midi-clock`; see `MidiClockScheduler`). Re-registered after a server restart, its
    /// connections restored like the inputs'.
    public var midiClock: Bool = false
    /// MIDI input ports the clock is connected to at start (`--midi-clock-connect`, full names
    /// such as `a2j:Midi Through [14] (playback): Midi Through Port-0`); remembered like every
    /// connection. Needs `midiClock`.
    public var midiClockDestinations: [String] = []
    /// The named input whose beat grid drives the MIDI clock (`--tempo-input`); nil: the first
    /// input (slot 0). Chosen before start: the process callback reads a fixed slot, and this
    /// input cannot be removed while running. Must be one of `inputs`.
    public var tempoInput: String? = nil
    /// Named inputs' sources that do not exist at start are remembered and connected when their
    /// port appears, instead of an error (a session's saved state: the session's other clients
    /// may start after spectrum). `connections` and the MIDI clock's destinations stay strict.
    public var awaitsMissingSources: Bool = false

    public init() {}

    /// The slot whose analyser drives the MIDI clock: `tempoInput`'s, else 0.
    var tempoSlot: Int { tempoInput.flatMap { name in inputs.firstIndex { $0.name == name } } ?? 0 }

    public static let maximumChannelCount = 64
    /// Inputs one client takes (each an analyser of about 1 MB and its share of the callback).
    public static let maximumInputCount = 32

    /// The input slots at start: one unnamed ("") input; or the named inputs followed by empty
    /// slots up to `maximumInputCount`, for inputs added at run time.
    var inputSlots: [String?] {
        inputs.isEmpty ? [""] : inputs.map(\.name) + Array(repeating: nil, count: max(0, Self.maximumInputCount - inputs.count))
    }

    /// Each slot's own analysis settings, in the order of `inputSlots` (none for empty slots).
    var inputSlotAnalysis: [AnalysisOverrides] {
        inputs.map(\.analysis) + Array(repeating: .none, count: inputSlots.count - inputs.count)
    }
}

/// One named input of the live client: its ports are `NAME` (or `NAME_1` … `NAME_N` with
/// several channels), its frames go out under `<prefix>/NAME/…`.
public struct LiveInput: Sendable, Equatable {
    /// 1 to 32 characters from A–Z, a–z, 0–9, `_` and `-` (valid in an OSC address and a JACK
    /// port name), not `in`.
    public var name: String
    /// Source ports connected to this input's ports at start (source k → channel k mod N), and
    /// remembered like every connection.
    public var sources: [String]
    /// The input's own analysis settings over `LiveConfiguration.analysis` (a preset's
    /// `inputs:` entry with sections of its own), re-applied at every rebuild. Frame rate and
    /// bands must be the shared ones (the preset loader refuses them per input).
    public var analysis: AnalysisOverrides

    public init(name: String, sources: [String] = [], analysis: AnalysisOverrides = .none) {
        self.name = name
        self.sources = sources
        self.analysis = analysis
    }

    public static let maximumNameLength = 32

    /// Parses `NAME[=SOURCE_PORT]` (the `--input` option's value); nil and a reason when it is
    /// not one.
    public static func parse(_ text: String) -> Result<LiveInput, LiveClientError> {
        let name: String, sources: [String]
        if let equals = text.firstIndex(of: "=") {
            name = String(text[..<equals])
            let source = String(text[text.index(after: equals)...])
            guard !source.isEmpty else {
                return .failure(LiveClientError(.invalidConfiguration, "--input \(text): expected NAME=SOURCE_PORT with a port after '=', e.g. kick=system:capture_1"))
            }
            sources = [source]
        } else {
            (name, sources) = (text, [])
        }
        let input = LiveInput(name: name, sources: sources)
        if let problem = input.nameProblem { return .failure(LiveClientError(.invalidConfiguration, "--input \(text): \(problem)")) }
        return .success(input)
    }

    /// What is wrong with `name`, or nil.
    var nameProblem: String? {
        if name.isEmpty { return "expected a name before the port, e.g. kick=system:capture_1" }
        if name.count > Self.maximumNameLength { return "the name is longer than \(Self.maximumNameLength) characters" }
        let allowed = name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == "-" }
        if !allowed { return "the name '\(name)' may hold only letters A–Z, digits, '_' and '-' (it becomes an OSC address part and a JACK port name)" }
        if name == "in" || name == LiveClient.midiClockPortShortName { return "the name '\(name)' is taken by spectrum's own ports" }
        // <prefix>/status… and <prefix>/control/… stay the process's own addresses.
        if name == "status" || name == "control" { return "the name '\(name)' is taken by spectrum's own OSC addresses (<prefix>/\(name))" }
        return nil
    }

    /// Checks a list of inputs: each name valid, none twice, at most `maximumInputCount`.
    /// `origin` names where they came from in the error line (`--input`, a preset's inputs).
    public static func validate(_ inputs: [LiveInput], origin: String = "--input") throws(LiveClientError) {
        guard inputs.count <= LiveConfiguration.maximumInputCount else {
            throw LiveClientError(.invalidConfiguration, "\(origin): \(inputs.count) inputs, expected at most \(LiveConfiguration.maximumInputCount)")
        }
        var seen: Set<String> = []
        for input in inputs {
            if let problem = input.nameProblem { throw LiveClientError(.invalidConfiguration, "\(origin) \(input.name): \(problem)") }
            guard seen.insert(input.name).inserted else {
                throw LiveClientError(.invalidConfiguration, "\(origin) \(input.name): the name is given twice; each input needs its own")
            }
        }
    }
}

/// Where the input ports are connected after activation.
public enum LiveConnections: Sendable, Equatable {
    /// The first physical capture port(s) (`jack_get_ports` with JackPortIsPhysical |
    /// JackPortIsOutput): the first to `in` (or `in_1`), the next to `in_2`, … Nothing when the
    /// server has none.
    case physicalCapture
    /// These source ports (`--connect`, repeatable), in order: source k → input (k mod N) + 1.
    /// A missing port is an error before anything is activated.
    case ports([String])
    /// No connection (`--no-connect`, or a session manager restores them).
    case none
}

/// Why a `LiveClient` could not start. `description` is one line, ready for the terminal.
public struct LiveClientError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case invalidConfiguration
        case noServer
        case openFailed
        case portRegistrationFailed
        case activationFailed
        case missingPort
        case connectionFailed
        case analysis
    }

    public let kind: Kind
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

/// A consistent-enough snapshot of the live client for status lines and the benchmark. Each
/// field is read atomically; the set is not one instant.
public struct LiveStatus: Sendable, Equatable {
    /// JACK's sample rate as last announced.
    public var sampleRateHz: Double
    /// The analyser's rate (differs from `sampleRateHz` only while a rebuild failed).
    public var analysisSampleRateHz: Double
    /// The period announced by the buffer-size callback.
    public var periodFrames: Int
    /// `nframes` of the latest process cycle.
    public var lastCycleFrames: Int
    public var callbacks: UInt64
    public var xruns: UInt64
    public var framesPushed: UInt64
    /// Frames lost because the consumer did not pop fast enough.
    public var framesDropped: UInt64
    /// Cycles longer than the mix buffer, processed in chunks.
    public var chunkedCycles: UInt64
    /// JACK's DSP load for the whole graph, percent (`jack_cpu_load`); 0 once stopped or shut down.
    public var dspLoadPercent: Double
    /// Cost of our process callback, measured with `jack_get_time()` around it.
    public var callbackCostMeanMicroseconds: Double
    public var callbackCostMaximumMicroseconds: Double
    /// Largest capture latency of the input ports (`JackCaptureLatency`, range maximum).
    public var captureLatencyFrames: Int
    public var captureLatencyMicroseconds: Double
    public var isFreewheeling: Bool
    /// The server went away (or dropped us) and `reconnects` is off: the client no longer
    /// runs. Call `stop()`.
    public var isShutDown: Bool
    public var isStopped: Bool
    /// Analysers swapped in after a sample-rate change.
    public var analyzerSwaps: Int
    /// The most frames completed in one process cycle over all inputs (1 while the inputs'
    /// hops are staggered apart; see `AnalyzerExchange.staggerFraction`).
    public var mostFramesInOneCycle: Int
    /// Why the latest sample-rate change could not be followed, if it could not.
    public var analysisError: String?
    /// Seconds since the server was lost, while it is (reconnecting); nil while it runs.
    public var serverLostSeconds: Double?
    /// Times a new client was opened after the server came back.
    public var reconnections: Int
    /// Dead clients whose `jack_client_close` did not return within the time bound.
    public var abandonedClients: Int
    /// Times the client was found stuck (the server's cycles ran on, our callback was not
    /// entered for `JackSupervisor.stallSeconds`) and reopened; docs/live.md.
    public var stallRecoveries: Int
    /// The client name in use now (JACK may give another after a reconnection).
    public var currentClientName: String
    /// Why the latest reconnection attempt failed (nil once one succeeds).
    public var lastReconnectError: String?
    /// The MIDI clock, when `LiveConfiguration.midiClock` is on.
    public var midiClock: MidiClockStatus?
}

/// What the MIDI clock port is doing, for status lines (read from atomics; any thread).
public struct MidiClockStatus: Sendable, Equatable {
    /// Full port name, e.g. `spectrum:midi_clock`.
    public var portName: String
    /// FA sent and F8 running (false: stopped, FC sent or never started).
    public var isRunning: Bool
    /// The clock's tempo: 60 / (24 × tick period), BPM; 0 while stopped.
    public var bpm: Double
    /// The latest tick's phase error against the beat grid, milliseconds (positive: the grid
    /// is ahead of the ticks, which are catching up).
    public var phaseErrorMilliseconds: Double
    public var ticks: UInt64
    public var starts: UInt64
    public var stops: UInt64
    /// Messages `jack_midi_event_write` refused (port buffer full).
    public var writeFailures: UInt64
    /// The port's playback latency (compensated), frames.
    public var playbackLatencyFrames: Int
}
