import Glibc
import SpectrumCore

/// What the renderer reads besides the frame: the host's status (once per second) and the
/// health of every target. Filled by the publisher thread.
struct RenderContext {
    /// The latest status; `isStatusFrame` says whether it is new with this frame.
    var status = PublisherStatus()
    var isStatusFrame = false
    var targets: [TargetHealth] = []
}

/// One rig compiled for a band count, group count, prefix and output rate: addresses are C
/// strings made once, every route's element count is fixed, and each frame turns into OSC
/// datagrams (one bundle, or one per message for plain rigs) written by `OSCWriter` into one
/// buffer that only grows.
///
/// Publisher thread only; after the first frames it allocates only for number-as-text routes
/// (`format`), when their message goes. Not thread-safe.
final class RigRenderer {
    let rig: Rig
    private let routes: [CompiledRoute]
    private let outputRateHz: Double
    private let bandCount: Int
    /// The frame number at which each event last happened (a mailbox beat: the next frame's),
    /// for pulses held a route's `holdFrames` from there.
    private var eventFrame = EventFrames()
    private var onsetStrength: Float = 0
    /// True while rendering a beat from the mailbox: `bpm` is the beat's own.
    private var renderingBeatEvent = false
    /// The newest beat (early or in its frame): `beat.count` and `beat.in_bar` hold it between beats.
    private var lastBeat = BeatReading.none
    private var lastBeatBPM: Float = 0
    /// The time of the beat already handled from the mailbox: its frame does not trigger again.
    private var earlyBeatTimeFrames: Double?
    private var frameCounter = 0
    private let noteNames: [UnsafeMutablePointer<CChar>]
    private let emptyText: UnsafeMutablePointer<CChar>
    private var targetTexts: [(address: UnsafeMutablePointer<CChar>, state: [TargetHealth.State: UnsafeMutablePointer<CChar>])] = []
    private var writer = OSCWriter()
    /// One message's values, texts and type tags, sized for the widest route.
    private let scratch: UnsafeMutablePointer<Float>
    private let scratchTexts: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let scratchTags: UnsafeMutablePointer<UInt8>

    /// The frame number at which each event last happened (nil: never).
    private struct EventFrames {
        var onset: Int?, beat: Int?, downbeat: Int?
        subscript(kind: RouteSource.EventKind) -> Int? {
            get {
                switch kind {
                case .onset: onset
                case .beat: beat
                case .downbeat: downbeat
                }
            }
            set {
                switch kind {
                case .onset: onset = newValue
                case .beat: beat = newValue
                case .downbeat: downbeat = newValue
                }
            }
        }
    }

    /// Throws a one-line `OSCConfigurationError` naming the rig and the route's line when a
    /// route cannot be built for this band count (e.g. `bands 1-200` of 128).
    init(rig: Rig, prefix: String, bandCount: Int, outputRateHz: Double, targetCount: Int) throws {
        self.rig = rig
        self.outputRateHz = outputRateHz
        self.bandCount = bandCount
        var compiled: [CompiledRoute] = []
        for (index, route) in rig.routes.enumerated() {
            compiled.append(try CompiledRoute(route, index: index, rig: rig, prefix: prefix, bandCount: bandCount,
                                              outputRateHz: outputRateHz, targetCount: targetCount))
        }
        routes = compiled
        noteNames = (0..<128).map { strdup(PitchReading(frequencyHz: 1, midiNote: Float($0), noteNumber: Int32($0), cents: 0, confidence: 1).noteName!)! }
        emptyText = strdup("")!
        let widest = max(compiled.map(\.valuesPerMessage).max() ?? 0, 1)
        scratch = .allocate(capacity: widest)
        scratch.initialize(repeating: 0, count: widest)
        scratchTexts = .allocate(capacity: widest)
        scratchTexts.initialize(repeating: nil, count: widest)
        scratchTags = .allocate(capacity: widest)
        scratchTags.initialize(repeating: 0, count: widest)
    }

    deinit {
        for route in routes { route.free() }
        for name in noteNames { Glibc.free(name) }
        Glibc.free(emptyText)
        for texts in targetTexts {
            Glibc.free(texts.address)
            for text in texts.state.values { Glibc.free(text) }
        }
        writer.free()
        scratch.deallocate()
        scratchTexts.deallocate()
        scratchTags.deallocate()
    }

