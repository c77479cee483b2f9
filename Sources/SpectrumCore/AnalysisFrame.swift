/// One output frame of the analysis: a plain, fixed-size value that crosses from the real-time
/// thread to the consumers (OSC publisher, terminal, file writer) by copy, with no references.
public struct AnalysisFrame: BitwiseCopyable, Sendable {
    public static let maximumBandCount = 256
    public static let waveformPointCount = 512

    /// Stream position, in frames since the analysis started, of the newest sample in this frame.
    public var streamFrame: Int64 = 0
    /// When the newest sample of this frame reached the capture port, on JACK's clock
    /// (`jack_get_time()` microseconds, capture latency subtracted); 0 when there is no such
    /// clock (offline analysis). Set by the live host.
    public var captureTimeMicroseconds: UInt64 = 0
    /// Input samples that were NaN or infinite (read as 0) since the analysis started.
    public var nonFiniteSampleCount: UInt64 = 0
    /// Which input of the live client this frame analyses (its slot, `LiveClient.inputNames`);
    /// 0 with a single input and offline.
    public var inputIndex: Int32 = 0
    /// Number of valid entries in `bands` and `peaks`.
    public var bandCount: Int = 0
    /// Smoothed, auto-levelled band values, 0..1.
    public var bands = InlineArray<256, Float>(repeating: 0)
    /// Falling peak-hold of `bands`, 0..1.
    public var peaks = InlineArray<256, Float>(repeating: 0)
    public var level = LevelReading(rms: 0, peak: 0, rmsDecibels: -120, peakDecibels: -120, vu: 0)
    /// The tuner's reading; `noteNumber < 0` means no note.
    public var pitch = PitchReading.none
    /// The newest analysis window downsampled to 512 points, raw sample values (−1..1 in range).
    public var waveform = InlineArray<512, Float>(repeating: 0)
    /// The onset detected in this hop, if any (`strength == 0`: none).
    public var onset = OnsetReading.none
    /// The locked tempo and beat phase (`bpm == 0`: no tempo locked).
    public var tempo = TempoReading.none
    /// The beat that falls in this hop, if any (`isBeat == false`: none).
    public var beat = BeatReading.none

    public init() {}
}

/// An onset (a sudden rise of the spectrum) found in one hop.
public struct OnsetReading: BitwiseCopyable, Equatable, Sendable {
    /// 0 when there is no onset in this hop; otherwise how far the onset signal rose above its
    /// adaptive threshold, `1 − threshold / value`, in (0, 1].
    public var strength: Float
    /// Exact time of the onset in stream frames (fractional; the frame of the sharpest energy
    /// rise in the signal, found to about a millisecond). Meaningless when `strength == 0`.
    public var timeFrames: Double
    /// When the onset's attack (`timeFrames`) reached the capture port, on JACK's clock
    /// (`jack_get_time()` µs, capture latency subtracted): set with the frame's
    /// `captureTimeMicroseconds` by the live host; 0 offline or without an onset.
    public var captureTimeMicroseconds: UInt64 = 0

    @_noLocks
    public init(strength: Float, timeFrames: Double) {
        self.strength = strength
        self.timeFrames = timeFrames
    }

    public static var none: OnsetReading {
        @_noLocks get { OnsetReading(strength: 0, timeFrames: 0) }
    }

    public var isOnset: Bool { strength > 0 }
}

/// The tempo and beat phase at the end of one hop.
public struct TempoReading: BitwiseCopyable, Equatable, Sendable {
    /// Beats per minute, refined from the beat times; 0 while no tempo is locked.
    public var bpm: Float
    /// Normalised autocorrelation of the onset signal at the beat period, 0..1.
    public var confidence: Float
    /// Position within the beat, 0..1 (0 at each beat event, so the lead time applies to it too).
    public var phase: Float

    @_noLocks
    public init(bpm: Float, confidence: Float, phase: Float) {
        self.bpm = bpm
        self.confidence = confidence
        self.phase = phase
    }

    public static var none: TempoReading {
        @_noLocks get { TempoReading(bpm: 0, confidence: 0, phase: 0) }
    }

    public var isLocked: Bool { bpm > 0 }
}

/// A predicted beat reported in this hop.
public struct BeatReading: BitwiseCopyable, Equatable, Sendable {
    public var isBeat: Bool
    /// Predicted time of the beat in stream frames (fractional). With a lead time the event is
    /// reported early, so this lies up to the lead time after the frame's `streamFrame`.
    public var timeFrames: Double
    /// Beats since the tempo locked, from 1.
    public var count: Int32
    /// Position in the bar, 1 ... `beatsPerBar` (counted from the first beat after locking: the
    /// musical downbeat is not detected).
    public var inBar: Int32

