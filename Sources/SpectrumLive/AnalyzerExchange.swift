import SpectrumDSP
import Synchronization

/// Replaces the analyser the process callback uses, off the real-time thread.
///
/// Protocol (docs/live.md):
/// 1. Build the new `Analyzer` here (allocates, plans FFTs).
/// 2. `exchange` it into the slot (sequentially consistent). The process callback loads the
///    slot once per cycle, after incrementing `callbacksEntered` (both sequentially consistent).
/// 3. Read `callbacksEntered` = E. Any cycle that may still hold the old analyser has a number
///    ≤ E, and cycles run one at a time, so once `callbacksCompleted` ≥ E none can.
/// 4. Retired analysers are freed by `reclaim()` when that holds (on the next swap, on every
///    `LiveClient.status()`, and unconditionally after `jack_client_close`). Nothing here waits
///    for the process thread, so it is safe even while JACK holds the graph still.
///
/// Not real-time safe: all methods allocate or lock. Thread-safe.
final class AnalyzerExchange: @unchecked Sendable {
    private let configurationStore: Mutex<AnalysisConfiguration>
    /// The configuration the current (and any rebuilt) analyser is made from.
    var configuration: AnalysisConfiguration { configurationStore.withLock { $0 } }
    let slot: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Analyzer>>>
    private let counters: UnsafeMutablePointer<LiveCounters>
    private let retired = Mutex<[RetiredAnalyzer]>([])
    private let failure = Mutex<String?>(nil)
    let swapCount = Atomic<Int>(0)

    /// Pointers into memory only this class frees.
    private struct RetiredAnalyzer: @unchecked Sendable {
        let analyzer: UnsafeMutablePointer<Analyzer>
        /// `callbacksEntered` just after the swap.
        let epoch: UInt64
    }

    /// Builds the first analyser. Allocates.
    init(configuration: AnalysisConfiguration, sampleRateHz: Double, counters: UnsafeMutablePointer<LiveCounters>) throws(AnalysisConfigurationError) {
        configurationStore = Mutex(configuration)
        self.counters = counters
        let first = try Self.makeAnalyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        slot = .allocate(capacity: 1)
        slot.initialize(to: Atomic(first))
    }

    static func makeAnalyzer(configuration: AnalysisConfiguration, sampleRateHz: Double) throws(AnalysisConfigurationError) -> UnsafeMutablePointer<Analyzer> {
        let analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        let pointer = UnsafeMutablePointer<Analyzer>.allocate(capacity: 1)
        pointer.initialize(to: analyzer)
        return pointer
    }

    /// Sample rate of the analyser now in the slot.
    var sampleRateHz: Double { slot.pointee.load(ordering: .acquiring).pointee.sampleRateHz }

    /// Frames per analysis hop of the analyser now in the slot.
    var hopFrames: Int { slot.pointee.load(ordering: .acquiring).pointee.hopFrames }

    /// The last rebuild that failed (the previous analyser stays in use), or nil.
    var lastFailure: String? { failure.withLock { $0 } }

    /// Builds an analyser for `configuration` at the current sample rate and swaps it in (a
    /// control change or a new preset); the configuration is kept only if the analyser could be
    /// built. Allocates.
    func install(configuration: AnalysisConfiguration) throws(AnalysisConfigurationError) {
        let previous = configurationStore.withLock { stored in
            defer { stored = configuration }
            return stored
        }
        do {
            try install(sampleRateHz: sampleRateHz)
        } catch {
            configurationStore.withLock { $0 = previous }
            throw error
        }
    }

    /// Builds an analyser for `sampleRateHz` and swaps it in; the old one is retired. Allocates.
    func install(sampleRateHz: Double) throws(AnalysisConfigurationError) {
        let fresh = try Self.makeAnalyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        let old = slot.pointee.exchange(fresh, ordering: .sequentiallyConsistent)
        let epoch = counters.pointee.callbacksEntered.load(ordering: .sequentiallyConsistent)
        retired.withLock { $0.append(RetiredAnalyzer(analyzer: old, epoch: epoch)) }
        swapCount.add(1, ordering: .relaxed)
        failure.withLock { $0 = nil }
        reclaim()
    }

    /// The sample-rate callback's work: rebuild if the rate differs from the analyser's.
    func sampleRateChanged(to sampleRateHz: Double) {
        counters.pointee.sampleRateHz.store(UInt32(sampleRateHz), ordering: .relaxed)
        guard sampleRateHz != self.sampleRateHz else { return }
        do {
            try install(sampleRateHz: sampleRateHz)
        } catch {
            failure.withLock { $0 = "cannot analyse at the new sample rate: \(error.description)" }
        }
    }

    /// Frees the retired analysers that no process cycle can still be using; returns how many
    /// are still waiting.
    @discardableResult
    func reclaim() -> Int {
        let completed = counters.pointee.callbacksCompleted.load(ordering: .acquiring)
        var free: [UnsafeMutablePointer<Analyzer>] = []
        let waiting = retired.withLock { list in
            free = list.filter { completed >= $0.epoch }.map(\.analyzer)
            list.removeAll { completed >= $0.epoch }
            return list.count
        }
        for analyzer in free { Self.destroy(analyzer) }
        return waiting
    }

    /// Retired analysers not yet freed.
    var retiredCount: Int { retired.withLock { $0.count } }

    /// Frees everything, current analyser included. Only once no process callback can run
    /// (after `jack_client_close`).
    func destroyAll() {
        let all = retired.withLock { list in
            defer { list.removeAll() }
            return list.map(\.analyzer)
        }
        for analyzer in all { Self.destroy(analyzer) }
        Self.destroy(slot.pointee.load(ordering: .acquiring))
        slot.deinitialize(count: 1)
        slot.deallocate()
    }

    private static func destroy(_ analyzer: UnsafeMutablePointer<Analyzer>) {
        analyzer.deinitialize(count: 1)
        analyzer.deallocate()
    }
}

/// Sample-rate callback (JACK's notification thread; also called once at registration).
/// `argument` is a retained `AnalyzerExchange`. Allocates when the rate changed: never the
/// process thread.
func liveSampleRateChanged(_ sampleRate: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let argument else { return 0 }
    Unmanaged<AnalyzerExchange>.fromOpaque(argument).takeUnretainedValue().sampleRateChanged(to: Double(sampleRate))
    return 0
}
