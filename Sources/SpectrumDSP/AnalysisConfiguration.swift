import Glibc
/// Every tunable value of the analysis, in units that mean the same at any sample rate.
///
/// Defaults reproduce the seed app (2048-point FFT at 48 kHz, 128 bands 20 Hz–20 kHz,
/// auto-levelling, smoothing 0.35/0.12 and peak fall 0.006 per 60 Hz frame).
/// The preset loader (`SpectrumPresets`) validates ranges per key; `Analyzer.init` checks
/// what depends on the sample rate.
public struct AnalysisConfiguration: Sendable, Equatable {
    /// Output frames per second. The analysis hop is `sampleRate / outputRateHz` frames.
    public var outputRateHz: Double = 60
    public var spectrum = SpectrumConfiguration()
    public var autoLevel = AutoLevelConfiguration()
    public var tilt = TiltConfiguration()
    public var ballistics = BallisticsConfiguration()
    public var level = LevelConfiguration()
    public var pitch = PitchConfiguration()
    public var rhythm = RhythmConfiguration()

    public init() {}
}

public struct SpectrumConfiguration: Sendable, Equatable {
    /// Length of the main (treble and mid) analysis window. 2048 frames at 48 kHz.
    public var windowMilliseconds: Double = 2048.0 / 48.0
    /// Length of the long window that feeds the bass bands (bands narrower than the main
    /// window's resolution). 512 frames of the ~3 kHz decimated signal.
    public var bassWindowMilliseconds: Double = 512.0 / 3.0
    public var bandCount: Int = 128
    public var minimumFrequencyHz: Double = 20
    public var maximumFrequencyHz: Double = 20_000

    /// The centre frequency of every band (what `Analyzer.bandCentreFrequenciesHz` gives),
    /// for outputs that map bands onto frequencies (WLED's channels). Allocates.
    public var bandCentreFrequenciesHz: [Double] {
        BandMap.centresHz(edges: BandMap.edgesHz(bandCount: bandCount, minimumFrequencyHz: minimumFrequencyHz, maximumFrequencyHz: maximumFrequencyHz))
    }

    public init() {}
}

/// Auto-levelling: the display ceiling follows the loudest band (instant rise, slow decay).
public struct AutoLevelConfiguration: Sendable, Equatable {
    /// Seed: 0.5 dB per audio frame at 44100/2048 frames per second ≈ 10.8 dB/s.
    public var decayDecibelsPerSecond: Double = 10.8
    public var minimumCeilingDecibels: Double = -60
    public var maximumCeilingDecibels: Double = 0
    /// Added above the tracked ceiling before normalising.
    public var headroomDecibels: Double = 5
    /// Height of the display window below the ceiling.
    public var rangeDecibels: Double = 40

    public init() {}
}

/// Music-mode spectral tilt: above `pivotHz`, + rate × octaves^power dB.
public struct TiltConfiguration: Sendable, Equatable {
    public var enabled: Bool = false
    public var pivotHz: Double = 200
    public var rateDecibels: Double = 5.0
    public var power: Double = 1.4

    public init() {}

    /// The boost in dB at `frequencyHz` (0 at and below the pivot). Not for the real-time path.
    public func boostDecibels(atFrequencyHz frequencyHz: Double) -> Double {
        guard frequencyHz > pivotHz else { return 0 }
        let octaves = log2(frequencyHz / pivotHz)
        return rateDecibels * pow(octaves, power)
    }
}

/// Asymmetric smoothing and peak-hold, as time constants so they hold at any output rate.
/// The seed's per-frame coefficients at 60 frames/s: attack 0.35 → τ = −(1/60)/ln(0.65),
/// decay 0.12 → τ = −(1/60)/ln(0.88); peak fall 0.006 per frame → 0.36 per second.
public struct BallisticsConfiguration: Sendable, Equatable {
    public var attackMilliseconds: Double = -1000.0 / 60.0 / log(0.65)
    public var releaseMilliseconds: Double = -1000.0 / 60.0 / log(0.88)
    public var peakFallPerSecond: Double = 0.006 * 60

