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
