import Glibc
import SpectrumCore

/// Low-pass filters and keeps every `factor`-th sample, so the bass bands can be fed by a long
/// window at low cost (a 170 ms window is 512 frames at ~3 kHz instead of 8192 at 48 kHz).
///
/// A Blackman-windowed sinc FIR of `8 × factor + 1` taps with its cut-off at the decimated
/// Nyquist frequency: flat far beyond the bass crossover (~430 Hz), and ≥ 70 dB down where
/// content would alias onto it. Only the kept outputs are computed.
/// `init` allocates; `push` is real-time safe.
struct Decimator: ~Copyable {
    let factor: Int
    private let taps: RealtimeBuffer
    /// Delay line written twice (at i and i + tapCount) so the newest `tapCount` inputs are
    /// always contiguous.
    private let delayLine: RealtimeBuffer
    private var writeIndex = 0
    private var phase = 0

    init(factor: Int) {
        precondition(factor >= 1)
        self.factor = factor
        let tapCount = 8 * factor + 1
        taps = RealtimeBuffer(count: tapCount, repeating: 0)
        delayLine = RealtimeBuffer(count: 2 * tapCount, repeating: 0)
        let cutoff = 0.5 / Double(factor) // cycles per input sample
        let centre = Double(tapCount - 1) / 2
        var gain = 0.0
        for index in 0..<tapCount {
            let x = Double(index) - centre
            let sinc = x == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * x) / (Double.pi * x)
            let phaseAngle = 2 * Double.pi * Double(index) / Double(tapCount - 1)
            let blackman = 0.42 - 0.5 * cos(phaseAngle) + 0.08 * cos(2 * phaseAngle)
            let value = factor == 1 ? (x == 0 ? 1 : 0) : sinc * blackman
            taps[index] = Float(value)
            gain += value
        }
        for index in 0..<tapCount { taps[index] = Float(Double(taps[index]) / gain) }
    }

    /// Feeds one input sample; appends an output sample to `output` every `factor` inputs.
    @inline(__always) @_noLocks
    mutating func push(_ sample: Float, into output: inout SampleHistory) {
        let tapCount = taps.count
        delayLine[writeIndex] = sample
        delayLine[writeIndex + tapCount] = sample
        writeIndex += 1
        if writeIndex == tapCount { writeIndex = 0 }
        phase += 1
        guard phase == factor else { return }
        phase = 0
        // The newest tapCount inputs, oldest first, start at writeIndex.
        output.append(realtimeDotProduct(taps.base, delayLine.base + writeIndex, count: tapCount))
    }

    @_noLocks
    mutating func reset() {
        delayLine.fill(with: 0)
        writeIndex = 0
        phase = 0
    }
}
