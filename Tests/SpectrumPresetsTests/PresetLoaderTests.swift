import Foundation
import SpectrumDSP
import Testing
import Yams
@testable import SpectrumPresets

/// The repository root, found from this file's path (Tests/SpectrumPresetsTests/…).
let repositoryURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func repositoryFile(_ relativePath: String) throws -> String {
    try String(contentsOf: repositoryURL.appendingPathComponent(relativePath), encoding: .utf8)
}

/// The error text `parse` gives for `yaml`, or nil if it loads.
func errorText(_ yaml: String, file: String = "bad.yaml") -> String? {
    do {
        _ = try PresetLoader.parse(yaml: yaml, file: file)
        return nil
    } catch {
        return error.description
    }
}

@Suite struct ShippedPresetTests {
    @Test func defaultPresetIsExactlyTheDefaults() throws {
        let configuration = try PresetLoader.load(path: repositoryURL.appendingPathComponent("presets/default.yaml").path)
        #expect(configuration == AnalysisConfiguration())
    }

    @Test func defaultPresetSetsAndCommentsEveryKey() throws {
        let text = try repositoryFile("presets/default.yaml")
        let root = try #require(try compose(yaml: text)?.mapping)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for key in PresetKeys.all {
            let section = try #require(root[Node(key.section)]?.mapping, "section \(key.section) missing")
            let value = try #require(section[Node(key.name)], "\(key.path) missing from default.yaml")
            // Written with its default value, and with a comment right above it.
            #expect(value.string == key.yamlValue(in: AnalysisConfiguration()), "\(key.path)")
            let line = try #require(value.mark?.line)
            #expect(lines[line - 2].trimmingCharacters(in: .whitespaces).hasPrefix("#"), "\(key.path) has no comment above it")
        }
    }

    @Test func docsMentionEveryKey() throws {
        let docs = try repositoryFile("docs/presets.md")
        let rows = docs.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for key in PresetKeys.all {
            // Its row in the key table: "| `path` | type | allowed | default | meaning |".
            let row = try #require(rows.first { $0.hasPrefix("| `\(key.path)` |") }, "docs/presets.md has no row for \(key.path)")
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count >= 4 && cells[2] == key.allowedValues, "docs/presets.md gives another range for \(key.path): \(row)")
            let type = switch key.kind { case .number: "number"; case .wholeNumber: "whole number"; case .flag: "flag" }
            #expect(cells.count >= 4 && cells[1] == type, "docs/presets.md gives another type for \(key.path)")
        }
        // …and no row for a key the table does not have.
        let documented = rows.compactMap { $0.split(separator: "`").dropFirst().first.map(String.init) }
        for path in documented where path.contains(".") && !path.contains(" ") {
            #expect(PresetKeys.key(path) != nil, "docs/presets.md documents \(path), which the key table lacks")
        }
    }

    @Test(arguments: ["music", "stage"])
    func shippedPresetSetsOnlyKeysThatDiffer(name: String) throws {
        let path = repositoryURL.appendingPathComponent("presets/\(name).yaml").path
        let configuration = try PresetLoader.load(path: path)
        #expect(configuration != AnalysisConfiguration())
        let root = try #require(try compose(yaml: try repositoryFile("presets/\(name).yaml"))?.mapping)
        for (sectionName, section) in root {
            for (keyName, _) in try #require(section.mapping) {
                let key = try #require(PresetKeys.key("\(sectionName.string!).\(keyName.string!)"))
                #expect(key.yamlValue(in: configuration) != key.yamlValue(in: AnalysisConfiguration()), "\(name).yaml repeats the default of \(key.path)")
            }
        }
        // Every shipped preset must also run at the common sample rates.
        for sampleRateHz in [44_100.0, 48_000, 96_000] {
            #expect(throws: Never.self) { _ = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz) }
        }
    }

    @Test func musicPresetTurnsOnTilt() throws {
        let configuration = try PresetLoader.load(path: repositoryURL.appendingPathComponent("presets/music.yaml").path)
        var expected = AnalysisConfiguration()
        expected.tilt.enabled = true
        #expect(configuration == expected)
    }
}

@Suite struct PresetParsingTests {
    @Test func partialPresetKeepsTheOtherDefaults() throws {
        let configuration = try PresetLoader.parse(yaml: "spectrum:\n  band_count: 64\ntilt:\n  enabled: yes\n  power: 2\n", file: "p.yaml")
        var expected = AnalysisConfiguration()
        expected.spectrum.bandCount = 64
        expected.tilt.enabled = true
        expected.tilt.power = 2
        #expect(configuration == expected)
    }