    @_noLocks
    public init(isBeat: Bool, timeFrames: Double, count: Int32, inBar: Int32) {
        self.isBeat = isBeat
        self.timeFrames = timeFrames
        self.count = count
        self.inBar = inBar
    }

    public static var none: BeatReading {
        @_noLocks get { BeatReading(isBeat: false, timeFrames: 0, count: 0, inBar: 0) }
    }
}

/// Level of one hop.
public struct LevelReading: BitwiseCopyable, Equatable, Sendable {
    /// RMS over the main window, linear, 0..1 (clamped; a full-scale sine reads 0.707).
    public var rms: Float = 0
    /// Largest |sample| in the hop, linear, 0..1 (clamped).
    public var peak: Float = 0
    /// RMS in dBFS, floored at −120 (not clamped above: over-range input reads > 0).
    public var rmsDecibels: Float = -120
    /// Peak in dBFS, floored at −120.
    public var peakDecibels: Float = -120
    /// RMS dBFS mapped from −60..0 to 0..1 (seed 002's VU scale).
    public var vu: Float = 0

    @_noLocks
    public init(rms: Float, peak: Float, rmsDecibels: Float, peakDecibels: Float, vu: Float) {
        self.rms = rms
        self.peak = peak
        self.rmsDecibels = rmsDecibels
        self.peakDecibels = peakDecibels
        self.vu = vu
    }
}

/// The tuner's reading of one hop (median of three estimates).
public struct PitchReading: BitwiseCopyable, Equatable, Sendable {
    /// Fundamental frequency in Hz; 0 when there is no note.
    public var frequencyHz: Float
    /// Fractional MIDI note number against the reference pitch (69 = A4).
    public var midiNote: Float
    /// Nearest MIDI note (sounding pitch; in the configured temperament), or −1 when there is
    /// no note.
    public var noteNumber: Int32
    /// Deviation from the nearest note (in the configured temperament), about −50..+50 cents.
    public var cents: Float
    /// Normalised correlation at the period, 0..1.
    public var confidence: Float
    /// The note as the player reads it: `noteNumber` plus the instrument's transposition
    /// (a B♭ trumpet's written D for a sounding C), −1 when there is no note.
    public var writtenNoteNumber: Int32
    /// The strobe's position, 0..<1: it moves by a quarter turn per second per cent sharp
    /// (backwards when flat) of the tuning target (`stringCents` in string mode, else `cents`)
    /// and stands still when in tune or without a note.
    public var strobePhase: Float
    /// String mode: the nearest open string, 0 = the lowest; −1 without a note or string mode.
    public var stringIndex: Int32
    /// String mode: the MIDI note of that string, −1 when none.
    public var stringNoteNumber: Int32
    /// String mode: cents from that string's pitch (equal temperament, the reference pitch).
    public var stringCents: Float

    @_noLocks
    public init(frequencyHz: Float, midiNote: Float, noteNumber: Int32, cents: Float, confidence: Float) {
        self.frequencyHz = frequencyHz
        self.midiNote = midiNote
        self.noteNumber = noteNumber
        self.cents = cents
        self.confidence = confidence
        writtenNoteNumber = noteNumber
        strobePhase = 0
        stringIndex = -1
        stringNoteNumber = -1
        stringCents = 0
    }

    public static var none: PitchReading {
        @_noLocks get { PitchReading(frequencyHz: 0, midiNote: 0, noteNumber: -1, cents: 0, confidence: 0) }
    }

    public var hasNote: Bool { noteNumber >= 0 }

    /// Note name with octave in scientific pitch notation ("A4", "C#2"), nil without a note.
    /// Allocates; not for the real-time path.
    public var noteName: String? {
        guard hasNote else { return nil }
        return Self.name(ofNote: noteNumber)
    }

    /// `writtenNoteNumber`'s name, nil without a note. Allocates.
    public var writtenNoteName: String? {
        guard hasNote, writtenNoteNumber >= 0 else { return nil }
        return Self.name(ofNote: writtenNoteNumber)
    }

    /// The string's name (its open note, "A2"), nil outside string mode. Allocates.
    public var stringName: String? {
        guard hasNote, stringNoteNumber >= 0 else { return nil }
        return Self.name(ofNote: stringNoteNumber)
    }

    /// Scientific pitch notation with sharps for a MIDI note ≥ 0 ("A4", "C#2"). Allocates.
    public static func name(ofNote number: Int32) -> String {
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        return names[Int(number) % 12] + String(Int(number) / 12 - 1)
    }
}