    /// True when a beat event from the mailbox can produce messages (routes that fire on beats
    /// or pulse on them).
    var sendsOnBeats: Bool { routes.contains(where: \.dependsOnBeats) }

    /// Renders the frame's datagrams and hands each to `send` (valid only during the call).
    /// `timeTag` is used when the rig tags with the capture time. With `onsetTimeTag` (the
    /// onset's own acoustic time, live) such a bundled rig sends its onset routes first, in a
    /// bundle of their own tagged with it, and leaves them out of the frame's bundle.
    func render(_ frame: AnalysisFrame, context: RenderContext, timeTag: OSCTimeTag, onsetTimeTag: OSCTimeTag? = nil,
                send: (UnsafeRawBufferPointer) -> Void) {
        // 1) Events of this frame → pulses (a beat already sent early does not fire again).
        let beatIsNew = frame.beat.isBeat && frame.beat.timeFrames != earlyBeatTimeFrames
        if frame.onset.isOnset {
            eventFrame[.onset] = frameCounter
            onsetStrength = OSCValueGuard.unit(frame.onset.strength)
        }
        if beatIsNew { takeBeat(frame.beat, bpm: frame.tempo.isLocked ? frame.tempo.bpm : 0) }
        let events = FrameEvents(onset: frame.onset.isOnset, beat: beatIsNew, downbeat: beatIsNew && frame.beat.inBar == 1,
                                 status: context.isStatusFrame)
        if let onsetTimeTag, frame.onset.isOnset, rig.bundled, rig.timeTag == .capture {
            emit(frame, context: context, events: events, only: { $0.condition == .onset }, timeTag: onsetTimeTag, send: send)
            emit(frame, context: context, events: events, only: { $0.condition != .onset }, timeTag: timeTag, send: send)
        } else {
            emit(frame, context: context, events: events, only: { _ in true }, timeTag: timeTag, send: send)
        }
        frameCounter += 1
    }

    /// Renders the routes a beat from the mailbox moves (those on beats and beat pulses) at
    /// once, ahead of the beat's frame.
    func renderBeat(_ event: BeatMailbox.Event, lastFrame: AnalysisFrame, context: RenderContext, timeTag: OSCTimeTag,
                    send: (UnsafeRawBufferPointer) -> Void) {
        earlyBeatTimeFrames = event.beat.timeFrames
        takeBeat(event.beat, bpm: event.bpm)
        let events = FrameEvents(onset: false, beat: true, downbeat: event.beat.inBar == 1, status: false)
        renderingBeatEvent = true
        emit(lastFrame, context: context, events: events, only: \.dependsOnBeats, timeTag: timeTag, send: send)
        renderingBeatEvent = false
    }

    /// Renders the status routes alone, without a frame: the publisher's heartbeat while no
    /// audio flows (the JACK server is lost). `lastFrame` gives the cumulative counters.
    func renderStatus(lastFrame: AnalysisFrame, context: RenderContext, send: (UnsafeRawBufferPointer) -> Void) {
        let events = FrameEvents(onset: false, beat: false, downbeat: false, status: true)
        emit(lastFrame, context: context, events: events, only: { $0.condition == .status }, timeTag: .immediate, send: send)
    }

    private func takeBeat(_ beat: BeatReading, bpm: Float) {
        lastBeat = beat
        lastBeatBPM = bpm
        eventFrame[.beat] = frameCounter
        if beat.inBar == 1 { eventFrame[.downbeat] = frameCounter }
    }

    private struct FrameEvents {
        var onset: Bool, beat: Bool, downbeat: Bool, status: Bool
    }

