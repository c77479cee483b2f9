import Glibc

// libm calls for the real-time path. `@_noLocks` rejects every C call, so each one is wrapped
// on its own in `_unsafePerformance` (libm's float functions neither allocate nor lock); the
// allocation-counting test and the RTSan run back this up.

@inline(__always) @_noLocks
func realtimeLog10(_ value: Float) -> Float { _unsafePerformance { log10f(value) } }

@inline(__always) @_noLocks
func realtimeSquareRoot(_ value: Float) -> Float { _unsafePerformance { sqrtf(value) } }

@inline(__always) @_noLocks
func realtimeDecibelsFromPower(_ power: Float) -> Float {
    10 * realtimeLog10(max(power, powerFloor))
}

@inline(__always) @_noLocks
func realtimeDecibelsFromAmplitude(_ amplitude: Float) -> Float {
    20 * realtimeLog10(max(amplitude, amplitudeFloor))
}

/// The seed's floor before taking logarithms: power 1e-20 (−200 dB).
@inline(__always) var powerFloor: Float { 1e-20 }
/// Amplitude floor for levels: 1e-6 (−120 dBFS), as in seed 002.
@inline(__always) var amplitudeFloor: Float { 1e-6 }

/// Replaces NaN and ±infinity by `fallback`, so nothing non-finite ever leaves the analysis.
@inline(__always) @_noLocks
func finiteOr(_ value: Float, _ fallback: Float) -> Float {
    value.isFinite ? value : fallback
}

@inline(__always) @_noLocks
func clampUnit(_ value: Float) -> Float {
    value.isFinite ? min(max(value, 0), 1) : 0
}

/// Σ a[i]·b[i], in eight SIMD lanes so the sum is not one long chain of dependent adds.
/// Real-time safe. The order of additions is fixed, so results are reproducible.
@inline(__always) @_noLocks
func realtimeDotProduct(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, count: Int) -> Float {
    var lanes = SIMD8<Float>(repeating: 0)
    var index = 0
    while index + 8 <= count {
        let left = UnsafeRawPointer(a + index).loadUnaligned(as: SIMD8<Float>.self)
        let right = UnsafeRawPointer(b + index).loadUnaligned(as: SIMD8<Float>.self)
        lanes += left * right // not addingProduct: without -mfma that calls libm fmaf per lane
        index += 8
    }
    var sum = lanes.sum()
    while index < count {
        sum += a[index] * b[index]
        index += 1
    }
    return sum
}

/// The sum of `count` values in eight lanes: a single running sum is one dependent add per
/// value (the compiler may not reorder float additions), which made the tuner's window mean and
/// band powers a sizeable share of its cost. Real-time safe; the order of additions is fixed.
@inline(__always) @_noLocks
func realtimeSum(_ values: UnsafePointer<Float>, count: Int) -> Float {
    var lanes = SIMD8<Float>(repeating: 0)
    var index = 0
    while index + 8 <= count {
        lanes += UnsafeRawPointer(values + index).loadUnaligned(as: SIMD8<Float>.self)
        index += 8
    }
    var total = lanes.sum()
    while index < count {
        total += values[index]
        index += 1
    }
    return total
}

@inline(__always) @_noLocks
func realtimeFloor(_ value: Double) -> Double { _unsafePerformance { floor(value) } }

/// Nearest integer, halves away from zero (as `rounded()`).
@inline(__always) @_noLocks
func realtimeRound(_ value: Double) -> Double { _unsafePerformance { round(value) } }

@inline(__always) @_noLocks
func realtimeExp(_ value: Double) -> Double { _unsafePerformance { exp(value) } }

@inline(__always) @_noLocks
func realtimeLog1p(_ value: Float) -> Float { _unsafePerformance { log1pf(value) } }

/// log2(x) for a positive normal float without a libm call: the exponent from the bits, log2
/// of the mantissa (1 ≤ m < 2) from a degree-4 Chebyshev fit (max error 2e-4, i.e. 6e-4 dB).
/// A tenth of the cost of `log10f`, and it vectorises. Real-time safe.
@inline(__always) @_noLocks
func approximateLog2(_ value: Float) -> Float {
    let bits = value.bitPattern
    let exponent = Float(Int32(bitPattern: (bits >> 23) & 0xFF) &- 127)
    let m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
    return exponent + (-2.4967738 + (4.0283728 + (-2.0810602 + (0.62881573 - 0.079150366 * m) * m) * m) * m)
}

/// ln(x) through `approximateLog2` (as in ln(1 + γ·power) for the onset flux). Real-time safe.
@inline(__always) @_noLocks
func approximateNaturalLog(_ value: Float) -> Float { approximateLog2(value) * 0.6931472 }

/// 10·log10(power) with the 1e-20 floor, through `approximateLog2`: for the 128 band levels
/// of every hop, where 6e-4 dB does not matter. Real-time safe.
@inline(__always) @_noLocks
func approximateDecibelsFromPower(_ power: Float) -> Float {
    3.0102999 * approximateLog2(max(power, powerFloor))
}

/// The offset of a peak from the middle of three equally spaced samples, by the parabola through
/// them (0 where they do not curve down). Real-time safe.
@inline(__always) @_noLocks
func parabolicPeakOffset(before: Float, peak: Float, after: Float) -> Float {
    let curvature = before - 2 * peak + after
    return curvature < 0 ? 0.5 * (before - after) / curvature : 0
}
