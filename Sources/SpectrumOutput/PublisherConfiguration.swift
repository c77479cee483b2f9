import Glibc
import SpectrumCore
import SpectrumCore

/// Everything the publisher needs to know, checked once by `validate()` (which `FramePublisher.init`
/// calls). Plain values; build it from the command line with `OscOptions` or by hand.
public struct PublisherConfiguration: Sendable, Equatable {
    /// Where every bundle goes. Host names are resolved once, when the publisher is created.
    public var targets: [OSCTarget]
    /// Address prefix, e.g. `/spectrum` or `/kick` when several instances run.
    public var prefix: String = OSCAddressSpace.defaultPrefix
    /// The live client's inputs by slot (`AnalysisFrame.inputIndex`, `LiveClient.inputSlots`;
    /// nil: no input in that slot yet, see `FramePublisher.setInput`). `[""]`: one unnamed input,
    /// sent under `prefix` itself. Named inputs: each input's frames and beats under
    /// `prefix/NAME` (the `spectrum` rig; another rig sends slot 0's input only), the status
    /// once per second under `prefix`.
    public var inputNames: [String?] = [""]
    /// The slot whose frames feed the terminal summary, Link (`frameObserver`) and WLED
    /// (`--tempo-input`, `LiveClient.tempoSlot`); nil: the first slot that holds an input.
    public var tempoSlot: Int? = nil
    /// True with named inputs.
    public var hasNamedInputs: Bool { inputNames != [""] }
    /// Number of `/groups` values, 1–64.
    public var groupCount: Int = OSCAddressSpace.defaultGroupCount
    /// Which messages the `spectrum` rig sends. Default: everything but the waveform.
    public var messages: OSCMessageSet = .default
    /// The rig for every target without one of its own; nil: the `spectrum` rig (today's
    /// address space under `prefix`, `messages`).
    public var rig: Rig?
    /// A rig per target (from a preset's `osc.targets`), over `rig`.
    public var targetRigs: [OSCTarget: Rig] = [:]
    /// The analyser's band count (the length of `bands`, and the limit of band routes).
    public var bandCount = 128
    /// WLED audio sync v2 receivers (`--wled`): 44-byte UDP packets, at most 50 a second.
    public var wledTargets: [OSCTarget] = []
    /// The analyser's band centres and sample rate, which the WLED encoder maps onto WLED's
    /// 16 channels and paces by; needed only with `wledTargets`.
    public var bandCentreFrequenciesHz: [Double] = []
    public var sampleRateHz: Double = 48_000
    /// The analyser's output rate (frames per second): sets the status cadence (one status per
    /// this many frames, rounded) and the "Rate" column of the table. Sending itself is paced
    /// by the frames as they arrive.
    public var outputRateHz: Double = 60
    /// Interface for multicast targets: a name (`eth0`) or an IPv4 address of this host.
    /// Ignored for unicast targets (routing chooses).
    public var multicastInterface: String? = nil
    /// Multicast TTL (IPv4) / hop limit (IPv6), 1–255. 1 keeps packets on the local network.
    public var multicastTTL: Int = 1
    /// How long the publisher thread sleeps when the ring is empty. Adds at most this much
    /// latency.
    public var pollIntervalMilliseconds: Double = 2

    public init(targets: [OSCTarget], prefix: String = OSCAddressSpace.defaultPrefix, groupCount: Int = OSCAddressSpace.defaultGroupCount, messages: OSCMessageSet = .default, outputRateHz: Double = 60) {
        self.targets = targets
        self.prefix = prefix
        self.groupCount = groupCount
        self.messages = messages
        self.outputRateHz = outputRateHz
    }

    /// The address table for this configuration.
    public func addressSpace(bandCount: Int = 128) -> OSCAddressSpace {
        OSCAddressSpace(prefix: prefix, bandCount: bandCount, groupCount: groupCount, outputRateHz: outputRateHz)
    }

    /// The rig `target` gets: its own, else the common one, else `spectrum`.
    public func rig(for target: OSCTarget) -> Rig {
        targetRigs[target] ?? rig ?? addressSpace(bandCount: bandCount).rig(messages: messages)
    }

