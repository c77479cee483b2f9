import Foundation
import SpectrumDSP
import SpectrumOffline
import SpectrumTestSupport
import Testing
import SpectrumCore

@Suite struct FrameEncoderTests {
    static func text(_ append: (inout [UInt8]) -> Void) -> String {
        var buffer: [UInt8] = []
        append(&buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func fixedPointNumbers() {
        let cases: [(Double, Int, String)] = [
            (0, 4, "0"), (1, 4, "1"), (0.5, 4, "0.5"), (0.12346, 4, "0.1235"), (0.00004, 4, "0"),
            (-9.031, 2, "-9.03"), (-0.001, 2, "0"), (-120, 2, "-120"), (2, 6, "2"), (0.016667, 6, "0.016667"),
            (1.05, 2, "1.05"), (0.0001, 4, "0.0001"), (12.3456789, 6, "12.345679"), (.nan, 4, "0"), (.infinity, 2, "0"),
        ]
        for (value, decimals, expected) in cases {
            #expect(Self.text { FrameEncoder.appendFixed(value, decimals: decimals, to: &$0) } == expected, "\(value) with \(decimals) decimals")
        }
    }

    @Test func valuesAreClampedAndNeverNonFinite() {
        #expect(Self.text { FrameEncoder.appendUnit(.nan, to: &$0) } == "0")
        #expect(Self.text { FrameEncoder.appendUnit(1.5, to: &$0) } == "1")
        #expect(Self.text { FrameEncoder.appendUnit(-0.25, to: &$0) } == "0")
        #expect(Self.text { FrameEncoder.appendDecibels(-.infinity, to: &$0) } == "-120")
        #expect(Self.text { FrameEncoder.appendDecibels(.nan, to: &$0) } == "-120")
        #expect(Self.text { FrameEncoder.appendDecibels(3.016, to: &$0) } == "3.02")
    }

    @Test func jsonLineMatchesTheSchema() throws {
        var frame = AnalysisFrame()
        frame.streamFrame = 48_000
        frame.bandCount = 3
        frame.bands[0] = 0.25
        frame.bands[1] = .nan
        frame.bands[2] = 1
        frame.peaks[0] = 0.5
        frame.peaks[1] = 0.33333
        frame.peaks[2] = 1
        frame.level = LevelReading(rms: 0.35356, peak: 0.5, rmsDecibels: -9.0309, peakDecibels: -6.02, vu: 0.84949)
        let encoder = FrameEncoder(format: .json, bandCount: 3, sampleRateHz: 48_000)
        let line = Self.text { encoder.append(frame, to: &$0) }
        #expect(line == #"{"time":1,"bands":[0.25,0,1],"peaks":[0.5,0.3333,1],"level":{"rms":0.3536,"peak":0.5,"dbfs":-9.03,"vu":0.8495}}"# + "\n")
        #expect(try JSONSerialization.jsonObject(with: Data(line.utf8)) is [String: Any])
        let csv = FrameEncoder(format: .csv, bandCount: 3, sampleRateHz: 48_000)
        #expect(Self.text { csv.appendHeader(to: &$0) } == "time,band_0,band_1,band_2,peak_0,peak_1,peak_2,rms,peak,dbfs,vu\n")
        #expect(Self.text { csv.append(frame, to: &$0) } == "1,0.25,0,1,0.5,0.3333,1,0.3536,0.5,-9.03,0.8495\n")
    }
}

@Suite struct SoundFileTests {
    @Test func readsMonoMixInAnyBlockSize() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("stereo.wav")
        let left = TestSignals.sine(frequencyHz: 440, sampleRateHz: 44_100, seconds: 0.5, amplitude: 0.8)
        let right = TestSignals.whiteNoise(sampleRateHz: 44_100, seconds: 0.5, amplitude: 0.2)
        try SoundFileWriter.writeWAV([left, right], sampleRateHz: 44_100, to: path)

        let file = try SoundFile(readingPath: path, blockFrames: 1000)
        #expect(file.sampleRateHz == 44_100)
        #expect(file.channelCount == 2)
        #expect(file.frameCount == Int64(left.count))
        #expect(file.formatDescription.hasPrefix("WAV"))
        // Odd read sizes, larger than the internal block, must still give the exact mix.
        var mono: [Float] = []
        let chunk = UnsafeMutablePointer<Float>.allocate(capacity: 2500)
        defer { chunk.deallocate() }
        var sizes = [1, 63, 2500, 1000, 7].makeIterator()
        while true {
            let size = sizes.next() ?? 2500
            let count = try file.readMono(into: chunk, frameCount: size)
            if count == 0 { break }
            mono.append(contentsOf: UnsafeBufferPointer(start: chunk, count: count))
        }
        #expect(mono.count == left.count)
        #expect(file.position == Int64(left.count))
        let worst = zip(mono, zip(left, right)).map { abs($0 - ($1.0 + $1.1) / 2) }.max() ?? 0
        #expect(worst < 1e-6)
    }

    @Test func readAllMatchesTheSignal() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.path("mono.wav")
        let signal = TestSignals.sine(frequencyHz: 1000, sampleRateHz: 48_000, seconds: 0.25)
        try SoundFileWriter.writeWAV([signal], sampleRateHz: 48_000, to: path)
        let samples = try SoundFile(readingPath: path).readAllMono()
        #expect(samples == signal)
    }

    @Test func errorsNameTheFile() {
        #expect(throws: OfflineError(file: "/nonexistent.wav", expected: "a sound file", got: "no such file or directory")) {
            _ = try SoundFile(readingPath: "/nonexistent.wav")
        }
    }
}
