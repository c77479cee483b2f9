import SpectrumDSP
import Synchronization

/// The inputs' analysers and their replacement, off the real-time thread.
///
/// One analyser slot per input slot (`capacity` of them; an empty slot is nil and skipped by the
/// process callback). Every input runs the shared `configuration` with its own
/// `AnalysisOverrides` applied on top, at every build (start, control change, new sample
/// rate); each input's analyser starts
/// `staggerFraction(slot:)` of a hop into its first hop, so the inputs' heavy stages (the
/// spectrum and rhythm at each hop) fall in different JACK cycles.
///
/// Protocol (docs/live.md):
/// 1. Build the new `Analyzer`s here (allocates, plans FFTs).
/// 2. `exchange` each into its slot (sequentially consistent). The process callback loads each
///    slot once per cycle, after incrementing `callbacksEntered` (both sequentially consistent).
/// 3. Read `callbacksEntered` = E. Any cycle that may still hold an old analyser has a number
///    ≤ E, and cycles run one at a time, so once `callbacksCompleted` ≥ E none can.
/// 4. Retired analysers are freed by `reclaim()` when that holds (on the next swap, on every
///    `LiveClient.status()`, and unconditionally after `jack_client_close`). Nothing here waits
///    for the process thread, so it is safe even while JACK holds the graph still.
///
/// Not real-time safe: all methods allocate or lock. Thread-safe.
final class AnalyzerExchange: @unchecked Sendable {
    private let configurationStore: Mutex<AnalysisConfiguration>
    /// The configuration the current (and any rebuilt) analysers are made from.
    var configuration: AnalysisConfiguration { configurationStore.withLock { $0 } }
    /// `capacity` analyser slots (nil: no input in that slot).
    let slots: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Analyzer>?>>
    let capacity: Int
    /// Each slot's input name (nil: empty; "" for the single unnamed input) and own analysis
    /// settings. Serialises every change of the slots, too.
    private let slotInputs: Mutex<SlotInputs>
    private let sampleRateBits: Atomic<UInt64>
    /// `LiveConfiguration.staggersInputHops`.
    private let staggersHops: Bool
    private let counters: UnsafeMutablePointer<LiveCounters>
    private let retired = Mutex<[RetiredAnalyzer]>([])
    private let failure = Mutex<String?>(nil)
    let swapCount = Atomic<Int>(0)

    private struct SlotInputs {
        var names: [String?]
        var analysis: [AnalysisOverrides]
    }

    /// Pointers into memory only this class frees.
    private struct RetiredAnalyzer: @unchecked Sendable {
        let analyzer: UnsafeMutablePointer<Analyzer>
        /// `callbacksEntered` just after the swap.
        let epoch: UInt64
    }

    /// Builds the first analysers, one per non-nil name, each from `configuration` with its
    /// `inputAnalysis` (none when left out). Allocates.
    init(configuration: AnalysisConfiguration, inputNames: [String?], inputAnalysis: [AnalysisOverrides]? = nil, sampleRateHz: Double,
         staggersHops: Bool = true, counters: UnsafeMutablePointer<LiveCounters>) throws(AnalysisConfigurationError) {
        precondition(!inputNames.isEmpty)
        let inputAnalysis = inputAnalysis ?? Array(repeating: .none, count: inputNames.count)
        precondition(inputAnalysis.count == inputNames.count)
        self.staggersHops = staggersHops
        configurationStore = Mutex(configuration)
        self.counters = counters
        capacity = inputNames.count
        var built: [UnsafeMutablePointer<Analyzer>?] = []
        for (slot, name) in inputNames.enumerated() {
            do {
                built.append(try name.map { name throws(AnalysisConfigurationError) in
                    try Self.makeAnalyzer(input: name, configuration: configuration, analysis: inputAnalysis[slot], sampleRateHz: sampleRateHz,
                                          staggerFraction: staggersHops ? Self.staggerFraction(slot: slot) : 0)
                })
            } catch {
                for analyzer in built.compactMap({ $0 }) { Self.destroy(analyzer) }
                throw error
            }
        }
        slots = .allocate(capacity: inputNames.count)
        for (slot, analyzer) in built.enumerated() { (slots + slot).initialize(to: Atomic(analyzer)) }
        slotInputs = Mutex(SlotInputs(names: inputNames, analysis: inputAnalysis))
        sampleRateBits = Atomic(sampleRateHz.bitPattern)
    }

