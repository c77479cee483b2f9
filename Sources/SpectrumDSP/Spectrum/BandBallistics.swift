import Glibc
import SpectrumCore

/// Asymmetric exponential smoothing (fast attack, slow release) and a falling peak-hold for
/// each band (seed 003, stage 8), with coefficients derived from time constants and the hop.
/// `init` allocates; `update` is real-time safe.
struct BandBallistics: ~Copyable {
    let smoothed: RealtimeBuffer
    let peaks: RealtimeBuffer
    private let attackCoefficient: Float
    private let releaseCoefficient: Float
    private let peakFallPerHop: Float

    init(bandCount: Int, configuration: BallisticsConfiguration, hopSeconds: Double) {
        smoothed = RealtimeBuffer(count: bandCount, repeating: 0)
        peaks = RealtimeBuffer(count: bandCount, repeating: 0)
        attackCoefficient = Float(Self.coefficient(timeConstantMilliseconds: configuration.attackMilliseconds, hopSeconds: hopSeconds))
        releaseCoefficient = Float(Self.coefficient(timeConstantMilliseconds: configuration.releaseMilliseconds, hopSeconds: hopSeconds))
        peakFallPerHop = Float(configuration.peakFallPerSecond * hopSeconds)
    }

    /// The per-hop step 1 − exp(−hop/τ) of a one-pole smoother with time constant τ.
    static func coefficient(timeConstantMilliseconds: Double, hopSeconds: Double) -> Double {
        1 - exp(-hopSeconds * 1000 / timeConstantMilliseconds)
    }

    /// Moves each band toward `targets` and updates the peaks. Real-time safe.
    @_noLocks
    func update(targets: UnsafePointer<Float>) {
        for band in 0..<smoothed.count {
            let current = smoothed[band]
            let target = targets[band]
            let coefficient = target > current ? attackCoefficient : releaseCoefficient
            let next = clampUnit(current + (target - current) * coefficient)
            smoothed[band] = next
            peaks[band] = next > peaks[band] ? next : max(0, peaks[band] - peakFallPerHop)
        }
    }

    @_noLocks
    func reset() {
        smoothed.fill(with: 0)
        peaks.fill(with: 0)
    }
}
