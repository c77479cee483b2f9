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

    public init() {}
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
    /// Nearest MIDI note, or −1 when there is no note.
    public var noteNumber: Int32
    /// Deviation from the nearest note, −50..+50 cents.
    public var cents: Float
    /// Normalised correlation at the period, 0..1.
    public var confidence: Float

    @_noLocks
    public init(frequencyHz: Float, midiNote: Float, noteNumber: Int32, cents: Float, confidence: Float) {
        self.frequencyHz = frequencyHz
        self.midiNote = midiNote
        self.noteNumber = noteNumber
        self.cents = cents
        self.confidence = confidence
    }

    public static var none: PitchReading {
        @_noLocks get { PitchReading(frequencyHz: 0, midiNote: 0, noteNumber: -1, cents: 0, confidence: 0) }
    }

    public var hasNote: Bool { noteNumber >= 0 }

    /// Note name with octave in scientific pitch notation ("A4", "C#2"), nil without a note.
    /// Allocates; not for the real-time path.
    public var noteName: String? {
        guard hasNote else { return nil }
        let names = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]
        return names[Int(noteNumber) % 12] + String(Int(noteNumber) / 12 - 1)
    }
}
