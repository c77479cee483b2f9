import Foundation

/// Summary of a series of measurements (microseconds unless said otherwise).
struct Statistics {
    var samples: [Double]
    var mean: Double { samples.reduce(0, +) / Double(max(samples.count, 1)) }
    var maximum: Double { samples.max() ?? 0 }
    func percentile(_ fraction: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }
    /// The lowest mean of the samples' consecutive, non-overlapping blocks of `blockSize` (the
    /// mean of all when there are no more than that): on a shared host, other work lands on
    /// some runs and not others, and the quietest run is closest to the cost with the host to
    /// itself.
    func quietestBlockMean(blockSize: Int) -> Double {
        guard samples.count > blockSize else { return mean }
        return stride(from: 0, through: samples.count - blockSize, by: blockSize)
            .map { samples[$0 ..< $0 + blockSize].reduce(0, +) / Double(blockSize) }.min() ?? mean
    }
}

/// CLOCK_MONOTONIC in nanoseconds (vDSO: no system call).
func nowNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func format(_ value: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", value) }
