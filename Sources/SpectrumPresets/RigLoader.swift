import Foundation
import SpectrumOutput
import Yams

/// Reads rig files (`presets/rigs/*.yaml`) and the output sections of presets (`rig:`,
/// `routes:`, `osc: targets:`) into `Rig`s. Every problem is one `PresetError` line,
/// `file:line: key: expected …, got …`. Allocates and reads files; not real-time safe.
///
/// ```yaml
/// rig:
///   bundle: false            # plain messages (grandMA3 ignores bundles); default true
///   time_tag: immediate      # or capture; default immediate
///   groups: 8                # for `groups` sources without "of N"
/// routes:
///   - source: groups of 8
///     address: /dmx/universe/1/{n}
///   - source: bpm
///     address: /dmx/universe/1/13
///     from: [60, 200]        # BPM 60..200 → 0..1
///   - source: beat           # a pulse: 1 for hold_ms, then 0
///     address: /dmx/universe/1/10
///     send: on_change
/// ```
public enum RigLoader {
    /// The keys of a route, for error messages.
    static let routeKeys = ["source", "address", "type", "first", "per_element", "from", "to", "curve", "exponent", "clamp",
                            "hold_ms", "send", "max_rate_hz", "when", "format", "input"]
    static let rigKeys = ["bundle", "time_tag", "groups"]
    /// The preset sections this loader reads (the preset loader skips them).
    public static let outputSections = ["rig", "routes", "osc"]

    /// The shipped rig names (files in `presets/rigs/`) plus the built-in `spectrum`.
    public static func availableNames(locator: PresetLocator = .forCurrentProcess()) -> [String] {
        var names: Set<String> = [Rig.spectrumName]
        for place in locator.searchDirectories {
            let directory = (place.directory as NSString).appendingPathComponent("rigs")
            for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where file.hasSuffix(".yaml") {
                names.insert(String(file.dropLast(5)))
            }
        }
        return names.sorted()
    }

    /// `--rig NAME|PATH`: nil for `spectrum` (the built-in rig of the address table); else the
    /// rig file, by path or as `rigs/NAME.yaml` in the preset folders.
    public static func load(nameOrPath: String, locator: PresetLocator = .forCurrentProcess()) throws -> Rig? {
        if nameOrPath == Rig.spectrumName { return nil }
        if PresetLocator.isPath(nameOrPath) { return try load(path: nameOrPath) }
        for place in locator.searchDirectories {
            let candidate = (place.directory as NSString).appendingPathComponent("rigs/\(nameOrPath).yaml")
            if FileManager.default.isReadableFile(atPath: candidate) { return try load(path: candidate, name: nameOrPath) }
        }
        throw PresetError(file: "--rig", line: nil, key: nil, expected: "one of \(availableNames(locator: locator).joined(separator: ", ")) or a path to a rig file",
                          got: "\"\(nameOrPath)\"")
    }

    public static func load(path: String, name: String? = nil) throws(PresetError) -> Rig {
        let text = try readText(path)
        guard let rig = try parse(yaml: text, file: path, name: name ?? ((path as NSString).lastPathComponent as NSString).deletingPathExtension) else {
            throw PresetError(file: path, line: nil, key: "routes", expected: "a list of routes", got: "none")
        }
        return rig
    }

    /// The outputs a preset asks for: its own rig (from `rig:` and `routes:`) and a rig per
    /// target (`osc: targets:`).
    public struct PresetOutputs: Sendable {
        public var rig: Rig?
        public var targets: [(target: OSCTarget, rig: Rig?)] = []
    }

