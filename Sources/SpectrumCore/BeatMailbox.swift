import Synchronization

/// The newest beat event, handed from the real-time thread to one reader as soon as the
/// analyser passes the beat, without waiting for the hop's frame (a seqlock: the writer never
/// waits; the reader retries while a write is under way).
///
/// One slot is enough: beats are at least 1/3 s apart (180 BPM) while the reader polls every
/// few milliseconds; a beat that is overwritten before it is read still reaches the reader in
/// its frame. A plain struct of pointers like `FrameRing`: `init` allocates, `deallocate()`
/// frees once both sides have stopped; `post` and `take` are real-time safe.
public struct BeatMailbox: @unchecked Sendable {
    /// A beat event with its acoustic time on the capture clock (µs, 0 = unknown).
    public struct Event: Equatable, Sendable {
        public var beat: BeatReading
        public var bpm: Float
        public var captureTimeMicroseconds: UInt64

        @_noLocks
        public init(beat: BeatReading, bpm: Float, captureTimeMicroseconds: UInt64) {
            self.beat = beat
            self.bpm = bpm
            self.captureTimeMicroseconds = captureTimeMicroseconds
        }
    }

    /// [sequence (odd while a write is under way), time (Double bits), count << 32 | inBar,
    /// bpm (Float bits), capture time]
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private static let wordCount = 5

    public init() {
        words = .allocate(capacity: Self.wordCount)
        for index in 0..<Self.wordCount { (words + index).initialize(to: Atomic(0)) }
    }

    public func deallocate() {
        words.deinitialize(count: Self.wordCount)
        words.deallocate()
    }

    /// Writer side (one thread). Real-time safe.
    @_noLocks
    public func post(_ event: Event) {
        let sequence = words[0].load(ordering: .relaxed)
        words[0].store(sequence &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        words[1].store(event.beat.timeFrames.bitPattern, ordering: .relaxed)
        words[2].store(UInt64(UInt32(bitPattern: event.beat.count)) << 32 | UInt64(UInt32(bitPattern: event.beat.inBar)), ordering: .relaxed)
        words[3].store(UInt64(event.bpm.bitPattern), ordering: .relaxed)
        words[4].store(event.captureTimeMicroseconds, ordering: .relaxed)
        words[0].store(sequence &+ 2, ordering: .releasing)
    }

    /// Reader side (one thread): the newest event if one was posted since `lastSequence`
    /// (updated). Never blocks the writer.
    public func take(after lastSequence: inout UInt64) -> Event? {
        while true {
            let before = words[0].load(ordering: .acquiring)
            guard before != lastSequence else { return nil }
            guard before & 1 == 0 else { continue }
            let time = Double(bitPattern: words[1].load(ordering: .relaxed))
            let counts = words[2].load(ordering: .relaxed)
            let bpm = Float(bitPattern: UInt32(truncatingIfNeeded: words[3].load(ordering: .relaxed)))
            let capture = words[4].load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            guard words[0].load(ordering: .relaxed) == before else { continue }
            lastSequence = before
            let beat = BeatReading(isBeat: true, timeFrames: time,
                                   count: Int32(bitPattern: UInt32(truncatingIfNeeded: counts >> 32)),
                                   inBar: Int32(bitPattern: UInt32(truncatingIfNeeded: counts)))
            return Event(beat: beat, bpm: bpm, captureTimeMicroseconds: capture)
        }
    }
}
