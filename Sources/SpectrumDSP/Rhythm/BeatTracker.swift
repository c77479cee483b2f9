import Glibc
import SpectrumCore

/// Beat phase and beat events: a beat grid (anchor + k·period, in stream frames) fitted to the
/// onsets that fall near it, seeded by the tempo estimator.
///
/// - **Seeding** (when a tempo locks, or when the agreed tempo moves more than
///   `reseedTolerance` from the grid's): the period comes from the agreed tempo; the phase is the
///   one that best explains the onsets of the last `phaseSearchSeconds`: each onset is tried as the
///   anchor, and scored by the onsets within ±`matchTolerance` of a period of its grid, each by
///   `phasePresenceWeight` plus its strength, and by the bass band's onsets there, each by
///   `phaseBassPresenceWeight`.
/// - **Tracking** (at every onset): a weighted least-squares line `t = anchor + k·period` through
///   the onsets within ±`matchTolerance` of a period of the grid (beat index k), over the last
///   `fitSeconds`, weights `(0.25 + strength)·exp(−age / fitMemorySeconds)`. Onsets between
///   beats (off-beats, syncopation) do not match and are ignored. The period may move up to
///   `periodFreedom` from the agreed tempo's: the tempo estimator stays in charge of the octave.
///   When the agreed tempo halves under a locked grid, the grid doubles its period in place
///   (`halveTempo`: the beats its hats mark), instead of reseeding.
/// - **Octave evidence** (at every onset): shares of onset strength between the beats and on
///   either parity (`octaveEvidence`), which the tempo estimator's decision weighs.
/// - **Events**: each grid point becomes one beat event, reported in the hop in which
///   `beat time − lead` falls, with its exact (fractional) time, a running count and a position
///   in the bar. The phase is `frac((hop end + lead − anchor) / period)`.
///
/// Real-time safe after `init` (all state is inline).
struct BeatTracker {
    private let sampleRateHz: Double
    private let leadFrames: Double
    private let beatsPerBar: Int
    private let phaseSearchFrames: Double
    private let fitFrames: Double
    private let fitMemoryFrames: Double

    private var onsetTimes = InlineArray<32, Double>(repeating: 0)
    private var onsetStrengths = InlineArray<32, Float>(repeating: 0)
    private var onsetBassShares = InlineArray<32, Float>(repeating: 0)
    private var onsetCount = 0
    private var onsetWrite = 0
    /// Hat-band onsets: which beats the hats mark.
    private var hatOnsets = BandOnsets()
    /// Bass-band onsets (kicks, bass notes, snare bodies): which grid holds the low band on its
    /// beats.
    private var bassOnsets = BandOnsets()
    /// Set when the grid was halved onto the beats its hats mark: the upper band's phase
    /// re-check stays off until the next seeding (a one-drop's skank chords fill the off-beats).
    private var phaseFromHats = false

    private(set) var isLocked = false
    /// Frames per beat of the grid, and of the agreed tempo that seeded it.
    private(set) var periodFrames: Double = 0
    private var seedPeriodFrames: Double = 0
    /// A grid point (a beat time, in stream frames).
    private var anchorFrame: Double = 0
    private var lastBeatFrame: Double = 0
    private var beatCount: Int = 0
    private var seenGeneration = 0
    /// What the grid measures about its own octave, for the tempo estimator's decision (which
    /// weighs it): refreshed at every onset while locked.
    private(set) var octaveEvidence = GridOctaveEvidence()
    /// Which parity of grid beats (0: the anchor's) carries the more onset strength.
    private var strongParity = 0