    public static func loadOutputs(presetPath path: String, locator: PresetLocator = .forCurrentProcess()) throws -> PresetOutputs {
        let text = try readText(path)
        let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
        var outputs = PresetOutputs(rig: try parse(yaml: text, file: path, name: name))
        guard let root = try? compose(yaml: text), let osc = root.mapping?["osc"] else { return outputs }
        guard let oscMapping = osc.mapping else { throw PresetError(file: path, line: osc.mark?.line, key: "osc", expected: "a mapping with targets", got: PresetLoader.describe(osc)) }
        for (key, value) in oscMapping {
            guard key.string == "targets" else {
                throw PresetError(file: path, line: key.mark?.line, key: "osc.\(key.string ?? "?")", expected: "targets", got: "an unknown key")
            }
            guard let list = value.sequence else { throw PresetError(file: path, line: value.mark?.line, key: "osc.targets", expected: "a list of {to: HOST:PORT, rig: NAME}", got: PresetLoader.describe(value)) }
            for entry in list {
                let line = entry.mark?.line
                guard let mapping = entry.mapping, let to = mapping["to"]?.string else {
                    throw PresetError(file: path, line: line, key: "osc.targets", expected: "{to: HOST:PORT, rig: NAME}", got: PresetLoader.describe(entry))
                }
                let target: OSCTarget
                do { target = try OSCTarget(parsing: to, optionName: "osc.targets.to") } catch {
                    throw PresetError(file: path, line: mapping["to"]?.mark?.line, key: "osc.targets.to", expected: "HOST:PORT, e.g. 127.0.0.1:9000", got: "\"\(to)\"")
                }
                var rig: Rig?
                if let rigName = mapping["rig"]?.string {
                    do { rig = try load(nameOrPath: rigName, locator: locator) } catch {
                        throw PresetError(file: path, line: mapping["rig"]?.mark?.line, key: "osc.targets.rig",
                                          expected: "one of \(availableNames(locator: locator).joined(separator: ", ")) or a path", got: "\"\(rigName)\"")
                    }
                }
                outputs.targets.append((target, rig))
            }
        }
        return outputs
    }

    private static func readText(_ path: String) throws(PresetError) -> String {
        try PresetLoader.readText(path, expected: "a readable YAML rig or preset file")
    }

    /// The rig in `yaml` (nil when it has no `routes:`). Other sections are left to the preset
    /// loader.
    static func parse(yaml: String, file: String, name: String) throws(PresetError) -> Rig? {
        let root = try PresetLoader.composeRoot(yaml: yaml, file: file)
        guard let mapping = root?.mapping else { return nil }
        var rig = Rig(name: name, routes: [])
        if let settings = mapping["rig"] {
            guard let entries = settings.mapping else { throw PresetError(file: file, line: settings.mark?.line, key: "rig", expected: "a mapping of \(rigKeys.joined(separator: ", "))", got: PresetLoader.describe(settings)) }
            for (keyNode, value) in entries {
                let key = keyNode.string ?? "?"
                let line = value.mark?.line ?? keyNode.mark?.line
                switch key {
                case "bundle":
                    guard let flag = value.bool else { throw PresetError(file: file, line: line, key: "rig.bundle", expected: "true or false", got: PresetLoader.describe(value)) }
                    rig.bundled = flag
                case "time_tag":
                    guard let tag = value.string.flatMap(Rig.TimeTag.init(rawValue:)) else {
                        throw PresetError(file: file, line: line, key: "rig.time_tag", expected: "immediate or capture", got: PresetLoader.describe(value))
                    }
                    rig.timeTag = tag
                case "groups":
                    guard let count = value.int, OSCAddressSpace.groupCountRange.contains(count) else {
                        throw PresetError(file: file, line: line, key: "rig.groups", expected: "a whole number from 1 to 64", got: PresetLoader.describe(value))
                    }
                    rig.groupCount = count
                default:
                    throw PresetError(file: file, line: keyNode.mark?.line, key: "rig.\(key)", expected: "one of \(rigKeys.joined(separator: ", "))", got: "an unknown key")
                }
            }
        }
        guard let routesNode = mapping["routes"] else { return nil }
        guard let list = routesNode.sequence, !list.isEmpty else {
            throw PresetError(file: file, line: routesNode.mark?.line, key: "routes", expected: "a list of routes (- source: …, address: …)", got: PresetLoader.describe(routesNode))
        }
        for node in list { rig.routes.append(try route(node, file: file)) }
        return rig
    }

