import Glibc
import SpectrumCore

/// Tempo from the autocorrelation of the onset signal (seed 000, after Scheirer 1998 and Ellis
/// 2007), computed incrementally so that no hop does more than O(lags) work.
///
/// Per hop: the onset signal is log-compressed (`ln(1 + 10x)`), detrended (minus its mean over
/// the last 2 s), and every lag's autocorrelation is updated recursively
/// (`RunningAutocorrelation`, β = 1 − exp(−hop/τ), τ = `tempoMemorySeconds`, or
/// `Parameters.fadingMemorySeconds` while the shown tempo's evidence fades, and
/// `Parameters.fadingHoldSeconds` after, `Parameters.changeHoldSeconds` after another tempo
/// was agreed meanwhile); the hat band's
/// onset signal likewise, over one period of the slowest tempo. Hops where the music does not
/// play (`followMusicLevel`: a break) are missing data to both, not zeros, and when the music
/// resumes the shown tempo is reviewed from fresh evidence.
/// Every `estimateIntervalSeconds` (`Parameters.fadingEstimateIntervalSeconds` while the shown
/// tempo's evidence fades or is under review) a tempo estimate is read from it: the most salient period in
/// the BPM range, then one scored decision among the periods related to it by 1, 2, ½, 3⁄2, ⅔,
/// 3, ⅓, ¾ and 4⁄3 and the shown tempo's (`candidateScore`, weights in `Parameters`), a
/// confidence (`A[peak] / A[0]`) and a silence gate (variance of the raw onset signal). One of
/// the decision's terms is the beat grid's octave evidence (`GridOctaveEvidence`, measured by
/// `BeatTracker` on its onsets): each estimate turns it into an opinion on the pair of octaves
/// the grid runs between, and a running mean of those opinions per pair (`octaveMemory`) is
/// weighed for the pair's slower octave, so what the grid showed at one octave still counts
/// at the other (a one-drop read at 140 leaves every other beat empty; read at 70 its skank
/// chords look like a two-step's snares); a contrary opinion moves it less the more opinions
/// (and the move they made) stand behind it, so one does not undo a move. A new opinion
/// against the memory brings the estimate forward, and an octave move the memory chose is
/// taken without waiting for a second estimate. Otherwise the shown tempo changes only when two of the
/// last three estimates agree within ±5 BPM; estimates more than 10 BPM from the shown tempo (or
/// without a tempo) for 1 s (three in a row at the regular interval) drop the lock and restart the autocorrelation — or, while the
/// shown tempo's evidence fades (a tempo change), restart the autocorrelation and keep the shown
/// tempo until two estimates agree again (`Parameters.reviewSeconds`). When the music stopped
/// (no onset on the beat grid for more than a bar and the level far under its loudest:
/// `musicStopped`), the lock is dropped at once.
///
/// `init` allocates; `update` is real-time safe.
struct TempoEstimator: ~Copyable {
    /// The weights of the one tempo decision (`candidateScore`). Scores are in nats of
    /// autocorrelation: a weight of 1 on a `ln` term means a candidate e times as salient gains 1.
    /// Chosen on the tuning part of `scripts/accuracy-tempo` and the synthetic tests only.
    struct Parameters {
        /// Per nat of comb salience (mean autocorrelation at 1–4 periods): half weight, since a
        /// slower period's comb reaches longer lags (whole bars), which always repeat.
        var salienceWeight: Float = 0.5
        /// Per nat of the autocorrelation at the period itself: a double tempo whose half-beats
        /// hold little loses; a click track (every half-beat empty) keeps its tempo.
        var beatCorrelationWeight: Float = 1
        /// Floor of the correlations before the log (an empty lag costs ln 0.05 ≈ −3, not −∞).
        var correlationFloor: Float = 0.05
        /// Per octave slower than the most salient period: of two octaves the faster wins
        /// unless the slower's period correlates e^1.6 ≈ 5× more (the seed's 20 % octave ratio).
        var costPerOctaveSlower: Float = 1.6
        /// Per octave outside the preferred BPM range (the configuration's, 80–180 by default):
        /// a tie-breaker, not a wall (slow ballads exist).
        var costPerOctaveOutsidePreferred: Float = 0.6
        /// Hats on every beat of half the period and never between (its eighths), in a duple
        /// metre: for the period; on every beat of the period: against it (its double's
        /// eighths). Together (2 × 2.5) they outweigh the octave cost of a slow ballad.
        var hatWeight: Float = 2.5
        /// The difference of the autocorrelation at a beat and at half of it at which the hats'
        /// evidence counts in full (`accentContrast`; none at 0: a click train's clicks are
        /// alike, whatever the hat band hears of them; slow rock's beats differ by 0.03–0.05).
        var fullAccentContrast: Float = 0.03
        /// Per nat of the bar's repetition (`barRepetition`: the largest autocorrelation at 2, 3
        /// or 4 periods): the metre's evidence. Funk's dotted-eighth pulse (4⁄3 of the beat)
        /// correlates more at its period than the beat does, but its "bar" repeats less
        /// (4 on point readings; the box narrows the ratios: 7 and 13 each lose a track; with
        /// the bar read over 2 lags, 8 locked `funk-100` 0.5 s later and 13 lost a track).
        var barWeight: Float = 10
        /// A period slower than the most salient one by a third (⅔, ⅓, ¾) pays this unless its
        /// bar repeats more strongly by `thirdsBarMargin`: only the metre makes a third win.
        var thirdsCost: Float = 0.5
        var thirdsBarMargin: Float = 0.02
        /// Width (lags) of the box over which the decision reads the autocorrelation: an onset
        /// falls anywhere within its hop, so a period between two whole lags splits between them
        /// and reads low at a point (funk read at its dotted eighth, 4⁄3, where that lasts whole
        /// hops and the beat does not; docs/accuracy.md, tempo finding 9). 1.0 and 1.2 left
        /// `funk-108` at 4⁄3, 1.5 lost locks (tuning part).
        var boxWidthLags: Float = 1.3
        /// Width (lags) of the window over which each multiple of the bar (`barRepetition`) is
        /// read: a bar of 2–4 beats lands anywhere between two whole lags, and its repetitions
        /// split between them (funk read at its dotted-eighth pulse, 4⁄3, whose bar lags are
        /// whole: tempo finding 17). 1.45–1.8 fixed `funk-108`'s late 4⁄3 and changed no other
        /// track of the tuning part; 2.0 and wider locked three tracks 0.5 s later.
        var barWindowLags: Float = 1.6
        /// For the shown tempo (hysteresis: another period must be clearly better to take over).
        /// The evidence wanders by about ±0.3 nats between estimates 0.5 s apart (tempo finding
        /// 15), so a smaller bonus lets noise take over: at 0.1 the synthetic half-time trap at
        /// 140 read 70 for 1 s at 44.1 kHz with the bar's window; 0.5 held `funk-108`'s early
        /// 4⁄3 0.5 s longer (tuning part).
        var shownBonus: Float = 0.3
        /// When the shown tempo's comb salience falls below this share of the highest it has
        /// had since it was agreed, its evidence is fading (the music changed tempo or stopped
        /// repeating), and the autocorrelation forgets with `fadingMemorySeconds` instead of the
        /// configured memory: with τ = 3 s a change's old period outweighed the new one for
        /// ~3 s (docs/accuracy.md, tempo finding 11). 0.9 caught steady grooves' dips (two
        /// tracks of the tuning part lost their lock), 0.85 one track's late lock.
        var fadingSalienceShare: Float = 0.8
        /// The autocorrelation's memory (s) while the shown tempo's evidence is fading: the new
        /// period takes over ~1 s sooner; 0.7 was as fast on the tuning part but slower on
        /// synthetic changes (more estimates without a tempo), 1.5 gained half as much.
        var fadingMemorySeconds: Double = 1.0
        /// How long (s) the short memory lasts after the evidence stops fading and recovers (the
        /// same tempo): funk's dotted-eighth pulse (4⁄3) wins on the short lags if the memory
        /// turns long at once (docs/accuracy.md, tempo finding 11). 0.5 (one estimate) re-locked
        /// the tuning part's changes in 2.9 / 4.3 s (median / worst), 1.0 in 2.9 / 4.8 s, 1.5 and
        /// 2.0 in 2.9 / 5.3 s; with today's faster clock 1.0–2.5 cost its hip-hop change 92 → 76
        /// 0.8–1.3 s (a dip before the change kept the memory short into it, and the review
        /// came early, on too little data: tempo finding 30).
        var fadingHoldSeconds: Double = 0.5
        /// How long (s) the short memory lasts after another tempo was agreed while the shown
        /// one's evidence faded (a change): that agreement was read from bar lags (2–4 beats)
        /// that still pair onsets from both sides of the change, which favours a pulse whose bar
        /// lags are shorter (funk's dotted eighth, 4⁄3), and with the long memory back at once
        /// the new beat's bar outweighed the pulse's only 2–4 s later (tempo finding 30). Gapless
        /// synthetic changes of funk with dotted-eighth kicks (`SpectrumBench changes`), re-lock
        /// 0.5 → 1.0 → 1.5 s: 3.1–7.6 s and two never → 3.1–5.1 s, one never → 3.1–4.6 s, one
        /// never (a steady 88 read at its double); 2.0 and 2.5 as 1.5; rock and plain funk the
        /// same for each. The tuning part's funk changes were best at 1.5 (116 → 102: 10.2 →
        /// 7.2 s; 2.0–4.0 read 94 → 106 8.7 s instead of 5.9), its other tracks the same for each.
        var changeHoldSeconds: Double = 1.5
        /// How long (s) a lock that diverges while its evidence fades is kept under review
        /// instead of dropped: the onset autocorrelation restarts at once (with the short memory,
        /// so it is read again after one estimate instead of two), the shown tempo stays until two
        /// estimates agree, and only if none do within this time is the lock dropped. Dropping it
        /// showed no tempo for 1.5–2 s after every such change and cost a second of warm-up
        /// (docs/accuracy.md, tempo finding 18). 2 s and 3 s gave the same on the synthetic
        /// changes and the tuning part; 1 s dropped the lock again on funk 98 → 112 and
        /// 128 → 140 (6.0 and 5.0 s), 1.5 s on 128 → 140 (5.5 s).
        var reviewSeconds: Double = 2.0
        /// The estimate interval (s) while the shown tempo's evidence fades or is under review
        /// (`estimateIntervalSeconds` otherwise): after a change the first estimate of the new
        /// tempo was right, and the agreement waited 0.5 s for a second (tempo finding 26). How
        /// long the estimates must diverge to review or drop the lock stays 1 s. 0.25 re-locked
        /// the tuning part's changes in 2.4 / 3.8 s (median / worst; 0.5: 2.9 / 3.8 s) and moved no
        /// other track; 0.35 2.5 / 4.5 s; 0.2 and 0.15 cost `rock-62` its lock (a steady track's
        /// dip agreed on a wrong pair). Held out 2.8 / 6.3 → 2.5 / 6.8 s; usable since breaks are
        /// missing data (with a bar of silence read as zeros two estimates 0.25 s apart agreed
        /// on rock's half after it: tempo finding 29).
        var fadingEstimateIntervalSeconds: Double = 0.25
        /// Products (s) a bar lag (2–4 beats, `barRepetition`) needs to be read, against
        /// `warmUpSeconds` for every other reading: a slow groove's 4-beat bar (2.4–2.9 s at
        /// 84–100 BPM) has a warm-up's worth only ~3.5–4 s in, and until then its faster relatives
        /// (funk's 4⁄3 pulse, a one-drop's double), whose bars are read sooner, win the first
        /// estimates (tempo finding 24). 0.5 and 0.75 locked the same three tuning tracks sooner
        /// and moved nothing else; 0.35 one of them 0.5 s more.
        var barWarmUpSeconds: Double = 0.75
        /// The span (s) over which the silence gate reads the raw onset signal's variance (the
        /// last this many seconds, equally weighted). It was the tempo memory's one-pole average
        /// (τ = 3 s), whose variance after a groove stops decays from the groove's and took ~20 s
        /// of digital silence to close the gate, while the normalised autocorrelation (a ratio)
        /// kept reading the old period: tempo and beats went on 20.5 s into the silence. 2 s
        /// holds two beats at 60 BPM, so a sparse slow groove keeps it open.
        var silenceWindowSeconds: Double = 2.0
        /// The "music stopped" decision reads the beat grid's last this many beats for onsets
        /// near them (`BeatTracker.beatsWithOnsets`). With none, and the onset bands' level
        /// more than `musicStoppedDropDecibels` under its held loudest, the lock is dropped at
        /// once. A groove, whatever its tempo, puts onsets near its beats (tempo changes and
        /// octave moves happen with onsets), and a drumless breakdown's pads play within the
        /// drop; hiss, a reverb tail that has decayed and silence do neither. More than a bar:
        /// 4 dropped the lock in a bar of silence before a drop at 100 and 120 BPM (tempo
        /// finding 27). Without the decision pink hiss 40 dB under four on the floor kept its
        /// tempo and beats for 9–10 s (tempo findings 20 and 25).
        var musicStoppedWindowBeats: Int = 5
        /// How far (dB) under its held loudest the onset bands' level must fall for the music to
        /// have stopped: hiss 40 dB under the groove and a decayed tail are under it, a
        /// breakdown's pads are not.
        var musicStoppedDropDecibels: Float = 30
        /// How fast (dB/s) the held loudest level follows a quieter input: slowly, so that hiss
        /// 40 dB under a groove counts as the music stopped for 10 s, and a quiet song after a
        /// loud one starts from its own level within ~30 s.
        var musicLevelReleaseDecibelsPerSecond: Float = 1
        /// The beat grid's octave evidence (`GridOctaveEvidence`) is an opinion on the pair of
        /// octaves it runs between: for the double tempo when the upper-band onsets halfway
        /// between its beats reach this share of those on them (a two-step's snares)…
        var gridOffBeatShare: Float = 0.6
        /// …unless the autocorrelation at half the period is below this share of the one at
        /// the period (the slower tempo is clearly the pulse; the seed's 40 %, halved).
        var fasterPulseMinimumRatio: Float = 0.1
        /// For the half tempo when its weaker parity of beats holds less than this share of the
        /// stronger's onset strength (swung hip-hop at 86 read as 172 leaves three beats in
        /// eight empty), and either its accent repeats every four beats (the accent share under
        /// this too) with both octaves preferred, or the hats only mark its beats…
        var gridWeakParityShare: Float = 0.5
        /// …and the period correlates less than this multiple of its double: drum & bass at
        /// 172 (every other beat sparse too) 1.5–2.9×, swung hip-hop read at 172 0.4–1.4× (the
        /// larger of the latest two estimates is compared).
        var slowerPulseMaximumRatio: Float = 1.25
        /// Each opinion moves the pair's memory (−1 for the faster octave … +1 for the slower)
        /// this far towards itself: a running mean of the opinions, kept while the grid has
        /// none, cleared when the tempo leaves the pair (a one-drop read at 140 leaves every
        /// other beat empty; read at 70 its skank chords argue for the double, which only the
        /// hats' veto holds back, so what the 140 grid showed must still count).
        var octaveMemoryStep: Float = 0.5
        /// Nats the pair's memory (±1) adds to (takes from) the slower octave of the pair: one
        /// opinion (memory 0.5) is worth 5 nats, more than a one-drop's 1.3–2.3 nats for its
        /// double (tuning part: 0 read the one-drops double; 4, 6 and 8 moved `hiphop-86` to
        /// its half 0.5 s later; 10 and 14 as the old rules, track by track).
        var octaveMemoryWeight: Float = 10
        /// The memory's full confidence, in opinions: a contrary opinion's step is
        /// `octaveMemoryStep / (1 + confidence)`, the confidence counting the opinions for the
        /// memory's side (one less per contrary one) and full once the memory moved the tempo,
        /// so one contrary opinion does not undo a move (held out, `ballad-71` read its double
        /// for 5 s on one). 0 and 1 let one undo it (`oneContraryOpinionDoesNotUndoTheMemorysMove`),
        /// 2 is the least that holds; 3 for a margin (the tuning part is the same for each).
        var octaveMemoryConfidenceOpinions: Int = 3
    }

