import Foundation
import Testing
@testable import SpectrumDSP
import SpectrumCore

/// The tuner's display (`PitchTracker`) on raw estimates: what is shown first, and what is not
/// shown during a held note.
@Suite struct PitchTrackerTests {
    static let noteHz: Float = 440

    static func raw(cents: Float, windowDifferenceCents: Float = .infinity) -> RawPitch {
        RawPitch(frequencyHz: noteHz * powf(2, cents / 1200), confidence: 0.97, windowDifferenceCents: windowDifferenceCents)
    }

    static func shownCents(_ reading: PitchReading) -> Float? {
        reading.hasNote ? 1200 * log2f(reading.frequencyHz / noteHz) : nil
    }

    /// One estimate off by more than 10 cents (30 cents, a fifth, an octave, an octave down),
    /// alone or next to a missing estimate, during a held note: the display stays within
    /// 10 cents and keeps the note.
    @Test(arguments: [30 as Float, -30, 700, 1200, -1200])
    func aOneHopExcursionIsNotShown(excursionCents: Float) {
        let patterns: [[RawPitch]] = [
            [Self.raw(cents: excursionCents)],
            [.unvoiced, Self.raw(cents: excursionCents)],
            [Self.raw(cents: excursionCents), .unvoiced],
        ]
        for pattern in patterns {
            var tracker = PitchTracker(referenceHz: 440)
            let jitter: [Float] = [0.4, -0.3, 0.1, -0.2, 0.3]
            var sequence = (0..<12).map { Self.raw(cents: jitter[$0 % jitter.count]) }
            sequence += pattern
            sequence += (0..<8).map { Self.raw(cents: jitter[$0 % jitter.count]) }
            for (hop, estimate) in sequence.enumerated() {
                let reading = tracker.update(estimate)
                guard hop >= 2 else { continue }
                let cents = Self.shownCents(reading)
                #expect(cents.map { abs($0) <= 10 } == true, "excursion \(excursionCents) ¢ in \(pattern.map(\.frequencyHz)): hop \(hop) shows \(cents.map { "\($0) ¢" } ?? "no note")")
            }
        }
    }

    /// An attack whose estimates come in 25 and 9 cents sharp before settling: the first shown
    /// reading is within 5 cents of the settled pitch, and the note shows by the third hop.
    @Test func aNoteIsFirstShownWithinFiveCentsOfWhereItSettles() {
        var tracker = PitchTracker(referenceHz: 440)
        let readings = [25 as Float, 9, 1, 0, 0.2, -0.1].map { tracker.update(Self.raw(cents: $0)) }
        let first = readings.firstIndex { $0.hasNote }
        #expect(first != nil && first! <= 2)
        if let first { #expect(abs(Self.shownCents(readings[first])!) <= 5, "first shown: \(Self.shownCents(readings[first])!) ¢") }
    }

    /// A note out of loud noise: the short window, all note, reads it at r ≈ 1; the long
    /// window, still holding the noise, then reads it 60 and 6 cents sharp (or 21 and 20,
    /// agreeing with itself) at r 0.7–0.9. The note is first shown at its most confident
    /// estimate, within 5 cents of where it settles, not at the newest.
    @Test(arguments: [[60 as Float, 6], [21, 20]])
    func aNoteOutOfNoiseIsFirstShownAtItsMostConfidentEstimate(noisyCents: [Float]) {
        var tracker = PitchTracker(referenceHz: 440)
        var sequence = [RawPitch(frequencyHz: Self.noteHz, confidence: 1)]
        sequence += zip(noisyCents, [0.68 as Float, 0.9]).map { cents, confidence in
            RawPitch(frequencyHz: Self.noteHz * powf(2, cents / 1200), confidence: confidence, windowDifferenceCents: cents)
        }
        sequence += (0..<4).map { _ in Self.raw(cents: 0.2, windowDifferenceCents: 0.5) }
        let first = sequence.lazy.map { tracker.update($0) }.first { $0.hasNote }
        #expect(first.map { abs(Self.shownCents($0)!) <= 5 } == true, "first shown: \(first.map { "\(Self.shownCents($0)!) ¢" } ?? "never")")
    }

    /// Shown at once when both of the detector's windows agree within 5 cents; when they do
    /// not, two estimates within 5 cents of each other show the note at the second hop.
    @Test func aSettledNoteIsShownAtOnce() {
        var tracker = PitchTracker(referenceHz: 440)
        #expect(tracker.update(Self.raw(cents: 2, windowDifferenceCents: 1.5)).hasNote)
        tracker.reset()
        #expect(!tracker.update(Self.raw(cents: 2, windowDifferenceCents: 12)).hasNote)
        let second = tracker.update(Self.raw(cents: 0.5))
        #expect(second.hasNote && abs(Self.shownCents(second)! - 0.5) < 0.01)
    }

    /// A real note change (two estimates of the new note) is shown at its second estimate,
    /// the old note held until then.
    @Test func aNoteChangeShowsAtItsSecondEstimate() {
        var tracker = PitchTracker(referenceHz: 440)
        for _ in 0..<6 { _ = tracker.update(Self.raw(cents: 0)) }
        let held = tracker.update(Self.raw(cents: 500))
        #expect(held.hasNote && abs(Self.shownCents(held)!) < 0.01)
        let changed = tracker.update(Self.raw(cents: 500.5))
        #expect(changed.hasNote && abs(Self.shownCents(changed)! - 500.5) < 0.01)
    }

    /// No note after two missing estimates.
    @Test func aNoteEndsAfterTwoMissingEstimates() {
        var tracker = PitchTracker(referenceHz: 440)
        for _ in 0..<6 { _ = tracker.update(Self.raw(cents: 0)) }
        #expect(tracker.update(.unvoiced).hasNote)
        #expect(!tracker.update(.unvoiced).hasNote)
    }

    /// A hop the detector refuses as a drum's hit or a stroke dying in the window ends the
    /// shown note at once (a tom's body read on the hops before its stroke was found was
    /// shown a hop longer: pitch finding 40); a hop merely missing does not, and a note after
    /// the stroke starts anew. With `endsOnStroke` off the stroke is a missing hop.
    @Test func aDrumStrokeEndsTheShownNoteAtOnce() {
        var tracker = PitchTracker(referenceHz: 440)
        for _ in 0..<6 { _ = tracker.update(Self.raw(cents: 0)) }
        #expect(!tracker.update(.stroke).hasNote)
        #expect(!tracker.update(Self.raw(cents: 0, windowDifferenceCents: 12)).hasNote, "a new note after the stroke must settle again")
        #expect(tracker.update(Self.raw(cents: 0.5)).hasNote)

        var graceful = PitchTracker(referenceHz: 440, parameters: .init(endsOnStroke: false))
        for _ in 0..<6 { _ = graceful.update(Self.raw(cents: 0)) }
        #expect(graceful.update(.stroke).hasNote)
    }
}