    /// An analyser that has already taken `staggerFraction` of a hop of silence, so its hops end
    /// that much earlier in the stream than an unstaggered one's. Allocates.
    static func makeAnalyzer(configuration: AnalysisConfiguration, sampleRateHz: Double, staggerFraction: Double = 0) throws(AnalysisConfigurationError) -> UnsafeMutablePointer<Analyzer> {
        let analyzer = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
        let pointer = UnsafeMutablePointer<Analyzer>.allocate(capacity: 1)
        pointer.initialize(to: analyzer)
        let stagger = staggerFrames(hopFrames: pointer.pointee.hopFrames, fraction: staggerFraction)
        if stagger > 0 {
            let silence = [Float](repeating: 0, count: stagger)
            silence.withUnsafeBufferPointer { buffer in
                var taken = 0
                while taken < stagger { taken += pointer.pointee.consume(buffer.baseAddress! + taken, frameCount: stagger - taken).consumed }
            }
        }
        return pointer
    }

    /// Input `input`'s analyser: `configuration` with the input's own `analysis` applied; a
    /// failure of the input's own settings names the input. Allocates.
    private static func makeAnalyzer(input: String, configuration: AnalysisConfiguration, analysis: AnalysisOverrides, sampleRateHz: Double,
                                     staggerFraction: Double) throws(AnalysisConfigurationError) -> UnsafeMutablePointer<Analyzer> {
        guard !analysis.isEmpty else {
            return try makeAnalyzer(configuration: configuration, sampleRateHz: sampleRateHz, staggerFraction: staggerFraction)
        }
        do {
            return try makeAnalyzer(configuration: analysis.applied(to: configuration), sampleRateHz: sampleRateHz, staggerFraction: staggerFraction)
        } catch {
            throw AnalysisConfigurationError("input \(input) (with its own \(analysis.assignments.map(\.path).joined(separator: ", "))): \(error.description)")
        }
    }

    /// Slot `slot`'s stagger: `staggerFraction(slot:)`, or 0 when `staggersHops` is off.
    private func staggerFraction(slot: Int) -> Double { staggersHops ? Self.staggerFraction(slot: slot) : 0 }

    /// Where slot `slot`'s hops sit, as a fraction of a hop: the base-2 van der Corput sequence
    /// (0, 1/2, 1/4, 3/4, 1/8, 5/8, …), so any number of inputs, added in any order, are spread
    /// evenly over the hop (N inputs, N a power of two: exactly hop/N apart).
    static func staggerFraction(slot: Int) -> Double {
        var fraction = 0.0, weight = 0.5, rest = slot
        while rest > 0 {
            if rest & 1 == 1 { fraction += weight }
            weight /= 2
            rest >>= 1
        }
        return fraction
    }

    /// The stagger in frames of a hop of `hopFrames`.
    static func staggerFrames(hopFrames: Int, fraction: Double) -> Int { Int((Double(hopFrames) * fraction).rounded(.down)) }

    /// Sample rate of the analysers now in the slots.
    var sampleRateHz: Double { Double(bitPattern: sampleRateBits.load(ordering: .acquiring)) }

    /// Each slot's input name (nil: empty).
    var inputNames: [String?] { slotInputs.withLock { $0.names } }

    /// Each slot's input name and own settings, read together (nil: empty).
    var slotInputList: [(name: String, analysis: AnalysisOverrides)?] {
        slotInputs.withLock { inputs in inputs.names.indices.map { slot in inputs.names[slot].map { ($0, inputs.analysis[slot]) } } }
    }

    /// The configuration slot `slot`'s analyser is built from (the shared one with the input's
    /// own settings applied).
    func configuration(slot: Int) -> AnalysisConfiguration {
        let analysis = slotInputs.withLock { $0.analysis[slot] }
        return analysis.applied(to: configuration)
    }

    /// The last rebuild that failed (the previous analysers stay in use), or nil.
    var lastFailure: String? { failure.withLock { $0 } }

    /// Builds analysers for `configuration` at the current sample rate and swaps them in (a
    /// control change or a new preset); the configuration is kept only if they could be built.
    /// Allocates.
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