    /// The candidates' tempo ratios to the most salient period's tempo: 1, 2, ½, 3⁄2, ⅔, 3, ⅓,
    /// and ¾, 4⁄3 (a dotted-eighth pulse — funk's kicks on 1, 1-a, 2-and — is 4⁄3 of its beat).
    static var candidateCount: Int { 9 }
    @inline(__always) @_noLocks
    static func candidateRatio(_ index: Int) -> Float {
        switch index {
        case 0: 1
        case 1: 2
        case 2: 0.5
        case 3: 1.5
        case 4: 2.0 / 3.0
        case 5: 3
        case 6: 1.0 / 3.0
        case 7: 0.75
        default: 4.0 / 3.0
        }
    }

    let parameters: Parameters
    let frameRateHz: Double
    let minimumLag: Double
    let maximumLag: Double
    let maximumBpm: Double
    /// Lags kept: up to `combMultiples` periods of the slowest tempo.
    let lagCount: Int
    private let preferredMinimumLag: Double
    private let preferredMaximumLag: Double
    private let preferredMinimumBpm: Double
    private let preferredMaximumBpm: Double
    private let minimumConfidence: Float
    private let step: Float
    /// The recursion step while the shown tempo's evidence fades (τ = `fadingMemorySeconds`).
    private let fadingStep: Float
    /// The highest comb salience of the shown tempo since it was agreed (0: none shown).
    private var shownSalienceHigh: Float = 0
    /// The shown tempo `shownSalienceHigh` belongs to.
    private var shownSalienceBpm: Float = 0
    /// Hops (with a tempo shown) left with the short memory: up to the next estimate after the
    /// fading one and `fadingHoldHops` after it (`changeHoldHops` after another tempo was
    /// agreed). The count pauses while no tempo is shown (and across a dropped lock), so the
    /// first agreement after a drop still gets the rest of it.
    private var fadingHopsLeft = 0
    /// `Parameters.fadingHoldSeconds` and `Parameters.changeHoldSeconds` in hops.
    private let fadingHoldHops: Int
    private let changeHoldHops: Int
    /// Hops left in the review of a lock that diverged while its evidence faded (0: none
    /// under review; `Parameters.reviewSeconds`).
    private var reviewHopsLeft = 0
    /// `Parameters.reviewSeconds` in hops.
    private let reviewHops: Int
    /// The estimate interval while the shown tempo's evidence fades or is under review
    /// (`Parameters.fadingEstimateIntervalSeconds`), in hops.
    private let fadingEstimateIntervalHops: Int
    /// Hops since the previous estimate (the clock of the counts above), and since the first
    /// estimate of the current run diverging from the shown tempo.
    private var hopsSinceEstimate = 0
    private var hopsDivergent = 0
    /// `divergentEstimatesForReset` estimates at the regular interval, in hops: how long the
    /// estimates must diverge before the lock is dropped or reviewed, whatever the interval.
    private let divergenceHops: Int
    /// The hat band's recursion step (τ = `hatMemorySeconds`).
    private let hatStep: Float
    private let estimateIntervalHops: Int
    /// The normaliser a bar lag must reach to be read (`Parameters.barWarmUpSeconds`).
    private let barMinimumWeight: Float
    /// The compressed onset signal's running autocorrelation, lags 0 ..< lagCount.
    private var onsetCorrelation: RunningAutocorrelation
    /// The hat band's onset signal's, lags up to one period of the slowest tempo: whether the
    /// hats subdivide a beat or only mark it (`hatsOnlyMarkTheBeat`).
    private var hatCorrelation: RunningAutocorrelation
    /// Running means of the onset signal times the hat band's signal L hops earlier (L up to
    /// half the slowest beat), and their normalisers: at lag 0 whether the hat band is a layer
    /// of its own; at half a beat against lag 0, whether the hats fall on the beats or between.
    private let hatLeadProducts: RealtimeBuffer
    private let hatLeadWeights: RealtimeBuffer
    private var hatsAreALayer = false
    /// The raw onset signal of the last `Parameters.silenceWindowSeconds` (a ring; the silence
    /// gate), the next slot to write and how many slots hold a value.
    private let recentFlux: RealtimeBuffer
    private var recentFluxIndex = 0
    private var recentFluxCount = 0
    /// The onset bands' power over the last beat of the slowest tempo (`followMusicLevel`; a
    /// sparse groove's gaps between beats never read as silence), its next slot and how many
    /// slots hold a value.
    private let recentPower: RealtimeBuffer
    private var recentPowerIndex = 0
    private var recentPowerCount = 0
    /// The loudest level (dB), held and released
    /// (`Parameters.musicLevelReleaseDecibelsPerSecond`, per hop).
    private var heldLevelDecibels = realtimeDecibelsFromPower(0)
    private let levelReleasePerHop: Float
    /// Whether the music plays: the level is within `Parameters.musicStoppedDropDecibels` of
    /// its held loudest. Hops where it does not (a bar of silence, hiss far under the song) are
    /// missing data to the autocorrelations, not zeros.
    private var musicPlays = true
    /// The music played again after hops where it did not: whatever the break hid, the shown
    /// tempo's evidence is stale, and the next estimate treats it as fading (`followFadingEvidence`).
    private var musicResumed = false
    /// Whether the latest estimate had a warm-up's worth of products to read (`estimateBpm`).
    private var estimateWarmedUp = false
    /// How many of the beat grid's last `Parameters.musicStoppedWindowBeats` hold an onset.
    private var gridBeatsWithOnsets = 0
    private var hopsUntilEstimate: Int
    /// The last three estimates in BPM, newest first (0 = no tempo).
    private var recent: (Float, Float, Float) = (0, 0, 0)
    private var divergentCount = 0

