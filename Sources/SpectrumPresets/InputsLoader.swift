import Foundation
import Yams

/// One entry of a preset's `inputs:` list: what `--input NAME[=SOURCE_PORT]` gives.
public struct PresetInput: Equatable, Sendable {
    public var name: String
    /// The source port to connect, if any.
    public var source: String?

    public init(name: String, source: String? = nil) {
        self.name = name
        self.source = source
    }
}

/// Reads a preset's `inputs:` section, the named inputs of the live client:
///
/// ```yaml
/// inputs:
///   - name: kick
///     source: system:capture_1
///   - name: vocal
/// ```
///
/// Only the shape is checked here (a list of mappings with a string `name` and an optional
/// string `source`), one `PresetError` line with file and line; the names are checked by the
/// live client's rules (`LiveInput.validate`). Every input runs the preset's analysis.
/// Allocates and reads files; not real-time safe.
public enum InputsLoader {
    public static let sectionName = "inputs"

    /// The inputs of the preset at `path` (empty when it has no `inputs:`).
    public static func load(path: String) throws(PresetError) -> [PresetInput] {
        try parse(yaml: PresetLoader.readText(path, expected: "a readable YAML preset file"), file: path)
    }

    public static func parse(yaml: String, file: String) throws(PresetError) -> [PresetInput] {
        let root: Node?
        do {
            root = try compose(yaml: yaml)
        } catch {
            throw PresetError(file: file, line: nil, key: "syntax", expected: "valid YAML", got: "\(error)")
        }
        guard let mapping = root?.mapping, let section = mapping[Node(sectionName)], section.tagName != .null else { return [] }
        guard let list = section.sequence else {
            throw PresetError(file: file, line: section.mark?.line, key: sectionName,
                              expected: "a list of inputs (- name: kick, source: system:capture_1)", got: PresetLoader.describe(section))
        }
        var inputs: [PresetInput] = []
        for (index, entry) in list.enumerated() {
            let key = "\(sectionName)[\(index + 1)]"
            guard let fields = entry.mapping else {
                throw PresetError(file: file, line: entry.mark?.line, key: key, expected: "a mapping with name and source", got: PresetLoader.describe(entry))
            }
            var input = PresetInput(name: "")
            for (fieldNode, value) in fields {
                let field = fieldNode.string ?? PresetLoader.describe(fieldNode)
                guard field == "name" || field == "source" else {
                    throw PresetError(file: file, line: fieldNode.mark?.line, key: "\(key).\(field)", expected: "name or source", got: "an unknown key")
                }
                guard value.tagName == .str, let text = value.string, !text.isEmpty else {
                    throw PresetError(file: file, line: value.mark?.line, key: "\(key).\(field)",
                                      expected: field == "name" ? "an input name such as kick" : "a JACK port such as system:capture_1",
                                      got: PresetLoader.describe(value))
                }
                if field == "name" { input.name = text } else { input.source = text }
            }
            guard !input.name.isEmpty else {
                throw PresetError(file: file, line: entry.mark?.line, key: "\(key).name", expected: "an input name such as kick", got: "none")
            }
            inputs.append(input)
        }
        return inputs
    }
}
