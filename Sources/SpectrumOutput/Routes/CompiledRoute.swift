import Glibc
import SpectrumCore

/// A route fixed for one band count, prefix, output rate and target count: its addresses as C
/// strings, how many messages and values it makes, and its send-policy state. Everything a
/// frame needs is prepared here, so rendering a frame allocates nothing. Publisher thread only.
final class CompiledRoute {
    let route: Route
    let addresses: [UnsafeMutablePointer<CChar>]
    /// `route.values`, and each value's element count (1 for scalars).
    let values: [RouteValue]
    let valueCounts: [Int]
    let isBlob: Bool
    let perElement: Bool
    /// Messages per frame (1, or the vector length for per-element routes).
    let messageCount: Int
    let valuesPerMessage: Int
    /// Frames an event pulse is held: the route's hold, at least one frame.
    let holdFrames: Int
    let dependsOnBeats: Bool
    private let elementCounts: [RouteSource: Int]
    /// The type tags as ASCII (one, cycled, or one per value); empty for blobs.
    private let tags: [UInt8]
    private let sendsOnChange: Bool
    /// Frames between messages under `max_rate_hz` (0: no limit).
    private let minimumIntervalFrames: Int
    /// Per message: the values and texts last sent (`valuesPerMessage` each) and the frame.
    private let lastSentValues: UnsafeMutablePointer<Float>
    private let lastSentTexts: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let lastSentFrame: UnsafeMutablePointer<Int>
    private static let neverSent = Int.min / 2
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
        values = route.values
        valueCounts = route.values.map { counts[$0.source]! }
        isBlob = route.arguments == .blob
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
            tags = given.map { $0.asciiValue ?? UInt8(ascii: "f") }
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
        sendsOnChange = route.policy.mode == .onChange
        let slots = max(addresses.count * valuesPerMessage, 1)
        lastSentValues = .allocate(capacity: slots)
        lastSentValues.initialize(repeating: 0, count: slots)
        lastSentTexts = .allocate(capacity: slots)
        lastSentTexts.initialize(repeating: nil, count: slots)
        lastSentFrame = .allocate(capacity: max(addresses.count, 1))
        lastSentFrame.initialize(repeating: Self.neverSent, count: max(addresses.count, 1))
    }

    func free() {
        for address in addresses { Glibc.free(address) }
        lastSentValues.deallocate()
        lastSentTexts.deallocate()
        lastSentFrame.deallocate()
    }

    func elementCount(of source: RouteSource) -> Int { elementCounts[source] ?? 1 }

    /// Applies the send policy to message `message` with `values`/`texts` (`valuesPerMessage`
    /// each); records them when they go. Allocates nothing.
    func shouldSend(message: Int, values: UnsafePointer<Float>, texts: UnsafePointer<UnsafeMutablePointer<CChar>?>, frame: Int) -> Bool {
        let lastFrame = lastSentFrame[message]
        if minimumIntervalFrames > 0, frame - lastFrame < minimumIntervalFrames { return false }
        let storedValues = lastSentValues + message * valuesPerMessage
        let storedTexts = lastSentTexts + message * valuesPerMessage
        if sendsOnChange, lastFrame != Self.neverSent {
            var unchanged = true
            for slot in 0..<valuesPerMessage where unchanged {
                if storedValues[slot] != values[slot] { unchanged = false; break }
                switch (storedTexts[slot], texts[slot]) {
                case (nil, nil): break
                case (let a?, let b?): if strcmp(a, b) != 0 { unchanged = false }
                default: unchanged = false
                }
            }
            if unchanged { return false }
        }
        storedValues.update(from: values, count: valuesPerMessage)
        storedTexts.update(from: texts, count: valuesPerMessage)
        lastSentFrame[message] = frame
        return true
    }

    /// Writes message `message` with `values`/`texts` (`valuesPerMessage` each) into `writer`:
    /// address, type tags, arguments. `tagScratch` holds at least `valuesPerMessage` bytes.
    func write(message: Int, values: UnsafePointer<Float>, texts: UnsafePointer<UnsafeMutablePointer<CChar>?>,
               into writer: inout OSCWriter, tagScratch: UnsafeMutablePointer<UInt8>) {
        let count = valuesPerMessage
        writer.append(string: addresses[message])
        if isBlob {
            tagScratch[0] = UInt8(ascii: "b")
            writer.append(typeTags: UnsafeBufferPointer(start: tagScratch, count: 1))
            writer.beginBlob(byteCount: count)
            for slot in 0..<count { writer.append(byte: UInt8(min(max(values[slot].rounded(), 0), 255))) }
            writer.alignToFour()
            return
        }
        // 1) Type tags (an `s` with neither text nor format sends nothing, as before).
        var tagCount = 0
        for slot in 0..<count {
            let tag = tags.count == 1 ? tags[0] : tags[slot]
            switch tag {
            case UInt8(ascii: "T"): tagScratch[tagCount] = values[slot] >= 0.5 ? UInt8(ascii: "T") : UInt8(ascii: "F")
            case UInt8(ascii: "s"):
                guard texts[slot] != nil || textFormat != nil else { continue }
                tagScratch[tagCount] = tag
            case UInt8(ascii: "i"): tagScratch[tagCount] = tag
            default: tagScratch[tagCount] = UInt8(ascii: "f")
            }
            tagCount += 1
        }
        writer.append(typeTags: UnsafeBufferPointer(start: tagScratch, count: tagCount))
        // 2) Arguments.
        for slot in 0..<count {
            let tag = tags.count == 1 ? tags[0] : tags[slot]
            let value = values[slot]
            switch tag {
            case UInt8(ascii: "i"): writer.append(int32: Int32(min(max(value.rounded(), -2_147_483_520), 2_147_483_520)))
            case UInt8(ascii: "T"): break
            case UInt8(ascii: "s"):
                if let text = texts[slot] {
                    writer.append(string: text)
                } else if let textFormat {
                    (textFormat.prefix + Self.formatNumber(value) + textFormat.suffix).withCString { writer.append(string: $0) }
                }
            default: writer.append(float: value)
            }
        }
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
        case .stringCents: -1200...1200
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
        scale(raw, source: source, scaling: scaling, isBlob: arguments == .blob)
    }

    /// `isBlob`: the route sends a blob (its default output range is 0..255).
    static func scale(_ raw: Double, source: RouteSource, scaling: RouteScaling, isBlob: Bool) -> Double {
        let limits = guardRange(source)
        let safe = raw.isFinite ? min(max(raw, limits.lowerBound), limits.upperBound) : invalidValue(source)
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