    /// The shown (agreed) tempo in BPM, 0 when none.
    private(set) var agreedBpm: Float = 0
    /// Confidence of the latest estimate.
    private(set) var confidence: Float = 0
    /// The pair of octaves the beat grid's opinions are about (the slower one's period in
    /// hops; 0: none), and their running mean, −1 (the faster) … +1 (the slower).
    private var octavePairSlowLag: Float = 0
    private var octaveMemory: Float = 0
    /// Opinions for the memory's side of the pair, less one per contrary opinion, up to
    /// `Parameters.octaveMemoryConfidenceOpinions`.
    private var octaveMemoryConfidence = 0
    /// The grid's opinion at the previous hop (`octaveOpinion`).
    private var latestOpinionValue: Float = 0
    /// `r(period / 2) / r(period)` of the latest estimate (0 when the double is out of range).
    private var doubleTempoEvidence: Float = 0
    /// `r(period) / r(2·period)`: the latest estimate's, and the larger of the latest two
    /// estimates' (one estimate may dip; 0 when the double lag holds no data).
    private var latestHalfRatio: Float = 0
    private var halfTempoEvidence: Float = 0
    /// Counts restarts (locks dropped); the tracker reseeds when it changes.
    private(set) var generation = 0

    static var compressionGain: Float { 10 }
    static var detrendSeconds: Double { 2.0 }
    static var estimateIntervalSeconds: Double { 0.5 }
    static var agreementBpm: Float { 5 }
    static var divergenceBpm: Float { 10 }
    static var divergentEstimatesForReset: Int { 3 }
    /// Hat-band autocorrelation at a beat period from which the hats pulse with the beat, and
    /// under which at half and a quarter of the period they do not subdivide it (FluidR3
    /// grooves over whole tracks: hats on the beat 0.5–0.75 where they play; the larger of
    /// half and a quarter of a beat ≤ 0 where they play only on beats, ≥ 0.23 where they
    /// subdivide it: techno's off-beat open hats and rim sixteenths 0.23–0.36).
    static var hatPulseCorrelation: Float { 0.4 }
    static var hatSubdivisionCorrelation: ClosedRange<Float> { 0.1...0.25 }
    /// Memory of the hat band's autocorrelation: longer than the tempo's, because over 3 s the
    /// subdivision values wander by ±0.3 and the two cases overlap.
    static var hatMemorySeconds: Double { 8 }
    /// Correlation of the hat band's onset signal with the onset signal under which the hats
    /// are a layer of their own, and over which they are not (`updateHatLayer`).
    static var hatLayerCorrelation: ClosedRange<Float> { 0.88...0.95 }
    /// How much more the onset signal must correlate at two beats than at three to move to the
    /// slower octave on the hats' evidence (none to stay there).
    static var dupleMargin: Float { 0.05 }
    /// Variance of the raw onset signal (nats²) below which there is no tempo: silence and
    /// steady tones.
    static var silenceVariance: Float { 1e-3 }
    /// Autocorrelation collected before the first estimate counts (s).
    static var combMultiples: Int { 4 }
    static var lagGridStep: Float { 0.5 }
    /// Lag step of the fine peak search (within ±half a `lagGridStep`).
    static var fineGridStep: Float { 0.05 }
    /// How far (as a lag ratio) an estimate may lie outside the BPM range before it is read at
    /// the in-range octave: 1 %, so a tempo at the range's edge stays.
    static var rangeTolerance: Double { 0.99 }
    static var warmUpSeconds: Double { 1.0 }

