import Glibc
import SpectrumCore

/// Turns analysis frames into WLED "audio sync v2" packets, the 44 bytes a WLED controller's
/// audioreactive usermod accepts from the network (UDP 11988, usually multicast to 239.0.0.1).
///
/// Layout (little-endian, packed; Python `struct` format `<6s2xffBB16B2xff`):
///
/// | offset | type     | field           | what we send                                             |
/// |-------:|----------|-----------------|----------------------------------------------------------|
/// |      0 | char[6]  | header          | `"00002\0"`                                              |
/// |      6 | u8[2]    | reserved        | 0                                                        |
/// |      8 | f32      | sampleRaw       | `level.vu` × 255 (0..255)                                |
/// |     12 | f32      | sampleSmth      | sampleRaw through a one-pole, `smoothingMilliseconds`     |
/// |     16 | u8       | samplePeak      | 1 when an onset fell in any frame since the last packet   |
/// |     17 | u8       | frame counter   | +1 per packet, wraps                                     |
/// |     18 | u8[16]   | GEQ channels    | 0..254, see below                                        |
/// |     34 | u16      | zero crossings  | 0, see below                                             |
/// |     36 | f32      | FFT magnitude   | loudest band (≤ 11025 Hz) × `fullScaleFFTMagnitude`       |
/// |     40 | f32      | major peak, Hz  | the tuner's note, else the loudest band's centre; 1..11025 |
///
/// Decisions:
/// - **GEQ channel = maximum of our bands whose centres fall in the channel** (WLED's edges,
///   `channelEdgesHz`), × 254. Not a power mean: our bands are auto-levelled display values (a
///   dB scale mapped to 0..1), a channel holds 5 to 13 of the 128 default bands, and a mean
///   would dilute a bass note that fills two of them to a fraction of a bar; the maximum keeps
///   the channel on the bands' scale (a full band is a full bar), and a power mean of order ∞
///   is the maximum anyway. Same reasoning as `BandGrouping` for the OSC groups. Bands below
///   43 Hz and above 9259 Hz fall in no channel, as in WLED. A channel that holds no band
///   centre (a coarse band layout) reads the band nearest to its geometric centre when that
///   lies within our bands' span, else stays dark.
/// - **Major peak**: the tuner's fundamental while it holds a note (exact, and the
///   note-following effects such as Rocktaves want the fundamental, not a harmonic that may
///   be the loudest band), else the centre of the loudest band up to 11025 Hz (WLED's own FFT
///   stops there), else 1 Hz (WLED's idle value).
/// - **Zero crossings: 0.** Upstream WLED treats the field as reserved. Our waveform is the
///   analysis window decimated to 512 points (high tones alias) over `window_ms`, not the 512
///   samples at 22 kHz the MoonModules fork counts, so a count from it would mislead.
/// - **Rate**: at most `maximumPacketsPerSecond` packets in any one second of stream time
///   (`streamFrame` / `sampleRateHz`), never the wall clock, so a publisher that falls behind
///   and catches up does not burst. Two rules: packets go on a grid of 1/N s (a frame is sent
///   when the stream has reached the next slot, and the slot then advances by 1/N s, so at 60
///   frames/s 50 of every 60 frames go out rather than every other one; after a gap the grid
///   restarts at the current frame instead of catching up), and a packet waits while the
///   N-th packet before it is less than a second old. The grid alone averages N per second
///   but, its slots taken up to a frame late, can fit N + 1 into some second; the second rule
///   makes the bound hold in every window at the cost of an occasional skipped slot.
///   Smoothing and the onset latch see every frame, sent or not.
/// - Every value is sanitised: NaN/±inf in a frame become 0 (1 Hz for the peak) and every
///   field is clamped to its range before it is written.
///
/// Lifecycle: `init` allocates (the channel table); `packet(for:into:)` does not allocate.
/// Publisher thread only: one instance per stream, not thread-safe, not for the real-time
/// thread (it calls `exp`, and it is a class).
public final class WLEDAudioSyncEncoder {
    public struct Parameters: Sendable, Equatable {
        /// Time constant of sampleSmth's one-pole smoothing of sampleRaw. 32 ms is WLED's own
        /// `sampleAvg` (a 1/16 step every 2 ms), so effects tuned on a WLED microphone feel alike.
        public var smoothingMilliseconds: Double = 32
        /// Most packets in any one second of stream time. 50: WLED reads one packet per loop
        /// of at least 10 ms (often ~20 ms); faster senders only queue stale packets in its socket.
        public var maximumPacketsPerSecond: Int = 50
        /// FFT magnitude sent for a loudest band at full scale (band value 1). WLED effects
        /// divide the magnitude by 4, 8 or 16 and use it as a 0..255 brightness: 255 × 8 puts
        /// the middle divisor at full range.
        public var fullScaleFFTMagnitude: Float = 2040

