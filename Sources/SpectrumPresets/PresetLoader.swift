import Foundation
import SpectrumDSP
import Yams

/// Reads a human-edited YAML preset into an `AnalysisConfiguration`: keys come from
/// `PresetKeys.all`, keys left out keep their defaults, and every problem is reported as one
/// `PresetError` line with the file, line and key. Allocates and reads files; not real-time
/// safe. Call from any non-real-time thread, before building an `Analyzer`.
public enum PresetLoader {
    /// Loads the preset file at `path` on top of `base` (the defaults unless given).
    public static func load(path: String, base: AnalysisConfiguration = AnalysisConfiguration()) throws(PresetError) -> AnalysisConfiguration {
        try parse(yaml: readText(path, expected: "a readable YAML preset file"), file: path, base: base)
    }

    /// Applies the preset text `yaml` to `base`. `file` names the source in errors.
    public static func parse(yaml: String, file: String, base: AnalysisConfiguration = AnalysisConfiguration()) throws(PresetError) -> AnalysisConfiguration {
        var configuration = base
        // 1) YAML → node tree, with the line of every node.
        guard let root = try composeRoot(yaml: yaml, file: file) else { return configuration }
        if root.tagName == .null { return configuration }  // a document with only `~` or `null`
        let sections = PresetKeys.sections
        guard let mapping = root.mapping else {
            throw PresetError(file: file, line: root.mark?.line, key: "preset",
                              expected: "a mapping of sections (\(sections.joined(separator: ", ")))", got: describe(root))
        }

        // 2) Sections → keys → values, each checked against the table.
        var lines: [String: Int] = [:]
        for (sectionNode, sectionValue) in mapping {
            let sectionName = sectionNode.string ?? describe(sectionNode)
            // The output sections are read by RigLoader, the inputs and tempo input by InputsLoader.
            if RigLoader.outputSections.contains(sectionName) || [InputsLoader.sectionName, InputsLoader.tempoInputKey].contains(sectionName) { continue }
            guard sections.contains(sectionName) else {
                throw PresetError(file: file, line: sectionNode.mark?.line, key: sectionName,
                                  expected: "one of the sections \((sections + RigLoader.outputSections + [InputsLoader.sectionName, InputsLoader.tempoInputKey]).joined(separator: ", "))", got: "an unknown section")
            }
            for (assignment, line) in try assignments(section: sectionName, sectionNode, sectionValue, file: file, keyPrefix: "") {
                assignment.apply(&configuration)
                lines[assignment.path] = line
            }
        }
        try checkOrderings(configuration, lines: lines, file: file, keyPrefix: "")
        return configuration
    }

    /// The checked assignments of one analysis section (`sectionName:` and its mapping), each
    /// with its line. `keyPrefix` goes before the key path in errors (an input's entry).
    static func assignments(section sectionName: String, _ sectionNode: Node, _ sectionValue: Node, file: String,
                            keyPrefix: String) throws(PresetError) -> [(AnalysisOverrides.Assignment, Int?)] {
        let keys = PresetKeys.all.filter { $0.section == sectionName }
        if sectionValue.tagName == .null { return [] }  // every key commented out
        guard let entries = sectionValue.mapping else {
            throw PresetError(file: file, line: sectionValue.mark?.line ?? sectionNode.mark?.line, key: keyPrefix + sectionName,
                              expected: "a mapping of \(sectionName) keys", got: describe(sectionValue))
        }
        var result: [(AnalysisOverrides.Assignment, Int?)] = []
        for (keyNode, valueNode) in entries {
            let keyName = keyNode.string ?? describe(keyNode)
            if PresetKeys.retired.contains(where: { $0.path == "\(sectionName).\(keyName)" }) { continue }
            guard let key = keys.first(where: { $0.name == keyName }) else {
                throw PresetError(file: file, line: keyNode.mark?.line, key: "\(keyPrefix)\(sectionName).\(keyName)",
                                  expected: "one of \(keys.map(\.name).joined(separator: ", "))", got: "an unknown key")
            }
            let line = valueNode.mark?.line ?? keyNode.mark?.line
            result.append((try assignment(key, valueNode, file: file, line: line, keyPrefix: keyPrefix), line))
        }
        return result
    }

    /// 3) Cross-field rules, reported at a key the preset actually set (`lines`: the keys set,
    /// with their lines).
    static func checkOrderings(_ configuration: AnalysisConfiguration, lines: [String: Int], file: String, keyPrefix: String) throws(PresetError) {
        for ordering in PresetKeys.orderings {
            guard let lower = PresetKeys.key(ordering.lower), let upper = PresetKeys.key(ordering.upper) else { continue }
            let lowerValue = numericValue(lower, in: configuration)
            let upperValue = numericValue(upper, in: configuration)
            guard !(lowerValue < upperValue) else { continue }
            let suffix = lower.unit.isEmpty ? "" : " \(lower.unit)"
            if let line = lines[lower.path] {
                throw PresetError(file: file, line: line, key: keyPrefix + lower.path,
                                  expected: "less than \(upper.path) (\(PresetKey.format(upperValue))\(suffix))",
                                  got: PresetKey.format(lowerValue))
            }
            throw PresetError(file: file, line: lines[upper.path], key: keyPrefix + upper.path,
                              expected: "more than \(lower.path) (\(PresetKey.format(lowerValue))\(suffix))",
                              got: PresetKey.format(upperValue))
        }
    }