    init(configuration: RhythmConfiguration, frameRateHz: Double, parameters: Parameters = Parameters()) {
        self.parameters = parameters
        self.frameRateHz = frameRateHz
        preferredMinimumBpm = configuration.preferredMinimumBpm
        preferredMaximumBpm = configuration.preferredMaximumBpm
        let hopSeconds = 1 / frameRateHz
        minimumLag = 60 / configuration.maximumBpm * frameRateHz
        maximumBpm = configuration.maximumBpm
        maximumLag = 60 / configuration.minimumBpm * frameRateHz
        preferredMinimumLag = 60 / configuration.preferredMaximumBpm * frameRateHz
        preferredMaximumLag = 60 / configuration.preferredMinimumBpm * frameRateHz
        lagCount = Int((Double(Self.combMultiples) * maximumLag).rounded(.up)) + 3
        minimumConfidence = Float(configuration.minimumConfidence)
        step = Float(1 - exp(-hopSeconds / configuration.tempoMemorySeconds))
        fadingStep = max(step, Float(1 - exp(-hopSeconds / parameters.fadingMemorySeconds)))
        fadingHoldHops = Int((parameters.fadingHoldSeconds * frameRateHz).rounded())
        changeHoldHops = Int((parameters.changeHoldSeconds * frameRateHz).rounded())
        reviewHops = max(1, Int((parameters.reviewSeconds * frameRateHz).rounded()))
        recentFlux = RealtimeBuffer(count: max(2, Int((parameters.silenceWindowSeconds * frameRateHz).rounded())))
        recentPower = RealtimeBuffer(count: max(1, Int(maximumLag.rounded(.up))))
        levelReleasePerHop = parameters.musicLevelReleaseDecibelsPerSecond * Float(hopSeconds)
        let minimumWeight = Float(1 - exp(-Self.warmUpSeconds / configuration.tempoMemorySeconds)) * 0.999
        let detrendHops = Int((Self.detrendSeconds * frameRateHz).rounded())
        estimateIntervalHops = max(1, Int((Self.estimateIntervalSeconds * frameRateHz).rounded()))
        fadingEstimateIntervalHops = max(1, min(estimateIntervalHops, Int((parameters.fadingEstimateIntervalSeconds * frameRateHz).rounded())))
        divergenceHops = (Self.divergentEstimatesForReset - 1) * estimateIntervalHops
        barMinimumWeight = Float(1 - exp(-parameters.barWarmUpSeconds / configuration.tempoMemorySeconds)) * 0.999
        onsetCorrelation = RunningAutocorrelation(lagCount: lagCount, detrendHops: detrendHops, step: step, minimumWeight: minimumWeight,
                                                  earliestWeight: barMinimumWeight)
        hatStep = Float(1 - exp(-hopSeconds / Self.hatMemorySeconds))
        hatCorrelation = RunningAutocorrelation(lagCount: Int(maximumLag.rounded(.up)) + 3, detrendHops: detrendHops, step: hatStep,
                                                minimumWeight: Float(1 - exp(-Self.warmUpSeconds / Self.hatMemorySeconds)) * 0.999)
        hatLeadProducts = RealtimeBuffer(count: Int((maximumLag / 2).rounded(.up)) + 2)
        hatLeadWeights = RealtimeBuffer(count: Int((maximumLag / 2).rounded(.up)) + 2)
        hopsUntilEstimate = estimateIntervalHops
    }

    /// Takes the onset bands' power of one hop (`bandPower`) and how many of the beat grid's
    /// last `Parameters.musicStoppedWindowBeats` hold an onset (`gridBeatsWithOnsets`): whether
    /// the music plays (`musicPlays`, for the next `update`) and the evidence of the "music
    /// stopped" decision. When the level falls under the drop, the window that fell silent is
    /// marked absent in the autocorrelations too. Called before `update` at every hop.
    /// Real-time safe; O(window).
    @_noLocks
    mutating func followMusicLevel(bandPower: Float, gridBeatsWithOnsets: Int) {
        recentPower[recentPowerIndex] = bandPower
        recentPowerIndex = (recentPowerIndex + 1) % recentPower.count
        recentPowerCount = min(recentPowerCount + 1, recentPower.count)
        self.gridBeatsWithOnsets = gridBeatsWithOnsets
        let level = realtimeDecibelsFromPower(realtimeSum(recentPower.base, count: recentPowerCount) / Float(recentPowerCount))
        heldLevelDecibels = max(level, heldLevelDecibels - levelReleasePerHop)
        let plays = level >= heldLevelDecibels - parameters.musicStoppedDropDecibels
        if musicPlays && !plays {
            onsetCorrelation.markAbsent(hops: recentPowerCount - 1)
            hatCorrelation.markAbsent(hops: recentPowerCount - 1)
        }
        if plays && !musicPlays && agreedBpm > 0 {
            // Whatever the break hid (the same groove, or a new tempo), the shown tempo's
            // evidence is from before it: measured afresh from here, the tempo kept under review.
            review()
            musicResumed = true
        }
        musicPlays = plays
    }

