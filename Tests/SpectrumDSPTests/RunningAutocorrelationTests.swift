import Foundation
import Testing
@testable import SpectrumDSP

/// The onset autocorrelation's handling of hops marked absent: silence between two parts of a
/// song is missing data, not zeros.
@Suite struct RunningAutocorrelationTests {
    /// A pulse every `period` hops (a beat), with a little deterministic texture between.
    static func pulse(_ hop: Int, period: Int) -> Float {
        hop % period == 0 ? 1 : 0.05 * Float((hop * 7919) % 13) / 13
    }

    static func make() -> RunningAutocorrelation {
        RunningAutocorrelation(lagCount: 200, detrendHops: 120, step: Float(1 - exp(-1.0 / 180)), minimumWeight: 0.2)
    }

    /// Feeds `hops` of the pulse, with hops `gap` marked absent (and silent, 0) when `absent`, or
    /// read as zeros when not; returns the normalised autocorrelation at the lags asked for.
    static func readings(hops: Int, gap: Range<Int>, absent: Bool, lags: [Int], period: Int) -> [Float] {
        var correlation = make()
        for hop in 0..<hops {
            let silent = gap.contains(hop)
            correlation.add(silent ? 0 : pulse(hop, period: period), present: !(silent && absent))
        }
        correlation.normalise()
        return lags.map { correlation.normalised(at: Float($0)) }
    }

    /// A bar of silence (120 hops of a 30-hop beat) ending 90 hops before the reading: read as
    /// zeros it lowers the lags that span it (2–4 beats) far under the beat's; marked absent it
    /// leaves every multiple of the beat within a few percent of one another, as without it.
    @Test func aBarOfSilenceMarkedAbsentDoesNotLowerTheLagsThatSpanIt() {
        let lags = [30, 60, 90, 120], hops = 900, gap = 690..<810
        let clean = Self.readings(hops: hops, gap: 0..<0, absent: true, lags: lags, period: 30)
        let zeros = Self.readings(hops: hops, gap: gap, absent: false, lags: lags, period: 30)
        let absent = Self.readings(hops: hops, gap: gap, absent: true, lags: lags, period: 30)
        for (index, lag) in lags.enumerated() {
            #expect(abs(absent[index] - clean[index]) < 0.05, "lag \(lag): \(absent[index]) marked absent, \(clean[index]) without the gap")
        }
        // The test has teeth: the zeros lower the 4-beat lag (which spans the gap) against the beat.
        #expect(zeros[3] < 0.8 * zeros[0], "read as zeros: lag 120 \(zeros[3]), lag 30 \(zeros[0])")
    }

    /// Marking hops absent after the fact (`markAbsent`: the silence is known only once a window
    /// of it has passed) keeps later products with them out as well: the lags that span the gap
    /// keep at least 80 % of the beat's (read as zeros, 47 % at 4 beats; only the products made
    /// before the marking count the silence).
    @Test func markingAbsentAfterTheFactKeepsTheLagsThatSpanTheGap() {
        let lags = [30, 60, 90, 120], period = 30, gap = 690..<810, detectionHops = 60
        var correlation = Self.make()
        for hop in 0..<900 {
            let silent = gap.contains(hop)
            if hop == gap.lowerBound + detectionHops { correlation.markAbsent(hops: detectionHops) }
            correlation.add(silent ? 0 : Self.pulse(hop, period: period), present: !silent || hop < gap.lowerBound + detectionHops)
        }
        correlation.normalise()
        let beat = correlation.normalised(at: Float(period))
        for lag in lags.dropFirst() {
            let reading = correlation.normalised(at: Float(lag))
            #expect(reading >= 0.8 * beat, "lag \(lag): \(reading), the beat's \(beat)")
        }
    }
}