        public init() {}
    }

    /// Bytes in one packet (`sizeof(audioSyncPacket)` in WLED).
    public static let packetByteCount = 44
    /// `"00002"` and its terminating NUL (WLED's `UDP_SYNC_HEADER`).
    public static let header: [UInt8] = Array("00002".utf8) + [0]
    /// WLED's default audio sync port and multicast group.
    public static let defaultPort: UInt16 = 11988
    public static let multicastGroup = "239.0.0.1"
    /// Lower and upper edges of WLED's 16 GEQ channels in Hz (17 edges), from the FFT bins
    /// its audioreactive usermod sums at 22050 Hz sampling.
    public static let channelEdgesHz: [Double] = [43, 86, 129, 216, 301, 430, 560, 818, 1120, 1421, 1895, 2412, 3015, 3704, 4479, 7106, 9259]
    public static let channelCount = 16
    /// The major peak range WLED's effects expect (its receiver clamps to it too).
    public static let majorPeakRangeHz: ClosedRange<Float> = 1...11025

    public let parameters: Parameters
    public let sampleRateHz: Double
    /// Our bands of each GEQ channel (possibly empty).
    public let channelBands: [Range<Int>]
    private let bandCentresHz: [Float]
    /// Bands with a centre up to 11025 Hz: the major-peak search stops there.
    private let majorPeakBandCount: Int
    private let intervalFrames: Double
    private let smoothingTimeConstantFrames: Double

    private var smoothedSample: Float = 0
    private var previousStreamFrame: Int64?
    private var nextDueFrame: Double = 0
    private var onsetPending = false
    private var frameCounter: UInt8 = 0
    /// Stream frames of the last `maximumPacketsPerSecond` packets, a ring (oldest at
    /// `recentPacketIndex` once full); its size is fixed in `init`.
    private var recentPacketFrames: [Int64]
    private var recentPacketIndex = 0
    private var recentPacketCount = 0

    /// - Parameters:
    ///   - bandCentreFrequenciesHz: the analyser's band centres, ascending
    ///     (`Analyzer.bandCentreFrequenciesHz`; they depend on the configuration's band
    ///     count and frequency range only, not on the sample rate).
    ///   - sampleRateHz: the rate of the frames' `streamFrame` (a new rate needs a new encoder).
    /// Allocates; publisher thread (or any thread before it starts).
    public init(bandCentreFrequenciesHz: [Double], sampleRateHz: Double, parameters: Parameters = Parameters()) {
        precondition(sampleRateHz.isFinite && sampleRateHz > 0, "sample rate \(sampleRateHz) Hz")
        precondition(parameters.maximumPacketsPerSecond > 0, "packets per second")
        precondition(parameters.smoothingMilliseconds.isFinite && parameters.smoothingMilliseconds >= 0, "smoothing time")
        precondition(parameters.fullScaleFFTMagnitude.isFinite && parameters.fullScaleFFTMagnitude >= 0, "FFT magnitude scale")
        precondition(bandCentreFrequenciesHz.allSatisfy { $0.isFinite && $0 > 0 }, "band centres must be positive")
        precondition(zip(bandCentreFrequenciesHz, bandCentreFrequenciesHz.dropFirst()).allSatisfy { $0 < $1 }, "band centres must ascend")
        self.parameters = parameters
        self.sampleRateHz = sampleRateHz
        bandCentresHz = bandCentreFrequenciesHz.map { Float($0) }
        majorPeakBandCount = bandCentreFrequenciesHz.filter { $0 <= Double(Self.majorPeakRangeHz.upperBound) }.count
        channelBands = Self.channelBandRanges(bandCentresHz: bandCentreFrequenciesHz)
        intervalFrames = sampleRateHz / Double(parameters.maximumPacketsPerSecond)
        recentPacketFrames = [Int64](repeating: 0, count: parameters.maximumPacketsPerSecond)
        smoothingTimeConstantFrames = parameters.smoothingMilliseconds / 1000 * sampleRateHz
    }

    /// For each WLED channel, the bands whose centres lie in [lower edge, upper edge); when
    /// none does, the band nearest (in log frequency) to the channel's geometric centre if that
    /// centre lies within the bands' span, else none.
    private static func channelBandRanges(bandCentresHz centres: [Double]) -> [Range<Int>] {
        (0..<channelCount).map { channel in
            let lower = channelEdgesHz[channel], upper = channelEdgesHz[channel + 1]
            let start = centres.firstIndex { $0 >= lower } ?? centres.count
            let end = centres.firstIndex { $0 >= upper } ?? centres.count
            if start < end { return start..<end }
            let middle = (lower * upper).squareRoot()
            guard let first = centres.first, let last = centres.last, middle >= first, middle <= last else { return 0..<0 }
            let nearest = centres.indices.min { abs(log(centres[$0] / middle)) < abs(log(centres[$1] / middle)) }!
            return nearest..<(nearest + 1)
        }
    }

