import SpectrumCore

/// The most recent samples of a stream, in a power-of-two ring.
///
/// Real-time safe after `init`: writing and reading are pointer loops.
struct SampleHistory: ~Copyable {
    private let samples: RealtimeBuffer
    private let mask: Int
    private var writeIndex = 0

    /// Allocates room for at least `capacity` samples; not real-time safe.
    init(capacity: Int) {
        var size = 1
        while size < capacity { size <<= 1 }
        samples = RealtimeBuffer(count: size, repeating: 0)
        mask = size - 1
    }

    @_noLocks
    mutating func append(_ value: Float) {
        samples[writeIndex] = value
        writeIndex = (writeIndex + 1) & mask
    }

    /// The sample `age` positions back (0 = the newest).
    @inline(__always) @_noLocks
    func sample(age: Int) -> Float {
        samples[(writeIndex - 1 - age) & mask]
    }

    /// The latest `length` samples, oldest first, as at most two contiguous runs (the ring may
    /// wrap), so loops over them can be vectorised.
    @inline(__always) @_noLocks
    func latestRuns(_ length: Int) -> (first: UnsafePointer<Float>, firstCount: Int, second: UnsafePointer<Float>, secondCount: Int) {
        let start = (writeIndex - length) & mask
        let firstCount = min(length, samples.count - start)
        return (UnsafePointer(samples.base + start), firstCount, UnsafePointer(samples.base), length - firstCount)
    }

    /// Element `index` of the latest `length` samples, oldest first.
    @inline(__always) @_noLocks
    func latest(_ length: Int, at index: Int) -> Float {
        samples[(writeIndex - length + index) & mask]
    }

    @_noLocks
    mutating func reset() {
        samples.fill(with: 0)
        writeIndex = 0
    }
}
