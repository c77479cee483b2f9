import Glibc

/// The tuner's one octave decision: which candidate period is the note's. The candidates are
/// the long window's first key maximum P, the octave below it (2P: the local maximum near the
/// held period when that is about 2P, else near 2P), the octave above it (P/2, read as a note
/// plus a mutation: measured on P, whose wave repeats exactly) and the short window's reading.
/// Each is scored in nats of correlation — ln r at its period — plus the evidence terms of
/// `Parameters`; the highest score wins (ties: the order above). Evidence that costs a
/// spectral measurement (`PitchDetector.fundamentalPowerRatio`) is measured only when it can
/// change the winner, so most hops measure nothing (`PitchDetector.decideOctave`).
/// Real-time safe (arithmetic only).
struct OctaveDecision {
    /// The weights of the decision. A weight of 1 on a term means a candidate needs a
    /// correlation e (2.7) times as high to make up for it; costs of 4 are vetoes (r ≤ 1 and
    /// r ≥ 0.55 at any candidate, so ln r differs by at most 0.6 between long-window ones).
    /// Defaults: the rules they replaced, chosen on the FluidR3 corpus (the tuning part of
    /// `scripts/accuracy-pitch`) and the synthetic tests only.
    struct Parameters {
        /// Nats the octave below pays: the wave must repeat 5 % better at twice the period
        /// (e^0.05). The key-maximum rule takes the shortest lag within 10 % of the highest, so a
        /// weak fundamental (an organ's upper ranks first, a choir's beating ensemble) reads an
        /// octave up without this candidate; 2.5 % flipped guitars' notes after a ringing one down.
        var octaveBelowCost: Float = 0.05
        /// Nats the octave below pays when the window holds no partial at its frequency within
        /// `octaveBelowPowerRatio` of the power at twice it: a missing-fundamental tone keeps its
        /// pitch. Not asked of the held period (a note already read keeps its octave: a low
        /// string's fundamental and odd partials fade while its half period repeats better).
        var unsupportedOctaveBelowCost: Float = 4
        /// −20 dB: a note's own fundamental, not leakage or noise.
        var octaveBelowPowerRatio: Float = 0.01
        /// Where the input holds steady noise, the octave below's partial must also stand this
        /// many times over the noise floor per bin of its band (`NoiseWeighting.steadyFloorPerBin`:
        /// a minimum, ~0.4 of the noise's mean for 8 bins): loud pink noise fills the octave
        /// below's bins within −20 dB of the note's fundamental, so the note read an octave low
        /// wherever r at twice its period came out higher. The strongest of three bins of noise
        /// alone passes 16 floors (~6.4 times a bin's mean) on about 1 hop in 200. 8 and 32 read
        /// within 0.07 points of it on the tuning part (docs/accuracy.md, pitch finding 50).
        var octaveBelowOverSteadyNoiseRatio: Float = 16
        /// The octave below f is the note, paying neither `octaveBelowCost` nor
        /// `unsupportedOctaveBelowCost`, where its window holds its odd partials: the power at 3 f
        /// and 5 f at least this share (−20 dB) of that at 2 f and 4 f. A wave that repeats at
        /// the first key maximum has nothing there but leakage (Hann: −31 dB at worst, its first
        /// sidelobe); an organ's low note while its 8' speaks under its upper ranks (its first
        /// 100–300 ms) holds them at −5 to −18 dB, its fundamental −15 to −29 dB under its
        /// second partial and r at its period only 1–4 % above r at half of it (docs/accuracy.md,
        /// pitch finding 53). −25 and −15 dB read worse on the tuning part.
        var oddPartialsPowerRatio: Float = 0.01
        /// The odd partials are asked only where r at the octave below reaches this: a window
        /// the noise leaves fairly clean. An organ's attack, its 8' speaking in, repeats there
        /// at r 0.83–0.93. Asked in every window, they read 100–330 more tuning frames an octave
        /// low at pink 10 dB, even with an odd partial asked to stand 16 floors over its band's
        /// noise (pitch finding 53); with the fundamental asked −25 dB
        /// (`oddPartialsFundamentalPowerRatio`), 0.85 read best of 0.75–0.95 on the tuning part
        /// (all conditions; 0.75 and 0.8 alike on the list; pitch finding 54).
        var oddPartialsMinimumCorrelation: Float = 0.85
        /// −25 dB: the octave below's fundamental must still sound to be supported by its odd
        /// partials (an organ's quint, at 3/2 of a note, is an odd partial of the octave under
        /// the note, where nothing sounds; a previous note a fifth above, still ringing, is one
        /// too). −27 and −23 dB read worse on the tuning part (pitch finding 54).
        var oddPartialsFundamentalPowerRatio: Float = 0.003
        /// Nats for the held period once the note is established (`establishedNoteSeconds`), its
        /// fundamental still sounds (`establishedPowerRatio`) and does not fade
        /// (`establishedFadeRatio`): held whatever r at the half period (steel guitar G2's
        /// fundamental sits 24 dB under its second partial and the half period repeats as well).
        var establishedBonus: Float = 1
        /// ~150 ms: longer than the octave-below growl of a saxophone's attack (50–150 ms),
        /// which must not be held.
        var establishedNoteSeconds = 0.15
        /// −30 dB under the power at twice the held pitch: the fundamental still sounds
        /// (steel guitar G2 −24 dB, the organ's A2 −14 to −22 dB when their half period wins).
        var establishedPowerRatio: Float = 1e-3
        /// The held fundamental's power over ~50 ms falling under this share (−12 dB) ends the
        /// note (a bass's B1 → B2 legato: the old fundamental falls 20 dB, a string ~1 dB; the
        /// bins swing several dB from hop to hop when a partial lies near, so not −6 dB).
        var establishedFadeRatio: Float = 0.063
        /// Nats the octave above pays (ln 2 − `absentFundamentalCost` off the first key
        /// maximum): it is taken only when P has no fundamental and r at P/2 reaches half r
        /// at P. The key-maximum rule passed P/2 over, so it does not win on r alone.
        var octaveAboveCost: Float = 0.307
        /// Nats a long-window period pays when the window holds no partial at its frequency
        /// (`absentFundamentalPowerRatio`): a note plus a mutation (an organ's quint adds
        /// partials at 3/2 of the note, so the wave repeats an octave below it). The octave
        /// below P pays it too when P's is absent: it would lack its own second partial.
        var absentFundamentalCost: Float = 1
        /// −45 dB: the organ's octave-down readings measure −69 dB (median; p90 −54) in the
        /// FluidR3 corpus, real notes below 400 Hz never under −42 dB.
        var absentFundamentalPowerRatio: Float = 3.2e-5
        /// P's fundamental must stand this far (10 dB) above the median power at 0.75, 1.25 and
        /// 1.75 times its frequency (no partial there: noise and leakage) to count as present
        /// (`PitchDetector.fundamentalPowerRatio`).
        var partialOverReferenceRatio: Float = 10
        /// Frequency resolutions (sample rate / window frames) a quarter of the frequency must
        /// span for that comparison: below, the partial's own main lobe (2 resolutions wide each side with
        /// the Hann window) reaches the reference.
        var partialReferenceMinimumBins: Float = 3
        /// r at P/2 under this share of r at P: the pitch's odd partials carry over a third of
        /// the energy (a missing-fundamental tone), so P/2 is no candidate and P's fundamental
        /// is not measured.
        var octaveAboveMinimumShare: Float = 0.5
        /// Nats the short window's reading pays: a 14.7 ms window, not refined; it wins only
        /// where the long window's readings are vetoed (or it has none).
        var shortWindowCost: Float = 2
        /// Nats a long-window reading pays when it lies more than `staleSemitoneRatio` under a
        /// confident short-window reading of at least `staleOverruleHz`: the long window still
        /// repeats at the last note's period, or one common to both notes.
        var staleWindowCost: Float = 4
        /// 300 Hz: twice the short window's lowest note, so its lags reach its own octave below
        /// and a window repeating there would have read it. Below, a low note's short window
        /// reads its harmonic (octave errors +1.4 points from 150 Hz on the FluidR3 corpus).
        var staleOverruleHz: Float = 300
        var staleSemitoneRatio: Float = 1.0595
        /// Nats a long-window period pays when it is a multiple (2 or more, within
        /// `legatoMultipleTolerance`) of the short window's confident period while the long
        /// window does not repeat at that period at all (r < `legatoMixtureCorrelation`): it
        /// holds one note's end and the next one's start and repeats at a period common to
        /// both, a note nobody played (G3 → D4 legato repeats at G2).
        var legatoMixtureCost: Float = 4
        var legatoMixtureCorrelation: Float = 0.5
        /// Equal temperament's fifth and fourth are 0.1 % off the 3/2 and 4/3 that repeat.
        var legatoMultipleTolerance: Float = 0.015
    }