    /// Throws the first problem as a one-line `OSCConfigurationError`. Does no I/O.
    public func validate() throws {
        guard OSCAddressSpace.isValidPrefix(prefix) else {
            throw OSCConfigurationError("--prefix \"\(prefix)\": expected an OSC address such as /spectrum or /kick (starts with /, parts of letters, digits, _ - .)")
        }
        guard !inputNames.isEmpty, !hasNamedInputs || inputNames.allSatisfy({ $0.map { OSCAddressSpace.isValidPrefix(prefix + "/" + $0) } ?? true }) else {
            throw OSCConfigurationError("inputs \(inputNames.compactMap { $0 }): expected names that make OSC addresses under \(prefix)")
        }
        let known = inputNames.compactMap { $0 }.filter { !$0.isEmpty }
        for rig in [rig].compactMap({ $0 }) + targets.compactMap({ targetRigs[$0] }) {
            for route in rig.routes {
                guard let input = route.input, !known.contains(input) else { continue }
                let place = route.line.map { "rig \(rig.name), route at line \($0)" } ?? "rig \(rig.name)"
                throw OSCConfigurationError(known.isEmpty
                    ? "\(place): input \(input): routes name inputs only with named inputs (--input \(input))"
                    : "\(place): input \(input): no such input; the inputs are \(known.joined(separator: ", "))")
            }
        }
        guard OSCAddressSpace.groupCountRange.contains(groupCount) else {
            throw OSCConfigurationError("--groups \(groupCount): expected a number of groups from 1 to 64")
        }
        guard (1...AnalysisFrame.maximumBandCount).contains(bandCount) else {
            throw OSCConfigurationError("band count \(bandCount): expected 1 to \(AnalysisFrame.maximumBandCount)")
        }
        guard (1...255).contains(multicastTTL) else {
            throw OSCConfigurationError("--osc-ttl \(multicastTTL): expected a TTL from 1 to 255")
        }
        guard outputRateHz.isFinite, outputRateHz > 0 else {
            throw OSCConfigurationError("output rate \(outputRateHz): expected a positive number of frames per second")
        }
        guard pollIntervalMilliseconds.isFinite, pollIntervalMilliseconds > 0, pollIntervalMilliseconds <= 100 else {
            throw OSCConfigurationError("poll interval \(pollIntervalMilliseconds) ms: expected more than 0 and at most 100 ms")
        }
        if let multicastInterface, multicastInterface.isEmpty {
            throw OSCConfigurationError("--osc-interface \"\": expected an interface name such as eth0 or an IPv4 address")
        }
    }
}

/// The host's health numbers for `/status`, filled by the host (the JACK client) when the
/// publisher asks, once per second of audio, on the publisher thread.
public struct PublisherStatus: Sendable, Equatable {
    public var sampleRateHz: Int
    /// JACK period (buffer size) in frames.
    public var periodFrames: Int
    /// Xruns reported by JACK since the client started.
    public var xruns: Int
    /// Analysis frames the real-time side could not push into the ring (ring full).
    public var droppedFrames: Int
    /// `jack_cpu_load()`, percent.
    public var dspLoadPercent: Float
    /// Cost of the slowest process callback in the last second, microseconds.
    public var worstCallbackMicroseconds: Float

    /// False while the JACK server is lost (the host is reconnecting).
    public var serverRunning: Bool
    /// Times the server came back since the start.
    public var reconnections: Int
    /// Seconds since the server was lost; 0 while it runs.
    public var serverLostSeconds: Float

    /// The MIDI clock (`--midi-clock`): running, its tempo (0 while stopped), ticks sent, and the
    /// latest tick's phase error against the beat grid in ms.
    public var midiClockRunning = false
    public var midiClockBpm: Float = 0
    public var midiClockTicks = 0
    public var midiClockPhaseErrorMilliseconds: Float = 0

    /// Ableton Link (`--link`): peers, whether spectrum leads, the session's tempo, and its beat
    /// against the detected one in ms.
    public var linkPeers = 0
    public var linkLeading = false
    public var linkBpm: Float = 0
    public var linkPhaseErrorMilliseconds: Float = 0

    public init(sampleRateHz: Int = 0, periodFrames: Int = 0, xruns: Int = 0, droppedFrames: Int = 0, dspLoadPercent: Float = 0, worstCallbackMicroseconds: Float = 0,
                serverRunning: Bool = true, reconnections: Int = 0, serverLostSeconds: Float = 0) {
        self.serverRunning = serverRunning
        self.reconnections = reconnections
        self.serverLostSeconds = serverLostSeconds
        self.sampleRateHz = sampleRateHz
        self.periodFrames = periodFrames
        self.xruns = xruns
        self.droppedFrames = droppedFrames
        self.dspLoadPercent = dspLoadPercent
        self.worstCallbackMicroseconds = worstCallbackMicroseconds
    }
}