    private static func route(_ node: Node, file: String) throws(PresetError) -> Route {
        let routeLine = node.mark?.line
        guard let entries = node.mapping else {
            throw PresetError(file: file, line: routeLine, key: "routes", expected: "a mapping with source and address", got: PresetLoader.describe(node))
        }
        for (keyNode, _) in entries where !routeKeys.contains(keyNode.string ?? "") {
            throw PresetError(file: file, line: keyNode.mark?.line, key: "routes.\(keyNode.string ?? "?")", expected: "one of \(routeKeys.joined(separator: ", "))", got: "an unknown key")
        }
        func line(_ key: String) -> Int? { entries[key]?.mark?.line ?? routeLine }
        let sharedScaling = try scaling(entries, file: file, keyPrefix: "routes")
        guard let sourceNode = entries["source"] else {
            throw PresetError(file: file, line: routeLine, key: "routes.source", expected: "a source (\(RouteSource.vectorForms); \(RouteSource.scalarNames.joined(separator: ", ")))", got: "none")
        }
        var values: [RouteValue] = []
        for item in sourceNode.sequence ?? [sourceNode] {
            if let itemMapping = item.mapping {
                guard let name = itemMapping["source"]?.string else {
                    throw PresetError(file: file, line: item.mark?.line, key: "routes.source", expected: "a mapping with source: and scaling keys", got: PresetLoader.describe(item))
                }
                values.append(RouteValue(try source(name, file: file, line: item.mark?.line), scaling: try scaling(itemMapping, file: file, keyPrefix: "routes.source")))
            } else {
                guard let name = item.string, item.scalar != nil else {
                    throw PresetError(file: file, line: item.mark?.line, key: "routes.source", expected: "a source name", got: PresetLoader.describe(item))
                }
                values.append(RouteValue(try source(name, file: file, line: item.mark?.line), scaling: sharedScaling))
            }
        }
        guard let address = entries["address"]?.string, address.hasPrefix("/") || address.hasPrefix("{prefix}") else {
            throw PresetError(file: file, line: line("address"), key: "routes.address", expected: "an OSC address such as /dmx/universe/1/{n} or {prefix}/level",
                              got: entries["address"].map(PresetLoader.describe) ?? "none")
        }
        var arguments = RouteArguments.tags(["f"])
        if let typeNode = entries["type"] {
            let text = typeNode.string ?? ""
            if text == "blob" {
                arguments = .blob
            } else {
                let tags = Array(text.replacingOccurrences(of: "F", with: "T"))
                guard !tags.isEmpty, tags.allSatisfy(RouteArguments.allowedTags.contains) else {
                    throw PresetError(file: file, line: line("type"), key: "routes.type", expected: "f, i, T (or T/F), s, blob, or one tag per value such as iif", got: PresetLoader.describe(typeNode))
                }
                arguments = .tags(text == "T/F" ? ["T"] : tags)
            }
        }
        var policy = SendPolicy()
        if let sendNode = entries["send"] {
            guard let mode = sendNode.string.flatMap(SendPolicy.Mode.init(rawValue:)) else {
                throw PresetError(file: file, line: line("send"), key: "routes.send", expected: "every_frame or on_change", got: PresetLoader.describe(sendNode))
            }
            policy.mode = mode
        }
        if let rateNode = entries["max_rate_hz"] {
            guard let rate = rateNode.float, rate > 0, rate <= 1000 else {
                throw PresetError(file: file, line: line("max_rate_hz"), key: "routes.max_rate_hz", expected: "a rate above 0 and at most 1000 Hz", got: PresetLoader.describe(rateNode))
            }
            policy.maximumRateHz = rate
        }
        var condition: RouteCondition?
        if let whenNode = entries["when"] {
            guard let value = whenNode.string.flatMap(RouteCondition.init(rawValue:)) else {
                throw PresetError(file: file, line: line("when"), key: "routes.when", expected: "one of \(RouteCondition.allCases.map(\.rawValue).joined(separator: ", "))", got: PresetLoader.describe(whenNode))
            }
            condition = value
        }
        var hold = Route.defaultHoldMilliseconds
        if let holdNode = entries["hold_ms"] {
            guard let value = holdNode.float, value >= 0, value <= 10_000 else {
                throw PresetError(file: file, line: line("hold_ms"), key: "routes.hold_ms", expected: "0 to 10000 ms (at least one frame is held)", got: PresetLoader.describe(holdNode))
            }
            hold = value
        }
        var first = 1
        if let firstNode = entries["first"] {
            guard let value = firstNode.int, value >= 0 else {
                throw PresetError(file: file, line: line("first"), key: "routes.first", expected: "a whole number ≥ 0 (the {n} of the first element)", got: PresetLoader.describe(firstNode))
            }
            first = value
        }
        var input: String?
        if let node = entries["input"] {
            guard node.tagName == .str, let name = node.string, !name.isEmpty else {
                throw PresetError(file: file, line: line("input"), key: "routes.input", expected: "the name of an input (--input NAME)", got: PresetLoader.describe(node))
            }
            input = name
        }
        var perElement: Bool?
        if let node = entries["per_element"] {
            guard let value = node.bool else { throw PresetError(file: file, line: line("per_element"), key: "routes.per_element", expected: "true or false", got: PresetLoader.describe(node)) }
            perElement = value
        }
        return Route(values: values, address: address, arguments: arguments, perElement: perElement, firstNumber: first, condition: condition,
                     policy: policy, format: entries["format"]?.string, holdMilliseconds: hold, input: input, line: routeLine)
    }

