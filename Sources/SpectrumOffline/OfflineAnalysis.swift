import Glibc
import SpectrumDSP

/// `spectrum analyze`: a sound file through the same `Analyzer` the live host runs, in blocks,
/// one text line per output frame. Allocates and does file I/O; not real-time safe. Call from
/// any non-real-time thread.
public struct OfflineAnalysis {
    /// Frames fed to the analyser per call (the analyser takes any block size).
    public var blockFrames = 4096
    /// Bytes collected before each `write(2)`.
    public var writeChunkBytes = 1 << 20

    public init() {}

    /// What a finished run did.
    public struct Summary: Sendable, Equatable {
        public var audioFrames: Int64
        public var outputFrames: Int
        public var sampleRateHz: Double
    }

    /// Analyses `inputPath` with `configuration` and writes `format` lines to `outputPath`
    /// (nil or "-": standard output). Input problems (missing, not audio, empty, a sample rate
    /// the configuration cannot run at) are reported before the output file is created.
    @discardableResult
    public func run(inputPath: String, outputPath: String?, format: FrameFormat,
                    configuration: AnalysisConfiguration) throws(OfflineError) -> Summary {
        // 1) Input, checked before anything is written.
        let file = try SoundFile(readingPath: inputPath, blockFrames: blockFrames)
        guard file.frameCount > 0 else {
            throw OfflineError(file: inputPath, expected: "audio", got: "an empty sound file (0 frames)")
        }
        var analyzer: Analyzer
        do {
            analyzer = try Analyzer(configuration: configuration, sampleRateHz: file.sampleRateHz)
        } catch {
            throw OfflineError(file: inputPath, message: error.description)
        }
        // A file shorter than one hop gives no frame at all: say so rather than write nothing.
        guard file.frameCount >= Int64(analyzer.hopFrames) else {
            let milliseconds = { (frames: Int64) -> String in
                let value = Double(frames) * 1000 / file.sampleRateHz
                return "\(value < 1 ? (value * 1000).rounded() / 1000 : (value * 10).rounded() / 10) ms"
            }
            throw OfflineError(file: inputPath,
                               expected: "at least one output frame of audio (\(analyzer.hopFrames) frames, \(milliseconds(Int64(analyzer.hopFrames))) at \(Int(file.sampleRateHz)) Hz)",
                               got: "\(file.frameCount) frame\(file.frameCount == 1 ? "" : "s") (\(milliseconds(file.frameCount)))")
        }
        // 2) Output (never the input: opening it would truncate the audio before it is read).
        if let outputPath, outputPath != "-", Self.isSameFile(outputPath, inputPath) {
            throw OfflineError(file: outputPath, expected: "an output file other than the input", got: "the input file")
        }
        let output = try OutputFile(path: outputPath)
        let encoder = FrameEncoder(format: format, bandCount: analyzer.bandCount, sampleRateHz: file.sampleRateHz,
                                   includesPitch: configuration.pitch.enabled, includesRhythm: configuration.rhythm.enabled)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(writeChunkBytes + 64 * 1024)
        encoder.appendHeader(to: &buffer)

        // 3) Blocks through the analyser; frames into the byte buffer, written in big chunks.
        let block = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
        defer { block.deallocate() }
        var outputFrames = 0
        var audioFrames: Int64 = 0
        while true {
            let count = try file.readMono(into: block, frameCount: blockFrames)
            if count == 0 { break }
            audioFrames += Int64(count)
            analyzer.process(block, frameCount: count) { frame in
                encoder.append(frame, to: &buffer)
                outputFrames += 1
            }
            if buffer.count >= writeChunkBytes {
                try output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        guard audioFrames > 0 else {
            throw OfflineError(file: inputPath, expected: "audio", got: "an empty sound file (0 frames)")
        }
        try output.write(buffer)
        return Summary(audioFrames: audioFrames, outputFrames: outputFrames, sampleRateHz: file.sampleRateHz)
    }

    private static func isSameFile(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        return stat(first, &a) == 0 && stat(second, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }
}