    public init() {}
}

/// The VU scale of seed 002: −60..0 dBFS (RMS) mapped to 0..1.
public struct LevelConfiguration: Sendable, Equatable {
    public var vuFloorDecibels: Double = -60

    public init() {}
}

/// The tuner (seed 000): range, confidence threshold, gates and reference pitch.
public struct PitchConfiguration: Sendable, Equatable {
    public var enabled: Bool = true
    /// Lowest fundamental searched; the window holds 2.5 periods of it. Below E1 (41.2 Hz).
    public var minimumFrequencyHz: Double = 38
    /// Highest fundamental searched. Above C7 (2093 Hz).
    public var maximumFrequencyHz: Double = 2_200
    /// Minimum normalised correlation at the period for a confident estimate. 0.55 (the seed's
    /// 0.75 read pink noise at 10 dB SNR on 81 % of the tuning part's frames, 0.55 on 85 %;
    /// noise alone never reached it there; scripts/accuracy-pitch, docs/accuracy.md).
    public var confidenceThreshold: Double = 0.55
    /// Windows quieter than this (RMS, dBFS) never have a note. −100 dBFS sits under a 16-bit
    /// file's quantisation noise: the level-independent gate (`gateAboveNoiseFloorDecibels`)
    /// decides above it. A fixed gate (`--gate-db`) sets this and turns that gate off.
    public var silenceGateDecibels: Double = -100
    /// The gate relative to the input's own noise floor (`gateAboveNoiseFloorDecibels`);
    /// `--gate-db` turns it off for a fixed gate (`silenceGateDecibels`).
    public var noiseFloorGate: Bool = true
    /// Windows whose power above the input's noise floor (their mean square less the floor)
    /// is less than this, in dB relative to the floor, have no note: the gate weighs what could
    /// be a note, as a note's SNR against the floor. The floor follows the least noise a window
    /// held down at once and rises by 0.5 dB/s; a window's noise is the part its period does not
    /// explain, so a held note or a steady tone is no floor, while steady noise sits on it
    /// (mains hum is told by its frequency: `PitchDetector.mainsFrequenciesHz`). −3 dB keeps
    /// notes as loud as the noise (0 dB SNR: their power above the floor is at least the floor,
    /// 0 dB, as the floor lies at or under the noise's mean) once the floor has reached a
    /// steady noise (the gate on the window's whole power, 6 dB over the floor, silenced every
    /// note under ~5 dB SNR from then on), while the noise's own windows, scattered about the
    /// floor, mostly stay under it and skip the correlation.
    public var gateAboveNoiseFloorDecibels: Double = -3
    /// Windows whose energy falls faster than this have no note: a drum's decaying body looks
    /// perfectly periodic to a normalised correlation. Measured over ~50 ms of hops. 60 dB/s
    /// rejects decays faster than τ ≈ 145 ms (drums, note releases) and keeps plucked strings
    /// and pianos (τ ≥ 0.3 s: ≤ 30 dB/s); above 400 Hz the limit grows with the pitch (a
    /// piano's top octaves decay faster).
    public var percussiveDecayDecibelsPerSecond: Double = 60
    /// A window decaying faster than `percussiveDecayDecibelsPerSecond` has no note only when
    /// the power at the pitch read (its fundamental's bins in the long window's spectrum) falls
    /// faster than this too, over the same ~50 ms (0: the window's energy alone decides). A
    /// drum's body is that fundamental, and it decays with the window; after a plucked or
    /// bowed note's attack the pick's or bow's transient and the high partials die first
    /// (FluidR3's nylon guitar: the window falls 3–9 dB in 50 ms, 100–170 ms after the pluck),
    /// and at a legato step the last note fades while the new fundamental grows.
    public var percussiveFundamentalDecayDecibelsPerSecond: Double = 60
    /// Windows whose newest half holds less energy than their oldest half by more than this
    /// rate (dB/s between the halves' centres, each a whole number of periods) have no note:
    /// they hold a hit, a snare's or a drum's stroke, while the look-back above still sees the
    /// hit in both windows (~60 ms). Notes' own decays and tremolo stay under ~200 dB/s within
    /// a window; above 400 Hz the limit grows with the pitch, as the one above.
    public var hitDecayDecibelsPerSecond: Double = 300
    /// A falling pitch is a drum's body, not a note, when it has fallen by more than
    /// `fallingPitchCents` since the sound's energy last rose, at a mean rate above
    /// `fallingPitchCentsPerSecond` over all the time since, while the window's energy falls faster
    /// than `fallingPitchDecayDecibelsPerSecond`: a tom's body glides down from its stroke on
    /// (FluidR3's 141 → 119 Hz, 290 cents, in 180 ms) and repeats at its period as well as a
    /// plucked string. Each chosen on the tuning part of `scripts/accuracy-pitch`
    /// (docs/accuracy.md, Pitch, finding 16). 40 cents: over a vibrato's swing from where a note
    /// was struck (at 30 cents voices lose frames).
    public var fallingPitchCents: Double = 40
    /// 800 cents/s (0 = off): the highest limit tried that takes every tom of the tuning part's
    /// kit for a drum (its slowest falls at 920 cents/s), eight times a peg turned for drop D; a
    /// bend released or a whammy dive after the note has rung ~0.3 s falls slower on average.
    public var fallingPitchCentsPerSecond: Double = 800
    /// 10 dB/s: a drum decays (its slowest tom 17 dB/s), while a note in loud noise whose
    /// estimates wander keeps its window's energy (pink noise at 0 dB lost frames without it).
    public var fallingPitchDecayDecibelsPerSecond: Double = 10
    /// A pitch that has risen more than this (cents) above its lowest since the last attack (a
    /// window energy rise over 1.5 dB in ~50 ms) turns back up: a singer's vibrato, not a drum's
    /// body, whose pitch only falls from its stroke on. Its falls then count for neither the
    /// falling-pitch term nor the membrane score's glide (0 = every fall counts). 15 cents: 10
    /// and 15 gave the tuning part's notes back alike (voice 79.10 → 79.23 %), 20–60 fewer; no
    /// drum frame changed at any value (docs/accuracy.md, Pitch, finding 28).
    public var fallingPitchRiseCents: Double = 15
    /// A window is a stroke dying, not a note, when it repeats at its period no better than this
    /// (normalised correlation r: 1 − r of its energy is aperiodic) while its newest half holds
    /// `strokeEnergyFallDecibels` less energy than its oldest: a snare's wires, a stick's click or
    /// a cymbal over a drum's body is a broadband burst dying within the window. 0.8: a note in
    /// noise at 0 dB SNR reads below it but holds its energy, and from 0.85 up notes in pink noise
    /// lost frames on the tuning part (docs/accuracy.md, Pitch, finding 19). 0 = off.
    public var strokeMaximumCorrelation: Double = 0.8
    /// The fall (dB) from the energy of a window's oldest half to its newest (whole periods, as
    /// `hitDecayDecibelsPerSecond`'s) that makes an aperiodic window a stroke dying: 6 dB, where
    /// 5 took frames of notes in pink noise at 0 dB SNR on the tuning part. (A rise as well, a
    /// stroke arriving, took violin, cello and guitar attacks: not counted.)
    public var strokeEnergyFallDecibels: Double = 6
    /// A snare roll's window holds one stroke dying as the next arrives, so its halves hold
    /// alike: an aperiodic window (`strokeMaximumCorrelation`) whose energy, in blocks of whole
    /// periods (5 ms or more), falls by more than this from its oldest block to its quietest
    /// (a stroke dying) and spreads by more than `strokeArrivalSpreadDecibels` from the quietest
    /// to the loudest, while its newest 14.7 ms do not repeat at the period, is a stroke: no note.
    /// 2 dB: a note's attack rises from its oldest block (0 and 1 dB took attack frames of
    /// violin and cello on the tuning part; docs/accuracy.md, Pitch, finding 23).
    public var strokeArrivalFallDecibels: Double = 2
    /// The spread (dB) from the quietest to the loudest block of an aperiodic window that makes it
    /// a stroke dying as the next arrives (`strokeArrivalFallDecibels`): 10 dB, FluidR3's rolls
    /// 9–16 dB (5th to 95th percentile); at 8 sung notes in pink noise lost frames. 0 = off.
    public var strokeArrivalSpreadDecibels: Double = 10
    /// A window is a struck membrane ringing (a tom's body), not a note, when its fundamental
    /// (the spectral main lobe about the pitch read) holds more than this share of its energy
    /// while the rest does not repeat at the period (`membraneAperiodicShare`): a tom's body is
    /// a near-pure tone whose overtones are inharmonic (a membrane's modes, 1.59, 2.14, 2.30 ×
    /// f0), while a plucked or struck string's energy beyond its fundamental lies at harmonics
    /// and repeats. Chosen on the tuning part (docs/accuracy.md, Pitch, findings 21 and 39: 0.8
    /// on the first set of drum fills; 0.7 on three, which left every note condition within
    /// 0.2 points). 0 = off.
    public var membraneFundamentalShare: Double = 0.7
    /// The share of a window's energy beyond its fundamental that must fail to repeat at the
    /// period, (1 − r) / (1 − fundamental share), for a near-pure window to be a membrane
    /// (`membraneFundamentalShare`). A note's overtones repeat (the tuning part's correct clean
    /// estimates under 400 Hz: 0.014 median, 0.2 at the 95th percentile); in loud noise the
    /// noise does not, hence a high share: 0.5 took frames of notes in pink noise at 10 dB SNR
    /// (docs/accuracy.md, Pitch, finding 21).
    public var membraneAperiodicShare: Double = 0.8
    /// A membrane decays, a new note rises: the window's energy rise over the decay look-back
    /// (~50 ms), in dB, over this counts against the membrane score (20: a rise of 20 dB takes a
    /// whole unit off it; a fall counts for nothing). A singer's or flute's legato step (the
    /// last note still in the window, a second tone that does not repeat at the new period) is
    /// a new note rising: 2–9 dB at the tuning part's voice oohs. A tom's body whose window
    /// still fills with its stroke rises ~1 dB (median): the condition this term replaced (the
    /// energy must fall) let those read. Chosen on the tuning part (docs/accuracy.md, Pitch,
    /// finding 41). 0: any rise makes the window no membrane (the condition before).
    public var membraneRiseDecibels: Double = 20
    /// A membrane's body glides down as it rings (its tension falls with its amplitude), a
    /// string's or a bar's pitch holds: the membrane score adds to the aperiodic share (over
    /// `membraneAperiodicShare`) the pitch's mean fall since the energy last rose, in cents per
    /// second, over this (and takes off the energy's rise, `membraneRiseDecibels`).
    /// FluidR3's toms that still read were near-pure (share 0.85–0.96) and repeating (r
    /// 0.95–1.00) while falling; 800, the falling-pitch term's rate, refused 35 of their 216
    /// frames, 400 and 600 a few more for many more sung frames (docs/accuracy.md, Pitch,
    /// finding 26). 0 = off (the aperiodic share alone).
    public var membraneGlideCentsPerSecond: Double = 800
    /// Once a drum is found — its stroke or hit in the window (`.stroke`) or its body gliding
    /// down (`fallingPitchCents`) — what rings on is that drum until the next attack (the
    /// window's energy rising 1.5 dB over ~50 ms), for at most this many seconds: no note. A
    /// tom's tail, once its glide has flattened and its modes have died, is a near-pure tone
    /// that repeats like a string's; its stroke is what told it. Two exceptions: the note read
    /// within ~100 ms before the drum was found (a drum struck over a held note: it goes on),
    /// and a window full of steady noise (where a new note's attack may not show as a rise).
    /// Chosen on the tuning part (docs/accuracy.md, Pitch, finding 43). 0 = off.
    public var drumRingSeconds: Double = 1
    /// A4 in Hz; 415–466 allowed.
    public var referenceHz: Double = 440
    /// Semitones the player's written note lies above the sounding one (B♭ instrument: 2, E♭
    /// alto saxophone: 9, F horn: 7); −48…48. `PitchReading.writtenNoteNumber`.
    public var transposeSemitones: Int = 0
    /// The temperament: cents by which each pitch class (C = 0 … B = 11) lies above equal
    /// temperament, A at 0 so the reference pitch stays; 12 values, or empty for equal
    /// temperament (`Temperament` reads them from a Scala .scl file).
    public var temperamentCents: [Double] = []
    /// String mode: the open strings' MIDI notes, lowest first, at most 8; empty = off.
    public var stringNotes: [Int] = []

