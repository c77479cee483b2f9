import SpectrumCore

/// The autocorrelation of an onset signal, updated every hop with O(lags) work: the signal is
/// detrended (minus its mean over the last `detrendHops`), and every lag's product is averaged
/// recursively, `A[L] ← A[L] + β·(d[n]·d[n−L] − A[L])`, with a normaliser `W[L]` from the same
/// recursion applied to 1, so the first seconds are plain averages. Hops the caller marks absent
/// (silence between two parts of a song: `add(_:present:)`, `markAbsent(hops:)`) are missing data,
/// not zeros: no product with one of them at either end counts, and they stay out of the
/// detrending mean, so a bar of silence neither lowers the lags it spans nor shifts the signal.
///
/// `init` allocates; the other methods are real-time safe.
struct RunningAutocorrelation: ~Copyable {
    let lagCount: Int
    /// The recursion's β (1 − exp(−hop/τ)); `setStep` changes the memory on the fly (the
    /// normaliser follows the same recursion, so the averages stay averages).
    private(set) var step: Float
    /// Normaliser a lag must reach before it is read (its few first products, e.g. with the
    /// loud start of a signal, would otherwise count as a whole average).
    private let minimumWeight: Float
    /// The lowest normaliser any reading may ask for (`normalise()` stores every lag with it).
    private let earliestWeight: Float
    /// Detrended signal: a power-of-two ring stored twice over (each value at i and i + size),
    /// so the newest `lagCount` values are always one contiguous run and the lag loop vectorises.
    private let detrended: RealtimeBuffer
    private let detrendedMask: Int
    private var detrendedWrite = 0
    /// Whether each detrended value counts (1) or is missing (0), stored like `detrended`.
    private let presenceRing: RealtimeBuffer
    /// The signal over the detrending window, and its running sum.
    private let recent: RealtimeBuffer
    private var recentWrite = 0
    private var recentSum: Double = 0
    private var recentCount = 0
    /// Running autocorrelation and its normaliser, lags 0 ..< lagCount.
    private let correlation: RealtimeBuffer
    private let weight: RealtimeBuffer
    /// `correlation / weight / (correlation[0] / weight[0])` per lag as of the last `normalise()`
    /// (0 where a lag has too few products).
    private let normalisedCorrelation: RealtimeBuffer
    /// Hops of signal, up to `lagCount`: lags beyond have no product yet.
    private var hopsOfSignal = 0

    /// Allocates; not real-time safe. `step` is the recursion's β, `minimumWeight` the
    /// normaliser a lag must reach to be read, `earliestWeight` the least a reading may ask for
    /// instead (`minimumWeight:` of `hasData`, `normalised(at:)`, `boxNormalised`).
    init(lagCount: Int, detrendHops: Int, step: Float, minimumWeight: Float, earliestWeight: Float? = nil) {
        self.lagCount = lagCount
        self.step = step
        self.minimumWeight = minimumWeight
        self.earliestWeight = min(minimumWeight, earliestWeight ?? minimumWeight)
        var size = 1
        while size < lagCount { size <<= 1 }
        detrended = RealtimeBuffer(count: 2 * size, repeating: 0)
        detrendedMask = size - 1
        presenceRing = RealtimeBuffer(count: 2 * size, repeating: 0)
        recent = RealtimeBuffer(count: max(1, detrendHops), repeating: 0)
        correlation = RealtimeBuffer(count: lagCount, repeating: 0)
        weight = RealtimeBuffer(count: lagCount, repeating: 0)
        normalisedCorrelation = RealtimeBuffer(count: lagCount, repeating: 0)
    }

    /// Takes one hop's value of the signal; returns it detrended. An absent hop (`present`
    /// false) is stored but counts in no product and not in the detrending mean. Real-time
    /// safe; O(lags).
    @discardableResult @_noLocks
    mutating func add(_ value: Float, present: Bool = true) -> Float {
        // 1) Detrending: minus the mean over the window of present hops.
        if present {
            if recentCount == recent.count {
                recentSum -= Double(recent[recentWrite])
            } else {
                recentCount += 1
            }
            recent[recentWrite] = value
            recentSum += Double(value)
            recentWrite = recentWrite + 1 == recent.count ? 0 : recentWrite + 1
        }
        let current = value - Float(recentSum / Double(max(recentCount, 1)))
        let presentValue: Float = present ? 1 : 0
        detrended[detrendedWrite] = current
        detrended[detrendedWrite + detrendedMask + 1] = current
        presenceRing[detrendedWrite] = presentValue
        presenceRing[detrendedWrite + detrendedMask + 1] = presentValue
        // The newest value sits at `newest`; lag L is at `newest − L` (never below 0).
        let newest = detrendedWrite + detrendedMask + 1
        detrendedWrite = (detrendedWrite + 1) & detrendedMask
        // 2) Every lag that has data, but only pairs of present hops.
        hopsOfSignal = min(hopsOfSignal + 1, lagCount)
        guard present else { return current }
        let history = detrended.base + newest
        let historyPresence = presenceRing.base + newest
        for lag in 0..<hopsOfSignal {
            let gatedStep = step * historyPresence[-lag]
            correlation[lag] += gatedStep * (current * history[-lag] - correlation[lag])
            weight[lag] += gatedStep * (1 - weight[lag])
        }
        return current
    }

