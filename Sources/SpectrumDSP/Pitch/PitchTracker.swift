import Glibc
import SpectrumCore

/// Turns raw estimates into what a tuner shows. A new note (after no note, or more than a
/// semitone from the shown one) is shown once it has settled: two consecutive estimates within
/// `settledCents`, or one on which the detector's long and short windows agree that closely,
/// or, settled or not, after `estimatesToShowAnyway` estimates within a semitone (their
/// newest). A new note is first shown at its most confident pending estimate, the newest unless
/// an older one is clearly more confident (`firstReadingConfidenceMargin`): an attack's estimates
/// converge, but a window still holding loud noise or the note before agrees with itself from
/// hop to hop before it agrees with the note, and says so by its lower correlation.
/// Until then the shown note holds, for up to `estimatesToShowAnyway − 1` hops, so a one-hop
/// jump is never shown. A shown note is the median of its last three estimates; with one of
/// them missing, the last shown value stands in for it, so a one-hop excursion is not shown
/// either. It ends when the newest estimate is missing and fewer than two of the last three
/// are there, or at once when the detector found a drum's hit or stroke in the window
/// (`endsOnStroke`). Real-time safe.
struct PitchTracker {
    /// The display's decision, with its named parameters.
    struct Parameters {
        /// Two estimates this close (cents) have settled: the first shown reading of a note is
        /// then within a few cents of where it settles (an attack's first estimate is 10 cents
        /// and more off when the window still holds the silence or the note before).
        var settledCents: Float = 5
        /// A new note shows after this many consecutive estimates within a semitone even when
        /// they never came within `settledCents` (a note in noise, vibrato): 50 ms at 60 hops/s.
        var estimatesToShowAnyway = 3
        /// An estimate farther than this from the shown note starts a new one (semitones).
        var noteChangeSemitones: Float = 1
        /// An older pending estimate is shown first instead of the newest when its confidence
        /// (r) is higher by this much: after loud noise the long window's estimates read 5–60
        /// cents off at r 0.63–0.92 while the short window, all note, read it at r ≈ 1; an
        /// attack's estimates differ by less (their r rises as they converge).
        var firstReadingConfidenceMargin: Float = 0.05
        /// A hop the detector refuses as a drum's hit or a stroke dying in the window
        /// (`RawPitch.struck`) ends the shown note at once: the hop's grace is for a note
        /// dropping out, and a drum's body read before its stroke was found was shown a hop
        /// longer (the tuning part's drum fills: 0.4 points more frames without a note, the
        /// notes' conditions within 0.01 points; docs/accuracy.md, Pitch, finding 40).
        var endsOnStroke = true
    }

    private let parameters: Parameters
    private let referenceHz: Float
    /// The shown note's last three raw frequencies, newest first (0 = unvoiced).
    private var recent: (Float, Float, Float) = (0, 0, 0)
    private var recentConfidence: (Float, Float, Float) = (0, 0, 0)
    /// The frequency shown last (0 = no note).
    private var shownHz: Float = 0
    /// A new note's estimates so far, newest first, and how many (0 = none pending).
    private var candidates: (Float, Float, Float) = (0, 0, 0)
    private var candidateConfidences: (Float, Float, Float) = (0, 0, 0)
    private var candidateCount = 0
    /// Hops the shown note has been held while a new note's estimates were pending.
    private var heldHops = 0

    init(referenceHz: Double, parameters: Parameters = Parameters()) {
        self.referenceHz = Float(referenceHz)
        self.parameters = parameters
    }

