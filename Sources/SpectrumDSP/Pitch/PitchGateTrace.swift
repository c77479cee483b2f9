#if SPECTRUM_PITCH_TRACE
import Glibc

/// A developer's trace of the tuner's drum gates, compiled only with `-DSPECTRUM_PITCH_TRACE`
/// (`scripts/accuracy/pitch-gate-evidence` builds it so): it writes from the real-time path, so
/// no build that runs live ever contains it. One line per hop that reaches the gates: the hop
/// (counted from 1), then `Evidence` in field order, to the file named by the environment
/// variable `SPECTRUM_PITCH_TRACE` (nothing when unset).
enum PitchGateTrace {
    /// What each gate saw on one hop; evidence against a limit reads 1 at the limit.
    struct Evidence {
        var frequencyHz: Float
        /// r at the period read.
        var correlation: Float
        /// The window's energy over the decay look-back's (~50 ms earlier).
        var energyRatio: Float
        var decayEvidence: Float
        var continuesPreviousReading: Bool
        var hitEvidence: Float
        var halvesStepDecibels: Float
        var isStroke: Bool
        var fundamentalShare: Float
        var membraneEvidence: Float
        var pitchFalls: Bool
        /// The ring of a drum found since the last attack (`PitchDetector.ringsOnAfterDrum`).
        var ringsOnAfterDrum: Bool
    }

    nonisolated(unsafe) private static var file: UnsafeMutablePointer<FILE>? = getenv("SPECTRUM_PITCH_TRACE").flatMap { fopen($0, "w") }
    nonisolated(unsafe) private(set) static var hop = 0

    static func startHop() { hop += 1 }

    static func write(_ evidence: Evidence) {
        guard let file else { return }
        let e = evidence
        let fields: [Float] = [e.frequencyHz, e.correlation, e.energyRatio, e.decayEvidence, e.continuesPreviousReading ? 1 : 0,
                               e.hitEvidence, e.halvesStepDecibels, e.isStroke ? 1 : 0, e.fundamentalShare, e.membraneEvidence,
                               e.pitchFalls ? 1 : 0, e.ringsOnAfterDrum ? 1 : 0]
        fputs(([String(hop)] + fields.map { String($0) }).joined(separator: " ") + "\n", file)
        fflush(file)
    }
}
#endif