    /// The stronger parity of grid beats must hold at least this many onsets over the last
    /// `fitSeconds` for the parities' shares to count as evidence.
    static var parityMinimumOnsets: Int { 4 }
    static var matchTolerance: Double { 0.15 }
    static var phaseSwitchRatio: Double { 1.5 }
    static var reseedTolerance: Double { 0.04 }
    static var periodFreedom: Double { 0.05 }
    static var phaseSearchSeconds: Double { 4.0 }
    static var fitSeconds: Double { 8.0 }
    static var fitMemorySeconds: Double { 1.5 }
    /// What an onset near a grid point adds to the grid's phase support for being there, besides
    /// its strength: a grid with an onset on more of its beats wins over one through fewer,
    /// stronger ones. 0.5 lands funk's snares (barely over the threshold) rather than its kicks a
    /// sixteenth early, but puts the one-drop's grid on its skank chords (tempo finding 21).
    static var phasePresenceWeight: Double { 0.25 }
    /// What a bass-band onset near a grid point adds to the anchor's score (its strength does
    /// not count: funk's kicks on 1-a and 3-a are as strong as the one on 1): the beat's grid
    /// holds the bass notes and snare bodies between the kicks, a grid a sixteenth off only
    /// some of the kicks.
    static var phaseBassPresenceWeight: Double { 0.25 }

    init(configuration: RhythmConfiguration, sampleRateHz: Double) {
        self.sampleRateHz = sampleRateHz
        leadFrames = configuration.leadMilliseconds / 1000 * sampleRateHz
        beatsPerBar = max(1, configuration.beatsPerBar)
        phaseSearchFrames = Self.phaseSearchSeconds * sampleRateHz
        fitFrames = Self.fitSeconds * sampleRateHz
        fitMemoryFrames = Self.fitMemorySeconds * sampleRateHz
    }

    /// Records a hat-band onset. Real-time safe.
    @_noLocks
    mutating func addHatOnset(timeFrames: Double, strength: Float) {
        hatOnsets.add(timeFrames: timeFrames, strength: strength)
    }

    /// Records a bass-band onset. Real-time safe.
    @_noLocks
    mutating func addBassOnset(timeFrames: Double, strength: Float) {
        bassOnsets.add(timeFrames: timeFrames, strength: strength)
    }

    /// Records an onset and, when locked, refits the grid. Real-time safe.
    @_noLocks
    mutating func addOnset(timeFrames: Double, strength: Float, bassShare: Float) {
        onsetTimes[onsetWrite] = timeFrames
        onsetStrengths[onsetWrite] = strength
        onsetBassShares[onsetWrite] = bassShare
        onsetWrite = (onsetWrite + 1) & 31
        onsetCount = min(onsetCount + 1, 32)
        if isLocked {
            // A grid seeded on the off-beat (e.g. on a drumless intro's bass line) moves to the
            // beat when the upper band clearly prefers it.
            let onBeat = gridSupport(anchor: anchorFrame, period: periodFrames, now: timeFrames, upperBandOnly: true)
            let offBeat = gridSupport(anchor: anchorFrame + 0.5 * periodFrames, period: periodFrames, now: timeFrames, upperBandOnly: true)
            if offBeat > Self.phaseSwitchRatio * onBeat && !phaseFromHats { anchorFrame += 0.5 * periodFrames }
            refit(now: timeFrames)
            let parity = parities(now: timeFrames)
            strongParity = parity.strong
            octaveEvidence = GridOctaveEvidence(bpm: Float(60 * sampleRateHz / periodFrames), offBeatShare: offBeatShare(now: timeFrames),
                                                weakParityShare: parity.weakShare, fourBeatAccentShare: parity.fourBeatAccentShare)
        }
    }

