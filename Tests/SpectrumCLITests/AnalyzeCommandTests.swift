import Foundation
import SpectrumDSP
import SpectrumTestSupport
import Testing

/// `spectrum analyze`, end to end: real WAV files, the real binary, its stdout, stderr and exit status.
@Suite struct AnalyzeCommandTests {
    /// A tone file: `channels` channels, the tone in the first, silence in the others.
    static func writeTone(_ scratch: ScratchDirectory, name: String, frequencyHz: Double, sampleRateHz: Int,
                          seconds: Double, channels: Int = 1, encoding: SoundFileWriter.Encoding = .float32) throws -> String {
        let tone = TestSignals.sine(frequencyHz: frequencyHz, sampleRateHz: Double(sampleRateHz), seconds: seconds, amplitude: 0.5)
        var data = [tone]
        for _ in 1..<max(channels, 1) { data.append([Float](repeating: 0, count: tone.count)) }
        let path = scratch.path(name)
        try SoundFileWriter.writeWAV(data, sampleRateHz: sampleRateHz, encoding: encoding, to: path)
        return path
    }

    static func jsonObjects(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line.prefix(80))")
        }
    }

    static func loudest(_ values: [Double]) -> Int { values.indices.max { values[$0] < values[$1] }! }

    @Test(arguments: [(1000.0, 48_000, 2, 1), (220.0, 44_100, 3, 2), (55.0, 96_000, 2, 1)])
    func jsonLinesFollowTheTone(frequencyHz: Double, sampleRateHz: Int, seconds: Int, channels: Int) throws {
        let scratch = try ScratchDirectory()
        let input = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: frequencyHz, sampleRateHz: sampleRateHz,
                                       seconds: Double(seconds), channels: channels, encoding: .pcm16)
        let result = try SpectrumProcess.run(["analyze", input])
        #expect(result.status == 0)
        #expect(result.standardError == "")
        let frames = try Self.jsonObjects(result.standardOutput)
        #expect(frames.count == seconds * 60, "expected 60 frames per second of audio")

        let analyzer = try Analyzer(configuration: AnalysisConfiguration(), sampleRateHz: Double(sampleRateHz))
        let containingBand = analyzer.band(containingFrequencyHz: frequencyHz)
        let expectedBand = try #require(containingBand)
        // The tone is in one of `channels` channels: the mono mix has 1/channels of its amplitude.
        let expectedDecibels = 20 * log10(0.5 / sqrt(2) / Double(channels))
        // RMS is taken over the 42.7 ms main window: 2.3 cycles of 55 Hz ripple by ±0.25 dB.
        let toleranceDecibels = frequencyHz >= 200 ? 0.1 : 0.4
        var previousTime = 0.0
        for (index, frame) in frames.enumerated() {
            #expect(Set(frame.keys) == ["time", "bands", "peaks", "level", "pitch", "onset", "onset_time", "tempo", "beat"])
            let time = try #require(frame["time"] as? Double)
            #expect(time > previousTime)
            previousTime = time
            let bands = try #require(frame["bands"] as? [Double])
            let peaks = try #require(frame["peaks"] as? [Double])
            let level = try #require(frame["level"] as? [String: Double])
            #expect(bands.count == 128 && peaks.count == 128)
            #expect((bands + peaks).allSatisfy { (0...1).contains($0) })
            #expect(Set(level.keys) == ["rms", "peak", "dbfs", "vu"])
            // After the first half second (windows full, smoothing settled) the tone dominates.
            if Double(index) >= 30 {
                #expect(Self.loudest(bands) == expectedBand, "frame \(index): loudest band \(Self.loudest(bands)), expected \(expectedBand)")
                #expect(abs(try #require(level["dbfs"]) - expectedDecibels) < toleranceDecibels)
                // The tuner names the tone: 1 kHz is B5 + 21 cents, 220 Hz is A3, 55 Hz is A1.
                let pitch = try #require(frame["pitch"] as? [String: Any])
                let hz = try #require(pitch["hz"] as? Double)
                #expect(abs(1200 * log2(hz / frequencyHz)) < 1)
                #expect(pitch["note"] as? String == ["1000.0": "B5", "220.0": "A3", "55.0": "A1"]["\(frequencyHz)"])
                #expect(Set(pitch.keys) == ["hz", "midi", "note", "cents", "confidence", "written", "strobe"])
            }
        }
        let lastTime = try #require(frames.last?["time"] as? Double)
        #expect(abs(lastTime - Double(seconds)) < 1e-6)
    }

    @Test func aGrooveGivesOnsetsATempoAndBeats() throws {
        // Clicks at 120 BPM for 8 s: the tempo locks, beats fall on the clicks.
        let scratch = try ScratchDirectory()
        let path = scratch.path("clicks.wav")
        let clicks = TestSignals.rhythm(.clicks, segments: [(120, 8)], sampleRateHz: 48_000)
        try SoundFileWriter.writeWAV([clicks.samples], sampleRateHz: 48_000, encoding: .float32, to: path)
        let result = try SpectrumProcess.run(["analyze", path])
        #expect(result.status == 0)
        let frames = try Self.jsonObjects(result.standardOutput)
        let onsets = frames.filter { $0["onset"] is Double }
        #expect((14...17).contains(onsets.count), "\(onsets.count) onsets for 16 clicks")
        let last = try #require(frames.last?["tempo"] as? [String: Double])
        #expect(abs(try #require(last["bpm"]) - 120) < 1)
        let beats = frames.compactMap { $0["beat"] as? [String: Double] }
        #expect(beats.count >= 6)
        for beat in beats {
            let time = try #require(beat["time"])
            #expect(abs(clicks.nearestBeat(toSeconds: time).errorSeconds) < 0.02, "beat at \(time) s")
        }
    }

    /// Separate runs on the same file write the same bytes. FFTW plans chosen by timing
    /// (`FFTW_MEASURE`) differ from process to process and round differently: with them,
    /// bands differed in their last digits and, where a decision sat at a threshold, pitch
    /// readings too (2 of 4 runs of a piano melody).
    @Test func theSameFileGivesTheSameFramesEveryRun() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("notes-in-noise.wav")
        let notes = [98.0, 146.83, 220.0, 329.63, 440.0].flatMap {
            TestSignals.harmonicTone(fundamentalHz: $0, harmonicAmplitudes: [0.3, 0.2, 0.1, 0.05], sampleRateHz: 48_000, seconds: 0.6)
        }
        let noise = TestSignals.whiteNoise(sampleRateHz: 48_000, seconds: 3, amplitude: 0.05)
        try SoundFileWriter.writeWAV([zip(notes, noise).map { $0 + $1 }], sampleRateHz: 48_000, encoding: .float32, to: path)
        let first = try SpectrumProcess.run(["analyze", path])
        #expect(first.status == 0 && !first.standardOutput.isEmpty)
        for run in 2...4 {
            let again = try SpectrumProcess.run(["analyze", path])
            #expect(again.standardOutput == first.standardOutput, "run \(run) differs from run 1")
        }
    }

    @Test func csvHasAHeaderAndOneRowPerFrame() throws {
        let scratch = try ScratchDirectory()
        let input = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 1.5)
        let outputPath = scratch.path("frames.csv")
        let result = try SpectrumProcess.run(["analyze", input, "--format", "csv", "--output", outputPath])
        #expect(result.status == 0)
        #expect(result.standardOutput == "" && result.standardError == "")
        let rows = try String(contentsOfFile: outputPath, encoding: .utf8).split(separator: "\n")
        let header = try #require(rows.first).split(separator: ",").map(String.init)
        let expectedHeader = ["time"] + (0..<128).map { "band_\($0)" } + (0..<128).map { "peak_\($0)" } + ["rms", "peak", "dbfs", "vu"]
            + ["pitch_hz", "pitch_midi", "pitch_note", "pitch_cents", "pitch_confidence", "pitch_written", "pitch_strobe", "pitch_string", "pitch_string_cents"]
            + ["onset", "onset_time", "tempo_bpm", "tempo_confidence", "tempo_phase", "beat_time", "beat_count", "beat_in_bar"]
        #expect(header == expectedHeader)
        #expect(rows.count - 1 == 90)
        #expect(rows.last!.contains(",A4,"))
        for row in rows.dropFirst() {
            let cells = row.split(separator: ",", omittingEmptySubsequences: false)
            #expect(cells.count == expectedHeader.count)
            // Every cell a number, except the note names and the empty cells from the pitch on
            // (frames without a note, the string outside string mode, no onset or tempo).
            let names = Set(["pitch_note", "pitch_written", "pitch_string"].map { expectedHeader.firstIndex(of: $0)! })
            let firstOptional = expectedHeader.firstIndex(of: "pitch_hz")!
            #expect(cells.enumerated().allSatisfy { names.contains($0.offset) || Double($0.element) != nil || ($0.offset >= firstOptional && $0.element.isEmpty) })
            #expect(cells.count == expectedHeader.count)
        }
    }

    @Test func presetByNameChangesTheOutput() throws {
        let scratch = try ScratchDirectory()
        let input = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 2)
        _ = try scratch.write("mine/coarse.yaml", "output:\n  rate_hz: 30\nspectrum:\n  band_count: 32\n")
        let result = try SpectrumProcess.run(["analyze", input, "--preset", "coarse"], environment: ["SPECTRUM_PRESETS_DIR": scratch.path("mine")])
        #expect(result.status == 0, "\(result.standardError)")
        let frames = try Self.jsonObjects(result.standardOutput)
        #expect(frames.count == 60)
        #expect((frames.first?["bands"] as? [Double])?.count == 32)
    }

    @Test func shippedPresetIsFoundFromTheCheckout() throws {
        let scratch = try ScratchDirectory()
        let input = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 1)
        // Run from a directory with no presets/: the checkout's presets/ must be found.
        let result = try SpectrumProcess.run(["analyze", input, "--preset", "stage"], in: scratch.url)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try Self.jsonObjects(result.standardOutput).count == 60)
    }

    // MARK: Errors: one line on stderr, nothing on stdout, non-zero exit

    static func expectOneLineFailure(_ result: SpectrumProcess.Result, _ expectedLine: String,
                                     sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, sourceLocation: sourceLocation)
        #expect(result.standardOutput == "", sourceLocation: sourceLocation)
        #expect(result.standardErrorLines.count == 1, "stderr: \(result.standardError)", sourceLocation: sourceLocation)
        #expect(result.standardError == expectedLine + "\n", sourceLocation: sourceLocation)
    }

    @Test func missingFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("missing.wav")
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path]), "\(path): expected a sound file, got no such file or directory")
    }

    @Test func directory() throws {
        let scratch = try ScratchDirectory()
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", scratch.url.path]), "\(scratch.url.path): expected a sound file, got a directory")
    }

    @Test func textFile() throws {
        let scratch = try ScratchDirectory()
        let path = try scratch.write("notes.txt", "this is not audio\n")
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path]),
                                  "\(path): expected a sound file in a format libsndfile reads (WAV, AIFF, FLAC, Ogg, MP3, …), got format not recognised")
    }

    @Test func emptyFile() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("empty.wav")
        try SoundFileWriter.writeWAV([[]], sampleRateHz: 48_000, to: path)
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path, "--output", scratch.path("out.jsonl")]),
                                  "\(path): expected audio, got an empty sound file (0 frames)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out.jsonl")), "no output file for a failed input")
    }

    /// Shorter than one hop, no frame can come out: one line saying so, not silence and exit 0.
    @Test func aFileShorterThanOneFrame() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("one.wav")
        try SoundFileWriter.writeWAV([[0.5]], sampleRateHz: 48_000, to: path)
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path, "--output", scratch.path("out.jsonl")]),
                                  "\(path): expected at least one output frame of audio (800 frames, 16.7 ms at 48000 Hz), got 1 frame (0.021 ms)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out.jsonl")), "no output file for a failed input")
        let hop = scratch.path("hop.wav")
        try SoundFileWriter.writeWAV([[Float](repeating: 0.1, count: 800)], sampleRateHz: 48_000, to: hop)
        let result = try SpectrumProcess.run(["analyze", hop])
        #expect(result.status == 0 && result.standardOutput.split(separator: "\n").count == 1, "exactly one hop gives one frame")
    }

    /// Negative numbers reach the option's own check (not "Missing value"); a preset that is a
    /// device or a directory is named as such (not "permission denied?").
    @Test(arguments: [
        (["run", "--duration", "-1"], "spectrum: --duration -1.0: expected a number of seconds above 0"),
        (["run", "--rate", "-5"], "spectrum: --rate -5.0: expected 10 to 240 frames per second"),
        (["tune", "--reference", "-440"], "spectrum: --reference -440.0: expected 415 to 466 Hz"),
        (["monitor", "--mode", "waves"], "spectrum: --mode waves: expected bars or spectrogram"),
        (["monitor", "--channels", "0"], "spectrum: --channels 0: expected 1 to 64"),
        (["analyze", "x.wav", "--preset", "/dev/null"], "/dev/null: expected a readable YAML preset file, got a character device (such as /dev/null), not a regular file"),
        (["run", "--rig", "/", "--duration", "1"], "spectrum: /: expected a readable YAML rig or preset file, got a directory"),
    ])
    func badOptionValuesAreOneAccurateLine(arguments: [String], expected: String) throws {
        let result = try SpectrumProcess.run(arguments)
        #expect(result.status != 0)
        #expect(result.standardError == expected + "\n", "\(result.standardError)")
    }

    @Test func sampleRateTooLow() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "phone.wav", frequencyHz: 440, sampleRateHz: 8000, seconds: 1)
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path]),
                                  "\(path): sample rate 8000 Hz is too low for bands up to 20000 Hz: expected at least 42106 Hz (or a lower spectrum.maximum_frequency_hz)")
    }

    @Test func lowSampleRateRunsWithAMatchingPreset() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "phone.wav", frequencyHz: 440, sampleRateHz: 8000, seconds: 1)
        let preset = try scratch.write("phone.yaml", "spectrum:\n  maximum_frequency_hz: 3800\n  window_ms: 100\n")
        let result = try SpectrumProcess.run(["analyze", path, "--preset", preset])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try Self.jsonObjects(result.standardOutput).count == 60)
    }

    @Test func badFormat() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path, "--format", "xml"]), "--format: expected json or csv, got \"xml\"")
    }

    @Test func unwritableOutput() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let output = scratch.path("no/such/folder/out.jsonl")
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path, "--output", output]),
                                  "\(output): expected a writable output file, got no such file or directory")
    }

    @Test func outputOverTheInputIsRefused() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path, "--output", path]),
                                  "\(path): expected an output file other than the input, got the input file")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == size, "the input was modified")
    }

    @Test func badPresetNamesFileLineAndKey() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let preset = try scratch.write("rig.yaml", "# my rig\nspectrum:\n  band_count: 64\n  bands: 32\n")
        Self.expectOneLineFailure(try SpectrumProcess.run(["analyze", path, "--preset", preset]),
                                  "\(preset):4: spectrum.bands: expected one of window_ms, bass_window_ms, band_count, minimum_frequency_hz, maximum_frequency_hz, got an unknown key")
    }

    @Test func unknownPresetNameListsWhereItLooked() throws {
        let scratch = try ScratchDirectory()
        let path = try Self.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let result = try SpectrumProcess.run(["analyze", path, "--preset", "club"], in: scratch.url)
        #expect(result.status != 0)
        #expect(result.standardErrorLines.count == 1)
        #expect(result.standardError.hasPrefix("preset club: expected club.yaml in ./presets, "))
        #expect(result.standardError.hasSuffix("(available presets: default, music, stage)\n"))
    }

    @Test func helpReadsWell() throws {
        let result = try SpectrumProcess.run(["analyze", "--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("USAGE: spectrum analyze <file> [--output <file>] [--format <json|csv>] [--preset <name|path>]"))
        for option in ["--output <file>", "--format <json|csv>", "--preset <name|path>"] {
            #expect(result.standardOutput.contains(option))
        }
        let root = try SpectrumProcess.run(["--help"])
        #expect(root.standardOutput.contains("analyze"))
    }
}
