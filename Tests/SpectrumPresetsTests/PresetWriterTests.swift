import Foundation
import SpectrumDSP
import SpectrumPresets
import Testing

@Suite struct PresetWriterTests {
    /// Every key's value, as the preset would write it.
    func values(_ configuration: AnalysisConfiguration) -> [String] {
        PresetKeys.all.map { "\($0.path)=\($0.yamlValue(in: configuration))" }
    }

    @Test("What is written reads back to the same configuration, every key")
    func roundTrip() throws {
        var configuration = AnalysisConfiguration()
        configuration.pitch.referenceHz = 442.5
        configuration.rhythm.leadMilliseconds = 37.25
        configuration.rhythm.minimumBpm = 90
        configuration.rhythm.maximumBpm = 150
        configuration.rhythm.preferredMinimumBpm = 95
        configuration.rhythm.preferredMaximumBpm = 140
        configuration.spectrum.bandCount = 64
        configuration.outputRateHz = 1000.0 / 24  // a value with no short decimal form
        let text = PresetWriter.yaml(for: configuration, header: ["session state"])
        #expect(text.hasPrefix("# session state\n"))
        let read = try PresetLoader.parse(yaml: text, file: "state.yaml")
        #expect(values(read) == values(configuration))
        #expect(values(read) != values(AnalysisConfiguration()), "the test changed nothing")
    }

    @Test("The inputs of the file being replaced are kept")
    func keepsInputs() throws {
        let previous = "inputs:\n  - name: kick\n    source: system:capture_1\n"
        let text = PresetWriter.yaml(for: AnalysisConfiguration(), keepingOutputsOf: previous)
        #expect(try InputsLoader.parse(yaml: text, file: "state.yaml") == [PresetInput(name: "kick", sources: ["system:capture_1"])])
    }

    @Test("A session's inputs are written as they are and read back the same: several ports, odd port names, own settings")
    func writesInputs() throws {
        let own = try #require(InputsLoader.parse(yaml: "inputs:\n  - name: kick\n    rhythm:\n      minimum_bpm: 100\n    pitch:\n      reference_hz: 415.5\n",
                                                  file: "own.yaml").first).analysis
        let inputs = [
            PresetInput(name: "kick", sources: ["system:capture_1"], analysis: own),
            PresetInput(name: "808", sources: ["a2j:Midi Through [14] (capture): Port-0", "system:capture_2"]),
            PresetInput(name: "vocal"),
        ]
        let previous = "inputs:\n  - name: old\nosc:\n  targets: [127.0.0.1:9000]\n"
        let text = PresetWriter.yaml(for: AnalysisConfiguration(), inputs: inputs, keepingOutputsOf: previous)
        #expect(try InputsLoader.parse(yaml: text, file: "state.yaml") == inputs, "\(text)")
        #expect(text.contains("127.0.0.1:9000") && !text.contains("name: old"), "outputs kept, the old inputs replaced: \(text)")
        let none = PresetWriter.yaml(for: AnalysisConfiguration(), inputs: [], keepingOutputsOf: previous)
        #expect(try InputsLoader.parseDeclared(yaml: none, file: "state.yaml") == [])
        #expect(try InputsLoader.parseDeclared(yaml: PresetWriter.yaml(for: AnalysisConfiguration()), file: "state.yaml") == nil)
    }

    @Test("A session's tempo input is written with its inputs and read back; carried over with the inputs of the file being replaced")
    func writesTheTempoInput() throws {
        let inputs = [PresetInput(name: "kick"), PresetInput(name: "bass")]
        let text = PresetWriter.yaml(for: AnalysisConfiguration(), inputs: inputs, tempoInput: "bass")
        let read = try #require(try InputsLoader.parseTempoInput(yaml: text, file: "state.yaml"), "\(text)")
        #expect(read.name == "bass")
        try read.check(inputNames: try InputsLoader.parse(yaml: text, file: "state.yaml").map(\.name))
        #expect(try InputsLoader.parseTempoInput(yaml: PresetWriter.yaml(for: AnalysisConfiguration(), inputs: inputs), file: "state.yaml") == nil)
        let carried = PresetWriter.yaml(for: AnalysisConfiguration(), keepingOutputsOf: text)
        #expect(try InputsLoader.parseTempoInput(yaml: carried, file: "state.yaml")?.name == "bass", "\(carried)")
        let replaced = PresetWriter.yaml(for: AnalysisConfiguration(), inputs: inputs, keepingOutputsOf: text)
        #expect(try InputsLoader.parseTempoInput(yaml: replaced, file: "state.yaml") == nil, "new inputs without a tempo input drop the old one: \(replaced)")
    }

    @Test("Output sections of the file being replaced are kept")
    func keepsOutputs() throws {
        let previous = """
            pitch:
              reference_hz: 415
            osc:
              targets:
                - {to: "127.0.0.1:7700", rig: ola}
            """
        let text = PresetWriter.yaml(for: AnalysisConfiguration(), keepingOutputsOf: previous)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("preset-writer-\(getpid()).yaml")
        defer { try? FileManager.default.removeItem(at: file) }
        try text.write(to: file, atomically: true, encoding: .utf8)
        let outputs = try RigLoader.loadOutputs(presetPath: file.path)
        #expect(outputs.targets.map(\.target.description) == ["127.0.0.1:7700"])
        #expect(outputs.targets.first?.rig?.name == "ola")
        #expect(try PresetLoader.parse(yaml: text, file: "state.yaml").pitch.referenceHz == 440, "the analysis is the configuration's, not the old file's")
    }
}
