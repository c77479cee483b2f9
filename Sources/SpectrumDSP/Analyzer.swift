import CRealtime
import Glibc
import SpectrumCore

/// The whole analysis of one mono stream: accepts blocks of any length and, once per hop,
/// computes the spectrum, levels and waveform into an `AnalysisFrame`.
///
/// Lifecycle (as in aubio and JUCE): `init` allocates and plans everything for one sample
/// rate and configuration (not real-time safe); `process` is the real-time verb (no allocation,
/// lock, system call or I/O: `@_noLocks`, backed by the allocation-counting tests and RTSan);
/// `reset` clears state without allocating. A different sample rate or configuration means a
/// new `Analyzer`, built off the real-time thread.
public struct Analyzer: ~Copyable {
    public let configuration: AnalysisConfiguration
    public let sampleRateHz: Double
    /// Frames between output frames.
    public let hopFrames: Int
    /// Output frames per second (sampleRateHz / hopFrames).
    public var frameRateHz: Double { sampleRateHz / Double(hopFrames) }
    /// Frames in the main analysis window.
    public var windowFrames: Int { mainSpectrum.windowFrames }

    private var history: SampleHistory
    private var bassHistory: SampleHistory
    private var decimator: Decimator
    private let mainSpectrum: PowerSpectrum
    private let bassSpectrum: PowerSpectrum
    private let bandMap: BandMap
    /// Main spectrum bins, then bass spectrum bins.
    private let combinedPower: RealtimeBuffer
    private let bandDecibels: RealtimeBuffer
    private let bandTiltDecibels: RealtimeBuffer
    private let normalisedBands: RealtimeBuffer
    private var autoLevel: AutoLevel
    private let ballistics: BandBallistics
    private var levelMeter: LevelMeter
    private var pitchDetector: PitchDetector
    private let pitchEnabled: Bool
    private var pitchTracker: PitchTracker
    private var tunerNotation: TunerNotation
    private let rhythmEnabled: Bool
    private var onsetDetector: OnsetDetector
    private var hatTransients: HatTransientDetector
    private var tempoEstimator: TempoEstimator
    private var beatTracker: BeatTracker
    /// A beat taken between hops (`consume` ended inside a hop): it goes into the hop's frame.
    private var beatForFrame = BeatReading.none
    /// The latest beat event and how many there have been: a host that feeds short blocks
    /// sees a new beat as soon as the block holding it is consumed, before the hop's frame.
    public private(set) var latestBeat = BeatReading.none
    public private(set) var beatEventCount: UInt64 = 0
    private let latestFrame: UnsafeMutablePointer<AnalysisFrame>
    private var framesUntilHop: Int
    /// Frames before each hop's end at which the spectrum and rhythm stages run, on the samples
    /// up to there (an eighth of a hop, 100 frames at 48 kHz); the level, waveform and tuner run
    /// at the hop's end, where the frame completes. A host calling with short blocks (a JACK
    /// period of 64 frames) thus never pays for the whole hop in one block, and no latency is
    /// added: the bands are 2 ms older than the frame, the tuner and level are not.
    public let spectrumLeadFrames: Int
    private var framesUntilSpectrum: Int
    /// Samples consumed since the start (or the last `reset`): the stream position of the next sample.
    public private(set) var streamFrame: Int64 = 0
    /// NaN or infinite input samples replaced by silence since the start (a real-time anomaly
    /// counter for the non-real-time side to report).
    public private(set) var nonFiniteSampleCount = 0

    /// Decimated sample rate that feeds the bass window: about 3 kHz at every sample rate,
    /// ample for bass bands (below ~440 Hz) and cheap to transform.
    static let bassSampleRateTargetHz = 3000.0
    static let supportedSampleRatesHz: ClosedRange<Double> = 8000...384_000

