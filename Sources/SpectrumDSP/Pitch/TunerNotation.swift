import Glibc
import SpectrumCore

/// What a musician reads off a tuner, from the tracker's reading: the nearest note of the
/// temperament and the cents from it, the note in the player's key (transposition), the
/// nearest open string and its offset (string mode), and the strobe's position. `init`
/// allocates; `annotate` is real-time safe.
struct TunerNotation: ~Copyable {
    /// Strobe speed: a quarter turn per second per cent, so 1 cent sharp drifts visibly (a
    /// turn in 4 s) and 20 cents spins at 5 turns/s, where the needle takes over.
    static let strobeTurnsPerSecondPerCent: Float = 0.25

    private let transposeSemitones: Int32
    /// Cents above equal temperament per pitch class (C = 0), all 0 for equal temperament.
    private let temperamentCents: RealtimeBuffer
    private let stringNotes: RealtimeBuffer
    private let hopSeconds: Float
    private var strobePhase: Float = 0

    init(configuration: PitchConfiguration, hopSeconds: Double) {
        transposeSemitones = Int32(configuration.transposeSemitones)
        temperamentCents = RealtimeBuffer(count: 12)
        for (pitchClass, cents) in configuration.temperamentCents.prefix(12).enumerated() { temperamentCents[pitchClass] = Float(cents) }
        stringNotes = RealtimeBuffer(count: configuration.stringNotes.count)
        for (index, note) in configuration.stringNotes.enumerated() { stringNotes[index] = Float(note) }
        self.hopSeconds = Float(hopSeconds)
    }

    /// Rewrites `reading`'s note and cents for the temperament and fills in the written note,
    /// the string and the strobe.
    @_noLocks
    mutating func annotate(_ reading: inout PitchReading) {
        guard reading.noteNumber >= 0 else {
            reading.strobePhase = strobePhase
            return
        }
        // The nearest tempered note: the equal-tempered neighbours, each moved by its offset.
        let equal = Int32(reading.midiNote + 0.5)
        var best = equal, bestCents = Float.infinity
        for note in (equal - 1)...(equal + 1) where note >= 0 {
            let cents = 100 * (reading.midiNote - Float(note)) - temperamentCents[Int(note % 12)]
            if abs(cents) < abs(bestCents) { best = note; bestCents = cents }
        }
        reading.noteNumber = best
        reading.cents = bestCents
        reading.writtenNoteNumber = min(127, max(0, best + transposeSemitones))
        var targetCents = bestCents
        if stringNotes.count > 0 {
            var index = 0
            for candidate in 1..<stringNotes.count
            where abs(reading.midiNote - stringNotes[candidate]) < abs(reading.midiNote - stringNotes[index]) { index = candidate }
            reading.stringIndex = Int32(index)
            reading.stringNoteNumber = Int32(stringNotes[index])
            reading.stringCents = 100 * (reading.midiNote - stringNotes[index])
            targetCents = reading.stringCents
        }
        let advanced = strobePhase + targetCents * Self.strobeTurnsPerSecondPerCent * hopSeconds
        strobePhase = advanced - _unsafePerformance { floorf(advanced) }
        reading.strobePhase = strobePhase
    }

    @_noLocks
    mutating func reset() { strobePhase = 0 }
}