    /// Over the last `fitSeconds`: the onset strength of the weaker parity of grid beats (every
    /// other beat) as a share of the stronger's (1 while the stronger holds fewer than
    /// `parityMinimumOnsets` onsets); the weaker of the stronger parity's two upper-band accent
    /// classes (beat index modulo 4: snares, claps) as a share of the stronger (near 1: a backbeat
    /// every two beats; near 0: every four); and which parity is the stronger. A right tempo has
    /// onsets on most of its beats; a double tempo's extra beats are the slower tempo's
    /// off-beats, often empty, and its backbeat falls on every fourth beat (swung hip-hop at 86
    /// read as 172: kick on 0, snares on 2 and 6). Drum & bass at 172 (kick on 1, snares on 2
    /// and 4, the 3 empty) has its backbeat every other beat.
    @_noLocks
    private func parities(now: Double) -> (weakShare: Float, fourBeatAccentShare: Float, strong: Int) {
        var strength = InlineArray<2, Double>(repeating: 0)
        var count = InlineArray<2, Int>(repeating: 0)
        // Upper-band strength per beat index modulo 4 (the two classes of each parity).
        var upper = InlineArray<4, Double>(repeating: 0)
        for slot in 0..<onsetCount {
            let time = onsetTimes[slot]
            guard now - time <= fitFrames else { continue }
            let beats = (time - anchorFrame) / periodFrames
            let beat = realtimeRound(beats)
            guard abs(beats - beat) <= Self.matchTolerance else { continue }
            let index = Int(beat) & 3
            strength[index & 1] += Double(onsetStrengths[slot])
            count[index & 1] += 1
            upper[index] += Double(onsetStrengths[slot] * (1 - onsetBassShares[slot]))
        }
        let strong = strength[0] >= strength[1] ? 0 : 1, weak = 1 - strong
        let accent = max(upper[strong], upper[strong + 2]), other = min(upper[strong], upper[strong + 2])
        let weakShare = count[strong] >= Self.parityMinimumOnsets && strength[strong] > 0 ? strength[weak] / strength[strong] : 1
        let accentShare = accent > 0 ? other / accent : 1
        return (Float(weakShare), Float(accentShare), strong)
    }

    /// Halves the grid's tempo (the estimator agreed half the tempo of a locked grid), keeping
    /// the parity of its beats that the hats mark when one does clearly more
    /// (`phaseSwitchRatio`: swung eighths start on the beat, a one-drop's skank chords fill the
    /// off-beats), else the parity with the stronger onsets. Reseeding from scratch would weigh
    /// the off-beats afresh. Real-time safe.
    @_noLocks
    private mutating func halveTempo(now: Double) {
        guard isLocked, periodFrames > 0 else { return }
        let marked = hatMarkedAnchor(anchorFrame, or: anchorFrame + periodFrames, period: 2 * periodFrames, now: now)
        phaseFromHats = marked != nil
        anchorFrame = marked ?? anchorFrame + Double(strongParity) * periodFrames
        periodFrames *= 2
        seedPeriodFrames = periodFrames
        octaveEvidence = GridOctaveEvidence()
    }

    /// Over the last `phaseSearchSeconds`: the upper-band strength of the onsets halfway between
    /// grid points over that of the onsets on them (each onset counted by its share above the
    /// bass band, `1 − bassShare`: an off-beat kick or bass note does not count, a two-step's
    /// snare does); 0 with fewer than three of either.
    @_noLocks
    private func offBeatShare(now: Double) -> Float {
        var onStrength = 0.0, offStrength = 0.0
        var onCount = 0, offCount = 0
        for slot in 0..<onsetCount {
            let time = onsetTimes[slot]
            guard now - time <= phaseSearchFrames else { continue }
            let beats = (time - anchorFrame) / periodFrames
            let deviation = abs(beats - realtimeRound(beats))
            let upper = Double(onsetStrengths[slot]) * Double(1 - onsetBassShares[slot])
            if deviation <= Self.matchTolerance {
                onStrength += upper
                onCount += 1
            } else if abs(deviation - 0.5) <= Self.matchTolerance {
                offStrength += upper
                offCount += 1
            }
        }
        guard onCount >= 3, offCount >= 3, onStrength > 0 else { return 0 }
        return Float(offStrength / onStrength)
    }

    /// Advances to the end of a hop (`hopEndFrame`: the stream frame after its newest sample)
    /// with the estimator's agreed tempo (0 = none); returns the phase and the hop's beat, if any.
    /// Real-time safe.
    @_noLocks
    mutating func update(agreedBpm: Float, generation: Int, hopEndFrame: Int64) -> (bpm: Float, phase: Float, beat: BeatReading) {
        let now = Double(hopEndFrame)
        guard agreedBpm > 0 else {
            unlock()
            return (0, 0, .none)
        }
        let agreedPeriod = 60 / Double(agreedBpm) * sampleRateHz
        // The grid's period may wander only so far from the agreed tempo (checked at each refit).
        seedPeriodFrames = agreedPeriod
        if isLocked && generation == seenGeneration && abs(2 * periodFrames - agreedPeriod) <= Self.reseedTolerance * agreedPeriod {
            halveTempo(now: now)
        }
        if !isLocked || generation != seenGeneration
            || abs(periodFrames - agreedPeriod) > Self.reseedTolerance * agreedPeriod {
            seed(periodFrames: agreedPeriod, now: now)
            seenGeneration = generation
        }
        let beat = takeDueBeat(streamFrame: hopEndFrame)
        let bpm = Float(60 * sampleRateHz / periodFrames)
        return (bpm.isFinite ? bpm : 0, phase(atStreamFrame: hopEndFrame), beat)
    }