    /// Prepares the analysis. Allocates and plans FFTs; not real-time safe.
    public init(configuration: AnalysisConfiguration, sampleRateHz: Double) throws(AnalysisConfigurationError) {
        let spectrumConfiguration = configuration.spectrum
        guard Self.supportedSampleRatesHz.contains(sampleRateHz) else {
            throw AnalysisConfigurationError("sample rate \(Self.format(sampleRateHz)) Hz is not supported: expected 8000 to 384000 Hz")
        }
        let nyquistHz = sampleRateHz / 2
        guard spectrumConfiguration.maximumFrequencyHz <= nyquistHz * 0.95 else {
            let neededHz = (spectrumConfiguration.maximumFrequencyHz / 0.95 * 2).rounded(.up)
            throw AnalysisConfigurationError("sample rate \(Self.format(sampleRateHz)) Hz is too low for bands up to \(Self.format(spectrumConfiguration.maximumFrequencyHz)) Hz: expected at least \(Self.format(neededHz)) Hz (or a lower spectrum.maximum_frequency_hz)")
        }
        guard (1...AnalysisFrame.maximumBandCount).contains(spectrumConfiguration.bandCount),
              spectrumConfiguration.minimumFrequencyHz > 0,
              spectrumConfiguration.minimumFrequencyHz < spectrumConfiguration.maximumFrequencyHz else {
            throw AnalysisConfigurationError("spectrum bands: expected 1 to \(AnalysisFrame.maximumBandCount) bands between 0 < minimum < maximum Hz")
        }
        let windowFrames = Int((spectrumConfiguration.windowMilliseconds / 1000 * sampleRateHz).rounded())
        guard windowFrames >= AnalysisFrame.waveformPointCount else {
            throw AnalysisConfigurationError("spectrum.window_ms \(Self.format(spectrumConfiguration.windowMilliseconds)) is only \(windowFrames) frames at \(Self.format(sampleRateHz)) Hz: expected at least \(AnalysisFrame.waveformPointCount)")
        }
        let hopFrames = max(1, Int((sampleRateHz / configuration.outputRateHz).rounded()))
        try Self.validate(rhythm: configuration.rhythm)
        let pitch = configuration.pitch
        guard (-48...48).contains(pitch.transposeSemitones), pitch.temperamentCents.count == 0 || pitch.temperamentCents.count == 12,
              pitch.temperamentCents.allSatisfy({ $0.isFinite && abs($0) < 100 }), pitch.stringNotes.count <= 8,
              pitch.stringNotes.allSatisfy({ (0...127).contains($0) }) else {
            throw AnalysisConfigurationError("tuner notation: expected a transposition of −48 to 48 semitones, 0 or 12 temperament offsets under 100 cents, at most 8 strings with MIDI notes 0 to 127")
        }

        self.configuration = configuration
        self.sampleRateHz = sampleRateHz
        self.hopFrames = hopFrames
        spectrumLeadFrames = hopFrames / 8
        framesUntilSpectrum = hopFrames - spectrumLeadFrames
        let hopSeconds = Double(hopFrames) / sampleRateHz

        // Main path: the newest window of the full-rate signal (long enough for the tuner too).
        pitchDetector = PitchDetector(configuration: configuration.pitch, sampleRateHz: sampleRateHz, hopSeconds: hopSeconds)
        pitchEnabled = configuration.pitch.enabled
        mainSpectrum = PowerSpectrum(windowFrames: windowFrames, sampleRateHz: sampleRateHz, paddingFactor: 1)
        // Onsets read the main spectrum (42.7 ms: sharp enough in time, unlike the bass window).
        rhythmEnabled = configuration.rhythm.enabled
        onsetDetector = OnsetDetector(configuration: configuration.rhythm, sampleRateHz: sampleRateHz, hopFrames: hopFrames,
                                      binCount: mainSpectrum.binCount, binSpacingHz: mainSpectrum.binSpacingHz)
        hatTransients = HatTransientDetector(sampleRateHz: sampleRateHz, thresholdDeviations: configuration.rhythm.onsetThresholdDeviations,
                                             statisticsSeconds: configuration.rhythm.onsetStatisticsSeconds)
        tempoEstimator = TempoEstimator(configuration: configuration.rhythm, frameRateHz: sampleRateHz / Double(hopFrames))
        beatTracker = BeatTracker(configuration: configuration.rhythm, sampleRateHz: sampleRateHz)
        history = SampleHistory(capacity: max(windowFrames, pitchDetector.windowFrames, onsetDetector.historyFrames))

        // Bass path: a long window of the decimated signal, zero-padded 4× so that linear
        // interpolation between bins (≤ 1.5 Hz apart) follows the true spectrum closely.
        let factor = max(1, Int((sampleRateHz / Self.bassSampleRateTargetHz).rounded()))
        let bassRateHz = sampleRateHz / Double(factor)
        let bassWindowFrames = Int((spectrumConfiguration.bassWindowMilliseconds / 1000 * bassRateHz).rounded())
        decimator = Decimator(factor: factor)
        bassHistory = SampleHistory(capacity: bassWindowFrames)
        bassSpectrum = PowerSpectrum(windowFrames: bassWindowFrames, sampleRateHz: bassRateHz, paddingFactor: 4)

        combinedPower = RealtimeBuffer(count: mainSpectrum.binCount + bassSpectrum.binCount, repeating: 0)
        bandMap = BandMap(
            bandCount: spectrumConfiguration.bandCount,
            minimumFrequencyHz: spectrumConfiguration.minimumFrequencyHz,
            maximumFrequencyHz: spectrumConfiguration.maximumFrequencyHz,
            main: BandMap.Source(
                offset: 0, binCount: mainSpectrum.binCount, binSpacingHz: mainSpectrum.binSpacingHz,
                equivalentNoiseBandwidthHz: mainSpectrum.equivalentNoiseBandwidthHz,
                resolutionHz: sampleRateHz / Double(windowFrames), usableLimitHz: nyquistHz),
            bass: BandMap.Source(
                offset: mainSpectrum.binCount, binCount: bassSpectrum.binCount, binSpacingHz: bassSpectrum.binSpacingHz,
                equivalentNoiseBandwidthHz: bassSpectrum.equivalentNoiseBandwidthHz,
                resolutionHz: bassRateHz / Double(bassWindowFrames), usableLimitHz: bassRateHz * 0.3)
        )

        let bandCount = spectrumConfiguration.bandCount
        bandDecibels = RealtimeBuffer(count: bandCount, repeating: realtimeDecibelsFromPower(0))
        bandTiltDecibels = RealtimeBuffer(count: bandCount, repeating: 0)
        if configuration.tilt.enabled {
            for band in 0..<bandCount {
                bandTiltDecibels[band] = Float(configuration.tilt.boostDecibels(atFrequencyHz: bandMap.centreFrequenciesHz[band]))
            }
        }
        normalisedBands = RealtimeBuffer(count: bandCount, repeating: 0)
        autoLevel = AutoLevel(configuration: configuration.autoLevel, hopSeconds: hopSeconds)
        ballistics = BandBallistics(bandCount: bandCount, configuration: configuration.ballistics, hopSeconds: hopSeconds)
        levelMeter = LevelMeter(configuration: configuration.level)
        pitchTracker = PitchTracker(referenceHz: configuration.pitch.referenceHz)
        tunerNotation = TunerNotation(configuration: configuration.pitch, hopSeconds: hopSeconds)
        latestFrame = .allocate(capacity: 1)
        latestFrame.initialize(to: AnalysisFrame())
        latestFrame.pointee.bandCount = bandCount
        framesUntilHop = hopFrames
    }

