/// One output frame of the analysis: a plain, fixed-size value that crosses from the real-time
/// thread to the consumers (OSC publisher, terminal, file writer) by copy, with no references.
public struct AnalysisFrame: BitwiseCopyable {
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
    /// The newest analysis window downsampled to 512 points, raw sample values (−1..1 in range).
    public var waveform = InlineArray<512, Float>(repeating: 0)

    public init() {}
}

/// Level of one hop.
public struct LevelReading: BitwiseCopyable, Equatable {
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