    private static func source(_ name: String, file: String, line: Int?) throws(PresetError) -> RouteSource {
        guard let source = RouteSource(parsing: name) else {
            throw PresetError(file: file, line: line, key: "routes.source",
                              expected: "a source (\(RouteSource.vectorForms); \(RouteSource.scalarNames.joined(separator: ", ")))", got: "\"\(name)\"")
        }
        return source
    }

    private static func scaling(_ entries: Node.Mapping, file: String, keyPrefix: String) throws(PresetError) -> RouteScaling {
        var scaling = RouteScaling()
        func range(_ key: String) throws(PresetError) -> ClosedRange<Double>? {
            guard let node = entries[key] else { return nil }
            guard let pair = node.sequence, pair.count == 2, let low = pair[0].float, let high = pair[1].float, low.isFinite, high.isFinite, low < high else {
                throw PresetError(file: file, line: node.mark?.line, key: "\(keyPrefix).\(key)", expected: "[low, high] with low < high", got: PresetLoader.describe(node))
            }
            return low...high
        }
        scaling.from = try range("from")
        scaling.to = try range("to")
        if let node = entries["curve"] {
            guard let curve = node.string.flatMap(RouteScaling.Curve.init(rawValue:)) else {
                throw PresetError(file: file, line: node.mark?.line, key: "\(keyPrefix).curve", expected: "linear, exponential or db", got: PresetLoader.describe(node))
            }
            scaling.curve = curve
        }
        if let node = entries["exponent"] {
            guard let value = node.float, value > 0, value <= 10 else {
                throw PresetError(file: file, line: node.mark?.line, key: "\(keyPrefix).exponent", expected: "a number above 0 and at most 10", got: PresetLoader.describe(node))
            }
            scaling.exponent = value
        }
        if let node = entries["clamp"] {
            guard let value = node.bool else { throw PresetError(file: file, line: node.mark?.line, key: "\(keyPrefix).clamp", expected: "true or false", got: PresetLoader.describe(node)) }
            scaling.clamp = value
        }
        return scaling
    }
}
