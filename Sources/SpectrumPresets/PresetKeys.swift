import SpectrumDSP
import SpectrumCore

/// One tunable value of `AnalysisConfiguration` as it appears in a preset file: its YAML key
/// path, type, allowed range, unit, a one-line description, and where it lives in the
/// configuration. `PresetKeys.all` is the single source of truth for the loader, the
/// documentation test and `presets/default.yaml`. Plain immutable data; any thread.
public struct PresetKey: Sendable {
    /// The value's type and range, with the configuration field it writes.
    public enum Kind: Sendable {
        case number(WritableKeyPath<AnalysisConfiguration, Double> & Sendable, ClosedRange<Double>)
        case wholeNumber(WritableKeyPath<AnalysisConfiguration, Int> & Sendable, ClosedRange<Int>)
        case flag(WritableKeyPath<AnalysisConfiguration, Bool> & Sendable)
    }

    /// `section.name`, e.g. `spectrum.band_count`.
    public let path: String
    public let kind: Kind
    /// Unit of the value ("Hz", "ms", "dB", …), empty for plain numbers and flags.
    public let unit: String
    /// One line for humans: what the value changes.
    public let summary: String

    /// The part before the dot: the YAML mapping the key lives in.
    public var section: String { String(path.prefix { $0 != "." }) }
    /// The part after the dot: the key inside its section.
    public var name: String { String(path.drop { $0 != "." }.dropFirst()) }

    /// A decimal value (YAML integers are accepted too) within `range`, in `unit`.
    public static func number(_ path: String, _ keyPath: WritableKeyPath<AnalysisConfiguration, Double> & Sendable,
                              _ range: ClosedRange<Double>, _ unit: String, _ summary: String) -> PresetKey {
        PresetKey(path: path, kind: .number(keyPath, range), unit: unit, summary: summary)
    }

    /// An integer value within `range`.
    public static func wholeNumber(_ path: String, _ keyPath: WritableKeyPath<AnalysisConfiguration, Int> & Sendable,
                                   _ range: ClosedRange<Int>, _ unit: String, _ summary: String) -> PresetKey {
        PresetKey(path: path, kind: .wholeNumber(keyPath, range), unit: unit, summary: summary)
    }

    /// `true` or `false`.
    public static func flag(_ path: String, _ keyPath: WritableKeyPath<AnalysisConfiguration, Bool> & Sendable,
                            _ summary: String) -> PresetKey {
        PresetKey(path: path, kind: .flag(keyPath), unit: "", summary: summary)
    }

    /// Human text for the allowed values, e.g. "10 to 240 Hz" or "true or false".
    public var allowedValues: String {
        let suffix = unit.isEmpty ? "" : " \(unit)"
        switch kind {
        case .number(_, let range):
            return "\(PresetKey.format(range.lowerBound)) to \(PresetKey.format(range.upperBound))\(suffix)"
        case .wholeNumber(_, let range):
            return "\(range.lowerBound) to \(range.upperBound)\(suffix)"
        case .flag:
            return "true or false"
        }
    }

    /// The value this key has in `configuration`, as it would be written in YAML.
    public func yamlValue(in configuration: AnalysisConfiguration) -> String {
        switch kind {
        case .number(let keyPath, _): return PresetKey.format(configuration[keyPath: keyPath])
        case .wholeNumber(let keyPath, _): return String(configuration[keyPath: keyPath])
        case .flag(let keyPath): return String(configuration[keyPath: keyPath])
        }
    }