    @Test func emptyDocumentsAndSectionsAreTheDefaults() throws {
        #expect(try PresetLoader.parse(yaml: "", file: "p.yaml") == AnalysisConfiguration())
        #expect(try PresetLoader.parse(yaml: "# only a comment\n", file: "p.yaml") == AnalysisConfiguration())
        #expect(try PresetLoader.parse(yaml: "spectrum:\n  # band_count: 64\n", file: "p.yaml") == AnalysisConfiguration())
    }

    @Test func integersAreAcceptedForNumbers() throws {
        let configuration = try PresetLoader.parse(yaml: "output:\n  rate_hz: 30\nballistics:\n  attack_ms: 12.5\n", file: "p.yaml")
        #expect(configuration.outputRateHz == 30)
        #expect(configuration.ballistics.attackMilliseconds == 12.5)
    }

    /// A session saved by the version before pitch finding 41 holds
    /// `pitch.membrane_decay_db_per_second`: it still opens, the retired key ignored, the keys
    /// beside it read; a retired key is in no table, so it is never written again.
    @Test func retiredKeysAreReadAndIgnored() throws {
        let configuration = try PresetLoader.parse(yaml: "pitch:\n  membrane_decay_db_per_second: 0\n  membrane_aperiodic_share: 0.7\n", file: "p.yaml")
        var expected = AnalysisConfiguration()
        expected.pitch.membraneAperiodicShare = 0.7
        #expect(configuration == expected)
        for retired in PresetKeys.retired {
            #expect(PresetKeys.key(retired.path) == nil, "\(retired.path) is retired but still in the key table")
            #expect(PresetKeys.key(retired.replacement) != nil, "\(retired.path)'s replacement \(retired.replacement) is no key")
        }
    }

