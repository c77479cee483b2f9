import Foundation
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore

/// `SpectrumBench rhythm`: tempo lock times and beat errors on the synthetic rhythm signals
/// (a development aid; the asserted versions are in RhythmTests).
func rhythmDiagnostics(sampleRates: [Double], tempos: [Double], patterns: [DrumPattern], seconds: Double) throws {
    for sampleRateHz in sampleRates {
        for pattern in patterns {
            for bpm in tempos {
                let signal = TestSignals.rhythm(pattern, segments: [(bpm, seconds)], sampleRateHz: sampleRateHz)
                report(try analyse(signal), signal: signal, label: "\(pattern.name) \(bpm) BPM @ \(sampleRateHz)", expected: [(0, bpm)])
            }
        }
    }
}

func analyse(_ signal: RhythmSignal, configuration: AnalysisConfiguration = AnalysisConfiguration()) throws -> [AnalysisFrame] {
    var analyzer = try Analyzer(configuration: configuration, sampleRateHz: signal.sampleRateHz)
    return OfflineDriver.frames(&analyzer, signal: signal.samples, blockSizes: [512])
}

func report(_ frames: [AnalysisFrame], signal: RhythmSignal, label: String, expected: [(from: Double, bpm: Double)]) {
    let rate = signal.sampleRateHz
    // Lock: the first time from which bpm stays within ±1 of the expected value to the end of its segment.
    var line = label + ":"
    for (index, segment) in expected.enumerated() {
        let end = index + 1 < expected.count ? expected[index + 1].from : Double(signal.samples.count) / rate
        let inSegment = frames.filter { Double($0.streamFrame) / rate >= segment.from && Double($0.streamFrame) / rate < end }
        var lock: Double? = nil
        for frame in inSegment.reversed() {
            if abs(Double(frame.tempo.bpm) - segment.bpm) <= 1 { lock = Double(frame.streamFrame) / rate - segment.from } else { break }
        }
        line += String(format: " [%.0f: lock %@ last %.2f conf %.2f]", segment.bpm, lock.map { String(format: "%.2f s", $0) } ?? "never",
                       inSegment.last?.tempo.bpm ?? 0, inSegment.last?.tempo.confidence ?? 0)
    }
    let beats = frames.filter { $0.beat.isBeat && Double($0.streamFrame) / rate > 4 }
    let errors = beats.map { abs(signal.nearestBeat(toSeconds: $0.beat.timeFrames / rate).errorSeconds) * 1000 }
    let onsets = frames.filter { $0.onset.isOnset }.count
    line += String(format: " beats>4s %d, max err %.1f ms, mean %.1f ms; onsets %d", beats.count, errors.max() ?? -1,
                   errors.isEmpty ? -1 : errors.reduce(0, +) / Double(errors.count), onsets)
    print(line)
}

/// `SpectrumBench changes`: gapless tempo changes (`TestSignals.gaplessTempoChange`), the dev set of
/// `RhythmClassTests.aChangeWithoutAGapIsFollowedWithinThreeAndAHalfSeconds`: per pattern and
/// change, the time after the change from which every reading is within 2 % of the new tempo,
/// and with `verbose` the readings every 0.25 s from 1 s after the change.
func changeDiagnostics(patterns: [DrumPattern], verbose: Bool) throws {
    let sampleRateHz = 48_000.0
    for pattern in patterns {
        var line = pattern.name + ":"
        for (from, to) in TestSignals.gaplessTempoChanges {
            let (signal, changeSeconds) = TestSignals.gaplessTempoChange(pattern, from: from, to: to, sampleRateHz: sampleRateHz)
            let frames = try analyse(signal)
            let seconds = { (frame: AnalysisFrame) in Double(frame.streamFrame) / sampleRateHz }
            let lastWrong = frames.last { seconds($0) >= changeSeconds && abs(Double($0.tempo.bpm) - to) > 0.02 * to }
            let lock = lastWrong.map { String(format: "%.2f", seconds($0) - changeSeconds) } ?? "0"
            let lockText = (lastWrong.map { seconds($0) > seconds(frames.last!) - 0.5 } ?? false) ? "never" : lock
            line += " \(Int(from))→\(Int(to)) \(lockText)"
            if verbose {
                var readings = ""
                var next = changeSeconds + 1
                for frame in frames where seconds(frame) >= next {
                    readings += String(format: " %.0f", frame.tempo.bpm)
                    next += 0.25
                }
                print("  \(pattern.name) \(Int(from))→\(Int(to)):\(readings)")
            }
        }
        print(line)
    }
}