    /// Takes the onset signal of one hop (`flux`, and the hat band's compressed flux
    /// `hatFlux`) and the beat grid's octave evidence as of now (`grid`).
    /// Real-time safe; O(lags).
    @_noLocks
    mutating func update(flux: Float, hatFlux: Float, grid: GridOctaveEvidence) {
        // 1) The raw signal for the silence gate.
        recentFlux[recentFluxIndex] = flux
        recentFluxIndex = (recentFluxIndex + 1) % recentFlux.count
        recentFluxCount = min(recentFluxCount + 1, recentFlux.count)

        // 2) Log compression; detrended, recursive autocorrelations (every lag that has data).
        let onset = onsetCorrelation.add(realtimeLog1p(Self.compressionGain * flux), present: musicPlays)
        hatCorrelation.add(hatFlux, present: musicPlays)
        if musicPlays {
            for lag in 0..<hatLeadProducts.count {
                let gatedStep = hatStep * hatCorrelation.presence(age: lag)
                hatLeadProducts[lag] += gatedStep * (onset * hatCorrelation.detrendedValue(age: lag) - hatLeadProducts[lag])
                hatLeadWeights[lag] += gatedStep * (1 - hatLeadWeights[lag])
            }
        }

        // 3) A new estimate every interval, and at once when the beat grid forms an opinion
        //    against the pair's memory (or on a pair without one; the old rules moved at that
        //    hop). An opinion that lasts is taken again at the interval, not at every hop: a
        //    moment of contrary evidence is one opinion.
        let opinion = octaveOpinion(grid)
        let isNewOpinion = opinion.value != latestOpinionValue
        latestOpinionValue = opinion.value
        hopsUntilEstimate -= 1
        hopsSinceEstimate += 1
        let againstMemory = opinion.value * octaveMemory <= 0 && isRemembered(pairSlowLag: opinion.pairSlowLag)
        guard hopsUntilEstimate <= 0 || (opinion.value != 0 && isNewOpinion && againstMemory) else { return }
        rememberOctaveOpinion(opinion)
        if musicStopped() {
            restart()
        } else {
            decide(estimateBpm())
        }
        followFadingEvidence()
        hopsSinceEstimate = 0
        // Sooner while the shown tempo's evidence fades or is under review: the agreement on a
        // new tempo (2 of the last 3 estimates) comes at this pace.
        hopsUntilEstimate = agreedBpm > 0 && (fadingHopsLeft > 0 || reviewHopsLeft > 0) ? fadingEstimateIntervalHops : estimateIntervalHops
    }

    /// The autocorrelation's memory: the configured one while the shown tempo's comb salience
    /// holds, `Parameters.fadingMemorySeconds` while it falls below
    /// `Parameters.fadingSalienceShare` of its high since the tempo was agreed (a tempo change:
    /// the old period's evidence would otherwise linger for the whole long memory). Real-time safe.
    @_noLocks
    private mutating func followFadingEvidence() {
        defer { musicResumed = false }
        guard agreedBpm > 0 else {
            shownSalienceHigh = 0
            onsetCorrelation.setStep(step)
            return
        }
        let shown = salience(Float(60 * frameRateHz) / agreedBpm)
        let anotherTempo = abs(agreedBpm - shownSalienceBpm) > Self.agreementBpm
        if anotherTempo { shownSalienceHigh = 0 }
        shownSalienceBpm = agreedBpm
        shownSalienceHigh = max(shownSalienceHigh, shown)
        if shown < parameters.fadingSalienceShare * shownSalienceHigh || musicResumed {
            fadingHopsLeft = fadingHoldHops + estimateIntervalHops
        } else if anotherTempo && fadingHopsLeft > 0 {
            // A change: the tempo just agreed was read from bar lags that straddle it.
            fadingHopsLeft = changeHoldHops + estimateIntervalHops
        } else {
            fadingHopsLeft = max(0, fadingHopsLeft - hopsSinceEstimate)
        }
        onsetCorrelation.setStep(fadingHopsLeft > 0 ? fadingStep : step)
    }

    /// Normalised autocorrelation of the onset signal at a fractional lag (as of the last
    /// estimate), read over a box `Parameters.boxWidthLags` wide: the decision's evidence.
    @inline(__always) @_noLocks
    private func normalised(at lag: Float) -> Float { onsetCorrelation.boxNormalised(at: lag, widthLags: parameters.boxWidthLags) }

    /// Pulse salience of a beat period: the mean normalised autocorrelation at its first
    /// `combMultiples` multiples (those with data), over the box, or `atPoint` (the confidence
    /// gate, whose threshold is the configuration's and was set on point readings). A real beat period correlates at all of
    /// them; syncopated patterns correlate weakly at one beat but strongly at two and four.
    @_noLocks
    private func salience(_ lag: Float, atPoint: Bool = false) -> Float {
        var sum: Float = 0
        var count: Float = 0
        for multiple in 1...Self.combMultiples {
            let position = lag * Float(multiple)
            guard onsetCorrelation.hasData(atLag: Int(position) + 1) else { break }
            sum += atPoint ? onsetCorrelation.normalised(at: position) : normalised(at: position)
            count += 1
        }
        return count > 0 ? sum / count : 0
    }

    /// Evidence that the beat is half the period `lag` (its double tempo): the correlation at
    /// `lag / 2` against the correlation at the lag (the seed's check), for the beat grid's
    /// octave moves (`doubleTempoEvidence`, `halfTempoEvidence`). Read at the point: its limits
    /// (`Parameters.fasterPulseMinimumRatio`, `slowerPulseMaximumRatio`) were set on point readings.
    @_noLocks
    private func fasterTempoRatio(_ lag: Float) -> Float {
        let part = max(0, onsetCorrelation.normalised(at: lag / 2))
        let whole = max(0, onsetCorrelation.normalised(at: lag))
        guard whole > 0 else { return part > 0 ? 1 : 0 }
        return part / whole
    }

    /// The highest salience within half a grid step of `lag`, on a grid `fineGridStep` wide.
    @_noLocks
    private func finePeak(near lag: Float) -> (lag: Float, salience: Float) {
        var bestLag = lag, best = salience(lag)
        var offset = -0.5 * Self.lagGridStep
        while offset <= 0.5 * Self.lagGridStep {
            let value = salience(lag + offset)
            if value > best {
                best = value
                bestLag = lag + offset
            }
            offset += Self.fineGridStep
        }
        return (bestLag, best)
    }