    @Test func unknownKeyListsTheSectionsKeys() {
        #expect(errorText("spectrum:\n  band_count: 64\n  band_cont: 64\n")
            == "bad.yaml:3: spectrum.band_cont: expected one of window_ms, bass_window_ms, band_count, minimum_frequency_hz, maximum_frequency_hz, got an unknown key")
    }

    @Test func unknownSectionListsTheSections() {
        #expect(errorText("output:\n  rate_hz: 60\nspectrun:\n  band_count: 64\n")
            == "bad.yaml:3: spectrun: expected one of the sections output, spectrum, auto_level, tilt, ballistics, level, pitch, rhythm, rig, routes, osc, inputs, tempo_input, got an unknown section")
    }

    @Test func wrongTypes() {
        #expect(errorText("output:\n  rate_hz: fast\n") == "bad.yaml:2: output.rate_hz: expected a number (10 to 240 Hz), got the text \"fast\"")
        #expect(errorText("output:\n  rate_hz: \"60\"\n") == "bad.yaml:2: output.rate_hz: expected a number (10 to 240 Hz), got the text \"60\"")
        #expect(errorText("spectrum:\n  band_count: 64.5\n") == "bad.yaml:2: spectrum.band_count: expected a whole number (1 to 256), got 64.5")
        #expect(errorText("tilt:\n  enabled: 1\n") == "bad.yaml:2: tilt.enabled: expected true or false, got 1")
        #expect(errorText("tilt:\n  pivot_hz:\n") == "bad.yaml:2: tilt.pivot_hz: expected a number (20 to 5000 Hz), got nothing (null)")
        #expect(errorText("level:\n  vu_floor_db: [1, 2]\n") == "bad.yaml:2: level.vu_floor_db: expected a number (-120 to -6 dB), got a list")
        #expect(errorText("spectrum: 64\n") == "bad.yaml:1: spectrum: expected a mapping of spectrum keys, got 64")
    }

    @Test func outOfRange() {
        #expect(errorText("output:\n  rate_hz: 60\nspectrum:\n  band_count: 300\n") == "bad.yaml:4: spectrum.band_count: expected 1 to 256, got 300")
        #expect(errorText("output:\n  rate_hz: 5\n") == "bad.yaml:2: output.rate_hz: expected 10 to 240 Hz, got 5")
        #expect(errorText("spectrum:\n  window_ms: 10\n") == "bad.yaml:2: spectrum.window_ms: expected 12 to 500 ms, got 10")
        #expect(errorText("ballistics:\n  release_ms: .nan\n") == "bad.yaml:2: ballistics.release_ms: expected 0 to 10000 ms, got .nan")
        #expect(errorText("ballistics:\n  release_ms: -.inf\n") == "bad.yaml:2: ballistics.release_ms: expected 0 to 10000 ms, got -.inf")
    }

    @Test func syntaxErrorsGiveTheirLine() {
        #expect(errorText("output:\n  rate_hz: 60\nspectrum:\n  band_count: [64\n") == "bad.yaml:5: syntax: expected valid YAML, got did not find expected ',' or ']'")
        #expect(errorText("output:\n  rate_hz: 60\n  rate_hz: 30\n") == "bad.yaml:2: output.rate_hz: expected each key once per section, got it more than once")
    }

    @Test func documentMustBeAMapping() {
        #expect(errorText("- output\n- spectrum\n") == "bad.yaml:1: preset: expected a mapping of sections (output, spectrum, auto_level, tilt, ballistics, level, pitch, rhythm), got a list")
        #expect(errorText("just text\n") == "bad.yaml:1: preset: expected a mapping of sections (output, spectrum, auto_level, tilt, ballistics, level, pitch, rhythm), got the text \"just text\"")
    }

    @Test func crossFieldRulesNameAKeyThePresetSet() {
        #expect(errorText("spectrum:\n  minimum_frequency_hz: 500\n  maximum_frequency_hz: 400\n")
            == "bad.yaml:2: spectrum.minimum_frequency_hz: expected less than spectrum.maximum_frequency_hz (400 Hz), got 500")
        #expect(errorText("spectrum:\n  maximum_frequency_hz: 100\n  band_count: 8\n  minimum_frequency_hz: 100\n")
            == "bad.yaml:4: spectrum.minimum_frequency_hz: expected less than spectrum.maximum_frequency_hz (100 Hz), got 100")
        #expect(errorText("auto_level:\n  maximum_ceiling_db: -70\n")
            == "bad.yaml:2: auto_level.maximum_ceiling_db: expected more than auto_level.minimum_ceiling_db (-60 dB), got -70")
    }

    @Test func missingFileIsOneLine() {
        #expect(throws: PresetError(file: "/nonexistent/x.yaml", line: nil, key: nil, expected: "a readable YAML preset file", got: "no such file")) {
            _ = try PresetLoader.load(path: "/nonexistent/x.yaml")
        }
        #expect(PresetError(file: "/nonexistent/x.yaml", line: nil, key: nil, expected: "a readable YAML preset file", got: "no such file").description
            == "/nonexistent/x.yaml: expected a readable YAML preset file, got no such file")
    }

    @Test func everyTableKeyIsWellFormed() {
        var seen = Set<String>()
        for key in PresetKeys.all {
            #expect(seen.insert(key.path).inserted, "\(key.path) appears twice")
            #expect(!key.section.isEmpty && !key.name.isEmpty && !key.name.contains("."), "\(key.path)")
            #expect(key.path == key.path.lowercased(), "\(key.path) is not snake_case")
            // The default must be allowed by its own range.
            #expect(throws: Never.self) {
                _ = try PresetLoader.parse(yaml: "\(key.section):\n  \(key.name): \(key.yamlValue(in: AnalysisConfiguration()))\n", file: "p.yaml")
            }
        }
    }
}

@Suite struct PresetLocatorTests {
    /// A temporary directory tree, removed at the end of the test.
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("spectrum-presets-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func write(_ relativePath: String, _ text: String = "") throws {
            let file = url.appendingPathComponent(relativePath)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        func path(_ relativePath: String) -> String { url.appendingPathComponent(relativePath).path }
    }

    @Test func pathsAreTakenAsGiven() throws {
        let locator = PresetLocator(environmentDirectory: nil, currentDirectory: "/", executablePath: nil)
        #expect(try locator.resolve("./mine") == "./mine")
        #expect(try locator.resolve("mine.yaml") == "mine.yaml")
        #expect(try locator.resolve("/etc/spectrum/stage.yaml") == "/etc/spectrum/stage.yaml")
    }