    /// What a candidate is, also the order ties are broken in (plain integers: an enum's
    /// equality goes through its metadata, which the real-time checks forbid).
    enum Kind {
        static var firstKeyMaximum: Int { @_noLocks get { 0 } }
        static var octaveBelow: Int { @_noLocks get { 1 } }
        static var octaveAbove: Int { @_noLocks get { 2 } }
        static var shortWindow: Int { @_noLocks get { 3 } }
        static var count: Int { @_noLocks get { 4 } }
    }

    /// One candidate: its score so far and the bounds the unmeasured evidence leaves it.
    struct Candidate {
        /// `Kind`.
        var kind: Int
        /// Whether this candidate exists this hop.
        var exists = false
        /// The long window's lag the reading is measured on (0 for the short window).
        var lag = 0
        /// The note's period in frames (interpolated; half `lag`'s for the octave above).
        var periodFrames: Float = 0
        /// The score with the evidence measured so far, and how much the evidence still to be
        /// measured may add (`upside`) or take away (`downside`).
        var score: Float = 0
        var upside: Float = 0
        var downside: Float = 0

        @_noLocks
        init(kind: Int) { self.kind = kind }

        var optimistic: Float { @_noLocks get { score + upside } }
        var pessimistic: Float { @_noLocks get { score - downside } }
        var resolved: Bool { @_noLocks get { upside == 0 && downside == 0 } }
    }