/// Reads the clock that `AnalysisFrame.captureTimeMicroseconds` is on, so the publisher can
/// turn a capture time into an OSC (NTP) time tag. For JACK: `CaptureClock { jack_get_time() }`.
public struct CaptureClock: Sendable {
    /// "Now" on the capture clock, in microseconds.
    public var nowMicroseconds: @Sendable () -> UInt64

    public init(nowMicroseconds: @escaping @Sendable () -> UInt64) {
        self.nowMicroseconds = nowMicroseconds
    }

    /// This clock and the wall clock as one instant: of up to three tries, the wall reading most
    /// tightly bracketed by two readings of this clock (their midpoint). A thread preempted
    /// between the two reads (several ms on a loaded machine) would shift every time tag made
    /// from the pair by as much.
    func readWithWallClock() -> (captureMicroseconds: UInt64, wall: OSCTimeTag) {
        var best = (captureMicroseconds: UInt64(0), wall: OSCTimeTag.immediate, spreadMicroseconds: UInt64.max)
        for _ in 0..<3 {
            let before = nowMicroseconds(), wall = OSCTimeTag.now(), after = nowMicroseconds()
            let spread = after &- before
            if spread < best.spreadMicroseconds { best = (before &+ spread / 2, wall, spread) }
            if spread <= Self.simultaneousMicroseconds { break }
        }
        return (best.captureMicroseconds, best.wall)
    }

    /// Two readings this close count as one instant.
    static let simultaneousMicroseconds: UInt64 = 50
}

/// An OSC time tag: NTP seconds since 1900 and a 2⁻³² fraction.
public struct OSCTimeTag: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var seconds: UInt32
    public var fraction: UInt32

    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// "Immediately" (0, 1) — the OSC spec's special value.
    public static let immediate = OSCTimeTag(seconds: 0, fraction: 1)

    /// Seconds between the NTP era (1900) and the Unix epoch (1970).
    static let unixToNTPSeconds: UInt64 = 2_208_988_800

    /// The wall clock now (CLOCK_REALTIME), as liblo's `lo_timetag_now` reads it.
    public static func now() -> OSCTimeTag {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let fraction = (UInt64(time.tv_nsec) << 32) / 1_000_000_000
        return OSCTimeTag(seconds: UInt32(truncatingIfNeeded: UInt64(time.tv_sec) + unixToNTPSeconds), fraction: UInt32(truncatingIfNeeded: fraction))
    }

    /// As a 32.32 fixed-point number of seconds.
    public var fixedPoint: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }

    public init(fixedPoint: UInt64) {
        self.init(seconds: UInt32(truncatingIfNeeded: fixedPoint >> 32), fraction: UInt32(truncatingIfNeeded: fixedPoint))
    }

    /// Seconds as a Double (for tests and logs).
    public var secondsValue: Double { Double(seconds) + Double(fraction) / 4_294_967_296 }

    /// The wall-clock time of a moment on the capture clock: `wallNow` shifted by
    /// `captureMicroseconds − captureClockNowMicroseconds`, both read at (nearly) the same
    /// instant. Immediate when `captureMicroseconds` is 0 (offline frames).
    public static func converting(captureMicroseconds: UInt64, captureClockNowMicroseconds: UInt64, wallNow: OSCTimeTag) -> OSCTimeTag {
        guard captureMicroseconds != 0 else { return .immediate }
        // Never in the future: a sample's JACK frame time can lie up to one period ahead of the
        // clock while its cycle runs, and receivers (liblo) would hold a future bundle back.
        let deltaMicroseconds = min(0, Double(Int64(bitPattern: captureMicroseconds &- captureClockNowMicroseconds)))
        let deltaFixed = Int64((deltaMicroseconds * 4_294.967_296).rounded())
        return OSCTimeTag(fixedPoint: UInt64(bitPattern: Int64(bitPattern: wallNow.fixedPoint) &+ deltaFixed))
    }

    public var description: String {
        self == .immediate ? "immediate" : "\(String(seconds, radix: 16)).\(String(fraction, radix: 16))"
    }
}
