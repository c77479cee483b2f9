import SpectrumDSP
import SpectrumCore

/// Drives an `Analyzer` over a whole signal in blocks of the given sizes (cycled), collecting
/// every frame, as a host with irregular callbacks would. Allocates; for tests only.
public enum OfflineDriver {
    public static func frames(_ analyzer: inout Analyzer, signal: [Float], blockSizes: [Int] = [1024]) -> [AnalysisFrame] {
        var frames: [AnalysisFrame] = []
        signal.withUnsafeBufferPointer { samples in
            var position = 0
            var blockIndex = 0
            while position < samples.count {
                let size = min(blockSizes[blockIndex % blockSizes.count], samples.count - position)
                blockIndex += 1
                analyzer.process(samples.baseAddress! + position, frameCount: size) { frames.append(copy $0) }
                position += size
            }
        }
        return frames
    }

    /// The index of the largest of the first `count` values.
    public static func loudestBand(_ frame: AnalysisFrame) -> Int {
        var best = 0
        for band in 0..<frame.bandCount where frame.bands[band] > frame.bands[best] { best = band }
        return best
    }
}