    /// The four candidates, indexed by `Kind` (fixed storage: no allocation).
    struct Candidates {
        private var candidates: (Candidate, Candidate, Candidate, Candidate)

        @_noLocks
        init() {
            candidates = (Candidate(kind: Kind.firstKeyMaximum), Candidate(kind: Kind.octaveBelow),
                          Candidate(kind: Kind.octaveAbove), Candidate(kind: Kind.shortWindow))
        }

        subscript(kind: Int) -> Candidate {
            @_noLocks get {
                switch kind {
                case 0: candidates.0
                case 1: candidates.1
                case 2: candidates.2
                default: candidates.3
                }
            }
            @_noLocks set {
                switch kind {
                case 0: candidates.0 = newValue
                case 1: candidates.1 = newValue
                case 2: candidates.2 = newValue
                default: candidates.3 = newValue
                }
            }
        }

        /// The existing candidate with the highest optimistic score (ties: the lower kind),
        /// nil when none exists.
        @_noLocks
        func leader() -> Int? {
            var best = -1
            for kind in 0..<Kind.count where self[kind].exists {
                if best < 0 || self[kind].optimistic > self[best].optimistic { best = kind }
            }
            return best < 0 ? nil : best
        }

        /// Whether another existing candidate may still beat `kind` once `kind`'s evidence is
        /// measured (its optimistic score reaches `kind`'s pessimistic one; ties go to the
        /// lower kind).
        @_noLocks
        func isContested(_ kind: Int) -> Bool {
            let floor = self[kind].pessimistic
            for other in 0..<Kind.count where other != kind && self[other].exists {
                let rival = self[other].optimistic
                if other < kind ? rival >= floor : rival > floor { return true }
            }
            return false
        }
    }

    /// ln r from r·|r| (the correlation's stored signed square); nil when r ≤ 0.
    @inline(__always) @_noLocks
    static func logCorrelation(signedSquare: Float) -> Float? {
        guard signedSquare > 0 else { return nil }
        return 0.5 * _unsafePerformance { logf(signedSquare) }
    }
}