    deinit { latestFrame.deallocate() }

    /// Feeds mono samples up to the next analysis point (the spectrum point or the hop's end)
    /// and returns how many it took (≤ `frameCount`) and whether that completed a frame, now
    /// readable at `frame`. Hosts call it in a loop until the block is used up. Real-time safe.
    @_noLocks
    public mutating func consume(_ samples: UnsafePointer<Float>, frameCount: Int) -> (consumed: Int, frameCompleted: Bool) {
        let run = min(min(frameCount, framesUntilHop), framesUntilSpectrum)
        let previousControl = _unsafePerformance { spectrum_denormals_disable() }
        for offset in 0..<run {
            var sample = samples[offset]
            if !sample.isFinite {
                sample = 0
                nonFiniteSampleCount &+= 1
            }
            history.append(sample)
            decimator.push(sample, into: &bassHistory)
            levelMeter.observe(sample)
            if rhythmEnabled { hatTransients.observe(sample, frame: streamFrame + Int64(offset)) }
        }
        framesUntilHop -= run
        framesUntilSpectrum -= run
        streamFrame += Int64(run)
        if framesUntilSpectrum == 0 {
            analyseSpectrum()
            if rhythmEnabled { analyseRhythm() }
            framesUntilSpectrum = hopFrames
        } else if rhythmEnabled {
            let beat = beatTracker.takeDueBeat(streamFrame: streamFrame)
            if beat.isBeat {
                beatForFrame = beat
                recordBeatEvent(beat)
            }
        }
        let completed = framesUntilHop == 0
        if completed {
            completeFrame()
            framesUntilHop = hopFrames
        }
        _unsafePerformance { spectrum_denormals_restore(previousControl) }
        return (run, completed)
    }

