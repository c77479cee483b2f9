import Foundation
import Glibc
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore
@testable import SpectrumOutput

/// Synthetic frames with known values.
enum SyntheticFrames {
    static func frame(_ index: Int, bandCount: Int = 128, captureTimeMicroseconds: UInt64 = 0) -> AnalysisFrame {
        var frame = AnalysisFrame()
        frame.streamFrame = Int64(index) * 800
        frame.captureTimeMicroseconds = captureTimeMicroseconds
        frame.bandCount = bandCount
        for band in 0..<bandCount {
            frame.bands[band] = Float((band * 37 + index * 11) % 101) / 100
            frame.peaks[band] = min(1, frame.bands[band] + 0.05)
        }
        frame.level = LevelReading(rms: 0.25, peak: 0.5, rmsDecibels: -12.04, peakDecibels: -6.02, vu: 0.7993)
        // From frame 1 on a tempo is locked; frames 2, 6, 10, … carry an onset and a beat.
        if index >= 1 { frame.tempo = TempoReading(bpm: 128, confidence: 0.7, phase: Float(index % 4) / 4) }
        if index % 4 == 2 {
            frame.onset = OnsetReading(strength: 0.8, timeFrames: Double(index) * 800)
            frame.beat = BeatReading(isBeat: true, timeFrames: Double(index) * 800, count: Int32(index / 4 + 1), inBar: Int32(index / 4 % 4 + 1))
        }
        // Odd frames carry a note (A4, 2 cents sharp), even frames none.
        if index % 2 == 1 {
            frame.pitch = PitchReading(frequencyHz: 440.51, midiNote: 69.02, noteNumber: 69, cents: 2, confidence: 0.97)
        }
        for point in 0..<AnalysisFrame.waveformPointCount {
            frame.waveform[point] = Float(sin(Double(point) * 0.1))
        }
        return frame
    }

    /// Pushes `frame` into `ring`, waiting while the ring is full.
    static func push(_ frame: AnalysisFrame, into ring: FrameRing) {
        var copy = frame
        while !ring.push(&copy) { usleep(200) }
    }
}
