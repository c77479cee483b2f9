import Foundation
import SpectrumDSP
import Yams

/// One entry of a preset's `inputs:` list: what `--input NAME[=SOURCE_PORT]` gives.
public struct PresetInput: Equatable, Sendable {
    public var name: String
    /// The source ports to connect (`source:`, one port or a list; source k → channel k mod N).
    public var sources: [String]
    /// The input's own analysis settings, over the preset's top-level ones.
    public var analysis: AnalysisOverrides

    public init(name: String, sources: [String] = [], analysis: AnalysisOverrides = .none) {
        self.name = name
        self.sources = sources
        self.analysis = analysis
    }
}

/// A preset's `tempo_input:`: the name, and where it was written (for the error line). Plain
/// data; any thread.
public struct PresetTempoInput: Equatable, Sendable {
    public var name: String
    public var file: String
    public var line: Int?

    public init(name: String, file: String, line: Int?) {
        self.name = name
        self.file = file
        self.line = line
    }

    /// Throws one line naming the file, the key, the value and the inputs there are when no
    /// input of `inputNames` (the inputs that will run) has this name.
    public func check(inputNames: [String]) throws(PresetError) {
        guard !inputNames.contains(name) else { return }
        throw PresetError(file: file, line: line, key: InputsLoader.tempoInputKey, expected: "the name of an input",
                          got: "\(name), " + (inputNames.isEmpty ? "and there are no named inputs" : "none of " + inputNames.joined(separator: ", ")))
    }
}

/// Reads a preset's `inputs:` section, the named inputs of the live client:
///
/// ```yaml
/// inputs:
///   - name: kick
///     source: system:capture_1
///     rhythm:
///       minimum_bpm: 80
///   - name: vocal
///     pitch:
///       reference_hz: 442
/// ```
///
/// Each entry is a mapping with a string `name`, an optional `source` (a port, or a list of
/// ports as a saved session writes when an input has several connections) and optionally
/// analysis sections of its own (the top-level sections and keys, checked the same way, over
/// the top-level values; `sharedKeys` only at the top level). Every problem is one
/// `PresetError` line with file, line and the key as `inputs[N] NAME: section.key`; the names
/// are checked by the live client's rules (`LiveInput.validate`). Allocates and reads files;
/// not real-time safe.
public enum InputsLoader {
    public static let sectionName = "inputs"
    /// The top-level key naming the input that drives the tempo outputs (the summary, MIDI
    /// clock, Link, WLED), as `--tempo-input` does: `tempo_input: kick`.
    public static let tempoInputKey = "tempo_input"

    /// Keys every input shares, so an input cannot set its own: the frame rate (one publisher
    /// and clock) and the bands (one OSC address table, band grouping and web view).
    public static let sharedKeys: Set<String> = [
        "output.rate_hz", "spectrum.band_count", "spectrum.minimum_frequency_hz", "spectrum.maximum_frequency_hz",
    ]

    /// The inputs of the preset at `path` (empty when it has no `inputs:`).
    public static func load(path: String) throws(PresetError) -> [PresetInput] {
        try declaredInputs(path: path) ?? []
    }

    /// The inputs of the preset at `path`; nil when it has no `inputs:` key at all (an empty
    /// list, `inputs: []`, is declared: no named inputs).
    public static func declaredInputs(path: String) throws(PresetError) -> [PresetInput]? {
        try parseDeclared(yaml: PresetLoader.readText(path, expected: "a readable YAML preset file"), file: path)
    }

    /// The preset's `tempo_input:` name and its line; nil when the key is absent. Only its form
    /// is checked here (a non-empty string); whether an input of that name runs is checked
    /// against the inputs actually started (`PresetTempoInput.check`).
    public static func declaredTempoInput(path: String) throws(PresetError) -> PresetTempoInput? {
        try parseTempoInput(yaml: PresetLoader.readText(path, expected: "a readable YAML preset file"), file: path)
    }

    public static func parseTempoInput(yaml: String, file: String) throws(PresetError) -> PresetTempoInput? {
        let root = try PresetLoader.composeRoot(yaml: yaml, file: file)
        guard let value = root?.mapping?[Node(tempoInputKey)] else { return nil }
        guard value.tagName == .str, let name = value.string, !name.isEmpty else {
            throw PresetError(file: file, line: value.mark?.line, key: tempoInputKey, expected: "the name of an input such as kick", got: PresetLoader.describe(value))
        }
        return PresetTempoInput(name: name, file: file, line: value.mark?.line)
    }

