import Foundation
import SpectrumDSP
import Yams

/// Writes an `AnalysisConfiguration` as a preset file that `PresetLoader` reads back to the same
/// configuration: every key of `PresetKeys.all`, by section, each under its one-line summary.
/// Used for session state (NSM). Allocates; not real-time safe.
public enum PresetWriter {
    /// The preset text. `header` becomes comment lines at the top; the output sections (`rig:`,
    /// `routes:`, `osc:`) and the `inputs:` of `keepingOutputsOf` (the file being replaced) are
    /// carried over, so saving never drops what someone wrote there.
    public static func yaml(for configuration: AnalysisConfiguration, header: [String] = [], keepingOutputsOf previous: String? = nil) -> String {
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
        if let outputs = outputSections(of: previous) { text += "\n" + outputs }
        return text
    }

    /// The output sections (and the inputs) of a preset's text as YAML, nil when there are none
    /// (or the text is not YAML: the loader reports that on its own).
    static func outputSections(of text: String?) -> String? {
        guard let text, let root = try? compose(yaml: text), let mapping = root.mapping else { return nil }
        let kept = mapping.filter { key, _ in (RigLoader.outputSections + [InputsLoader.sectionName]).contains(key.string ?? "") }
        guard !kept.isEmpty else { return nil }
        return try? serialize(node: .mapping(Node.Mapping(kept.map { ($0.key, $0.value) })))
    }
}
