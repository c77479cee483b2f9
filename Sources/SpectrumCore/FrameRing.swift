import Synchronization

/// Single-producer/single-consumer lock-free ring of `AnalysisFrame`s: the real-time thread
/// pushes, one consumer thread pops. When full, `push` fails at once (the caller counts the
/// drop) and never waits.
///
/// A plain struct of pointers so that the JACK context can hold it without reference counting;
/// copies share the same storage. `init` allocates; `deallocate()` frees, once, after both sides
/// have stopped. `push` and `pop` are real-time safe.
public struct FrameRing: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<AnalysisFrame>
    private let capacity: Int
    /// Index of the next slot to write (producer-owned) and to read (consumer-owned); both only
    /// grow, modulo 2^63.
    private let writeCount: UnsafeMutablePointer<Atomic<Int>>
    private let readCount: UnsafeMutablePointer<Atomic<Int>>

    /// Allocates room for `capacity` frames; not real-time safe.
    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: AnalysisFrame(), count: capacity)
        writeCount = .allocate(capacity: 1)
        writeCount.initialize(to: Atomic(0))
        readCount = .allocate(capacity: 1)
        readCount.initialize(to: Atomic(0))
    }

    public func deallocate() {
        slots.deallocate()
        writeCount.deinitialize(count: 1)
        writeCount.deallocate()
        readCount.deinitialize(count: 1)
        readCount.deallocate()
    }

    /// Producer side. Copies `frame` in; false (and nothing written) when full. Real-time safe.
    @_noLocks
    public func push(_ frame: UnsafePointer<AnalysisFrame>) -> Bool {
        push(frame, inputIndex: frame.pointee.inputIndex)
    }

    /// Producer side: as `push(_:)`, with the copy's `inputIndex` set to `inputIndex` (the live
    /// client's input the frame belongs to). Real-time safe.
    @_noLocks
    public func push(_ frame: UnsafePointer<AnalysisFrame>, inputIndex: Int32) -> Bool {
        let written = writeCount.pointee.load(ordering: .relaxed)
        let read = readCount.pointee.load(ordering: .acquiring)
        guard written - read < capacity else { return false }
        slots[written % capacity] = frame.pointee
        slots[written % capacity].inputIndex = inputIndex
        writeCount.pointee.store(written + 1, ordering: .releasing)
        return true
    }

    /// Consumer side. Copies the oldest frame into `frame`; false when empty. Real-time safe.
    @_noLocks
    public func pop(into frame: inout AnalysisFrame) -> Bool {
        let read = readCount.pointee.load(ordering: .relaxed)
        let written = writeCount.pointee.load(ordering: .acquiring)
        guard written > read else { return false }
        frame = slots[read % capacity]
        readCount.pointee.store(read + 1, ordering: .releasing)
        return true
    }

    /// Frames waiting to be popped (approximate while the producer runs).
    public var count: Int {
        writeCount.pointee.load(ordering: .acquiring) - readCount.pointee.load(ordering: .acquiring)
    }
}