    /// How many of the grid's last `beats` points (up to 8) whose match window (±`matchTolerance`)
    /// has closed by `streamFrame` hold an onset; 0 while unlocked. A groove puts onsets on most
    /// of its beats whatever its tempo; hiss, a reverb tail or silence on none (the tempo
    /// estimator's "music stopped" decision). Real-time safe.
    @_noLocks
    func beatsWithOnsets(lastBeats beats: Int, atStreamFrame streamFrame: Int64) -> Int {
        guard isLocked, periodFrames > 0 else { return 0 }
        let newest = realtimeFloor((Double(streamFrame) - anchorFrame) / periodFrames - Self.matchTolerance)
        var marked: UInt8 = 0
        for slot in 0..<onsetCount {
            let position = (onsetTimes[slot] - anchorFrame) / periodFrames
            let beat = realtimeRound(position)
            let age = newest - beat
            guard abs(position - beat) <= Self.matchTolerance, age >= 0, age < Double(min(beats, 8)) else { continue }
            marked |= 1 << UInt8(age)
        }
        return marked.nonzeroBitCount
    }

    /// Position within the beat at `streamFrame` (plus the lead time), 0..1; 0 while unlocked.
    /// Real-time safe.
    @_noLocks
    func phase(atStreamFrame streamFrame: Int64) -> Float {
        guard isLocked, periodFrames > 0 else { return 0 }
        let position = (Double(streamFrame) + leadFrames - anchorFrame) / periodFrames
        return clampUnit(Float(position - realtimeFloor(position)))
    }

    /// The beat whose (early, by the lead time) report time has passed by `streamFrame`, if the
    /// grid holds one not yet reported; only the last is returned when several have passed (an
    /// output rate below the beat rate). Called at each hop's end by `update`, and between hops
    /// by hosts that feed short blocks, so a beat goes out within one block of its time.
    /// Real-time safe.
    @_noLocks
    mutating func takeDueBeat(streamFrame: Int64) -> BeatReading {
        guard isLocked, periodFrames > 0 else { return .none }
        let now = Double(streamFrame)
        var beat = BeatReading.none
        while true {
            let index = realtimeFloor((lastBeatFrame + 0.5 * periodFrames - anchorFrame) / periodFrames) + 1
            let beatFrame = anchorFrame + index * periodFrames
            guard beatFrame - leadFrames < now else { break }
            lastBeatFrame = beatFrame
            beatCount += 1
            beat = BeatReading(isBeat: true, timeFrames: beatFrame, count: Int32(truncatingIfNeeded: beatCount),
                               inBar: Int32((beatCount - 1) % beatsPerBar + 1))
        }
        return beat
    }