    /// Marks the newest `hops` values absent (silence found only once a window of it has passed):
    /// later products with them do not count. Real-time safe; O(hops).
    @_noLocks
    mutating func markAbsent(hops: Int) {
        for age in 0..<min(hops, detrendedMask + 1) {
            let slot = (detrendedWrite - 1 - age) & detrendedMask
            presenceRing[slot] = 0
            presenceRing[slot + detrendedMask + 1] = 0
        }
    }

    /// 1 when the value `age` hops ago counts, 0 when it was absent. Real-time safe.
    @inline(__always) @_noLocks
    func presence(age: Int) -> Float {
        presenceRing[((detrendedWrite - 1 - age) & detrendedMask) + detrendedMask + 1]
    }

    /// Sets the recursion's β from the next hop on (a shorter memory forgets faster). Real-time safe.
    @inline(__always) @_noLocks
    mutating func setStep(_ newStep: Float) { step = newStep }

    /// The detrended value `age` hops ago (0: the newest; at most `lagCount − 1`). Real-time safe.
    @inline(__always) @_noLocks
    func detrendedValue(age: Int) -> Float {
        detrended[((detrendedWrite - 1 - age) & detrendedMask) + detrendedMask + 1]
    }

    /// The running mean square of the detrended signal (its autocorrelation at lag 0).
    /// Real-time safe.
    var meanSquare: Float {
        @inline(__always) @_noLocks get { correlation[0] / max(weight[0], 1e-9) }
    }

    /// Whether `lag` has enough products to be read. Real-time safe.
    @inline(__always) @_noLocks
    func hasData(atLag lag: Int, minimumWeight threshold: Float? = nil) -> Bool {
        lag >= 0 && lag < lagCount && weight[lag] >= (threshold ?? minimumWeight)
    }

    /// Normalised autocorrelation at an integer lag, from the running sums. Real-time safe.
    @inline(__always) @_noLocks
    func normalised(_ lag: Int) -> Float {
        let zero = correlation[0] / max(weight[0], 1e-9)
        guard zero > 0, hasData(atLag: lag, minimumWeight: earliestWeight) else { return 0 }
        return correlation[lag] / weight[lag] / zero
    }

    /// Stores the normalised autocorrelation of every lag for `normalised(at:)`. Real-time safe.
    @_noLocks
    func normalise() {
        for lag in 0..<lagCount { normalisedCorrelation[lag] = normalised(lag) }
    }

    /// Normalised autocorrelation at a fractional lag (linear interpolation) as of the last
    /// `normalise()`; 0 beyond the lags that hold data. Real-time safe.
    @inline(__always) @_noLocks
    func normalised(at lag: Float, minimumWeight threshold: Float? = nil) -> Float {
        guard lag >= 0 else { return 0 }
        let lower = Int(lag)
        guard hasData(atLag: lower + 1, minimumWeight: threshold) else { return 0 }
        let fraction = lag - Float(lower)
        return normalisedCorrelation[lower] * (1 - fraction) + normalisedCorrelation[lower + 1] * fraction
    }

    /// Normalised autocorrelation averaged over a box `widthLags` wide centred on `lag` (the
    /// mean of the linear interpolation over `lag ± widthLags / 2`), as of the last
    /// `normalise()`; 0 beyond the lags that hold data. An onset falls anywhere within its hop,
    /// so a repetition whose period lies between two whole lags is split between them: at a
    /// point it reads up to a quarter low against one that lasts whole hops; the box evens the
    /// two out. Real-time safe.
    @_noLocks
    func boxNormalised(at lag: Float, widthLags: Float, minimumWeight threshold: Float? = nil) -> Float {
        // A box of no width is the point reading (and never a division by zero).
        guard widthLags > 0 else { return normalised(at: lag, minimumWeight: threshold) }
        let start = lag - 0.5 * widthLags, end = lag + 0.5 * widthLags
        guard start >= 0 else { return 0 }
        // Trapezoids of the interpolation between the whole lags inside the box.
        var sum: Float = 0
        var left = start, atLeft = normalised(at: start, minimumWeight: threshold)
        var knot = Float(Int(start) + 1)
        while knot < end {
            let atKnot = normalised(at: knot, minimumWeight: threshold)
            sum += 0.5 * (knot - left) * (atLeft + atKnot)
            left = knot
            atLeft = atKnot
            knot += 1
        }
        sum += 0.5 * (end - left) * (atLeft + normalised(at: end, minimumWeight: threshold))
        return sum / (end - start)
    }

    /// The per-lag normalised autocorrelation (inspection; allocates).
    var normalisedValues: [Float] { (0..<lagCount).map { hasData(atLag: $0) ? normalised($0) : 0 } }

    /// Drops the averages; keeps the recent signal, so lags fill again from data in hand.
    /// Real-time safe.
    @_noLocks
    mutating func restart() {
        correlation.fill(with: 0)
        weight.fill(with: 0)
    }

    /// Clears everything. Real-time safe.
    @_noLocks
    mutating func reset() {
        restart()
        detrended.fill(with: 0)
        presenceRing.fill(with: 0)
        detrendedWrite = 0
        hopsOfSignal = 0
        recent.fill(with: 0)
        recentWrite = 0
        recentSum = 0
        recentCount = 0
    }
}
