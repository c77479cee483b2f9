import CLo
import Glibc
import SpectrumCore

/// A route fixed for one band count, prefix, output rate and target count: its addresses as C
/// strings, how many messages and values it makes, and its send-policy state. Publisher
/// thread only.
final class CompiledRoute {
    let route: Route
    let addresses: [UnsafeMutablePointer<CChar>]
    let perElement: Bool
    /// Messages per frame (1, or the vector length for per-element routes).
    let messageCount: Int
    let valuesPerMessage: Int
    /// Frames an event pulse is held: the route's hold, at least one frame.
    let holdFrames: Int
    let dependsOnBeats: Bool
    private let elementCounts: [RouteSource: Int]
    private let tags: [Character]
    /// Frames between messages under `max_rate_hz` (0: no limit).
    private let minimumIntervalFrames: Int
    private var lastSentValues: [[Float]]
    private var lastSentTexts: [[UnsafeMutablePointer<CChar>?]]
    private var lastSentFrame: [Int]
    /// `format` split at `{value}`, for numbers sent as text.
    private let textFormat: (prefix: String, suffix: String)?

    var condition: RouteCondition? { route.condition }

    init(_ route: Route, index: Int, rig: Rig, prefix: String, bandCount: Int, outputRateHz: Double, targetCount: Int) throws {
        self.route = route
        let place = "rig \(rig.name)" + (route.line.map { ", line \($0)" } ?? ", route \(index + 1)")
        func fail(_ text: String) -> OSCConfigurationError { OSCConfigurationError("\(place): \(text)") }

        // 1) Element counts.
        var counts: [RouteSource: Int] = [:]
        for value in route.values {
            let count: Int
            switch value.source {
            case .bands(let range), .peaks(let range):
                if let range, range.upperBound > bandCount {
                    throw fail("\(value.source.name): expected bands within 1-\(bandCount) (the analyser's band count)")
                }
                count = range?.count ?? bandCount
            case .groups(let index, let groupCount): count = index == nil ? (groupCount ?? rig.groupCount) : 1
            case .waveform: count = AnalysisFrame.waveformPointCount
            case .target: count = targetCount
            default: count = 1
            }
            counts[value.source] = count
        }
        elementCounts = counts
        let vectorCounts = Set(route.values.filter(\.source.isVector).map { counts[$0.source]! })
        perElement = route.perElement
        if perElement {
            guard vectorCounts.count <= 1 else {
                throw fail("one message per element needs vectors of one length, got \(vectorCounts.sorted().map(String.init).joined(separator: " and "))")
            }
            messageCount = vectorCounts.first ?? 1
            valuesPerMessage = route.values.count
        } else {
            guard !route.address.contains("{n}") else { throw fail("address \(route.address): {n} needs one message per element") }
            messageCount = 1
            valuesPerMessage = route.values.reduce(0) { $0 + counts[$1.source]! }
        }

        // 2) Arguments.
        switch route.arguments {
        case .blob:
            tags = []
            if let text = route.values.first(where: { $0.source.isText }) {
                throw fail("\(text.source.name) is text: expected number sources in a blob")
            }
        case .tags(let given):
            guard given.count == 1 || given.count == valuesPerMessage else {
                throw fail("type \(String(given)): expected one type tag, or one per value (\(valuesPerMessage))")
            }
            tags = given
            var slot = 0
            for value in route.values {
                for _ in 0..<(perElement ? 1 : counts[value.source]!) {
                    let tag = given.count == 1 ? given[0] : given[slot]
                    if value.source.isText, tag != "s" { throw fail("\(value.source.name) is text: expected type s, got \(tag)") }
                    if tag == "s", !value.source.isText, route.format == nil {
                        throw fail("type s for \(value.source.name): expected a text source (note, target.address, target.state) or a format such as \"Master 3.1 At {value}\"")
                    }
                    slot += 1
                }
            }
        }
        if let format = route.format {
            let parts = format.split(separator: "{value}", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw fail("format \"\(format)\": expected {value} in it") }
            textFormat = (String(parts[0]), String(parts[1]))
        } else {
            textFormat = nil
        }

        // 3) Addresses.
        let base = route.address.split(separator: "{prefix}", omittingEmptySubsequences: false).joined(separator: prefix)
        let expanded = perElement
            ? (0..<messageCount).map { base.split(separator: "{n}", omittingEmptySubsequences: false).joined(separator: String(route.firstNumber + $0)) }
            : [base]
        for address in expanded where !OSCAddressSpace.isValidAddress(address) {
            throw fail("address \(address): expected an OSC address such as /dmx/universe/1/{n} (starts with /; letters, digits, _ - . and {n}, {prefix})")
        }
        addresses = expanded.map { strdup($0)! }

        // 4) Policy.
        holdFrames = max(1, Int((route.holdMilliseconds * outputRateHz / 1000).rounded(.up)))
        minimumIntervalFrames = route.policy.maximumRateHz.map { max(1, Int((outputRateHz / $0).rounded())) } ?? 0
        dependsOnBeats = route.condition == .beat || route.condition == .downbeat
            || route.values.contains { $0.source == .pulse(.beat) || $0.source == .pulse(.downbeat) }
        lastSentValues = Array(repeating: [], count: addresses.count)
        lastSentTexts = Array(repeating: [], count: addresses.count)
        lastSentFrame = Array(repeating: Int.min / 2, count: addresses.count)
    }

    func free() {
        for address in addresses { Glibc.free(address) }
    }

    func elementCount(of source: RouteSource) -> Int { elementCounts[source] ?? 1 }

