import SpectrumCore

/// RMS, peak, dBFS and the VU value of seed 002. Real-time safe after `init`.
///
/// Peak is the largest |sample| of the hop (every sample counts exactly once); RMS is taken over
/// the main analysis window, so it moves as smoothly as the spectrum.
struct LevelMeter {
    private let vuFloorDecibels: Float
    private var hopPeak: Float = 0

    init(configuration: LevelConfiguration) {
        vuFloorDecibels = Float(configuration.vuFloorDecibels)
    }

    @inline(__always) @_noLocks
    mutating func observe(_ sample: Float) {
        let magnitude = abs(sample)
        if magnitude > hopPeak { hopPeak = magnitude }
    }

    /// Finishes the hop: RMS over the newest `windowFrames` samples of `history`.
    @_noLocks
    mutating func read(history: borrowing SampleHistory, windowFrames: Int) -> LevelReading {
        let runs = history.latestRuns(windowFrames)
        let sumOfSquares = realtimeDotProduct(runs.first, runs.first, count: runs.firstCount)
            + realtimeDotProduct(runs.second, runs.second, count: runs.secondCount)
        // Finite samples whose squares overflow (amplitude ~1e20 and up) are far beyond full
        // scale, not silence: read them as the largest level, as the spectrum does.
        let meanSquare = sumOfSquares == .infinity ? Float.greatestFiniteMagnitude : sumOfSquares / Float(windowFrames)
        let rms = finiteOr(realtimeSquareRoot(meanSquare), 0)
        let peak = finiteOr(hopPeak, 0)
        hopPeak = 0
        let rmsDecibels = realtimeDecibelsFromAmplitude(rms)
        return LevelReading(
            rms: min(rms, 1),
            peak: min(peak, 1),
            rmsDecibels: rmsDecibels,
            peakDecibels: realtimeDecibelsFromAmplitude(peak),
            vu: clampUnit((rmsDecibels - vuFloorDecibels) / -vuFloorDecibels)
        )
    }

    @_noLocks
    mutating func reset() { hopPeak = 0 }
}