    /// One raw estimate in BPM (0 = none), setting `confidence`.
    @_noLocks
    private mutating func estimateBpm() -> Float {
        confidence = 0
        // Every period in the range needs a warm-up's worth of products (the first ~2 s).
        estimateWarmedUp = onsetCorrelation.hasData(atLag: min(lagCount - 1, Int(maximumLag) + 1))
        guard estimateWarmedUp else { return 0 }
        // Silence gate: steady tones and silence have (nearly) no flux variance.
        guard recentFluxVariance() >= Self.silenceVariance else { return 0 }
        onsetCorrelation.normalise()
        hatCorrelation.normalise()
        updateHatLayer()

        // 1) The most salient period in the BPM range, on a half-lag grid, refined by a parabola.
        let low = Float(minimumLag), high = Float(maximumLag)
        var bestLag = low, best: Float = -1
        var lag = low
        while lag <= high {
            let value = salience(lag)
            if value > best {
                best = value
                bestLag = lag
            }
            lag += Self.lagGridStep
        }
        guard best > 0 else { return 0 }
        let before = salience(bestLag - Self.lagGridStep), after = salience(bestLag + Self.lagGridStep)
        let curvature = before - 2 * best + after
        if curvature < 0 && before <= best && after <= best {
            bestLag += Self.lagGridStep * 0.5 * (before - after) / curvature
        }
        // 2) One decision among the periods metrically related to the best one (and the shown
        //    tempo's): each at its fine peak, scored by `candidateScore`.
        let peakLag = bestLag
        var shownLag: Float = 0
        if agreedBpm > 0 { shownLag = Float(60 * frameRateHz) / agreedBpm }
        var bestScore = -Float.infinity
        for index in 0...Self.candidateCount {
            // Tempo ratios to the peak's tempo, then the shown tempo's period.
            var candidateLag: Float
            if index < Self.candidateCount {
                candidateLag = peakLag / Self.candidateRatio(index)
            } else {
                guard shownLag > 0 else { continue }
                candidateLag = shownLag
            }
            guard candidateLag >= low - 0.5, candidateLag <= high + 0.5 else { continue }
            // On the half-lag grid a sharp peak can be missed (its 4th multiple drifts by a lag).
            candidateLag = finePeak(near: candidateLag).lag
            let score = candidateScore(lag: candidateLag, peakLag: peakLag, shownLag: shownLag)
            if score > bestScore {
                bestScore = score
                bestLag = candidateLag
            }
        }
        // 3) Confidence: the salience of the chosen period.
        let chosen = salience(bestLag, atPoint: true)
        doubleTempoEvidence = bestLag / 2 >= low - 0.5 ? fasterTempoRatio(bestLag) : 0
        let halfRatio = fasterTempoRatio(bestLag * 2)
        halfTempoEvidence = max(halfRatio, latestHalfRatio)
        latestHalfRatio = halfRatio
        confidence = clampUnit(chosen)
        guard chosen >= minimumConfidence, bestLag > 0 else { return 0 }
        // The BPM range is the user's: the searches above may end up to half a lag beyond it
        // (a fine peak at its edge), which reads in range at the other octave (185 → 92.5).
        while Double(bestLag) < minimumLag * Self.rangeTolerance { bestLag *= 2 }
        while Double(bestLag) > maximumLag / Self.rangeTolerance && Double(bestLag / 2) >= minimumLag { bestLag /= 2 }
        let bpm = Float(60 * frameRateHz) / bestLag
        return bpm.isFinite ? bpm : 0
    }

    /// The score of a candidate beat period `lag` (hops) in the one tempo decision: the sum of
    /// the evidence for it, weighted by `parameters` (docs/dsp.md, Tempo):
    /// - salience: `ln` of its comb salience (every multiple of a beat repeats);
    /// - beat correlation: `ln` of the autocorrelation at the period itself (a beat's onsets
    ///   repeat at one beat; a double tempo whose half-beats hold little loses);
    /// - speed: a cost per octave slower than the most salient period (`peakLag`);
    /// - the preferred range: a cost per octave outside it;
    /// - the hats: they pulse on every beat of half the period and never between (the
    ///   period's eighths; a duple metre), or on every beat of the period and never between (the
    ///   period is its beat's eighths), counted by how much the beats differ (`accentContrast`);
    /// - the metre: `ln` of its bar's repetition (`barRepetition`), and a cost for a period
    ///   slower than the peak by a third (⅔, ⅓, ¾) unless its bar repeats more than the peak's;
    /// - the shown tempo: a bonus for staying (hysteresis).
    @_noLocks
    private func candidateScore(lag: Float, peakLag: Float, shownLag: Float) -> Float {
        let weights = parameters
        var score = weights.salienceWeight * approximateNaturalLog(max(salience(lag), weights.correlationFloor))
        score += weights.beatCorrelationWeight * approximateNaturalLog(max(normalised(at: lag), weights.correlationFloor))
        // Octaves slower than the most salient period.
        let octaves = approximateLog2(lag / peakLag)
        score -= weights.costPerOctaveSlower * octaves
        let bpm = Double(60 * frameRateHz) / Double(lag)
        let below = max(0, approximateLog2(Float(preferredMinimumBpm / bpm))), above = max(0, approximateLog2(Float(bpm / preferredMaximumBpm)))
        score -= weights.costPerOctaveOutsidePreferred * (below + above)
        let staying = shownLag > 0 && abs(shownLag - lag) <= 0.05 * lag
        if hatsOnlyMarkTheBeat(lag: lag / 2, staying: staying) && isDuple(lag: lag / 2, margin: staying ? 0 : Self.dupleMargin) {
            score += weights.hatWeight * accentContrast(beatLag: lag)
        }
        if hatsOnlyMarkTheBeat(lag: lag, staying: !staying) && isDuple(lag: lag, margin: 0) {
            score -= weights.hatWeight * accentContrast(beatLag: 2 * lag)
        }
        // Slower than the most salient period by an odd factor (3, or 3 with octaves: ⅔, ⅓, ¾)?
        let thirds = octaves > 0 && abs(Double(octaves) - realtimeRound(Double(octaves))) > 0.1
        // The metre: how strongly its bar repeats.
        let bar = barRepetition(lag)
        score += weights.barWeight * approximateNaturalLog(max(bar, weights.correlationFloor))
        if thirds && bar < barRepetition(peakLag) + weights.thirdsBarMargin { score -= weights.thirdsCost }
        if staying { score += weights.shownBonus }
        // The beat grid's remembered opinion on the pair of octaves (`rememberOctaveOpinion`).
        if octavePairSlowLag > 0 && abs(lag - octavePairSlowLag) <= 0.05 * lag { score += weights.octaveMemoryWeight * octaveMemory }
        return score
    }

    /// How much more the onset signal repeats at `beatLag` than at half of it, as a share of
    /// `Parameters.fullAccentContrast` (0…1): a beat whose halves differ (kick and snare on the
    /// beats, hats alone between) is evidence the hats are its eighths; a click track, all of
    /// whose clicks are alike, gives none, whatever the hat band hears of the clicks.
    @_noLocks
    private func accentContrast(beatLag: Float) -> Float {
        let contrast = normalised(at: beatLag) - max(0, normalised(at: beatLag / 2))
        return min(1, max(0, contrast / parameters.fullAccentContrast))
    }

    /// How strongly the onset signal repeats at a bar of `lag`: the largest autocorrelation at
    /// two, three or four of its beats, each read over a window `Parameters.barWindowLags` wide
    /// (the mean over it: in effect the sum of the whole lags around the multiple, so a
    /// repetition split between two lags counts whole; those with `Parameters.barWarmUpSeconds`
    /// of products; early on, when none has, at the period itself, which says nothing for or against a bar).
    @_noLocks
    private func barRepetition(_ lag: Float) -> Float {
        let widthLags = parameters.barWindowLags
        var best = -Float.infinity
        for beats in 2...4 {
            let position = lag * Float(beats)
            guard onsetCorrelation.hasData(atLag: Int(position + 0.5 * widthLags) + 1, minimumWeight: barMinimumWeight) else { break }
            best = max(best, onsetCorrelation.boxNormalised(at: position, widthLags: widthLags, minimumWeight: barMinimumWeight))
        }
        return best > -Float.infinity ? best : normalised(at: lag)
    }