    /// The latest completed frame. Read it when `consume` reports it complete: the next hop's
    /// spectrum point already overwrites its bands and rhythm fields.
    public var frame: UnsafePointer<AnalysisFrame> {
        @_noLocks get { UnsafePointer(latestFrame) }
    }

    /// Sets `captureTimeMicroseconds` of the latest completed frame, and of its onset (the
    /// frame's time less the onset's age in samples: the onset was located in the samples, it
    /// lies up to a hop and a half before the frame's newest sample). The live host stamps each
    /// frame after `consume` reports it complete and before pushing it. Real-time safe.
    @_noLocks
    public mutating func stampCaptureTime(microseconds: UInt64) {
        latestFrame.pointee.captureTimeMicroseconds = microseconds
        guard latestFrame.pointee.onset.strength > 0 else { return }  // (isOnset is not @_noLocks)
        let ageFrames = max(0, Double(latestFrame.pointee.streamFrame) - latestFrame.pointee.onset.timeFrames)
        let ageMicroseconds = UInt64(ageFrames * 1_000_000 / sampleRateHz + 0.5)  // rounded (`.rounded()` is not @_noLocks)
        latestFrame.pointee.onset.captureTimeMicroseconds = microseconds > ageMicroseconds ? microseconds - ageMicroseconds : 0
    }

    /// Feeds a whole block (any length, including 0) and pushes each completed frame into
    /// `ring`; returns how many frames were dropped because the ring was full. Real-time safe.
    @_noLocks
    public mutating func process(_ samples: UnsafePointer<Float>, frameCount: Int, into ring: FrameRing) -> Int {
        var dropped = 0
        var offset = 0
        while offset < frameCount {
            let step = consume(samples + offset, frameCount: frameCount - offset)
            offset += step.consumed
            if step.frameCompleted && !ring.push(latestFrame) { dropped += 1 }
        }
        return dropped
    }

    /// Feeds a whole block and calls `emit` with each completed frame. For offline hosts and
    /// tests; not real-time safe (the closure may do anything).
    public mutating func process(_ samples: UnsafePointer<Float>, frameCount: Int, emit: (borrowing AnalysisFrame) -> Void) {
        var offset = 0
        while offset < frameCount {
            let step = consume(samples + offset, frameCount: frameCount - offset)
            offset += step.consumed
            if step.frameCompleted { emit(latestFrame.pointee) }
        }
    }

    /// Stages 1–5, `spectrumLeadFrames` before the hop's end.
    @_noLocks
    private mutating func analyseSpectrum() {
        let bandCount = bandMap.bandCount
        // 1) Window + FFT + power, for the main and the bass window.
        mainSpectrum.compute(from: history, into: combinedPower.base)
        bassSpectrum.compute(from: bassHistory, into: combinedPower.base + mainSpectrum.binCount)
        // 2) Log bands (power), reusing normalisedBands as scratch.
        bandMap.map(power: combinedPower.base, into: normalisedBands.base)
        // 3) dB with the 1e-20 floor, plus the music-mode tilt (zero when off).
        var loudestDecibels = -Float.infinity
        for band in 0..<bandCount {
            let decibels = approximateDecibelsFromPower(normalisedBands[band]) + bandTiltDecibels[band]
            bandDecibels[band] = decibels
            loudestDecibels = max(loudestDecibels, decibels)
        }
        // 4) Auto-level and normalise to 0..1.
        autoLevel.track(loudestDecibels: finiteOr(loudestDecibels, realtimeDecibelsFromPower(0)))
        for band in 0..<bandCount {
            normalisedBands[band] = autoLevel.normalise(bandDecibels[band])
        }
        // 5) Smoothing and peak-hold.
        ballistics.update(targets: normalisedBands.base)
        for band in 0..<bandCount {
            latestFrame.pointee.bands[band] = ballistics.smoothed[band]
            latestFrame.pointee.peaks[band] = ballistics.peaks[band]
        }
    }