    public init() {}
}

/// Onsets, tempo and beats (seed 000's beat section, plus beat phase and triggers; docs/dsp.md,
/// "Onsets, tempo and beats"). Every value is in seconds, milliseconds or BPM and converted with
/// the real sample rate and hop. `Analyzer.init` rejects inconsistent values.
public struct RhythmConfiguration: Sendable, Equatable {
    /// Runs onset, tempo and beat analysis (stages 8–10); when off the frame's `onset`, `tempo`
    /// and `beat` stay empty.
    public var enabled: Bool = true
    /// Threshold of the reported onsets: the onset signal (or a high transient's rise in the
    /// samples) must exceed mean + k·σ of its recent history (k; the beat grid's onsets use the
    /// seed's 1.5).
    public var onsetThresholdDeviations: Double = 1.0
    /// Time constant of the running mean and σ behind the onset threshold (seed: ~10 s).
    public var onsetStatisticsSeconds: Double = 10
    /// Shortest time between two onsets (seed: 100 ms, i.e. 600 onsets per minute).
    public var onsetMinimumGapMilliseconds: Double = 100
    /// Slowest and fastest tempo ever reported (20 ≤ minimum, maximum ≤ 400, maximum ≥ 1.5 × minimum).
    public var minimumBpm: Double = 60
    public var maximumBpm: Double = 180
    /// Where a tempo is preferred when it and its double (or half) are about equally supported
    /// by the autocorrelation (the faster wins when both or neither lie here). Must overlap the
    /// BPM range. The default only disfavours the slow end: an ambiguous 70/140 reads 140, an
    /// ambiguous 87/174 reads 174; set e.g. 60–110 for hip-hop or ballads.
    public var preferredMinimumBpm: Double = 80
    public var preferredMaximumBpm: Double = 180
    /// Minimum confidence for a tempo estimate (0..1): the mean normalised autocorrelation of
    /// the onset signal at 1, 2, 3 and 4 beat periods. Noise stays below ~0.3 in its first
    /// estimates and ~0.15 later; steady grooves read 0.3–1.
    public var minimumConfidence: Double = 0.25
    /// Memory of the running autocorrelation (time constant): longer is steadier, shorter follows
    /// tempo changes sooner.
    public var tempoMemorySeconds: Double = 3
    /// Beats per bar for the beat-in-bar counter (4/4 by default; 1 to 32). The count starts at
    /// the first beat after locking: the downbeat is not detected.
    public var beatsPerBar: Int = 4
    /// Beat events (and the beat phase) are reported this much before the predicted beat, so
    /// that lights driven by them land on the audible beat. 0 to 500 ms.
    public var leadMilliseconds: Double = 0

    public init() {}
}

/// A configuration that cannot run at the given sample rate.
public struct AnalysisConfigurationError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