    public static func parse(yaml: String, file: String) throws(PresetError) -> [PresetInput] {
        try parseDeclared(yaml: yaml, file: file) ?? []
    }

    /// As `parse`, nil when there is no `inputs:` key.
    public static func parseDeclared(yaml: String, file: String) throws(PresetError) -> [PresetInput]? {
        let root = try PresetLoader.composeRoot(yaml: yaml, file: file)
        guard let mapping = root?.mapping, let section = mapping[Node(sectionName)] else { return nil }
        guard section.tagName != .null else { return [] }
        guard let list = section.sequence else {
            throw PresetError(file: file, line: section.mark?.line, key: sectionName,
                              expected: "a list of inputs (- name: kick, source: system:capture_1)", got: PresetLoader.describe(section))
        }
        // The top-level analysis, read once and only when an input has sections of its own.
        var top: AnalysisConfiguration?
        func shared() throws(PresetError) -> AnalysisConfiguration {
            if let top { return top }
            let configuration = try PresetLoader.parse(yaml: yaml, file: file)
            top = configuration
            return configuration
        }
        var inputs: [PresetInput] = []
        for (index, entry) in list.enumerated() {
            let key = "\(sectionName)[\(index + 1)]"
            guard let fields = entry.mapping else {
                throw PresetError(file: file, line: entry.mark?.line, key: key, expected: "a mapping with name and source", got: PresetLoader.describe(entry))
            }
            var input = PresetInput(name: "")
            var sections: [(Node, Node)] = []
            for (fieldNode, value) in fields {
                let field = fieldNode.string ?? PresetLoader.describe(fieldNode)
                if PresetKeys.sections.contains(field) {
                    sections.append((fieldNode, value))
                    continue
                }
                guard field == "name" || field == "source" else {
                    throw PresetError(file: file, line: fieldNode.mark?.line, key: "\(key).\(field)",
                                      expected: "name, source or an analysis section (\(PresetKeys.sections.joined(separator: ", ")))", got: "an unknown key")
                }
                if field == "source", let ports = value.sequence {
                    for port in ports {
                        guard port.tagName == .str, let text = port.string, !text.isEmpty else {
                            throw PresetError(file: file, line: port.mark?.line, key: "\(key).source",
                                              expected: "a list of JACK ports such as [system:capture_1, system:capture_2]", got: PresetLoader.describe(port))
                        }
                        input.sources.append(text)
                    }
                    continue
                }
                guard value.tagName == .str, let text = value.string, !text.isEmpty else {
                    throw PresetError(file: file, line: value.mark?.line, key: "\(key).\(field)",
                                      expected: field == "name" ? "an input name such as kick" : "a JACK port such as system:capture_1, or a list of them",
                                      got: PresetLoader.describe(value))
                }
                if field == "name" { input.name = text } else { input.sources = [text] }
            }
            guard !input.name.isEmpty else {
                throw PresetError(file: file, line: entry.mark?.line, key: "\(key).name", expected: "an input name such as kick", got: "none")
            }
            if !sections.isEmpty {
                input.analysis = try analysis(sections, keyPrefix: "\(key) \(input.name): ", shared: shared(), file: file)
            }
            inputs.append(input)
        }
        return inputs
    }

    /// An input's own sections checked like the top-level ones (and the orderings over the
    /// top-level values), as overrides.
    private static func analysis(_ sections: [(Node, Node)], keyPrefix: String, shared: AnalysisConfiguration,
                                 file: String) throws(PresetError) -> AnalysisOverrides {
        var assignments: [AnalysisOverrides.Assignment] = []
        var lines: [String: Int] = [:]
        for (sectionNode, sectionValue) in sections {
            for (assignment, line) in try PresetLoader.assignments(section: sectionNode.string ?? "", sectionNode, sectionValue, file: file, keyPrefix: keyPrefix) {
                guard !sharedKeys.contains(assignment.path) else {
                    throw PresetError(file: file, line: line, key: keyPrefix + assignment.path,
                                      expected: "it only at the top level (every input shares the frame rate and the bands)", got: "it in an input")
                }
                assignments.append(assignment)
                lines[assignment.path] = line
            }
        }
        let overrides = AnalysisOverrides(assignments)
        try PresetLoader.checkOrderings(overrides.applied(to: shared), lines: lines, file: file, keyPrefix: keyPrefix)
        return overrides
    }
}