    /// Stages 6–7 at the hop's end: level, waveform, pitch, the beat phase; the frame is complete.
    @_noLocks
    private mutating func completeFrame() {
        // 6) Level and waveform of the window ending now.
        latestFrame.pointee.streamFrame = streamFrame
        latestFrame.pointee.nonFiniteSampleCount = UInt64(nonFiniteSampleCount)
        latestFrame.pointee.level = levelMeter.read(history: history, windowFrames: mainSpectrum.windowFrames)
        let windowFrames = mainSpectrum.windowFrames
        let pointCount = latestFrame.pointee.waveform.count
        for point in 0..<pointCount {
            latestFrame.pointee.waveform[point] = history.latest(windowFrames, at: point * windowFrames / pointCount)
        }
        // 7) Pitch: raw estimate, the display's tracking, then the musician's notation.
        if pitchEnabled {
            latestFrame.pointee.pitch = pitchTracker.update(pitchDetector.detect(history: history))
            tunerNotation.annotate(&latestFrame.pointee.pitch)
        }
        // The hop's beat (the last, if several), and the phase now.
        if rhythmEnabled {
            latestFrame.pointee.beat = beatForFrame
            beatForFrame = .none
            if latestFrame.pointee.tempo.bpm > 0 { latestFrame.pointee.tempo.phase = beatTracker.phase(atStreamFrame: streamFrame) }
        }
    }

    @_noLocks
    private mutating func analyseRhythm() {
        // 8) Onsets: weighted log-power flux of the main spectrum, adaptive threshold, exact time
        //    (`streamFrame` is the stage's position, `spectrumLeadFrames` before the hop's end).
        let onset = onsetDetector.detect(power: combinedPower.base, history: history, hopEndFrame: streamFrame,
                                         transient: hatTransients.take())
        latestFrame.pointee.onset = OnsetReading(strength: onset.eventStrength, timeFrames: onset.eventTimeFrames)
        if onset.hatStrength > 0 { beatTracker.addHatOnset(timeFrames: onset.timeFrames, strength: onset.hatStrength) }
        if onset.bassStrength > 0 { beatTracker.addBassOnset(timeFrames: onset.bassTimeFrames, strength: onset.bassStrength) }
        if onset.strength > 0 { beatTracker.addOnset(timeFrames: onset.timeFrames, strength: onset.strength, bassShare: onset.bassShare) }
        // 9) Tempo: recursive autocorrelation of the compressed, detrended onset signal, one
        //    scored decision that also weighs what the beat grid measured about its octave.
        //    A grid without onsets for more than a bar in music far under its loudest: the music stopped.
        let gridBeatsWithOnsets = beatTracker.beatsWithOnsets(lastBeats: tempoEstimator.parameters.musicStoppedWindowBeats,
                                                              atStreamFrame: streamFrame)
        tempoEstimator.followMusicLevel(bandPower: onset.bandPower, gridBeatsWithOnsets: gridBeatsWithOnsets)
        tempoEstimator.update(flux: onset.flux, hatFlux: onset.hatFlux, grid: beatTracker.octaveEvidence)
        // 10) Beat grid, phase and beat events.
        let beat = beatTracker.update(agreedBpm: tempoEstimator.agreedBpm, generation: tempoEstimator.generation, hopEndFrame: streamFrame)
        latestFrame.pointee.tempo = TempoReading(bpm: beat.bpm, confidence: tempoEstimator.confidence, phase: beat.phase)
        if beat.beat.isBeat {
            recordBeatEvent(beat.beat)
            beatForFrame = beat.beat
        }
    }

    @_noLocks
    private mutating func recordBeatEvent(_ beat: BeatReading) {
        latestBeat = beat
        beatEventCount &+= 1
    }

    /// Forgets the tempo and beat grid and learns them afresh from the music now playing (the
    /// "re-learn" control: use it when the tempo locked on the wrong octave or an old track).
    /// Onset detection and the recent onset signal are kept. Real-time safe.
    @_noLocks
    public mutating func relearnTempo() {
        tempoEstimator.restart()
        beatTracker.relearn()
        beatForFrame = .none
        latestFrame.pointee.tempo = .none
        latestFrame.pointee.beat = .none
    }