    /// Builds an analyser for every input at `sampleRateHz` and swaps them in (all built first: a
    /// failure changes nothing); the old ones are retired. Allocates.
    func install(sampleRateHz: Double) throws(AnalysisConfigurationError) {
        let configuration = self.configuration
        let outcome: Result<Void, AnalysisConfigurationError> = slotInputs.withLock { inputs in
            var fresh: [(slot: Int, analyzer: UnsafeMutablePointer<Analyzer>)] = []
            do throws(AnalysisConfigurationError) {
                for (slot, name) in inputs.names.enumerated() {
                    guard let name else { continue }
                    fresh.append((slot, try Self.makeAnalyzer(input: name, configuration: configuration, analysis: inputs.analysis[slot],
                                                              sampleRateHz: sampleRateHz, staggerFraction: staggerFraction(slot: slot))))
                }
            } catch {
                for built in fresh { Self.destroy(built.analyzer) }
                return .failure(error)
            }
            for built in fresh { swap(slot: built.slot, to: built.analyzer) }
            sampleRateBits.store(sampleRateHz.bitPattern, ordering: .releasing)
            return .success(())
        }
        try outcome.get()
        swapCount.add(1, ordering: .relaxed)
        failure.withLock { $0 = nil }
        reclaim()
    }

    /// Builds an analyser for a new input `name` (with its own `analysis`, kept for every later
    /// rebuild) in the first empty slot and puts it there; returns the slot.
    /// `registerPorts(slot)` runs first, and nothing changes if it throws. Throws one line when
    /// every slot is taken. Allocates.
    func add(name: String, analysis: AnalysisOverrides = .none, registerPorts: (Int) throws(LiveClientError) -> Void) throws(LiveClientError) -> Int {
        let configuration = self.configuration
        let outcome: Result<Int, LiveClientError> = slotInputs.withLock { inputs in
            guard let slot = inputs.names.firstIndex(where: { $0 == nil }) else {
                return .failure(LiveClientError(.invalidConfiguration, "input \(name): all \(capacity) inputs are in use; remove one first"))
            }
            let analyzer: UnsafeMutablePointer<Analyzer>
            do throws(AnalysisConfigurationError) {
                analyzer = try Self.makeAnalyzer(configuration: analysis.applied(to: configuration), sampleRateHz: sampleRateHz,
                                                 staggerFraction: staggerFraction(slot: slot))
            } catch {
                return .failure(LiveClientError(.analysis, "input \(name): \(error.description)"))
            }
            do throws(LiveClientError) {
                try registerPorts(slot)
            } catch {
                Self.destroy(analyzer)
                return .failure(error)
            }
            inputs.names[slot] = name
            inputs.analysis[slot] = analysis
            swap(slot: slot, to: analyzer)
            return .success(slot)
        }
        return try outcome.get()
    }

    /// Takes input `slot`'s analyser out (retired like a swapped one) and frees the slot;
    /// returns `callbacksEntered` just after, the epoch the caller waits for
    /// (`callbacksCompleted` ≥ it) before touching the slot's ports.
    func remove(slot: Int) -> UInt64 {
        slotInputs.withLock { inputs in
            inputs.names[slot] = nil
            inputs.analysis[slot] = .none
            swap(slot: slot, to: nil)
        }
        return counters.pointee.callbacksEntered.load(ordering: .sequentiallyConsistent)
    }

    /// Puts `analyzer` (or nothing) in `slot` and retires what was there. Only under `slotInputs`.
    private func swap(slot: Int, to analyzer: UnsafeMutablePointer<Analyzer>?) {
        let old = slots[slot].exchange(analyzer, ordering: .sequentiallyConsistent)
        let epoch = counters.pointee.callbacksEntered.load(ordering: .sequentiallyConsistent)
        if let old { retired.withLock { $0.append(RetiredAnalyzer(analyzer: old, epoch: epoch)) } }
    }

    /// The sample-rate callback's work: rebuild if the rate differs from the analysers'.
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

    /// Frees everything, current analysers included. Only once no process callback can run
    /// (after `jack_client_close`).
    func destroyAll() {
        let all = retired.withLock { list in
            defer { list.removeAll() }
            return list.map(\.analyzer)
        }
        for analyzer in all { Self.destroy(analyzer) }
        for slot in 0..<capacity {
            if let analyzer = slots[slot].load(ordering: .acquiring) { Self.destroy(analyzer) }
        }
        slots.deinitialize(count: capacity)
        slots.deallocate()
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
