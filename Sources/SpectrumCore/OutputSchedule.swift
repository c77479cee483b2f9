import Synchronization

/// When the real-time side expects to hand over its next frame and its next beat, so the
/// consumer can sleep until then instead of polling: the JACK callback may not wake a thread
/// (that is a system call), and on a virtual machine every wake-up of a polling thread costs tens
/// of microseconds of CPU (docs/benchmarks.md).
///
/// Written by the process callback at the end of every cycle, read by the publisher after each
/// wake-up. Times are on the capture clock (JACK's `jack_get_time`, µs) and name the *start of
/// the JACK cycle* in which the frame will be pushed or the beat posted; 0 means "not known"
/// (no prediction: the consumer polls). A prediction can be wrong (a period change, xruns, a
/// beat grid that moves): the consumer then finds nothing when it wakes and polls until the
/// next cycle rewrites the schedule, so a wrong prediction costs wake-ups, never data.
///
/// A plain struct of pointers like `FrameRing` and `BeatMailbox`: `init` allocates,
/// `deallocate()` frees once both sides have stopped; `publish` and `read` are real-time safe.
public struct OutputSchedule: @unchecked Sendable {
    /// [next frame µs, next beat µs]
    private let words: UnsafeMutablePointer<Atomic<UInt64>>

    public init() {
        words = .allocate(capacity: 2)
        words.initialize(to: Atomic(0))
        (words + 1).initialize(to: Atomic(0))
    }

    public func deallocate() {
        words.deinitialize(count: 2)
        words.deallocate()
    }

    /// Writer side (the process callback). 0: unknown / no beat expected. Real-time safe.
    @_noLocks
    public func publish(nextFrameMicroseconds: UInt64, nextBeatMicroseconds: UInt64) {
        words[0].store(nextFrameMicroseconds, ordering: .relaxed)
        words[1].store(nextBeatMicroseconds, ordering: .relaxed)
    }

    /// Reader side. The two values may come from two consecutive cycles; each is a complete
    /// prediction on its own. Real-time safe.
    @_noLocks
    public func read() -> (nextFrameMicroseconds: UInt64, nextBeatMicroseconds: UInt64) {
        (words[0].load(ordering: .relaxed), words[1].load(ordering: .relaxed))
    }
}
