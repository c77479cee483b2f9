import Testing
@testable import SpectrumDSP

/// The beat grid's decisions on onsets placed by hand (48 kHz, hops of 800 frames).
@Suite struct BeatTrackerTests {
    static let sampleRateHz = 48_000.0
    static let hopFrames = 800

    /// A one-drop read at 140 BPM: the kick and rim on every fourth beat, the skank chord (loud
    /// in the upper band) on every odd beat, swung hats starting on every even beat. Halved
    /// to 70 (the agreed tempo halves under a locked grid), the grid keeps the beats the hats mark, not the skank's, which carry more onset
    /// strength, and stays there while the skank goes on.
    @Test func halvingKeepsTheBeatsTheHatsMark() {
        var tracker = BeatTracker(configuration: RhythmConfiguration(), sampleRateHz: Self.sampleRateHz)
        let fastPeriod = 60 / 140 * Self.sampleRateHz
        var nextBeat = 0
        var beats: [Double] = []
        for hop in 1...(12 * 60) {
            let hopEnd = Double(hop * Self.hopFrames)
            while Double(nextBeat) * fastPeriod + 0.1 * Self.sampleRateHz < hopEnd {
                let time = Double(nextBeat) * fastPeriod + 0.1 * Self.sampleRateHz
                if nextBeat % 2 == 1 {
                    tracker.addOnset(timeFrames: time, strength: 0.9, bassShare: 0.1)
                } else {
                    tracker.addHatOnset(timeFrames: time, strength: 0.6)
                    if nextBeat % 4 == 2 { tracker.addOnset(timeFrames: time, strength: 0.5, bassShare: 0.6) }
                }
                nextBeat += 1
            }
            let reading = tracker.update(agreedBpm: hop < 8 * 60 ? 140 : 70, generation: 0, hopEndFrame: Int64(hopEnd))
            if hop > 9 * 60 && reading.beat.isBeat { beats.append(reading.beat.timeFrames) }
        }
        // Every beat within 20 ms of an even beat of 140 (the hats'), none on an odd one.
        let slowPeriod = 2 * fastPeriod
        let offsets = beats.map { time -> Double in
            let position = (time - 0.1 * Self.sampleRateHz) / slowPeriod
            return abs(position - position.rounded()) * slowPeriod / Self.sampleRateHz
        }
        #expect(beats.count >= 3 && offsets.allSatisfy { $0 < 0.020 }, "beats \(beats.count), offsets from the hats' beats \(offsets) s")
    }
}