    private func emit(_ frame: AnalysisFrame, context: RenderContext, events: FrameEvents, only include: (CompiledRoute) -> Bool,
                      timeTag: OSCTimeTag, send: (UnsafeRawBufferPointer) -> Void) {
        prepareTargetTexts(context.targets)
        let tag = rig.timeTag == .capture ? timeTag : .immediate
        writer.reset()
        if rig.bundled { writer.beginBundle(seconds: tag.seconds, fraction: tag.fraction) }
        var messageCount = 0
        for route in routes where include(route) {
            switch route.condition {
            case nil: break
            case .pitchActive?: guard frame.pitch.hasNote && frame.pitch.noteNumber < 128 else { continue }
            case .stringActive?: guard frame.pitch.stringName != nil else { continue }
            case .onset?: guard events.onset else { continue }
            case .beat?: guard events.beat else { continue }
            case .downbeat?: guard events.downbeat else { continue }
            case .tempoLocked?: guard frame.tempo.isLocked else { continue }
            case .status?: guard events.status else { continue }
            }
            for element in 0..<route.messageCount {
                fillValues(route, element: element, frame: frame, context: context)
                guard route.shouldSend(message: element, values: scratch, texts: scratchTexts, frame: frameCounter) else { continue }
                if rig.bundled {
                    let start = writer.beginElement()
                    route.write(message: element, values: scratch, texts: scratchTexts, into: &writer, tagScratch: scratchTags)
                    writer.endElement(at: start)
                    messageCount += 1
                } else {
                    writer.reset()
                    route.write(message: element, values: scratch, texts: scratchTexts, into: &writer, tagScratch: scratchTags)
                    send(writer.written)
                }
            }
        }
        if rig.bundled, messageCount > 0 { send(writer.written) }
    }

    // MARK: Values

    private func fillValues(_ route: CompiledRoute, element: Int, frame: AnalysisFrame, context: RenderContext) {
        var slot = 0
        let values = route.values, counts = route.valueCounts
        for valueIndex in 0..<values.count {
            let value = values[valueIndex]
            let sourceCount = counts[valueIndex]
            let count = route.perElement ? 1 : sourceCount
            for index in 0..<count {
                let elementIndex = route.perElement ? (value.source.isVector ? element : 0) : index
                if value.source.isText {
                    scratchTexts[slot] = text(value.source, element: elementIndex, frame: frame, context: context)
                    scratch[slot] = 0
                } else {
                    let raw = number(value.source, element: elementIndex, frame: frame, context: context, holdFrames: route.holdFrames)
                    scratch[slot] = Float(RouteMath.scale(raw, source: value.source, scaling: value.scaling, isBlob: route.isBlob))
                    scratchTexts[slot] = nil
                }
                slot += 1
            }
        }
    }

    private func isHeld(_ event: RouteSource.EventKind, holdFrames: Int) -> Bool {
        guard let start = eventFrame[event] else { return false }
        return frameCounter - start < holdFrames
    }

