import SpectrumCore

/// The web view's binary WebSocket message for one frame (docs/web.md, "WebSocket format"):
/// a 64-byte little-endian header, then the bands, the peaks and the waveform as float32.
/// Non-finite values are sent as 0 (never NaN to an output).
///
/// ```
/// offset size  field
///  0     u8    kind = 1 (frame)
///  1     u8    flags: 1 beat in this frame, 2 onset, 4 a note sounds, 8 tempo locked
///  2     u16   band count n
///  4     u16   waveform point count m
///  6     i16   MIDI note number, −1 when no note
///  8     f32   VU 0..1        12 f32 RMS dBFS      16 f32 peak dBFS
/// 20     f32   pitch Hz       24 f32 cents         28 f32 pitch confidence
/// 32     f32   BPM (0: none)  36 f32 tempo conf.   40 f32 beat phase 0..1
/// 44     f32   onset strength 48 i32 beat count    52 i32 beat in bar
/// 56     f64   stream position in frames (samples) of the newest sample
/// 64     f32×n bands 0..1, then f32×n peaks 0..1, then f32×m waveform −1..1
/// ```
public enum ViewFrameEncoder {
    public static let kindFrame: UInt8 = 1
    public static let headerBytes = 64

    public static func byteCount(bandCount: Int) -> Int {
        headerBytes + 4 * (2 * bandCount + AnalysisFrame.waveformPointCount)
    }

    /// Writes `frame` into `bytes` (at least `byteCount(bandCount:)` long). Any thread.
    public static func encode(_ frame: borrowing AnalysisFrame, into bytes: UnsafeMutableRawBufferPointer) {
        let bandCount = max(0, min(frame.bandCount, AnalysisFrame.maximumBandCount))
        let points = AnalysisFrame.waveformPointCount
        precondition(bytes.count >= byteCount(bandCount: bandCount))
        var flags: UInt8 = 0
        if frame.beat.isBeat { flags |= 1 }
        if frame.onset.isOnset { flags |= 2 }
        if frame.pitch.hasNote { flags |= 4 }
        if frame.tempo.isLocked { flags |= 8 }
        bytes.storeBytes(of: kindFrame, toByteOffset: 0, as: UInt8.self)
        bytes.storeBytes(of: flags, toByteOffset: 1, as: UInt8.self)
        bytes.storeBytes(of: UInt16(bandCount).littleEndian, toByteOffset: 2, as: UInt16.self)
        bytes.storeBytes(of: UInt16(points).littleEndian, toByteOffset: 4, as: UInt16.self)
        bytes.storeBytes(of: Int16(frame.pitch.hasNote ? Int16(clamping: frame.pitch.noteNumber) : -1).littleEndian, toByteOffset: 6, as: Int16.self)
        let header: [Float] = [
            frame.level.vu, frame.level.rmsDecibels, frame.level.peakDecibels,
            frame.pitch.hasNote ? frame.pitch.frequencyHz : 0, frame.pitch.hasNote ? frame.pitch.cents : 0, frame.pitch.confidence,
            frame.tempo.bpm, frame.tempo.confidence, frame.tempo.phase, frame.onset.strength,
        ]
        for (index, value) in header.enumerated() { store(value, at: 8 + 4 * index, in: bytes) }
        bytes.storeBytes(of: frame.beat.count.littleEndian, toByteOffset: 48, as: Int32.self)
        bytes.storeBytes(of: frame.beat.inBar.littleEndian, toByteOffset: 52, as: Int32.self)
        bytes.storeBytes(of: Double(frame.streamFrame).bitPattern.littleEndian, toByteOffset: 56, as: UInt64.self)
        var offset = headerBytes
        for band in 0..<bandCount { store(frame.bands[band], at: offset, in: bytes); offset += 4 }
        for band in 0..<bandCount { store(frame.peaks[band], at: offset, in: bytes); offset += 4 }
        for point in 0..<points { store(frame.waveform[point], at: offset, in: bytes); offset += 4 }
    }

    private static func store(_ value: Float, at offset: Int, in bytes: UnsafeMutableRawBufferPointer) {
        bytes.storeBytes(of: (value.isFinite ? value : 0).bitPattern.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
}