    @Test func namesAreSearchedInOrder() throws {
        let scratch = try Scratch()
        try scratch.write("env/live.yaml")
        try scratch.write("work/presets/live.yaml")
        try scratch.write("work/presets/studio.yaml")
        try scratch.write("repo/Package.swift")
        try scratch.write("repo/presets/live.yaml")
        try scratch.write("repo/presets/studio.yaml")
        try scratch.write("repo/presets/club.yaml")
        try scratch.write("repo/.build/debug/spectrum")
        let executable = scratch.path("repo/.build/debug/spectrum")
        let all = PresetLocator(environmentDirectory: scratch.path("env"), currentDirectory: scratch.path("work"), executablePath: executable)
        #expect(try all.resolve("live") == scratch.path("env/live.yaml"))
        #expect(try all.resolve("studio") == scratch.path("work/presets/studio.yaml"))
        #expect(try all.resolve("club") == scratch.path("repo/presets/club.yaml"))
        #expect(all.repositoryDirectory == scratch.path("repo"))
        let noEnvironment = PresetLocator(environmentDirectory: nil, currentDirectory: scratch.path("work"), executablePath: executable)
        #expect(try noEnvironment.resolve("live") == scratch.path("work/presets/live.yaml"))
    }

    @Test func missingNameListsPlacesAndPresets() throws {
        let scratch = try Scratch()
        try scratch.write("env/live.yaml")
        try scratch.write("work/presets/studio.yaml")
        try scratch.write("work/presets/notes.txt")
        let locator = PresetLocator(environmentDirectory: scratch.path("env"), currentDirectory: scratch.path("work"), executablePath: "/usr/bin/spectrum")
        #expect(throws: PresetNotFoundError.self) { _ = try locator.resolve("club") }
        do {
            _ = try locator.resolve("club")
        } catch {
            #expect(error.description == "preset club: expected club.yaml in $SPECTRUM_PRESETS_DIR (\(scratch.path("env"))), ./presets, got no such file (available presets: live, studio)")
        }
    }
}