    /// 2-of-3 agreement (an octave move the pair's memory chose at once), divergence reset or,
    /// while the shown tempo's evidence fades, review (`Parameters.reviewSeconds`).
    @_noLocks
    private mutating func decide(_ estimate: Float) {
        if isOctaveMoveTheMemoryChose(estimate) {
            reviewHopsLeft = 0
            agreedBpm = estimate
            octaveMemoryConfidence = parameters.octaveMemoryConfidenceOpinions
            recent = (estimate, estimate, 0)
            divergentCount = 0
            return
        }
        recent = (estimate, recent.0, recent.1)
        // The agreeing pair (newest first), if any.
        var agreed: Float = 0
        if Self.agree(recent.0, recent.1) {
            agreed = 0.5 * (recent.0 + recent.1)
        } else if Self.agree(recent.0, recent.2) {
            agreed = 0.5 * (recent.0 + recent.2)
        } else if Self.agree(recent.1, recent.2) {
            agreed = 0.5 * (recent.1 + recent.2)
        }
        if reviewHopsLeft > 0 {
            // Under review: the first agreement from the restarted autocorrelation is taken (the
            // old tempo again or a new one); none within the review drops the lock.
            // Its clock runs once the restarted autocorrelation can estimate (after a break,
            // its first second pairs the new hops with the break's absent ones).
            if estimateWarmedUp { reviewHopsLeft = max(0, reviewHopsLeft - hopsSinceEstimate) }
            if agreed > 0 {
                agreedBpm = agreed
                reviewHopsLeft = 0
            } else if reviewHopsLeft == 0 {
                restart()
            }
            return
        }
        if agreedBpm > 0 {
            let diverges = abs(estimate - agreedBpm) > Self.divergenceBpm || estimate == 0
            hopsDivergent = diverges && divergentCount > 0 ? hopsDivergent + hopsSinceEstimate : 0
            divergentCount = diverges ? divergentCount + 1 : 0
            if divergentCount >= Self.divergentEstimatesForReset && hopsDivergent >= divergenceHops
                && !(agreed > 0 && Self.agree(agreed, estimate)) {
                if fadingHopsLeft > 0 { review() } else { restart() }
                return
            }
        }
        if agreed > 0 {
            agreedBpm = agreed
            if divergentCount > 0 && abs(agreed - estimate) <= Self.agreementBpm { divergentCount = 0 }
        }
    }

    @inline(__always) @_noLocks
    private static func agree(_ first: Float, _ second: Float) -> Bool {
        first > 0 && second > 0 && abs(first - second) <= agreementBpm
    }

    /// The beat grid's octave evidence as an opinion on the pair of octaves it runs between
    /// (−1: the agreed tempo's double; +1: its half; 0: none), and the pair's slower period; the
    /// pair's memory follows the opinions (`rememberOctaveOpinion`) and the decision weighs it
    /// (`candidateScore`). For the double: the upper band's off-beats are strong
    /// (`gridOffBeatShare`), the period's half correlates (`fasterPulseMinimumRatio`), the double
    /// is in range, and the hats do not only mark the double's beats (then they are the agreed
    /// tempo's eighths). For the half: the weaker parity is nearly empty (`gridWeakParityShare`),
    /// the period does not correlate much more than its double (`slowerPulseMaximumRatio`), the
    /// half is in range, and either the accent repeats every four beats with both octaves
    /// preferred or the hats only mark the grid's beats (the half-time trap at 140 leaves every
    /// other beat empty with its clap every fourth too, but its hats subdivide the beat and 70
    /// is not preferred). An opinion on another pair counts only once the agreed tempo has left
    /// the remembered one. Real-time safe.
    @_noLocks
    private func octaveOpinion(_ grid: GridOctaveEvidence) -> (value: Float, pairSlowLag: Float) {
        guard agreedBpm > 0, grid.bpm > 0, abs(grid.bpm - agreedBpm) <= 0.04 * agreedBpm else { return (0, 0) }
        let weights = parameters
        let lag = Float(60 * frameRateHz) / agreedBpm
        if grid.offBeatShare >= weights.gridOffBeatShare, doubleTempoEvidence >= weights.fasterPulseMinimumRatio,
           Double(2 * agreedBpm) <= maximumBpm, !hatsOnlyMarkTheBeat(lag: lag / 2, staying: true) {
            return (-1, lag)
        }
        if grid.weakParityShare < weights.gridWeakParityShare, halfTempoEvidence < weights.slowerPulseMaximumRatio,
           Double(2 * lag) <= maximumLag / Self.rangeTolerance {
            let bothPreferred = Double(lag) >= preferredMinimumLag && Double(2 * lag) <= preferredMaximumLag
            if (grid.fourBeatAccentShare < weights.gridWeakParityShare && bothPreferred) || hatsOnlyMarkTheBeat(lag: lag, staying: false) {
                return (1, 2 * lag)
            }
        }
        return (0, 0)
    }

    /// Whether an opinion on the pair whose slower period is `pairSlowLag` counts: no pair is
    /// remembered, or it is this one.
    @inline(__always) @_noLocks
    private func isRemembered(pairSlowLag: Float) -> Bool {
        octavePairSlowLag == 0 || abs(pairSlowLag - octavePairSlowLag) <= 0.05 * pairSlowLag
    }

    /// Moves the pair's memory towards `opinion` (`octaveOpinion`), after forgetting a pair the
    /// agreed tempo has left. Real-time safe.
    @_noLocks
    private mutating func rememberOctaveOpinion(_ opinion: (value: Float, pairSlowLag: Float)) {
        let lag = agreedBpm > 0 ? Float(60 * frameRateHz) / agreedBpm : 0
        let hasLeftThePair = agreedBpm <= 0
            || (octavePairSlowLag > 0 && abs(lag - octavePairSlowLag) > 0.05 * lag && abs(2 * lag - octavePairSlowLag) > 0.1 * lag)
        if hasLeftThePair { forgetOctavePair() }
        guard opinion.value != 0, isRemembered(pairSlowLag: opinion.pairSlowLag) else { return }
        octavePairSlowLag = opinion.pairSlowLag
        var step = parameters.octaveMemoryStep
        if opinion.value * octaveMemory < 0 {
            step /= Float(1 + octaveMemoryConfidence)
            octaveMemoryConfidence = max(0, octaveMemoryConfidence - 1)
        } else {
            octaveMemoryConfidence = min(parameters.octaveMemoryConfidenceOpinions, octaveMemoryConfidence + 1)
        }
        octaveMemory += step * (opinion.value - octaveMemory)
    }

    /// Forgets the remembered pair of octaves and its memory. Real-time safe.
    @inline(__always) @_noLocks
    private mutating func forgetOctavePair() {
        octavePairSlowLag = 0
        octaveMemory = 0
        octaveMemoryConfidence = 0
    }

