/// Grouped bands for lights: `groupCount` groups of equal width on the log-frequency axis.
///
/// The analysis bands are already log-spaced (equal ratio from one edge to the next), so equal
/// runs of bands are equal log-frequency widths: with 128 bands over 20 Hz–20 kHz and 8 groups,
/// each group is 16 bands, about 1.25 octaves. When the band count is not a multiple of the
/// group count, group g covers bands `g·B/G ..< (g+1)·B/G` (integer division), so group sizes
/// differ by at most one. With more groups than bands, each group reads the one band at
/// `g·B/G` (neighbouring groups repeat a band rather than stay dark).
///
/// A group's value is the **maximum** of its bands, not a mean:
/// - the bands are auto-levelled display values (a dB scale mapped to 0..1, the loudest band
///   near 1). A mean over 16 bands dilutes a kick drum or a bass note, which fills two or three
///   bands, to a third of its height, so a light on that group would never reach full;
///   the maximum keeps the group on the same 0..1 scale as the bands and uses the full range;
/// - a mean of dB-scaled values is not a power mean anyway, and a power mean of order p → ∞
///   is the maximum: the limit that lights want (react to the strongest thing in the range);
/// - the bands are already smoothed (attack/release), so the maximum does not flicker more
///   than a band does.
/// The cost: broadband noise and a single tone in a group read the same. Use `/bands` when
/// that matters.
public struct BandGrouping: Sendable, Equatable {
    public let groupCount: Int

    public init(groupCount: Int) {
        precondition(groupCount > 0)
        self.groupCount = groupCount
    }

    /// The bands of group `group` out of `bandCount` (never empty when bandCount > 0).
    public func bands(ofGroup group: Int, bandCount: Int) -> Range<Int> {
        guard bandCount > 0 else { return 0..<0 }
        let start = min(group * bandCount / groupCount, bandCount - 1)
        let end = max((group + 1) * bandCount / groupCount, start + 1)
        return start..<min(end, bandCount)
    }

    /// Writes the group values of the first `bandCount` entries of `bands` into `groups`
    /// (`groupCount` entries). Non-finite bands count as 0; results are clamped to 0..1.
    /// Does not allocate.
    public func group(bands: UnsafeBufferPointer<Float>, into groups: UnsafeMutableBufferPointer<Float>) {
        for group in 0..<groupCount {
            var value: Float = 0
            for band in self.bands(ofGroup: group, bandCount: bands.count) {
                let candidate = OSCValueGuard.unit(bands[band])
                if candidate > value { value = candidate }
            }
            groups[group] = value
        }
    }

    /// Frames between two status messages: one second of frames at the output rate.
    static func statusIntervalFrames(outputRateHz: Double) -> Int {
        guard outputRateHz.isFinite, outputRateHz > 0 else { return 1 }
        return max(1, Int(outputRateHz.rounded()))
    }
}

/// What the publisher does to each value before it goes on the wire: NaN and ±inf never leave
/// the process.
public enum OSCValueGuard {
    /// 0..1 fields: non-finite → 0, then clamped.
    @inline(__always)
    public static func unit(_ value: Float) -> Float {
        value.isFinite ? min(max(value, 0), 1) : 0
    }

    /// dBFS fields: non-finite → −120 (silence: sending 0 dBFS for a glitch would flash every
    /// light in the room), then clamped to −120..+24.
    @inline(__always)
    public static func decibels(_ value: Float) -> Float {
        value.isFinite ? min(max(value, -120), 24) : -120
    }

    /// Waveform samples: non-finite → 0, clamped to −1..1.
    @inline(__always)
    public static func sample(_ value: Float) -> Float {
        value.isFinite ? min(max(value, -1), 1) : 0
    }

    /// Non-negative measurements (µs, %): non-finite or negative → 0, clamped above.
    @inline(__always)
    public static func nonNegative(_ value: Float, maximum: Float = .greatestFiniteMagnitude) -> Float {
        value.isFinite ? min(max(value, 0), maximum) : 0
    }

    /// Counts as OSC int32: negative → 0, saturating at Int32.max.
    @inline(__always)
    public static func count(_ value: Int) -> Int32 {
        Int32(clamping: max(value, 0))
    }
}