@Suite struct PresetInputsTests {
    @Test func theInputsListIsReadAndTheAnalysisLoaderLeavesItAlone() throws {
        let yaml = """
            inputs:
              - name: kick
                source: system:capture_1
              - name: vocal
            ballistics:
              attack_ms: 15
            """
        #expect(try InputsLoader.parse(yaml: yaml, file: "rig.yaml") == [PresetInput(name: "kick", sources: ["system:capture_1"]), PresetInput(name: "vocal")])
        #expect(try PresetLoader.parse(yaml: yaml, file: "rig.yaml").ballistics.attackMilliseconds == 15)
        #expect(try InputsLoader.parse(yaml: "ballistics:\n  attack_ms: 15\n", file: "rig.yaml").isEmpty)
        // Several sources (as a session save writes an input with several connections).
        #expect(try InputsLoader.parse(yaml: "inputs:\n  - name: pads\n    source: [system:capture_1, system:capture_2]\n", file: "rig.yaml")
            == [PresetInput(name: "pads", sources: ["system:capture_1", "system:capture_2"])])
    }

    @Test(arguments: [
        ("inputs: kick\n", "rig.yaml:1: inputs: expected a list of inputs"),
        ("inputs:\n  - kick\n", "rig.yaml:2: inputs[1]: expected a mapping with name and source"),
        ("inputs:\n  - source: system:capture_1\n", "rig.yaml:2: inputs[1].name: expected an input name such as kick, got none"),
        ("inputs:\n  - name: 12\n", "rig.yaml:2: inputs[1].name: expected an input name such as kick, got 12"),
        ("inputs:\n  - name: kick\n    source: [system:capture_1, 3]\n", "rig.yaml:3: inputs[1].source: expected a list of JACK ports such as [system:capture_1, system:capture_2], got 3"),
        ("inputs:\n  - name: kick\n    source: {a: b}\n", "rig.yaml:3: inputs[1].source: expected a JACK port such as system:capture_1, or a list of them"),
        ("inputs:\n  - name: kick\n    port: x\n", "rig.yaml:3: inputs[1].port: expected name, source or an analysis section (output, spectrum"),
        ("inputs:\n  - name: kick\n    pitch:\n      pitch_hz: 3\n", "rig.yaml:4: inputs[1] kick: pitch.pitch_hz: expected one of enabled, minimum_frequency_hz"),
        ("inputs:\n  - name: kick\n    pitch:\n      reference_hz: 500\n", "rig.yaml:4: inputs[1] kick: pitch.reference_hz: expected 415 to 466 Hz, got 500"),
        ("inputs:\n  - name: kick\n    rhythm: fast\n", "rig.yaml:3: inputs[1] kick: rhythm: expected a mapping of rhythm keys, got the text \"fast\""),
        ("inputs:\n  - name: kick\n  - name: bass\n    spectrum:\n      band_count: 64\n",
         "rig.yaml:5: inputs[2] bass: spectrum.band_count: expected it only at the top level (every input shares the frame rate and the bands), got it in an input"),
        ("inputs:\n  - name: kick\n    output:\n      rate_hz: 30\n", "rig.yaml:4: inputs[1] kick: output.rate_hz: expected it only at the top level"),
        // Ordered keys are checked over the top-level values.
        ("rhythm:\n  maximum_bpm: 100\ninputs:\n  - name: kick\n    rhythm:\n      minimum_bpm: 120\n",
         "rig.yaml:6: inputs[1] kick: rhythm.minimum_bpm: expected less than rhythm.maximum_bpm (100 BPM), got 120"),
    ])
    func aBadInputsListIsOneLineWithFileAndLine(yaml: String, expected: String) {
        do {
            _ = try InputsLoader.parse(yaml: yaml, file: "rig.yaml")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.description.hasPrefix(expected), "\(error.description)")
        }
    }

    @Test func anInputsOwnSectionsOverrideTheTopLevelForThatInputOnly() throws {
        let yaml = """
            pitch:
              reference_hz: 440
            rhythm:
              minimum_bpm: 70
            inputs:
              - name: kick
                rhythm:
                  minimum_bpm: 100
                  maximum_bpm: 160
                level:
                  vu_floor_db: -40
              - name: vocal
                pitch:
                  reference_hz: 415
            """
        let top = try PresetLoader.parse(yaml: yaml, file: "rig.yaml")
        let inputs = try InputsLoader.parse(yaml: yaml, file: "rig.yaml")
        #expect(inputs.map(\.name) == ["kick", "vocal"])
        #expect(inputs[0].analysis.assignments.map(\.path) == ["rhythm.minimum_bpm", "rhythm.maximum_bpm", "level.vu_floor_db"])
        let kick = inputs[0].analysis.applied(to: top)
        #expect(kick.rhythm.minimumBpm == 100 && kick.rhythm.maximumBpm == 160 && kick.level.vuFloorDecibels == -40)
        #expect(kick.pitch.referenceHz == 440)
        let vocal = inputs[1].analysis.applied(to: top)
        #expect(vocal.pitch.referenceHz == 415 && vocal.rhythm.minimumBpm == 70)
        // Re-applied over another shared configuration (a control change), the input's own values
        // still win and the rest follows.
        var changed = top
        changed.pitch.referenceHz = 442
        changed.rhythm.minimumBpm = 60
        #expect(inputs[1].analysis.applied(to: changed).pitch.referenceHz == 415)
        #expect(inputs[1].analysis.applied(to: changed).rhythm.minimumBpm == 60)
        #expect(inputs[0].analysis.applied(to: changed).pitch.referenceHz == 442)
        // The top-level loader ignores the inputs' sections.
        #expect(top.rhythm.minimumBpm == 70 && top.level.vuFloorDecibels == AnalysisConfiguration().level.vuFloorDecibels)
        // An input without sections has no settings of its own.
        #expect(try InputsLoader.parse(yaml: "inputs:\n  - name: bass\n", file: "rig.yaml")[0].analysis.isEmpty)
    }

    @Test("tempo_input: a name, read beside the analysis; a value that is not a name, or names no input, is one line")
    func tempoInput() throws {
        let yaml = "pitch:\n  reference_hz: 442\ninputs:\n  - name: kick\ntempo_input: kick\n"
        #expect(try PresetLoader.parse(yaml: yaml, file: "rig.yaml").pitch.referenceHz == 442)
        #expect(try InputsLoader.parseTempoInput(yaml: yaml, file: "rig.yaml") == PresetTempoInput(name: "kick", file: "rig.yaml", line: 5))
        #expect(try InputsLoader.parseTempoInput(yaml: "inputs:\n  - name: kick\n", file: "rig.yaml") == nil)
        #expect(throws: PresetError(file: "rig.yaml", line: 1, key: "tempo_input", expected: "the name of an input such as kick", got: "a list")) {
            _ = try InputsLoader.parseTempoInput(yaml: "tempo_input: [kick, bass]\n", file: "rig.yaml")
        }
        #expect(throws: PresetError(file: "rig.yaml", line: 5, key: "tempo_input", expected: "the name of an input",
                                    got: "snare, and there are no named inputs")) {
            try PresetTempoInput(name: "snare", file: "rig.yaml", line: 5).check(inputNames: [])
        }
    }
}
