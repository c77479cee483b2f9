import Glibc
import SpectrumCore

/// Maps FFT bin powers to log-spaced band powers with weights prepared once.
///
/// A band's power is the integral, over the band's frequency range, of the power spectrum
/// interpolated linearly between bin centres, divided by the smaller of the band's width and the
/// window's equivalent noise bandwidth (ENBW). For a band wider than the ENBW that is what a
/// band-pass filter of the band's width would measure (a tone inside reads its own power, noise
/// its power in the band); for a narrower band it is the mean of the interpolated spectrum over
/// the band, so a tone still reads its own power in the band that contains it, and every band
/// gets its own value instead of a copy of its neighbour. Bands narrower than the main window's
/// resolution read the long bass spectrum instead (see docs/dsp.md).
///
/// `init` allocates; `map` is real-time safe (a sparse product).
struct BandMap: ~Copyable {
    let bandCount: Int
    /// Geometric centre of each band in Hz.
    let centreFrequenciesHz: [Double]
    let lowerEdgesHz: [Double]
    /// Bands `0..<bassBandCount` read the bass spectrum.
    let bassBandCount: Int

    /// Entries `bandStarts[b]..<bandStarts[b + 1]` of `binIndices`/`weights` belong to band b.
    private let bandStarts: UnsafeMutablePointer<Int>
    private let binIndices: UnsafeMutablePointer<Int>
    private let weights: RealtimeBuffer

    struct Source {
        /// Where this spectrum's bins start in the combined power buffer.
        var offset: Int
        var binCount: Int
        var binSpacingHz: Double
        var equivalentNoiseBandwidthHz: Double
        /// Resolution of the window (sample rate / window frames), in Hz.
        var resolutionHz: Double
        /// Highest frequency this spectrum represents faithfully.
        var usableLimitHz: Double
    }

    /// `bandCount + 1` log-spaced edges from the minimum to the maximum frequency.
    static func edgesHz(bandCount: Int, minimumFrequencyHz: Double, maximumFrequencyHz: Double) -> [Double] {
        let ratio = maximumFrequencyHz / minimumFrequencyHz
        return (0...bandCount).map { minimumFrequencyHz * pow(ratio, Double($0) / Double(bandCount)) }
    }

    /// Each band's geometric centre.
    static func centresHz(edges: [Double]) -> [Double] {
        (0..<(edges.count - 1)).map { (edges[$0] * edges[$0 + 1]).squareRoot() }
    }

    init(bandCount: Int, minimumFrequencyHz: Double, maximumFrequencyHz: Double, main: Source, bass: Source) {
        self.bandCount = bandCount
        let edges = Self.edgesHz(bandCount: bandCount, minimumFrequencyHz: minimumFrequencyHz, maximumFrequencyHz: maximumFrequencyHz)
        lowerEdgesHz = Array(edges.dropLast())
        centreFrequenciesHz = Self.centresHz(edges: edges)

        var starts = [0]
        var indices: [Int] = []
        var bandWeights: [Float] = []
        var bassBands = 0
        for band in 0..<bandCount {
            let lower = edges[band], upper = edges[band + 1]
            let useBass = bassBands == band && upper - lower < main.resolutionHz && upper <= bass.usableLimitHz
            if useBass { bassBands += 1 }
            let source = useBass ? bass : main
            for (bin, weight) in Self.integrationWeights(lowerHz: lower, upperHz: upper, source: source) {
                indices.append(source.offset + bin)
                bandWeights.append(Float(weight))
            }
            starts.append(indices.count)
        }
        bassBandCount = bassBands

        bandStarts = .allocate(capacity: starts.count)
        bandStarts.initialize(from: starts, count: starts.count)
        binIndices = .allocate(capacity: max(indices.count, 1))
        binIndices.initialize(from: indices, count: indices.count)
        weights = RealtimeBuffer(count: bandWeights.count)
        for index in bandWeights.indices { weights[index] = bandWeights[index] }
    }

    deinit {
        bandStarts.deallocate()
        binIndices.deallocate()
    }

    /// Weights w_k such that Σ w_k P_k = ∫[lower, upper] P(f) df / min(upper − lower, ENBW),
    /// with P linear between bin centres.
    static func integrationWeights(lowerHz: Double, upperHz: Double, source: Source) -> [(Int, Double)] {
        let spacing = source.binSpacingHz
        let scale = spacing / min(upperHz - lowerHz, source.equivalentNoiseBandwidthHz)
        let lowerBin = lowerHz / spacing, upperBin = upperHz / spacing
        var result: [Int: Double] = [:]
        var segment = Int(lowerBin.rounded(.down))
        while Double(segment) < upperBin && segment + 1 < source.binCount {
            // Part of segment [segment, segment + 1] inside the band, as fractions u0..u1.
            let u0 = max(lowerBin - Double(segment), 0)
            let u1 = min(upperBin - Double(segment), 1)
            if u1 > u0 {
                let linear = (u1 * u1 - u0 * u0) / 2
                result[segment, default: 0] += ((u1 - u0) - linear) * scale
                result[segment + 1, default: 0] += linear * scale
            }
            segment += 1
        }
        return result.sorted { $0.key < $1.key }
    }

    /// Writes `bandCount` band powers from the combined bin powers. Real-time safe.
    @_noLocks
    func map(power: UnsafePointer<Float>, into bands: UnsafeMutablePointer<Float>) {
        for band in 0..<bandCount {
            var sum: Float = 0
            for entry in bandStarts[band]..<bandStarts[band + 1] {
                sum += weights[entry] * power[binIndices[entry]]
            }
            bands[band] = sum
        }
    }
}
