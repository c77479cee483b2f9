import Glibc
import SpectrumCore

/// Turns raw estimates into what a tuner shows. A new note (after no note, or more than a
/// semitone from the shown one) is shown once it has settled: two consecutive estimates within
/// `settledCents`, or one on which the detector's long and short windows agree that closely,
/// or, settled or not, after `estimatesToShowAnyway` estimates within a semitone (their
/// newest). A new note is first shown at its newest estimate (an attack's estimates converge).
/// Until then the shown note holds, for up to `estimatesToShowAnyway − 1` hops, so a one-hop
/// jump is never shown. A shown note is the median of its last three estimates; with one of
/// them missing, the last shown value stands in for it, so a one-hop excursion is not shown
/// either. It ends when the newest estimate is missing and fewer than two of the last three
/// are there. Real-time safe.
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
    private var candidateConfidence: Float = 0
    private var candidateCount = 0
    /// Hops the shown note has been held while a new note's estimates were pending.
    private var heldHops = 0

    init(referenceHz: Double, parameters: Parameters = Parameters()) {
        self.referenceHz = Float(referenceHz)
        self.parameters = parameters
    }

    @_noLocks
    mutating func update(_ raw: RawPitch) -> PitchReading {
        let frequencyHz = raw.frequencyHz
        if frequencyHz > 0 && (shownHz == 0 || abs(semitones(frequencyHz / shownHz)) > parameters.noteChangeSemitones) {
            // A new note's estimate: it joins the pending run when within a semitone of it.
            if candidateCount > 0 && abs(semitones(frequencyHz / candidates.0)) <= parameters.noteChangeSemitones {
                candidates = (frequencyHz, candidates.0, candidates.1)
                candidateCount += 1
                candidateConfidence = max(candidateConfidence, raw.confidence)
            } else {
                candidates = (frequencyHz, 0, 0)
                candidateCount = 1
                candidateConfidence = raw.confidence
            }
            let settled = raw.windowDifferenceCents <= parameters.settledCents
                || (candidateCount >= 2 && abs(100 * semitones(candidates.0 / candidates.1)) <= parameters.settledCents)
            if settled || candidateCount >= parameters.estimatesToShowAnyway {
                // The new note starts with its own estimates, the last at most three.
                recent = candidates
                recentConfidence = (candidateConfidence, 0, 0)
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
        candidateConfidence = 0
        heldHops = 0
    }

    @inline(__always) @_noLocks
    private func semitones(_ ratio: Float) -> Float { 12 * _unsafePerformance { log2f(ratio) } }
}