    /// Whole numbers without a fraction, others in the shortest form that reads back exactly.
    static func format(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}

/// Two keys whose values must be strictly ordered (`lower` < `upper`); checked after a whole
/// preset is read, because either key may come from the defaults.
public struct PresetOrdering: Sendable {
    public let lower: String
    public let upper: String
}

/// Every key a preset file may set. Adding a tunable value is one line here (plus its comment
/// in `presets/default.yaml` and its row in `docs/presets.md`; tests check both).
public enum PresetKeys {
    public static let all: [PresetKey] = [
        .number("output.rate_hz", \.outputRateHz, 10...240, "Hz", "Output frames per second; the analysis hop is the sample rate divided by this."),
        .number("spectrum.window_ms", \.spectrum.windowMilliseconds, 12...500, "ms", "Length of the main (mid and treble) FFT window; at least 512 frames at 44.1 kHz."),
        .number("spectrum.bass_window_ms", \.spectrum.bassWindowMilliseconds, 40...2000, "ms", "Length of the long window of the ~3 kHz decimated signal that feeds the bass bands."),
        .wholeNumber("spectrum.band_count", \.spectrum.bandCount, 1...AnalysisFrame.maximumBandCount, "", "Number of log-spaced bands between the minimum and maximum frequency."),
        .number("spectrum.minimum_frequency_hz", \.spectrum.minimumFrequencyHz, 5...20_000, "Hz", "Lower edge of the lowest band."),
        .number("spectrum.maximum_frequency_hz", \.spectrum.maximumFrequencyHz, 100...180_000, "Hz", "Upper edge of the highest band; must stay below 95 % of half the sample rate."),
        .number("auto_level.decay_db_per_second", \.autoLevel.decayDecibelsPerSecond, 0...200, "dB/s", "How fast the display ceiling falls after the loudest band gets quieter."),
        .number("auto_level.minimum_ceiling_db", \.autoLevel.minimumCeilingDecibels, -140...0, "dB", "Lowest the ceiling may fall; quieter input stays dark instead of amplifying noise."),
        .number("auto_level.maximum_ceiling_db", \.autoLevel.maximumCeilingDecibels, -100...40, "dB", "Highest the ceiling (and ceiling + headroom) may rise."),
        .number("auto_level.headroom_db", \.autoLevel.headroomDecibels, 0...40, "dB", "Added above the tracked ceiling before normalising, so the loudest band sits below 1."),
        .number("auto_level.range_db", \.autoLevel.rangeDecibels, 6...140, "dB", "Height of the display window below ceiling + headroom; lower levels read 0."),
        .flag("tilt.enabled", \.tilt.enabled, "Music-mode spectral tilt: boost bands above the pivot so treble is visible."),
        .number("tilt.pivot_hz", \.tilt.pivotHz, 20...5000, "Hz", "Frequency above which the tilt boost starts."),
        .number("tilt.rate_db", \.tilt.rateDecibels, 0...24, "dB", "Boost for the first octave above the pivot (rate × octaves^power)."),
        .number("tilt.power", \.tilt.power, 0.25...4, "", "Exponent of the octave count in the tilt boost."),
        .number("ballistics.attack_ms", \.ballistics.attackMilliseconds, 0...2000, "ms", "Time constant of a band rising toward a louder value (0 = instant)."),
        .number("ballistics.release_ms", \.ballistics.releaseMilliseconds, 0...10_000, "ms", "Time constant of a band falling toward a quieter value (0 = instant)."),
        .number("ballistics.peak_fall_per_second", \.ballistics.peakFallPerSecond, 0...20, "per second", "How fast the peak-hold markers fall, in full scales (0..1) per second."),
        .number("level.vu_floor_db", \.level.vuFloorDecibels, -120...(-6), "dB", "RMS level in dBFS that reads 0 on the VU value (0 dBFS reads 1)."),
        .flag("pitch.enabled", \.pitch.enabled, "Run the tuner (pitch, note, cents) on every hop."),
        .number("pitch.minimum_frequency_hz", \.pitch.minimumFrequencyHz, 20...500, "Hz", "Lowest fundamental searched; the tuner window holds 2.2 of its periods."),
        .number("pitch.maximum_frequency_hz", \.pitch.maximumFrequencyHz, 200...5000, "Hz", "Highest fundamental read; a pitch above it is no note."),
        .number("pitch.confidence_threshold", \.pitch.confidenceThreshold, 0.3...0.99, "", "Normalised correlation at the period needed for a note (seed: 0.75; 0.55 reads notes in noise)."),
        .number("pitch.silence_gate_db", \.pitch.silenceGateDecibels, -120...(-10), "dB", "Windows quieter than this RMS level in dBFS never have a note (a fixed gate: --gate-db sets it and turns the floor-relative gate off)."),
        .flag("pitch.noise_floor_gate", \.pitch.noiseFloorGate, "Gate the tuner relative to the input's own noise floor (`gate_above_noise_floor_db`); --gate-db turns it off for a fixed gate."),
        .number("pitch.gate_above_noise_floor_db", \.pitch.gateAboveNoiseFloorDecibels, -20...40, "dB", "Windows whose power above the input's own noise floor is less than this, relative to the floor (a note's SNR), have no note. The floor is the least noise a window held, down at once, up by 0.5 dB/s; a window's noise is what the period read in it does not explain, so a steady tone is no floor."),
        .number("pitch.percussive_decay_db_per_second", \.pitch.percussiveDecayDecibelsPerSecond, 5...1000, "dB/s", "Windows whose energy falls faster than this (a drum, a note ending) have no note; above 400 Hz the limit grows in proportion to the pitch."),
        .number("pitch.percussive_fundamental_decay_db_per_second", \.pitch.percussiveFundamentalDecayDecibelsPerSecond, 0...1000, "dB/s", "A window decaying faster than percussive_decay_db_per_second has no note only when the power at the pitch's fundamental falls faster than this too (a drum's body); after a note's attack its transient and high partials die first, and at a legato step the last note fades. 0: the window's energy alone decides."),
        .number("pitch.hit_decay_db_per_second", \.pitch.hitDecayDecibelsPerSecond, 50...5000, "dB/s", "Windows whose newest half (whole periods) holds less energy than their oldest half by more than this rate hold a hit (a snare, a drum's stroke) and have no note; above 400 Hz the limit grows in proportion to the pitch."),
        .number("pitch.falling_pitch_cents", \.pitch.fallingPitchCents, 0...1200, "cents", "A pitch fallen by more than this since the sound's energy last rose, fast (`falling_pitch_cents_per_second`) and decaying (`falling_pitch_decay_db_per_second`), is a drum's body gliding down as it rings: no note."),
        .number("pitch.falling_pitch_cents_per_second", \.pitch.fallingPitchCentsPerSecond, 0...10_000, "cents/s", "The slowest mean fall since the sound's energy last rose that is a drum's body (a tom's from its stroke on), not a player's glide (a peg turned, a bend released or a whammy dive after the note has rung); 0 turns the falling-pitch term off."),
        .number("pitch.stroke_maximum_correlation", \.pitch.strokeMaximumCorrelation, 0...1, "", "A window that repeats at its period no better than this (normalised correlation) while its newest half holds `stroke_energy_fall_db` less energy than its oldest is a stroke dying (a snare's wires, a stick's click, a cymbal: a broadband burst): no note; 0 turns this off."),
        .number("pitch.stroke_energy_fall_db", \.pitch.strokeEnergyFallDecibels, 0...60, "dB", "The fall from the energy of a window's oldest half to its newest (whole periods) that makes an aperiodic window a stroke dying (`stroke_maximum_correlation`)."),
        .number("pitch.stroke_arrival_fall_db", \.pitch.strokeArrivalFallDecibels, 0...60, "dB", "The fall from the oldest block of whole periods (5 ms or more) to the quietest that, with `stroke_arrival_spread_db`, makes an aperiodic window (`stroke_maximum_correlation`) whose newest 14.7 ms do not repeat a stroke dying as the next arrives (a snare roll): no note. A note's attack rises from its oldest block."),
        .number("pitch.stroke_arrival_spread_db", \.pitch.strokeArrivalSpreadDecibels, 0...60, "dB", "The spread from the quietest to the loudest block of whole periods that, with `stroke_arrival_fall_db`, makes an aperiodic window a stroke dying as the next arrives (a snare roll): no note; 0 turns this off."),
        .number("pitch.membrane_fundamental_share", \.pitch.membraneFundamentalShare, 0...1, "", "A window whose fundamental (the spectral main lobe about the pitch read) holds more than this share of its energy while the rest does not repeat at the period (`membrane_aperiodic_share`) is a struck membrane ringing (a tom's body: a near-pure tone with inharmonic overtones): no note; 0 turns this off."),
        .number("pitch.membrane_aperiodic_share", \.pitch.membraneAperiodicShare, 0...1, "", "The share of a window's energy beyond its fundamental, (1 − r) / (1 − fundamental share), that must fail to repeat at the period for a near-pure window to be a membrane (`membrane_fundamental_share`); a note's overtones repeat."),
        .number("pitch.membrane_rise_db", \.pitch.membraneRiseDecibels, 0...1000, "dB", "The window's energy rise over about 50 ms, in dB, over this counts against the membrane score (`membrane_aperiodic_share`, `membrane_glide_cents_per_second`): a drum's body decays, a new note (a singer's legato step) rises; a fall counts for nothing. 0: any rise makes the window no membrane."),
        .number("pitch.membrane_glide_cents_per_second", \.pitch.membraneGlideCentsPerSecond, 0...10000, "cents/s", "The membrane score (`membrane_aperiodic_share`) adds the pitch's mean fall since the energy last rose, in cents per second, over this: a tom's body glides down as it rings; a string's or a bar's pitch holds. 0: no glide term."),
        .number("pitch.drum_ring_seconds", \.pitch.drumRingSeconds, 0...10, "s", "Once a drum is found (its stroke or hit in the window, its body gliding down), what rings on is that drum until the next attack (the window's energy rising 1.5 dB in ~50 ms), for at most this long: no note. Not the note read just before the drum (a drum struck over a held note), nor in steady noise. 0 turns this off."),
        .number("pitch.falling_pitch_rise_cents", \.pitch.fallingPitchRiseCents, 0...1200, "cents", "A pitch that has risen more than this above its lowest since the attack (a window energy rise over 1.5 dB in ~50 ms) turns back up: a singer's vibrato, not a drum's body. Its falls count for neither `falling_pitch_cents_per_second` nor `membrane_glide_cents_per_second`. 0: every fall counts."),
        .number("pitch.falling_pitch_decay_db_per_second", \.pitch.fallingPitchDecayDecibelsPerSecond, 0...1000, "dB/s", "A falling pitch is a drum's body only while the window's energy falls faster than this (a drum decays; a singer's portamento keeps its energy)."),
        .number("pitch.reference_hz", \.pitch.referenceHz, 415...466, "Hz", "Reference pitch of A4 for note names and cents."),
        .flag("rhythm.enabled", \.rhythm.enabled, "Detect onsets, tempo and beats on every hop."),
        .number("rhythm.onset_threshold_deviations", \.rhythm.onsetThresholdDeviations, 0.5...5, "", "A reported onset needs the onset signal (or a high transient, such as a hi-hat) above its recent mean + this many standard deviations (seed: 1.5; the beat grid's onsets keep 1.5)."),
        .number("rhythm.onset_statistics_seconds", \.rhythm.onsetStatisticsSeconds, 1...60, "s", "Time constant of the running mean and deviation behind the onset threshold (seed: ~10 s)."),
        .number("rhythm.onset_minimum_gap_ms", \.rhythm.onsetMinimumGapMilliseconds, 20...500, "ms", "Shortest time between two onsets (seed: 100 ms)."),
        .number("rhythm.minimum_bpm", \.rhythm.minimumBpm, 30...300, "BPM", "Slowest tempo reported."),
        .number("rhythm.maximum_bpm", \.rhythm.maximumBpm, 40...400, "BPM", "Fastest tempo reported."),
        .number("rhythm.preferred_minimum_bpm", \.rhythm.preferredMinimumBpm, 30...300, "BPM", "Lower end of the range preferred when a tempo and its double or half are equally likely."),
        .number("rhythm.preferred_maximum_bpm", \.rhythm.preferredMaximumBpm, 40...400, "BPM", "Upper end of that preferred range."),
        .number("rhythm.minimum_confidence", \.rhythm.minimumConfidence, 0.05...0.95, "", "Normalised onset autocorrelation at the beat period needed for a tempo estimate."),
        .number("rhythm.tempo_memory_seconds", \.rhythm.tempoMemorySeconds, 1...20, "s", "Memory of the running onset autocorrelation: longer is steadier, shorter follows tempo changes sooner."),
        .wholeNumber("rhythm.beats_per_bar", \.rhythm.beatsPerBar, 1...16, "", "Beats per bar for the beat-in-bar counter."),
        .number("rhythm.lead_ms", \.rhythm.leadMilliseconds, 0...500, "ms", "Send beat events (and the phase) this much early, so lights land on the audible beat."),
    ]