    /// Period from the agreed tempo; phase from the recent onsets; then a fit.
    @_noLocks
    private mutating func seed(periodFrames period: Double, now: Double) {
        let wasLocked = isLocked
        periodFrames = period
        seedPeriodFrames = period
        // 1) Phase: the onset whose grid explains the recent onsets best.
        var bestScore = -1.0
        var bestAnchor = now
        for candidate in 0..<onsetCount {
            let anchor = onsetTimes[candidate]
            guard now - anchor <= phaseSearchFrames else { continue }
            let score = gridSupport(anchor: anchor, period: period, now: now, upperBandOnly: false)
                + Self.phaseBassPresenceWeight * bassOnsets.support(anchor: anchor, period: period, now: now, windowFrames: phaseSearchFrames,
                                                                    presenceWeight: 1, strengthWeight: 0)
            if score > bestScore {
                bestScore = score
                bestAnchor = anchor
            }
        }
        anchorFrame = bestAnchor
        // 1b) Beat or off-beat: the grid half a beat later wins if the upper band (snares, claps,
        //     kick clicks; not the bass notes) supports it more. Off-beat bass lines and open
        //     hats otherwise pull four-on-the-floor grids onto the off-beat.
        let onBeat = gridSupport(anchor: bestAnchor, period: period, now: now, upperBandOnly: true)
        let offBeat = gridSupport(anchor: bestAnchor + 0.5 * period, period: period, now: now, upperBandOnly: true)
        if offBeat > onBeat { anchorFrame = bestAnchor + 0.5 * period }
        isLocked = true
        phaseFromHats = false
        octaveEvidence = GridOctaveEvidence()
        // 2) Fit (twice: the first fit sharpens the period, the second matches more onsets).
        refit(now: now)
        refit(now: now)
        if !wasLocked {
            // Beats are reported from the next one on.
            lastBeatFrame = now + leadFrames - 0.5 * periodFrames
            beatCount = 0
        }
    }

    /// How close `time` lies to a point of the grid through `anchor` with `period`: 1 on it,
    /// falling linearly to 0 at ±`matchTolerance` of a period; nil farther away.
    @_noLocks
    static func closeness(of time: Double, anchor: Double, period: Double) -> Double? {
        let beats = (time - anchor) / period
        let deviation = abs(beats - realtimeRound(beats))
        return deviation <= matchTolerance ? 1 - deviation / matchTolerance : nil
    }

    /// Onset support of a grid over the last `phaseSearchSeconds`: each onset near a grid point
    /// counts by its strength and closeness, and with `upperBandOnly` by its share of flux above
    /// the bass band (`1 − bassShare`: snares and clicks, not bass notes).
    @_noLocks
    private func gridSupport(anchor: Double, period: Double, now: Double, upperBandOnly: Bool) -> Double {
        var support = 0.0
        for slot in 0..<onsetCount {
            let time = onsetTimes[slot]
            guard now - time <= phaseSearchFrames, let closeness = Self.closeness(of: time, anchor: anchor, period: period) else { continue }
            let share = upperBandOnly ? Double(1 - onsetBassShares[slot]) : 1
            support += (Self.phasePresenceWeight + Double(onsetStrengths[slot])) * share * closeness
        }
        return support
    }

    /// Of two grids of `period`, the anchor of the one the hats mark clearly more
    /// (`phaseSwitchRatio`), or nil.
    @_noLocks
    private func hatMarkedAnchor(_ first: Double, or second: Double, period: Double, now: Double) -> Double? {
        let firstHats = hatOnsets.support(anchor: first, period: period, now: now, windowFrames: fitFrames, presenceWeight: 0, strengthWeight: 1)
        let secondHats = hatOnsets.support(anchor: second, period: period, now: now, windowFrames: fitFrames, presenceWeight: 0, strengthWeight: 1)
        if firstHats > Self.phaseSwitchRatio * secondHats { return first }
        if secondHats > Self.phaseSwitchRatio * firstHats { return second }
        return nil
    }

