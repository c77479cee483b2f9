import Foundation
import SpectrumDSP
import Yams

/// Writes an `AnalysisConfiguration` as a preset file that `PresetLoader` reads back to the same
/// configuration: every key of `PresetKeys.all`, by section, each under its one-line summary.
/// Used for session state (NSM). Allocates; not real-time safe.
public enum PresetWriter {
    /// The preset text. `header` becomes comment lines at the top; the output sections (`rig:`,
    /// `routes:`, `osc:`) of `keepingOutputsOf` (the file being replaced) are carried over, so
    /// saving never drops what someone wrote there. `inputs`: the `inputs:` list to write (a
    /// session's inputs as they are now; `[]` writes `inputs: []`); nil carries over the
    /// `inputs:` of `keepingOutputsOf`, if any, with its `tempo_input:`. `tempoInput`: written as
    /// `tempo_input:` with `inputs` (nil: none).
    public static func yaml(for configuration: AnalysisConfiguration, header: [String] = [], inputs: [PresetInput]? = nil,
                            tempoInput: String? = nil, keepingOutputsOf previous: String? = nil) -> String {
        var lines = header.map { "# \($0)" }
        if !lines.isEmpty { lines.append("") }
        for section in PresetKeys.sections {
            lines.append("\(section):")
            for key in PresetKeys.all where key.section == section {
                lines.append("  # \(key.summary) \(key.allowedValues.prefix(1).uppercased() + key.allowedValues.dropFirst()).")
                lines.append("  \(key.name): \(key.yamlValue(in: configuration))")
            }
            lines.append("")
        }
        var text = lines.joined(separator: "\n")
        var kept = keptSections(of: previous, includingInputs: inputs == nil)
        if let inputs {
            kept.append((Node(InputsLoader.sectionName), inputsNode(inputs)))
            if let tempoInput { kept.append((Node(InputsLoader.tempoInputKey), Node(tempoInput, Tag(.str), .doubleQuoted))) }
        }
        if !kept.isEmpty, let sections = try? serialize(node: .mapping(Node.Mapping(kept))) { text += "\n" + sections }
        return text
    }

    /// The output sections (and, if asked, the inputs and tempo input) of a preset's text, in its order; none
    /// when the text is not YAML (the loader reports that on its own).
    static func keptSections(of text: String?, includingInputs: Bool) -> [(Node, Node)] {
        guard let text, let root = try? compose(yaml: text), let mapping = root.mapping else { return [] }
        let names = RigLoader.outputSections + (includingInputs ? [InputsLoader.sectionName, InputsLoader.tempoInputKey] : [])
        return mapping.filter { key, _ in names.contains(key.string ?? "") }.map { ($0.key, $0.value) }
    }

    /// `inputs` as the list `InputsLoader` reads: names and ports double-quoted (a port name may
    /// hold `: ` or look like a number), one port as a string, several as a list, each input's
    /// own settings as its sections.
    static func inputsNode(_ inputs: [PresetInput]) -> Node {
        func quoted(_ text: String) -> Node { Node(text, Tag(.str), .doubleQuoted) }
        return .sequence(Node.Sequence(inputs.map { input in
            var fields: [(Node, Node)] = [(Node("name"), quoted(input.name))]
            if input.sources.count == 1 {
                fields.append((Node("source"), quoted(input.sources[0])))
            } else if input.sources.count > 1 {
                fields.append((Node("source"), .sequence(Node.Sequence(input.sources.map(quoted)))))
            }
            var sections: [(name: String, keys: [(Node, Node)])] = []
            for assignment in input.analysis.assignments {
                // A path is `section.key` (`PresetKey.path`).
                let section = String(assignment.path.prefix { $0 != "." })
                let value = (Node(String(assignment.path.dropFirst(section.count + 1))), Node(assignment.valueText))
                if let index = sections.firstIndex(where: { $0.name == section }) {
                    sections[index].keys.append(value)
                } else {
                    sections.append((section, [value]))
                }
            }
            fields += sections.map { (Node($0.name), .mapping(Node.Mapping($0.keys))) }
            return .mapping(Node.Mapping(fields))
        }))
    }
}