    /// Pairs that must be strictly ordered once the whole preset is applied.
    public static let orderings: [PresetOrdering] = [
        PresetOrdering(lower: "spectrum.minimum_frequency_hz", upper: "spectrum.maximum_frequency_hz"),
        PresetOrdering(lower: "auto_level.minimum_ceiling_db", upper: "auto_level.maximum_ceiling_db"),
        PresetOrdering(lower: "pitch.minimum_frequency_hz", upper: "pitch.maximum_frequency_hz"),
        PresetOrdering(lower: "rhythm.minimum_bpm", upper: "rhythm.maximum_bpm"),
        PresetOrdering(lower: "rhythm.preferred_minimum_bpm", upper: "rhythm.preferred_maximum_bpm"),
    ]

    /// Keys an earlier version wrote that no longer change anything, each with what took its
    /// place. Every preset and NSM session state file that Spectrum writes holds every key, so
    /// these are read and ignored: a session saved before still opens, and its next save leaves
    /// them out.
    public static let retired: [(path: String, replacement: String)] = [
        ("pitch.membrane_decay_db_per_second", "pitch.membrane_rise_db"),
    ]

    /// Section names in table order, without repeats.
    public static var sections: [String] {
        var seen: [String] = []
        for key in all where !seen.contains(key.section) { seen.append(key.section) }
        return seen
    }

    /// The table entry for `spectrum.band_count`-style `path`, if any.
    public static func key(_ path: String) -> PresetKey? { all.first { $0.path == path } }
}