    /// Feeds one frame (every frame, in stream order) and, when a packet is due, writes it into
    /// the first 44 bytes of `packet` and returns true; returns false when the rate limit skips
    /// this frame (`packet` untouched). A frame whose `streamFrame` does not advance (a restarted
    /// analyser) restarts the smoothing and the rate grid and is sent.
    /// Does not allocate; publisher thread only.
    public func packet(for frame: borrowing AnalysisFrame, into packet: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(packet.count >= Self.packetByteCount, "a WLED packet needs 44 bytes")
        // 1) Level and its smoothing, on stream time.
        let sampleRaw = OSCValueGuard.unit(frame.level.vu) * 255
        let now = frame.streamFrame
        if let previous = previousStreamFrame, now > previous {
            let elapsedFrames = Double(now - previous)
            let step = smoothingTimeConstantFrames > 0 ? Float(1 - exp(-elapsedFrames / smoothingTimeConstantFrames)) : 1
            smoothedSample += step * (sampleRaw - smoothedSample)
        } else {
            smoothedSample = sampleRaw
            nextDueFrame = Double(now)
            onsetPending = false
            recentPacketCount = 0
            recentPacketIndex = 0
        }
        previousStreamFrame = now
        if frame.onset.isOnset { onsetPending = true }

        // 2) Rate limit: the stream-time grid, and N packets per second at most.
        let nowFrames = Double(now)
        guard nowFrames >= nextDueFrame else { return false }
        if recentPacketCount == recentPacketFrames.count,
           Double(now - recentPacketFrames[recentPacketIndex]) < sampleRateHz { return false }
        nextDueFrame += intervalFrames
        if nextDueFrame <= nowFrames { nextDueFrame = nowFrames + intervalFrames }
        recentPacketFrames[recentPacketIndex] = now
        recentPacketIndex = (recentPacketIndex + 1) % recentPacketFrames.count
        recentPacketCount = min(recentPacketCount + 1, recentPacketFrames.count)

        // 3) Header, levels, peak, counter.
        for index in 0..<6 { packet[index] = Self.header[index] }
        packet[6] = 0
        packet[7] = 0
        Self.store(min(max(sampleRaw, 0), 255), at: 8, in: packet)
        Self.store(smoothedSample.isFinite ? min(max(smoothedSample, 0), 255) : 0, at: 12, in: packet)
        packet[16] = onsetPending ? 1 : 0
        packet[17] = frameCounter
        onsetPending = false
        frameCounter &+= 1

        // 4) GEQ channels: the maximum of each channel's bands.
        let bandCount = min(frame.bandCount, bandCentresHz.count, AnalysisFrame.maximumBandCount)
        for channel in 0..<Self.channelCount {
            var value: Float = 0
            for band in channelBands[channel] where band < bandCount {
                value = max(value, OSCValueGuard.unit(frame.bands[band]))
            }
            packet[18 + channel] = UInt8((value * 254).rounded())
        }
        packet[34] = 0
        packet[35] = 0

        // 5) FFT magnitude and major peak.
        var loudestBand = -1
        var loudestValue: Float = 0
        for band in 0..<min(bandCount, majorPeakBandCount) {
            let value = OSCValueGuard.unit(frame.bands[band])
            if value > loudestValue {
                loudestValue = value
                loudestBand = band
            }
        }
        Self.store(loudestValue * parameters.fullScaleFFTMagnitude, at: 36, in: packet)
        let pitchHz = frame.pitch.frequencyHz
        let majorPeakHz: Float
        if frame.pitch.hasNote, pitchHz.isFinite, pitchHz > 0 {
            majorPeakHz = pitchHz
        } else if loudestBand >= 0 {
            majorPeakHz = bandCentresHz[loudestBand]
        } else {
            majorPeakHz = Self.majorPeakRangeHz.lowerBound
        }
        Self.store(min(max(majorPeakHz, Self.majorPeakRangeHz.lowerBound), Self.majorPeakRangeHz.upperBound), at: 40, in: packet)
        return true
    }

    @inline(__always)
    private static func store(_ value: Float, at offset: Int, in packet: UnsafeMutableRawBufferPointer) {
        packet.storeBytes(of: value.bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
}
