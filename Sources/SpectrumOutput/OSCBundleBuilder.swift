import CLo
import Glibc
import SpectrumCore

/// Turns one `AnalysisFrame` into one serialised OSC bundle (liblo builds and serialises it).
///
/// Addresses are C strings made once in `init`; per frame there is no string work: one
/// `lo_message_new` per message, `lo_message_add_float`/`_int32` per value, one bundle,
/// `lo_bundle_serialise` into a buffer kept across frames, then `lo_bundle_free_recursive`.
/// Every value passes through `OSCValueGuard`, so NaN/inf never reach the wire.
///
/// Allocates (liblo mallocs); publisher thread only. Not thread-safe.
final class OSCBundleBuilder {
    let messages: OSCMessageSet
    let grouping: BandGrouping
    /// `strdup`ed full addresses, indexed like `OSCMessageKind.allCases` (declaration order;
    /// `path(_:)` maps each kind to its index without allocating).
    private let paths: [UnsafeMutablePointer<CChar>]
    /// "C-1" … "G9" for MIDI notes 0…127, as C strings made once.
    private let noteNames: [UnsafeMutablePointer<CChar>]
    private var buffer: UnsafeMutableRawPointer
    private var bufferCapacity: Int

    init(prefix: String, groupCount: Int, messages: OSCMessageSet) {
        self.messages = messages
        grouping = BandGrouping(groupCount: groupCount)
        paths = OSCMessageKind.allCases.map { strdup(prefix + $0.suffix)! }
        noteNames = (0..<128).map { number in
            strdup(PitchReading(frequencyHz: 1, midiNote: Float(number), noteNumber: Int32(number), cents: 0, confidence: 1).noteName!)!
        }
        bufferCapacity = 8192
        buffer = .allocate(byteCount: bufferCapacity, alignment: 16)
    }

    deinit {
        for path in paths + noteNames { free(path) }
        buffer.deallocate()
    }

    private func path(_ kind: OSCMessageKind) -> UnsafeMutablePointer<CChar> {
        switch kind {
        case .bands: paths[0]
        case .peaks: paths[1]
        case .groups: paths[2]
        case .level: paths[3]
        case .levelDecibels: paths[4]
        case .waveform: paths[5]
        case .status: paths[6]
        case .pitchActive: paths[7]
        case .pitch: paths[8]
        case .note: paths[9]
        case .onset: paths[10]
        case .tempo: paths[11]
        case .beatPhase: paths[12]
        case .beat: paths[13]
        }
    }