    // MARK: Values

    /// `node` checked against `key`'s type and range, as an assignment to the configuration.
    private static func assignment(_ key: PresetKey, _ node: Node, file: String, line: Int?,
                                   keyPrefix: String) throws(PresetError) -> AnalysisOverrides.Assignment {
        let tagName = node.tagName
        let path = keyPrefix + key.path
        switch key.kind {
        case .number(let keyPath, let range):
            guard tagName == .int || tagName == .float, let value = node.float else {
                throw PresetError(file: file, line: line, key: path, expected: "a number (\(key.allowedValues))", got: describe(node))
            }
            guard range.contains(value) else {
                throw PresetError(file: file, line: line, key: path, expected: key.allowedValues, got: describe(node))
            }
            return AnalysisOverrides.Assignment(path: key.path, valueText: PresetKey.format(value)) { $0[keyPath: keyPath] = value }
        case .wholeNumber(let keyPath, let range):
            guard tagName == .int, let value = node.int else {
                throw PresetError(file: file, line: line, key: path, expected: "a whole number (\(key.allowedValues))", got: describe(node))
            }
            guard range.contains(value) else {
                throw PresetError(file: file, line: line, key: path, expected: key.allowedValues, got: describe(node))
            }
            return AnalysisOverrides.Assignment(path: key.path, valueText: String(value)) { $0[keyPath: keyPath] = value }
        case .flag(let keyPath):
            guard tagName == .bool, let value = node.bool else {
                throw PresetError(file: file, line: line, key: path, expected: key.allowedValues, got: describe(node))
            }
            return AnalysisOverrides.Assignment(path: key.path, valueText: String(value)) { $0[keyPath: keyPath] = value }
        }
    }

    private static func numericValue(_ key: PresetKey, in configuration: AnalysisConfiguration) -> Double {
        switch key.kind {
        case .number(let keyPath, _): return configuration[keyPath: keyPath]
        case .wholeNumber(let keyPath, _): return Double(configuration[keyPath: keyPath])
        case .flag(let keyPath): return configuration[keyPath: keyPath] ? 1 : 0
        }
    }

    /// How a node reads in an error: scalars as written (strings quoted), others by kind.
    static func describe(_ node: Node) -> String {
        switch node {
        case .scalar(let scalar):
            switch node.tagName {
            case .str: return "the text \"\(scalar.string)\""
            case .null: return "nothing (null)"
            default: return scalar.string
            }
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        }
    }

    // MARK: Errors from below

    /// The node tree of the preset text `yaml` (nil for an empty document), with the line of
    /// every node; a syntax error is one line naming `file` and, where Yams gives it, the line.
    /// Shared by every reader of a preset's sections.
    static func composeRoot(yaml: String, file: String) throws(PresetError) -> Node? {
        do {
            return try compose(yaml: yaml)
        } catch let error as YamlError {
            throw syntaxError(error, file: file, yaml: yaml)
        } catch {
            throw PresetError(file: file, line: nil, key: "syntax", expected: "valid YAML", got: "\(error)")
        }
    }

    private static func syntaxError(_ error: YamlError, file: String, yaml: String) -> PresetError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return PresetError(file: file, line: mark.line, key: "syntax", expected: "valid YAML", got: problem)
        case .reader(let problem, let offset, _, _):
            let line = offset.map { yaml.prefix($0).filter { $0 == "\n" }.count + 1 }
            return PresetError(file: file, line: line, key: "syntax", expected: "readable YAML text", got: problem)
        case .duplicatedKeysInMapping(let duplicates, let context):
            // Yams names only the repeated key itself; give its full path when that is unambiguous.
            let name = duplicates.first ?? "syntax"
            let matches = PresetKeys.all.filter { $0.name == name }
            let key = matches.count == 1 ? matches[0].path : name
            return PresetError(file: file, line: context.mark.line, key: key,
                               expected: "each key once per section", got: "it more than once")
        default:
            return PresetError(file: file, line: nil, key: "syntax", expected: "valid YAML", got: "\(error)")
        }
    }

    /// The UTF-8 text of a preset or rig file, or one line saying exactly what is wrong with it.
    static func readText(_ path: String, expected: String) throws(PresetError) -> String {
        let manager = FileManager.default
        let type = (try? manager.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
        let got: String?
        switch type {
        case nil: got = "no such file"
        case .typeDirectory?: got = "a directory"
        case .typeRegular?: got = manager.isReadableFile(atPath: path) ? nil : "a file without read permission for this user"
        case .typeCharacterSpecial?: got = "a character device (such as /dev/null), not a regular file"
        case .typeBlockSpecial?: got = "a block device, not a regular file"
        case .typeSocket?: got = "a socket, not a regular file"
        default: got = "not a regular file"
        }
        if let got { throw PresetError(file: path, line: nil, key: nil, expected: expected, got: got) }
        guard let data = manager.contents(atPath: path) else {
            throw PresetError(file: path, line: nil, key: nil, expected: expected, got: "a file that could not be read")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw PresetError(file: path, line: nil, key: nil, expected: "UTF-8 text", got: "bytes that are not UTF-8")
        }
        return text
    }
}

extension Node {
    /// The resolved tag (`int`, `float`, `bool`, `str`, `null`, …) of this node.
    var tagName: Tag.Name { Tag.Name(rawValue: tag.rawValue) }
}
