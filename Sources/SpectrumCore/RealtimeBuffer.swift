/// A fixed-size, zero-initialised block of floats allocated once, when preparing.
///
/// Reads and writes are real-time safe (plain pointer access, no reference counting); `init`
/// allocates and `deinit` frees, both outside the real-time path. Deliberately not generic:
/// unspecialised generic calls are rejected by `@_noLocks` in debug builds.
public struct RealtimeBuffer: ~Copyable {
    public let base: UnsafeMutablePointer<Float>
    public let count: Int

    /// Allocates; not real-time safe.
    public init(count: Int, repeating value: Float = 0) {
        precondition(count >= 0)
        self.count = count
        base = .allocate(capacity: max(count, 1))
        base.initialize(repeating: value, count: max(count, 1))
    }

    deinit { base.deallocate() }

    /// Real-time safe.
    public subscript(index: Int) -> Float {
        @inline(__always) @_noLocks get { base[index] }
        @inline(__always) @_noLocks nonmutating set { base[index] = newValue }
    }

    /// Sets every element to `value`. Real-time safe.
    @_noLocks
    public func fill(with value: Float) {
        for index in 0..<count { base[index] = value }
    }
}