    /// Builds and serialises the bundle for `frame` (plus `/status` when `status` is given;
    /// `/beat` only if `includingBeat`). The returned bytes stay valid until the next call.
    /// Empty on a liblo failure (out of memory).
    func serialise(_ frame: borrowing AnalysisFrame, status: PublisherStatus?, timeTag: OSCTimeTag, includingBeat: Bool = true) -> UnsafeRawBufferPointer {
        guard let bundle = lo_bundle_new(lo_timetag(sec: timeTag.seconds, frac: timeTag.fraction)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        defer { lo_bundle_free_recursive(bundle) }
        let bandCount = min(max(frame.bandCount, 0), AnalysisFrame.maximumBandCount)

        // 1) Spectrum
        if messages.contains(.bands), let message = lo_message_new() {
            for band in 0..<bandCount { lo_message_add_float(message, OSCValueGuard.unit(frame.bands[band])) }
            add(message, .bands, to: bundle)
        }
        if messages.contains(.peaks), let message = lo_message_new() {
            for band in 0..<bandCount { lo_message_add_float(message, OSCValueGuard.unit(frame.peaks[band])) }
            add(message, .peaks, to: bundle)
        }
        if messages.contains(.groups), let message = lo_message_new() {
            for group in 0..<grouping.groupCount {
                var value: Float = 0
                for band in grouping.bands(ofGroup: group, bandCount: bandCount) {
                    value = max(value, OSCValueGuard.unit(frame.bands[band]))
                }
                lo_message_add_float(message, value)
            }
            add(message, .groups, to: bundle)
        }

        // 2) Level
        if messages.contains(.level), let message = lo_message_new() {
            lo_message_add_float(message, OSCValueGuard.unit(frame.level.vu))
            add(message, .level, to: bundle)
        }
        if messages.contains(.levelDecibels), let message = lo_message_new() {
            lo_message_add_float(message, OSCValueGuard.decibels(frame.level.rmsDecibels))
            lo_message_add_float(message, OSCValueGuard.decibels(frame.level.peakDecibels))
            add(message, .levelDecibels, to: bundle)
        }

        // 3) Tuner
        let pitch = frame.pitch
        let hasNote = pitch.hasNote && pitch.noteNumber < 128
        if messages.contains(.pitchActive), let message = lo_message_new() {
            lo_message_add_float(message, hasNote ? 1 : 0)
            add(message, .pitchActive, to: bundle)
        }
        if hasNote, messages.contains(.pitch), let message = lo_message_new() {
            lo_message_add_float(message, OSCValueGuard.nonNegative(pitch.frequencyHz))
            lo_message_add_float(message, OSCValueGuard.nonNegative(pitch.midiNote, maximum: 127))
            lo_message_add_float(message, pitch.cents.isFinite ? min(max(pitch.cents, -50), 50) : 0)
            lo_message_add_float(message, OSCValueGuard.unit(pitch.confidence))
            add(message, .pitch, to: bundle)
        }
        if hasNote, messages.contains(.note), let message = lo_message_new() {
            lo_message_add_string(message, noteNames[Int(pitch.noteNumber)])
            add(message, .note, to: bundle)
        }

        // 4) Rhythm
        if frame.onset.isOnset, messages.contains(.onset), let message = lo_message_new() {
            lo_message_add_float(message, OSCValueGuard.unit(frame.onset.strength))
            add(message, .onset, to: bundle)
        }
        let tempo = frame.tempo
        let locked = tempo.isLocked && tempo.bpm.isFinite
        if messages.contains(.tempo), let message = lo_message_new() {
            lo_message_add_float(message, locked ? OSCValueGuard.nonNegative(tempo.bpm, maximum: 1000) : 0)
            lo_message_add_float(message, locked ? OSCValueGuard.unit(tempo.confidence) : 0)
            add(message, .tempo, to: bundle)
        }
        if messages.contains(.beatPhase), let message = lo_message_new() {
            lo_message_add_float(message, locked ? OSCValueGuard.unit(tempo.phase) : 0)
            add(message, .beatPhase, to: bundle)
        }
        if includingBeat, frame.beat.isBeat {
            addBeat(frame.beat, bpm: locked ? tempo.bpm : 0, to: bundle)
        }

        // 5) Waveform
        if messages.contains(.waveform), let message = lo_message_new() {
            for point in 0..<AnalysisFrame.waveformPointCount {
                lo_message_add_float(message, OSCValueGuard.sample(frame.waveform[point]))
            }
            add(message, .waveform, to: bundle)
        }

        // 6) Status
        if let status, messages.contains(.status), let message = lo_message_new() {
            lo_message_add_int32(message, OSCValueGuard.count(status.sampleRateHz))
            lo_message_add_int32(message, OSCValueGuard.count(status.periodFrames))
            lo_message_add_int32(message, OSCValueGuard.count(status.xruns))
            lo_message_add_int32(message, OSCValueGuard.count(status.droppedFrames))
            lo_message_add_float(message, OSCValueGuard.nonNegative(status.dspLoadPercent, maximum: 100))
            lo_message_add_float(message, OSCValueGuard.nonNegative(status.worstCallbackMicroseconds))
            add(message, .status, to: bundle)
        }

        return serialised(bundle)
    }

    /// A bundle holding only `/beat` for a beat event sent ahead of its frame.
    func serialiseBeat(_ event: BeatMailbox.Event, timeTag: OSCTimeTag) -> UnsafeRawBufferPointer {
        guard let bundle = lo_bundle_new(lo_timetag(sec: timeTag.seconds, frac: timeTag.fraction)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        defer { lo_bundle_free_recursive(bundle) }
        addBeat(event.beat, bpm: event.bpm, to: bundle)
        return serialised(bundle)
    }

    private func addBeat(_ beat: BeatReading, bpm: Float, to bundle: lo_bundle) {
        guard messages.contains(.beat), let message = lo_message_new() else { return }
        lo_message_add_int32(message, OSCValueGuard.count(Int(beat.count)))
        lo_message_add_int32(message, OSCValueGuard.count(Int(beat.inBar)))
        lo_message_add_float(message, OSCValueGuard.nonNegative(bpm, maximum: 1000))
        add(message, .beat, to: bundle)
    }

    /// Serialises into the kept buffer (grown, rarely, when a bundle is larger).
    private func serialised(_ bundle: lo_bundle) -> UnsafeRawBufferPointer {
        let length = Int(lo_bundle_length(bundle))
        if length > bufferCapacity {
            buffer.deallocate()
            bufferCapacity = max(length, bufferCapacity * 2)
            buffer = .allocate(byteCount: bufferCapacity, alignment: 16)
        }
        var size = 0
        guard lo_bundle_serialise(bundle, buffer, &size) != nil else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: buffer, count: size)
    }

    /// Hands `message` to the bundle (the bundle takes a reference; `lo_bundle_free_recursive`
    /// frees both). A message the bundle refused is freed here.
    private func add(_ message: lo_message, _ kind: OSCMessageKind, to bundle: lo_bundle) {
        if lo_bundle_add_message(bundle, path(kind), message) != 0 {
            lo_message_free(message)
        }
    }
}