    /// Applies the send policy; records the values when they go.
    func shouldSend(message: Int, values: [Float], texts: [UnsafeMutablePointer<CChar>?], frame: Int) -> Bool {
        if minimumIntervalFrames > 0, frame - lastSentFrame[message] < minimumIntervalFrames { return false }
        let current = Array(values.prefix(valuesPerMessage))
        let currentTexts = Array(texts.prefix(valuesPerMessage))
        if route.policy.mode == .onChange {
            let textsEqual = currentTexts.count == lastSentTexts[message].count
                && zip(currentTexts, lastSentTexts[message]).allSatisfy { pair in
                    switch (pair.0, pair.1) {
                    case (nil, nil): true
                    case (let a?, let b?): strcmp(a, b) == 0
                    default: false
                    }
                }
            if current == lastSentValues[message], textsEqual { return false }
        }
        lastSentValues[message] = current
        lastSentTexts[message] = currentTexts
        lastSentFrame[message] = frame
        return true
    }

    /// The message for one set of values; nil when liblo cannot allocate.
    func message(values: [Float], texts: [UnsafeMutablePointer<CChar>?], count: Int) -> lo_message? {
        guard let message = lo_message_new() else { return nil }
        switch route.arguments {
        case .blob:
            var bytes = [UInt8](repeating: 0, count: count)
            for slot in 0..<count { bytes[slot] = UInt8(min(max(values[slot].rounded(), 0), 255)) }
            guard let blob = lo_blob_new(Int32(count), bytes) else { lo_message_free(message); return nil }
            lo_message_add_blob(message, blob)
            lo_blob_free(blob)
        case .tags:
            for slot in 0..<count {
                let tag = tags.count == 1 ? tags[0] : tags[slot]
                let value = values[slot]
                switch tag {
                case "i": lo_message_add_int32(message, Int32(min(max(value.rounded(), -2_147_483_520), 2_147_483_520)))
                case "T": if value >= 0.5 { lo_message_add_true(message) } else { lo_message_add_false(message) }
                case "s":
                    if let text = texts[slot] {
                        lo_message_add_string(message, text)
                    } else if let textFormat {
                        lo_message_add_string(message, textFormat.prefix + Self.formatNumber(value) + textFormat.suffix)
                    }
                default: lo_message_add_float(message, value)
                }
            }
        }
        return message
    }

    /// A number as a desk's command line reads it: whole numbers without decimals, else one.
    static func formatNumber(_ value: Float) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}

/// Route values from raw analysis numbers: the non-finite guard, then the scaling.
enum RouteMath {
    /// The range a raw value is held to before scaling (a glitch never reaches a desk as an
    /// absurd number), and what a non-finite value becomes.
    static func guardRange(_ source: RouteSource) -> ClosedRange<Double> {
        switch source {
        case .level(.rmsDecibels), .level(.peakDecibels): -120...24
        case .bpm: 0...1000
        case .pitchHz: 0...20000
        case .pitchMidi: 0...127
        case .pitchCents: -50...50
        case .waveform: -1...1
        case .beatInBar, .beatCount, .status, .target: 0...2_147_483_520
        default: 0...1
        }
    }

    /// What a non-finite reading is sent as: silence for levels in dB (0 dBFS would flash
    /// every light), else 0.
    static func invalidValue(_ source: RouteSource) -> Double {
        let limits = guardRange(source)
        return limits.contains(0) && source != .level(.rmsDecibels) && source != .level(.peakDecibels) ? 0 : limits.lowerBound
    }

    static func scale(_ raw: Double, source: RouteSource, scaling: RouteScaling, arguments: RouteArguments) -> Double {
        let limits = guardRange(source)
        let safe = raw.isFinite ? min(max(raw, limits.lowerBound), limits.upperBound) : invalidValue(source)
        let isBlob = arguments == .blob
        guard !scaling.isIdentity || isBlob else { return safe }
        var input = safe
        var from = scaling.from ?? source.naturalRange
        if scaling.curve == .decibels {
            input = 20 * log10(max(safe, 1e-6))
            if scaling.from == nil { from = -60...0 }
        }
        let to = scaling.to ?? (isBlob ? 0...255 : 0...1)
        let width = from.upperBound - from.lowerBound
        var position = width > 0 ? (input - from.lowerBound) / width : 0
        if scaling.clamp { position = min(max(position, 0), 1) }
        if scaling.curve == .exponential { position = pow(max(position, 0), scaling.exponent) }
        let output = to.lowerBound + position * (to.upperBound - to.lowerBound)
        guard output.isFinite else { return to.lowerBound }
        return scaling.clamp ? min(max(output, to.lowerBound), to.upperBound) : output
    }
}

/// One target's health as the live summary and `/status` show it.
public struct TargetHealth: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        /// Datagrams went out and none failed lately.
        case ok
        /// The host answered "port unreachable": nothing listens there.
        case refused
        /// No route to the host or network.
        case unreachable
        /// Sends failed for another reason (e.g. a full socket buffer).
        case error
        /// Nothing sent yet.
        case idle
    }
    public var address: String
    public var state: State
    public var sent: Int
    public var errors: Int

    public init(address: String, state: State, sent: Int, errors: Int) {
        self.address = address
        self.state = state
        self.sent = sent
        self.errors = errors
    }

    /// The state from what changed since the previous look: any failure since then names the
    /// latest error; else sends make it ok. (A connected UDP socket reports a refusal on the
    /// send after the one that caused it, so refusals alternate with successes: a window, not
    /// the last send, tells the truth.)
    public static func state(sentSince: Int, errorsSince: Int, lastError: Int32, sentTotal: Int) -> State {
        if errorsSince > 0 {
            switch lastError {
            case ECONNREFUSED: return .refused
            case ENETUNREACH, EHOSTUNREACH, EHOSTDOWN, ENETDOWN: return .unreachable
            default: return .error
            }
        }
        if sentSince > 0 || sentTotal > 0 { return .ok }
        return .idle
    }
}