    /// Weighted least squares through the onsets near the grid.
    @_noLocks
    private mutating func refit(now: Double) {
        let period = periodFrames
        var sumWeight = 0.0, sumBeat = 0.0, sumTime = 0.0
        var sumBeatBeat = 0.0, sumBeatTime = 0.0
        var newestTime = -Double.infinity
        var lowestBeat = Double.infinity, highestBeat = -Double.infinity
        for slot in 0..<onsetCount {
            let time = onsetTimes[slot]
            let age = now - time
            guard age <= fitFrames else { continue }
            let beats = (time - anchorFrame) / period
            let beat = realtimeRound(beats)
            guard abs(beats - beat) <= Self.matchTolerance else { continue }
            let weight = Double(0.25 + onsetStrengths[slot]) * realtimeExp(-max(0, age) / fitMemoryFrames) * (1 - abs(beats - beat) / Self.matchTolerance)
            // Relative to the anchor, so the sums stay small.
            let relative = time - anchorFrame
            sumWeight += weight
            sumBeat += weight * beat
            sumTime += weight * relative
            sumBeatBeat += weight * beat * beat
            sumBeatTime += weight * beat * relative
            newestTime = max(newestTime, time)
            lowestBeat = min(lowestBeat, beat)
            highestBeat = max(highestBeat, beat)
        }
        guard sumWeight > 0 else { return }
        let meanBeat = sumBeat / sumWeight, meanTime = sumTime / sumWeight
        var slope = period
        if highestBeat > lowestBeat {
            let spread = sumBeatBeat / sumWeight - meanBeat * meanBeat
            if spread > 1e-9 {
                slope = (sumBeatTime / sumWeight - meanBeat * meanTime) / spread
            }
        }
        let lowest = seedPeriodFrames * (1 - Self.periodFreedom), highest = seedPeriodFrames * (1 + Self.periodFreedom)
        slope = slope.isFinite ? min(max(slope, lowest), highest) : seedPeriodFrames
        let intercept = meanTime - slope * meanBeat
        guard intercept.isFinite else { return }
        periodFrames = slope
        anchorFrame += intercept
        // Keep the anchor on the grid point nearest the newest matched onset.
        anchorFrame += realtimeRound((newestTime - anchorFrame) / periodFrames) * periodFrames
    }

    @_noLocks
    private mutating func unlock() {
        isLocked = false
        beatCount = 0
        octaveEvidence = GridOctaveEvidence()
    }

    /// Forgets the grid (keeps the recent onsets). Real-time safe.
    @_noLocks
    mutating func relearn() {
        unlock()
        periodFrames = 0
    }

    /// Clears everything. Real-time safe.
    @_noLocks
    mutating func reset() {
        relearn()
        onsetCount = 0
        onsetWrite = 0
        hatOnsets.reset()
        bassOnsets.reset()
        lastBeatFrame = 0
        seenGeneration = 0
    }
}

/// What a beat grid measures about its own octave (`BeatTracker.octaveEvidence`): shares of onset
/// strength on its beats, halfway between them and on either parity, which the tempo
/// estimator's one decision weighs (`TempoEstimator.Parameters`). Measured on the grid's
/// onsets; any thread that owns the tracker may read it.
struct GridOctaveEvidence {
    /// The grid's tempo (BPM) the shares were measured at; 0 while there is no measurement.
    var bpm: Float = 0
    /// Upper-band onset strength halfway between the beats over that on them (last 4 s; 0 with
    /// fewer than three of either): a two-step's snares between the beats of a grid at half its
    /// tempo.
    var offBeatShare: Float = 0
    /// Onset strength of the weaker parity of beats over the stronger's (last 8 s; 1 with too
    /// few onsets): a double tempo's extra beats are the slower tempo's off-beats, often empty.
    var weakParityShare: Float = 1
    /// The weaker of the stronger parity's two upper-band accent classes over the stronger
    /// (1: a backbeat every two beats; 0: every four, as at double the tempo).
    var fourBeatAccentShare: Float = 1
}

/// The last 32 onsets of one band (hats, bass), in stream frames, with their strengths.
/// Real-time safe (inline storage).
struct BandOnsets {
    private var times = InlineArray<32, Double>(repeating: 0)
    private var strengths = InlineArray<32, Float>(repeating: 0)
    private var count = 0
    private var write = 0

    @_noLocks
    mutating func add(timeFrames: Double, strength: Float) {
        times[write] = timeFrames
        strengths[write] = strength
        write = (write + 1) & 31
        count = min(count + 1, 32)
    }

    @_noLocks
    mutating func reset() {
        count = 0
        write = 0
    }

    /// The onsets within ±`BeatTracker.matchTolerance` of a grid point over the last
    /// `windowFrames`, each by `presenceWeight + strengthWeight·strength` and its closeness.
    @_noLocks
    func support(anchor: Double, period: Double, now: Double, windowFrames: Double, presenceWeight: Double, strengthWeight: Double) -> Double {
        var support = 0.0
        for slot in 0..<count {
            let time = times[slot]
            guard now - time <= windowFrames, let closeness = BeatTracker.closeness(of: time, anchor: anchor, period: period) else { continue }
            support += (presenceWeight + strengthWeight * Double(strengths[slot])) * closeness
        }
        return support
    }
}