    /// Clears all signal state (as if just prepared). Real-time safe.
    @_noLocks
    public mutating func reset() {
        history.reset()
        bassHistory.reset()
        decimator.reset()
        autoLevel.reset()
        ballistics.reset()
        levelMeter.reset()
        pitchTracker.reset()
        pitchDetector.reset()
        tunerNotation.reset()
        latestFrame.pointee.pitch = .none
        onsetDetector.reset()
        hatTransients.reset()
        tempoEstimator.reset()
        beatTracker.reset()
        beatForFrame = .none
        latestFrame.pointee.onset = .none
        latestFrame.pointee.tempo = .none
        latestFrame.pointee.beat = .none
        bandDecibels.fill(with: realtimeDecibelsFromPower(0))
        framesUntilHop = hopFrames
        framesUntilSpectrum = hopFrames - spectrumLeadFrames
        streamFrame = 0
        nonFiniteSampleCount = 0
    }

    // MARK: Inspection (consumer side; not for the real-time path)

    public var bandCount: Int { bandMap.bandCount }
    public var bandCentreFrequenciesHz: [Double] { bandMap.centreFrequenciesHz }
    /// Number of low bands fed by the long bass window.
    public var bassBandCount: Int { bandMap.bassBandCount }
    /// The band whose range contains `frequencyHz`, or nil outside the analysed range.
    public func band(containingFrequencyHz frequencyHz: Double) -> Int? {
        let spectrum = configuration.spectrum
        guard frequencyHz >= spectrum.minimumFrequencyHz, frequencyHz < spectrum.maximumFrequencyHz else { return nil }
        let position = log(frequencyHz / spectrum.minimumFrequencyHz) / log(spectrum.maximumFrequencyHz / spectrum.minimumFrequencyHz)
        return min(Int(position * Double(bandMap.bandCount)), bandMap.bandCount - 1)
    }
    /// Band levels in dB (after tilt, before normalising) from the latest hop.
    public var bandLevelsDecibels: [Float] { (0..<bandMap.bandCount).map { bandDecibels[$0] } }
    /// The tempo estimator's normalised autocorrelation of the onset signal, per lag in hops
    /// (lag 0 = 1). For diagnostics; allocates.
    public var tempoAutocorrelation: [Float] { tempoEstimator.normalisedAutocorrelation }
    /// The auto-level ceiling in dB after the latest hop.
    public var ceilingDecibels: Float { autoLevel.ceilingDecibels }

    private static func validate(rhythm: RhythmConfiguration) throws(AnalysisConfigurationError) {
        guard rhythm.minimumBpm >= 20, rhythm.maximumBpm <= 400, rhythm.maximumBpm >= rhythm.minimumBpm * 1.5 else {
            throw AnalysisConfigurationError("rhythm BPM range \(format(rhythm.minimumBpm))–\(format(rhythm.maximumBpm)): expected 20 ≤ minimum, maximum ≤ 400 and maximum ≥ 1.5 × minimum")
        }
        guard rhythm.preferredMinimumBpm < rhythm.preferredMaximumBpm,
              rhythm.preferredMinimumBpm < rhythm.maximumBpm, rhythm.preferredMaximumBpm > rhythm.minimumBpm else {
            throw AnalysisConfigurationError("rhythm preferred BPM range \(format(rhythm.preferredMinimumBpm))–\(format(rhythm.preferredMaximumBpm)): expected minimum < maximum, overlapping the BPM range")
        }
        guard rhythm.onsetThresholdDeviations >= 0, rhythm.onsetStatisticsSeconds > 0, rhythm.onsetMinimumGapMilliseconds >= 0,
              rhythm.tempoMemorySeconds > 0, (0...1).contains(rhythm.minimumConfidence) else {
            throw AnalysisConfigurationError("rhythm onset/tempo settings: expected k ≥ 0, statistics and memory times > 0, gap ≥ 0, confidence 0..1")
        }
        guard (1...32).contains(rhythm.beatsPerBar), (0...500).contains(rhythm.leadMilliseconds) else {
            throw AnalysisConfigurationError("rhythm beats per bar \(rhythm.beatsPerBar), lead \(format(rhythm.leadMilliseconds)) ms: expected 1 to 32 beats and 0 to 500 ms")
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
