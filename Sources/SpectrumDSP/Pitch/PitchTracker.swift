import Glibc
import SpectrumCore

/// Turns raw estimates into what a tuner shows: median of the last three estimates, flushed
/// when the pitch jumps by more than a semitone, and "no note" unless at least two of the last
/// three were confident, or the newest alone is very confident or confirmed by both of the
/// detector's windows. Real-time safe after `init`.
struct PitchTracker {
    private let referenceHz: Float
    /// The last three raw frequencies, newest first (0 = unvoiced).
    private var recent: (Float, Float, Float) = (0, 0, 0)
    private var recentConfidence: (Float, Float, Float) = (0, 0, 0)
    /// Whether the newest estimate was confirmed by both of the detector's windows.
    private var newestConfirmed = false

    /// Confidence at which one estimate is enough to show a note (otherwise two of three).
    static let immediateConfidence: Float = 0.95

    init(referenceHz: Double) {
        self.referenceHz = Float(referenceHz)
    }

    @_noLocks
    mutating func update(_ raw: RawPitch) -> PitchReading {
        if raw.frequencyHz > 0 {
            // Flush on a jump of more than a semitone from the newest voiced estimate.
            let previous = recent.0 > 0 ? recent.0 : recent.1
            if previous > 0 && abs(semitones(raw.frequencyHz / previous)) > 1 {
                recent = (0, 0, 0)
                recentConfidence = (0, 0, 0)
            }
        }
        recent = (raw.frequencyHz, recent.0, recent.1)
        recentConfidence = (raw.confidence, recentConfidence.0, recentConfidence.1)
        newestConfirmed = raw.confirmed

        let voicedCount = (recent.0 > 0 ? 1 : 0) + (recent.1 > 0 ? 1 : 0) + (recent.2 > 0 ? 1 : 0)
        // A single estimate is shown at once only when it is very clearly periodic (noise and
        // the mixed windows of note changes stay well below this), or when the detector's long
        // and short windows read it alike (the new note fills the newest 14.7 ms and already
        // dominates the 58 ms window).
        let clearSingle = voicedCount == 1 && recent.0 > 0
            && (recentConfidence.0 >= Self.immediateConfidence || newestConfirmed)
        guard voicedCount >= 2 || clearSingle else { return .none }
        let frequencyHz: Float
        if clearSingle {
            frequencyHz = recent.0
        } else if voicedCount == 3 {
            frequencyHz = max(min(recent.0, recent.1), min(max(recent.0, recent.1), recent.2))
        } else {
            // Two confident estimates within a semitone: their geometric mean.
            let product = (recent.0 > 0 ? recent.0 : 1) * (recent.1 > 0 ? recent.1 : 1) * (recent.2 > 0 ? recent.2 : 1)
            frequencyHz = realtimeSquareRoot(product)
        }
        let confidence = max(recentConfidence.0, max(recentConfidence.1, recentConfidence.2))
        let midi = 69 + semitones(frequencyHz / referenceHz)
        guard midi.isFinite, midi >= 0, midi < 127.5 else { return .none }
        let nearest = Float(Int(midi + 0.5))
        return PitchReading(frequencyHz: frequencyHz, midiNote: midi, noteNumber: Int32(nearest),
                            cents: 100 * (midi - nearest), confidence: confidence)
    }

    @_noLocks
    mutating func reset() {
        recent = (0, 0, 0)
        recentConfidence = (0, 0, 0)
        newestConfirmed = false
    }

    @inline(__always) @_noLocks
    private func semitones(_ ratio: Float) -> Float { 12 * _unsafePerformance { log2f(ratio) } }
}
