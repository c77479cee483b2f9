import Glibc

/// Whether the short window's newest samples still sound as they did on the last hop its
/// correlation read nothing in steady noise: then it would read nothing again, and its
/// correlation (an FFT pair of 1,152 points at 48 kHz, ~3 µs of a hop in loud noise) is not
/// computed. The short window adds a reading only where the sound changes — a note's start, or
/// noise that stops under a note — and in steady noise its 14.7 ms rarely correlate at r 0.8.
///
/// Two energies of the window tell a change: its own (a note louder than the noise raises it;
/// pink noise's low frequencies, a few periods in 14.7 ms, scatter it by ±2 dB from hop to hop)
/// and its first difference's (the noise's high frequencies: steady within ±0.3 dB from hop to
/// hop; pink noise that stops as a note as loud starts drops it by 3 dB for C7 to 24 dB for A2,
/// a tone of four partials: `ShortWindowRecheckTests`). Each is compared with the remembered
/// hop's, not the last hop's, so a slow drift is caught too. docs/dsp.md, Tuner, step 4 (short
/// window).
///
/// `init` is for the detector's set-up; the other methods are real-time safe.
struct ShortWindowRecheck {
    struct Parameters {
        /// The window's energy may differ from the remembered one by this much (both ways)
        /// and be the same noise: pink noise over 14.7 ms scatters by ±2 dB; a note the short
        /// window can read (r ≥ 0.8: four times the noise's power) raises it by 7 dB.
        var energyToleranceDecibels: Float = 3
        /// The first difference's energy may differ by this much: the noise's high
        /// frequencies scatter by ±0.3 dB (docs/benchmark-history.md, 2026-12-07).
        var slopeToleranceDecibels: Float = 1
    }

    private let energyRatio: Float
    private let slopeRatio: Float
    private var energy: Float = 0
    private var slopeEnergy: Float = 0
    private var remembered = false

    init(parameters: Parameters = Parameters()) {
        energyRatio = Float(pow(10, Double(parameters.energyToleranceDecibels) / 10))
        slopeRatio = Float(pow(10, Double(parameters.slopeToleranceDecibels) / 10))
    }

    /// The first difference's energy (Σ (x[i] − x[i−1])²) of a window of `energy` whose
    /// neighbouring samples' products sum to `lagOneProduct`, but for its two end samples.
    @inline(__always) @_noLocks
    static func slopeEnergy(energy: Float, lagOneProduct: Float) -> Float { 2 * (energy - lagOneProduct) }

    /// Whether a window of `energy` and `slopeEnergy` (its first difference's) is the window
    /// remembered, within the tolerances. Real-time safe.
    @_noLocks
    func isUnchanged(energy: Float, slopeEnergy: Float) -> Bool {
        remembered && energy <= self.energy * energyRatio && energy * energyRatio >= self.energy
            && slopeEnergy <= self.slopeEnergy * slopeRatio && slopeEnergy * slopeRatio >= self.slopeEnergy
    }

    /// Remembers a window whose correlation read nothing in steady noise. Real-time safe.
    @_noLocks
    mutating func remember(energy: Float, slopeEnergy: Float) {
        self.energy = energy
        self.slopeEnergy = slopeEnergy
        remembered = true
    }

    /// Forgets it: the window was read, or is not in steady noise. Real-time safe.
    @_noLocks
    mutating func forget() { remembered = false }
}
