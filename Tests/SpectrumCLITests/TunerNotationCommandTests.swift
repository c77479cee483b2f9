import Foundation
import SpectrumDSP
import SpectrumTestSupport
import Testing

/// What musicians expect of `spectrum analyze`'s (and run's, tune's) tuner: transposition,
/// temperaments from Scala files, string mode and the strobe; bad values fail in one line.
@Suite struct TunerNotationCommandTests {
    static let temperaments = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("temperaments").path

    static func lastPitch(_ arguments: [String], frequencyHz: Double) throws -> [String: Any] {
        let scratch = try ScratchDirectory()
        let input = try AnalyzeCommandTests.writeTone(scratch, name: "tone.wav", frequencyHz: frequencyHz, sampleRateHz: 48_000, seconds: 1)
        let result = try SpectrumProcess.run(["analyze", input] + arguments)
        #expect(result.status == 0, "\(result.standardError)")
        let frames = try AnalyzeCommandTests.jsonObjects(result.standardOutput)
        return try #require(frames.last?["pitch"] as? [String: Any], "no pitch in the last frame")
    }

    @Test func aBbInstrumentReadsAWholeToneUp() throws {
        let pitch = try Self.lastPitch(["--transpose", "Bb"], frequencyHz: 261.63)
        #expect(pitch["note"] as? String == "C4" && pitch["written"] as? String == "D4")
        #expect(try Self.lastPitch(["--transpose", "Eb"], frequencyHz: 261.63)["written"] as? String == "A4")
        #expect(try Self.lastPitch(["--transpose", "-12"], frequencyHz: 261.63)["written"] as? String == "C3")
    }

    /// An equal-tempered E4 in Werckmeister III (C root, A at the reference) is 1.96 cents flat
    /// of that temperament's E (390.225 − 400 + 11.730 cents); A stays in tune.
    @Test func aTemperamentMovesTheCents() throws {
        let file = Self.temperaments + "/werckmeister-iii.scl"
        let e = try Self.lastPitch(["--temperament", file], frequencyHz: 329.628)
        #expect(e["note"] as? String == "E4")
        #expect(abs((e["cents"] as? Double ?? 99) + 1.955) < 0.3, "\(e)")
        let a = try Self.lastPitch(["--temperament", file], frequencyHz: 440)
        #expect(abs(a["cents"] as? Double ?? 99) < 0.3)
        // The same scale on A: its 1/1 is A, so the E (a fifth, 696.090) lies 3.91 cents low.
        let onA = try Self.lastPitch(["--temperament", file, "--root", "A"], frequencyHz: 329.628)
        #expect(abs((onA["cents"] as? Double ?? 99) - 3.91) < 0.3, "\(onA)")
    }

    @Test func stringModeNamesTheNearestStringAndItsOffset() throws {
        let pitch = try Self.lastPitch(["--strings", "guitar"], frequencyHz: 110 * pow(2, 30.0 / 1200))
        #expect(pitch["string"] as? String == "A2")
        #expect(abs((pitch["string_cents"] as? Double ?? 99) - 30) < 0.5)
        let drop = try Self.lastPitch(["--strings", "guitar-drop-d"], frequencyHz: 73.42)
        #expect(drop["string"] as? String == "D2")
    }

    @Test func theStrobeMovesWhenSharpAndStandsStillInTune() throws {
        let scratch = try ScratchDirectory()
        for (cents, moves) in [(10.0, true), (0.0, false)] {
            let input = try AnalyzeCommandTests.writeTone(scratch, name: "tone\(cents).wav", frequencyHz: 440 * pow(2, cents / 1200), sampleRateHz: 48_000, seconds: 1.5)
            let frames = try AnalyzeCommandTests.jsonObjects(try SpectrumProcess.run(["analyze", input]).standardOutput)
            let phases = frames.compactMap { ($0["pitch"] as? [String: Any])?["strobe"] as? Double }
            #expect(phases.count > 60)
            // 10 cents: 2.5 turns per second, 1/24 of a turn per frame at 60 frames/s.
            let step = (phases[phases.count - 1] - phases[phases.count - 2] + 1).truncatingRemainder(dividingBy: 1)
            #expect(moves ? abs(step - 2.5 / 60) < 0.003 : step < 0.001 || step > 0.999, "\(cents) cents: \(step) per frame")
        }
    }

    @Test(arguments: [
        ("bad-count.scl", "! x\nTest\n7\n100.0\n", ":3: the scale has 7 notes: expected 12"),
        ("bad-pitch.scl", "Test\n12\n100.0\n200.0\nnonsense\n" + (4...12).map { "\(100 * $0).0\n" }.joined(), ":5: expected cents"),
        ("short.scl", "Test\n12\n100.0\n200.0\n", "expected 12 pitch lines after the note count, found 2"),
        ("not-octave.scl", "Test\n12\n" + (1...11).map { "\(100 * $0).0\n" }.joined() + "3/2\n", ":14: the scale repeats at 701.955 cents"),
    ])
    func aBadScalaFileFailsInOneLineNamingTheFileAndLine(name: String, text: String, expected: String) throws {
        let scratch = try ScratchDirectory()
        let file = try scratch.write(name, text)
        let input = try AnalyzeCommandTests.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let result = try SpectrumProcess.run(["analyze", input, "--temperament", file])
        #expect(result.status != 0 && result.standardOutput.isEmpty)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains(file) && lines[0].contains(expected), "\(result.standardError)")
    }

    /// A wrong option value is a usage error (64: restarting cannot fix it, docs/deploy.md); a
    /// temperament file that cannot be used is a failure (1), as a preset file is.
    static let badOptions: [([String], Int32)] = [
        (["--transpose", "H"], 64), (["--strings", "banjo"], 64), (["--root", "C"], 64),
        (["--root", "H", "--temperament", "/nonexistent.scl"], 64), (["--gate-db", "5"], 64),
        (["--temperament", "/nonexistent.scl"], 1),
    ]

    @Test(arguments: badOptions)
    func badOptionsFailInOneLine(arguments: [String], status: Int32) throws {
        let scratch = try ScratchDirectory()
        let input = try AnalyzeCommandTests.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let result = try SpectrumProcess.run(["analyze", input] + arguments)
        #expect(result.status == status && result.standardOutput.isEmpty, "\(arguments): status \(result.status)")
        #expect(result.standardError.split(separator: "\n").count == 1 && result.standardError.contains(arguments[0]), "\(result.standardError)")
    }

    /// A missing, a directory or an unreadable temperament file says which.
    @Test func aTemperamentFileThatIsNotThereOrNotAFileSaysSo() throws {
        let scratch = try ScratchDirectory()
        let input = try AnalyzeCommandTests.writeTone(scratch, name: "tone.wav", frequencyHz: 440, sampleRateHz: 48_000, seconds: 0.5)
        let binary = try scratch.write("latin1.scl", "")
        try Data([0x54, 0xE9, 0x0A, 0x31, 0x32, 0x0A]).write(to: URL(fileURLWithPath: binary))  // "Té\n12\n" in Latin-1
        for (path, got) in [(scratch.path("missing.scl"), "got no such file"), (scratch.url.path, "got a directory"),
                            (binary, "got a file that cannot be read as one")] {
            let result = try SpectrumProcess.run(["analyze", input, "--temperament", path])
            #expect(result.status != 0 && result.standardOutput.isEmpty)
            #expect(result.standardErrorLines.count == 1 && result.standardError.contains("--temperament \(path): expected")
                    && result.standardError.contains(got), "\(result.standardError)")
        }
    }
}