    private func number(_ source: RouteSource, element: Int, frame: AnalysisFrame, context: RenderContext, holdFrames: Int) -> Double {
        let locked = frame.tempo.isLocked && frame.tempo.bpm.isFinite
        switch source {
        case .bands(let range): return Double(frame.bands[(range?.lowerBound ?? 1) - 1 + element])
        case .peaks(let range): return Double(frame.peaks[(range?.lowerBound ?? 1) - 1 + element])
        case .groups(let index, let count):
            let grouping = BandGrouping(groupCount: count ?? rig.groupCount)
            var value: Float = 0
            for band in grouping.bands(ofGroup: (index.map { $0 - 1 }) ?? element, bandCount: min(frame.bandCount, bandCount)) {
                value = max(value, OSCValueGuard.unit(frame.bands[band]))
            }
            return Double(value)
        case .level(let field):
            switch field {
            case .vu: return Double(frame.level.vu)
            case .rms: return Double(frame.level.rms)
            case .peak: return Double(frame.level.peak)
            case .rmsDecibels: return Double(frame.level.rmsDecibels)
            case .peakDecibels: return Double(frame.level.peakDecibels)
            }
        case .pulse(let event): return isHeld(event, holdFrames: holdFrames) ? 1 : 0
        case .onsetStrength: return isHeld(.onset, holdFrames: holdFrames) ? Double(onsetStrength) : 0
        case .beatPhase: return locked ? Double(frame.tempo.phase) : 0
        case .beatInBar: return Double(lastBeat.inBar)
        case .beatCount: return Double(lastBeat.count)
        case .bpm:
            // A beat's own BPM (the mailbox's) on its early messages; else the frame's.
            if renderingBeatEvent { return Double(lastBeatBPM) }
            return locked ? Double(frame.tempo.bpm) : 0
        case .tempoConfidence: return locked ? Double(frame.tempo.confidence) : 0
        case .pitchHz: return frame.pitch.hasNote ? Double(frame.pitch.frequencyHz) : 0
        case .pitchMidi: return frame.pitch.hasNote ? Double(frame.pitch.midiNote) : 0
        case .pitchCents: return frame.pitch.hasNote ? Double(frame.pitch.cents) : 0
        case .pitchConfidence: return frame.pitch.hasNote ? Double(frame.pitch.confidence) : 0
        case .pitchActive: return frame.pitch.hasNote && frame.pitch.noteNumber < 128 ? 1 : 0
        case .pitchStrobe: return frame.pitch.hasNote ? Double(frame.pitch.strobePhase) : 0
        case .stringCents: return frame.pitch.hasNote && frame.pitch.stringNoteNumber >= 0 ? Double(frame.pitch.stringCents) : 0
        case .waveform: return Double(frame.waveform[element])
        case .status(let field):
            let status = context.status
            switch field {
            case .sampleRateHz: return Double(status.sampleRateHz)
            case .periodFrames: return Double(status.periodFrames)
            case .xruns: return Double(status.xruns)
            case .droppedFrames: return Double(status.droppedFrames)
            case .dspLoadPercent: return Double(status.dspLoadPercent)
            case .callbackMicroseconds: return Double(status.worstCallbackMicroseconds)
            case .nonFiniteSamples: return Double(min(frame.nonFiniteSampleCount, UInt64(Int32.max)))
            case .serverRunning: return status.serverRunning ? 1 : 0
            case .reconnections: return Double(status.reconnections)
            case .serverLostSeconds: return Double(status.serverLostSeconds)
            case .midiClockRunning: return status.midiClockRunning ? 1 : 0
            case .midiClockBpm: return Double(status.midiClockBpm)
            case .midiClockTicks: return Double(min(status.midiClockTicks, Int(Int32.max)))
            case .midiClockPhaseErrorMilliseconds: return Double(status.midiClockPhaseErrorMilliseconds)
            case .linkPeers: return Double(status.linkPeers)
            case .linkLeading: return status.linkLeading ? 1 : 0
            case .linkBpm: return Double(status.linkBpm)
            case .linkPhaseErrorMilliseconds: return Double(status.linkPhaseErrorMilliseconds)
            }
        case .target(let field):
            guard element < context.targets.count else { return 0 }
            let health = context.targets[element]
            switch field {
            case .index: return Double(element + 1)
            case .sent: return Double(health.sent)
            case .errors: return Double(health.errors)
            case .address, .state: return 0
            }
        case .noteName, .writtenNoteName, .stringName: return 0
        }
    }

    private func text(_ source: RouteSource, element: Int, frame: AnalysisFrame, context: RenderContext) -> UnsafeMutablePointer<CChar> {
        switch source {
        case .noteName:
            let number = Int(frame.pitch.noteNumber)
            return frame.pitch.hasNote && number < 128 ? noteNames[number] : emptyText
        case .writtenNoteName:
            let number = Int(frame.pitch.writtenNoteNumber)
            return frame.pitch.hasNote && (0..<128).contains(number) ? noteNames[number] : emptyText
        case .stringName:
            let number = Int(frame.pitch.stringNoteNumber)
            return frame.pitch.hasNote && (0..<128).contains(number) ? noteNames[number] : emptyText
        case .target(.address):
            return element < targetTexts.count ? targetTexts[element].address : emptyText
        case .target(.state):
            guard element < targetTexts.count, element < context.targets.count else { return emptyText }
            return targetTexts[element].state[context.targets[element].state] ?? emptyText
        default:
            return emptyText
        }
    }

    /// C strings for the targets' addresses and states, made when the target list first shows.
    private func prepareTargetTexts(_ targets: [TargetHealth]) {
        guard targetTexts.count != targets.count else { return }
        for texts in targetTexts {
            Glibc.free(texts.address)
            for text in texts.state.values { Glibc.free(text) }
        }
        targetTexts = targets.map { health in
            (strdup(health.address)!, Dictionary(uniqueKeysWithValues: TargetHealth.State.allCases.map { ($0, strdup($0.rawValue)!) }))
        }
    }
}
