/// Tracks a display ceiling that rises at once to the loudest band and decays slowly, and
/// normalises band levels to 0..1 within a fixed window below it (seed 003, stage 7).
/// Real-time safe after `init`.
public struct AutoLevel {
    public let configuration: AutoLevelConfiguration
    private let decayPerHopDecibels: Float
    /// The tracked ceiling in dB, clamped to the configured range.
    public private(set) var ceilingDecibels: Float

    public init(configuration: AutoLevelConfiguration, hopSeconds: Double) {
        self.configuration = configuration
        decayPerHopDecibels = Float(configuration.decayDecibelsPerSecond * hopSeconds)
        ceilingDecibels = Float(configuration.minimumCeilingDecibels)
    }

    /// Follows the loudest band of this hop. Real-time safe.
    @_noLocks
    public mutating func track(loudestDecibels: Float) {
        if loudestDecibels > ceilingDecibels {
            ceilingDecibels = loudestDecibels
        } else {
            ceilingDecibels -= decayPerHopDecibels
        }
        ceilingDecibels = min(max(ceilingDecibels, Float(configuration.minimumCeilingDecibels)),
                              Float(configuration.maximumCeilingDecibels))
    }

    /// Maps `levelDecibels` into 0..1 within [ceiling + headroom − range, ceiling + headroom].
    @inline(__always) @_noLocks
    public func normalise(_ levelDecibels: Float) -> Float {
        let top = min(ceilingDecibels + Float(configuration.headroomDecibels),
                      Float(configuration.maximumCeilingDecibels))
        let bottom = top - Float(configuration.rangeDecibels)
        return clampUnit((levelDecibels - bottom) / (top - bottom))
    }

    @_noLocks
    public mutating func reset() {
        ceilingDecibels = Float(configuration.minimumCeilingDecibels)
    }
}