    @_noLocks
    mutating func update(_ raw: RawPitch) -> PitchReading {
        if raw.struck && parameters.endsOnStroke {
            reset()
            return .none
        }
        let frequencyHz = raw.frequencyHz
        if frequencyHz > 0 && (shownHz == 0 || abs(semitones(frequencyHz / shownHz)) > parameters.noteChangeSemitones) {
            // A new note's estimate: it joins the pending run when within a semitone of it.
            if candidateCount > 0 && abs(semitones(frequencyHz / candidates.0)) <= parameters.noteChangeSemitones {
                candidates = (frequencyHz, candidates.0, candidates.1)
                candidateConfidences = (raw.confidence, candidateConfidences.0, candidateConfidences.1)
                candidateCount += 1
            } else {
                candidates = (frequencyHz, 0, 0)
                candidateConfidences = (raw.confidence, 0, 0)
                candidateCount = 1
            }
            let settled = raw.windowDifferenceCents <= parameters.settledCents
                || (candidateCount >= 2 && abs(100 * semitones(candidates.0 / candidates.1)) <= parameters.settledCents)
            if settled || candidateCount >= parameters.estimatesToShowAnyway {
                // The new note starts with its own estimates, the last at most three, the one
                // shown first in front.
                recent = mostConfidentFirst(candidates, candidateConfidences)
                recentConfidence = (max(candidateConfidences.0, max(candidateConfidences.1, candidateConfidences.2)), 0, 0)
                shownHz = 0
                candidateCount = 0
                heldHops = 0
                return show()
            }
            // Not settled yet: the shown note (if any) holds, for a while, as it was.
            if heldHops < parameters.estimatesToShowAnyway - 1 {
                heldHops += 1
            } else {
                push(0, confidence: 0)
            }
            return show()
        }
        candidateCount = 0
        heldHops = 0
        push(frequencyHz, confidence: raw.confidence)
        return show()
    }

    @_noLocks
    private mutating func push(_ frequencyHz: Float, confidence: Float) {
        recent = (frequencyHz, recent.0, recent.1)
        recentConfidence = (confidence, recentConfidence.0, recentConfidence.1)
    }

    /// The reading of the shown note from `recent`, or no note.
    @_noLocks
    private mutating func show() -> PitchReading {
        let voicedCount = (recent.0 > 0 ? 1 : 0) + (recent.1 > 0 ? 1 : 0) + (recent.2 > 0 ? 1 : 0)
        guard recent.0 > 0 || voicedCount >= 2 else {
            shownHz = 0
            return .none
        }
        // A note that starts shows its newest estimate; a shown one the median of three, the
        // last shown value standing in for a missing estimate.
        let frequencyHz: Float
        if shownHz == 0 {
            frequencyHz = recent.0
        } else {
            let a = recent.0 > 0 ? recent.0 : shownHz, b = recent.1 > 0 ? recent.1 : shownHz, c = recent.2 > 0 ? recent.2 : shownHz
            frequencyHz = max(min(a, b), min(max(a, b), c))
        }
        let confidence = max(recentConfidence.0, max(recentConfidence.1, recentConfidence.2))
        let midi = 69 + semitones(frequencyHz / referenceHz)
        guard midi.isFinite, midi >= 0, midi < 127.5 else {
            shownHz = 0
            return .none
        }
        shownHz = frequencyHz
        let nearest = Float(Int(midi + 0.5))
        return PitchReading(frequencyHz: frequencyHz, midiNote: midi, noteNumber: Int32(nearest),
                            cents: 100 * (midi - nearest), confidence: confidence)
    }

    @_noLocks
    mutating func reset() {
        recent = (0, 0, 0)
        recentConfidence = (0, 0, 0)
        shownHz = 0
        candidates = (0, 0, 0)
        candidateCount = 0
        candidateConfidences = (0, 0, 0)
        heldHops = 0
    }

    /// `estimates` (newest first) reordered so the one a new note is first shown at leads: the
    /// newest, unless an older one is more confident by `firstReadingConfidenceMargin`.
    @_noLocks
    private func mostConfidentFirst(_ estimates: (Float, Float, Float), _ confidences: (Float, Float, Float)) -> (Float, Float, Float) {
        let margin = parameters.firstReadingConfidenceMargin
        let best = confidences.2 > max(confidences.1, confidences.0 + margin) ? 2 : confidences.1 > confidences.0 + margin ? 1 : 0
        switch best {
        case 1: return (estimates.1, estimates.0, estimates.2)
        case 2: return (estimates.2, estimates.0, estimates.1)
        default: return estimates
        }
    }

    @inline(__always) @_noLocks
    private func semitones(_ ratio: Float) -> Float { 12 * _unsafePerformance { log2f(ratio) } }
}