    /// Whether `estimate` is the agreed tempo's other octave in the remembered pair, the one the
    /// memory favours: taken at once, since the memory already sums seconds of the grid's onsets.
    @_noLocks
    private func isOctaveMoveTheMemoryChose(_ estimate: Float) -> Bool {
        guard agreedBpm > 0, estimate > 0, octavePairSlowLag > 0, octaveMemory != 0 else { return false }
        let lag = Float(60 * frameRateHz) / estimate, agreedLag = Float(60 * frameRateHz) / agreedBpm
        let slow = octavePairSlowLag, fast = 0.5 * octavePairSlowLag
        let toSlow = octaveMemory > 0 && abs(lag - slow) <= 0.05 * slow && abs(agreedLag - fast) <= 0.05 * fast
        let toFast = octaveMemory < 0 && abs(lag - fast) <= 0.05 * fast && abs(agreedLag - slow) <= 0.05 * slow
        return toSlow || toFast
    }

    /// Whether the hats pulse with the beat of `lag` but never between its beats: their
    /// autocorrelation reaches `hatPulseCorrelation` at the beat and stays under
    /// `hatSubdivisionCorrelation` at half, a third and a quarter of it (its lower bound to move
    /// to the slower tempo, its upper one when `staying` there: a crash cymbal every few bars
    /// raises the short lags for a while), and the hats fall on the onsets, not half a beat off.
    /// (A third: funk's sixteenth hats pulse at a dotted eighth too, and not at its half or
    /// quarter.) Hats play the subdivision of the beat (eighths, sixteenths); hats exactly on every beat and nowhere between say the beat is twice as
    /// long (a slow rock beat's or a one-drop's eighths read as a fast tempo's beats). Silent
    /// hats say nothing. Real-time safe.
    @_noLocks
    private func hatsOnlyMarkTheBeat(lag: Float, staying: Bool) -> Bool {
        let limit = staying ? Self.hatSubdivisionCorrelation.upperBound : Self.hatSubdivisionCorrelation.lowerBound
        return hatsAreALayer && hatCorrelation.normalised(at: lag) >= Self.hatPulseCorrelation
            && max(max(hatCorrelation.normalised(at: lag / 2), hatCorrelation.normalised(at: lag / 3)), hatCorrelation.normalised(at: lag / 4)) < limit
            && hatLead(at: lag / 2) < hatLead(at: 0)
    }

    /// The onset signal's running product with the hat band's signal `lag` hops earlier
    /// (linear interpolation; 0 beyond the lags kept). Hats on the beats correlate most at
    /// lag 0; off-beat hats (four-on-the-floor's open hats) at half a beat. Real-time safe.
    @_noLocks
    private func hatLead(at lag: Float) -> Float {
        let lower = Int(lag)
        guard lag >= 0, lower + 1 < hatLeadProducts.count else { return 0 }
        let fraction = lag - Float(lower)
        let low = hatLeadProducts[lower] / max(hatLeadWeights[lower], 1e-9)
        let high = hatLeadProducts[lower + 1] / max(hatLeadWeights[lower + 1], 1e-9)
        return low * (1 - fraction) + high * fraction
    }

    /// Decides, with hysteresis, whether the hat band is a layer of its own: clicks and other
    /// full-band transients register in it as in the onset signal (correlation 0.98–0.99; drum
    /// kits 0.58–0.81). Between the two limits the last decision stays, so estimates do not
    /// flip between octaves with a correlation hovering at one limit. Real-time safe.
    @_noLocks
    private mutating func updateHatLayer() {
        let scale = realtimeSquareRoot(onsetCorrelation.meanSquare * hatCorrelation.meanSquare)
        guard scale > 0 else {
            hatsAreALayer = false
            return
        }
        let correlation = hatLead(at: 0) / scale
        if correlation < Self.hatLayerCorrelation.lowerBound { hatsAreALayer = true }
        if correlation > Self.hatLayerCorrelation.upperBound { hatsAreALayer = false }
    }

    /// Whether the onset signal repeats more strongly, by `margin`, at two beats of `lag` than
    /// at three: a duple metre (4/4, 2/4), not a waltz, whose hats also fall on every beat and
    /// nowhere between but whose bar is three beats (FluidR3 waltzes: r at 3 beats 0.74–0.76,
    /// at 2 beats 0.61–0.67; slow rock read at 124: 0.58 and 0.75). Real-time safe.
    @_noLocks
    private func isDuple(lag: Float, margin: Float) -> Bool {
        normalised(at: 2 * lag) >= normalised(at: 3 * lag) + margin
    }

    /// The normalised autocorrelation per lag (inspection; allocates).
    var normalisedAutocorrelation: [Float] { onsetCorrelation.normalisedValues }

    /// Keeps the shown tempo under review and restarts the onset autocorrelation (a lock that
    /// diverged while its evidence faded: the music changed tempo). The short memory of the
    /// fading evidence goes on (`followFadingEvidence`: the restarted averages read no
    /// salience yet), so the lags are read again at the next estimate. Real-time safe.
    @_noLocks
    private mutating func review() {
        onsetCorrelation.restart()
        recent = (0, 0, 0)
        divergentCount = 0
        reviewHopsLeft = reviewHops
    }

    /// Drops the lock and the autocorrelation; keeps the recent onset signal, so the new tempo
    /// is measured from data already in hand. Real-time safe.
    @_noLocks
    mutating func restart() {
        reviewHopsLeft = 0
        onsetCorrelation.restart()
        hatCorrelation.restart()
        hatLeadProducts.fill(with: 0)
        hatLeadWeights.fill(with: 0)
        recent = (0, 0, 0)
        divergentCount = 0
        agreedBpm = 0
        confidence = 0
        doubleTempoEvidence = 0
        halfTempoEvidence = 0
        latestHalfRatio = 0
        forgetOctavePair()
        latestOpinionValue = 0
        generation &+= 1
        hopsUntilEstimate = estimateIntervalHops
        shownSalienceHigh = 0
        shownSalienceBpm = 0
        onsetCorrelation.setStep(step)
    }

    /// Clears everything (as if just prepared). Real-time safe.
    @_noLocks
    mutating func reset() {
        restart()
        onsetCorrelation.reset()
        hatCorrelation.reset()
        hatsAreALayer = false
        fadingHopsLeft = 0
        hopsSinceEstimate = 0
        recentFlux.fill(with: 0)
        recentFluxIndex = 0
        recentFluxCount = 0
        recentPower.fill(with: 0)
        recentPowerIndex = 0
        recentPowerCount = 0
        heldLevelDecibels = realtimeDecibelsFromPower(0)
        musicPlays = true
        musicResumed = false
        gridBeatsWithOnsets = 0
    }

    /// The "music stopped" decision (`Parameters.musicStoppedWindowBeats`): with a tempo
    /// shown, the beat grid's last beats hold no onset and the music does not play (the onset
    /// bands' level more than `Parameters.musicStoppedDropDecibels` under its held loudest:
    /// `followMusicLevel`). Real-time safe.
    @inline(__always) @_noLocks
    private func musicStopped() -> Bool {
        agreedBpm > 0 && gridBeatsWithOnsets == 0 && !musicPlays
    }

    /// The variance of the raw onset signal over the last `Parameters.silenceWindowSeconds`
    /// (the slots filled so far). Real-time safe; O(window), once per estimate.
    @_noLocks
    private func recentFluxVariance() -> Float {
        guard recentFluxCount > 1 else { return 0 }
        var sum: Float = 0, sumOfSquares: Float = 0
        for slot in 0..<recentFluxCount {
            sum += recentFlux[slot]
            sumOfSquares += recentFlux[slot] * recentFlux[slot]
        }
        let mean = sum / Float(recentFluxCount)
        return sumOfSquares / Float(recentFluxCount) - mean * mean
    }
}
