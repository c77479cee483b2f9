import CSndfile
import Foundation

/// Writes test signals to sound files with libsndfile, so tests can feed real files to
/// `spectrum analyze` and `SoundFile`. Allocates and does file I/O; for tests and benchmarks.
public enum SoundFileWriter {
    /// Sample encodings the tests use.
    public enum Encoding: Sendable {
        case pcm16
        case float32

        var subformat: Int32 {
            switch self {
            case .pcm16: return Int32(SF_FORMAT_PCM_16)
            case .float32: return Int32(SF_FORMAT_FLOAT)
            }
        }
    }

    public struct WriteError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Writes `channels` (one array per channel, equal lengths; may be empty) as a WAV file.
    public static func writeWAV(_ channels: [[Float]], sampleRateHz: Int, encoding: Encoding = .float32, to path: String) throws {
        precondition(!channels.isEmpty && channels.allSatisfy { $0.count == channels[0].count }, "channels must have equal lengths")
        var info = SF_INFO()
        info.samplerate = Int32(sampleRateHz)
        info.channels = Int32(channels.count)
        info.format = Int32(SF_FORMAT_WAV) | encoding.subformat
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw WriteError(description: "\(path): \(String(cString: sf_strerror(nil)))")
        }
        defer { sf_close(file) }
        let frameCount = channels[0].count
        var interleaved = [Float](repeating: 0, count: frameCount * channels.count)
        for (channelIndex, channel) in channels.enumerated() {
            for frame in 0..<frameCount { interleaved[frame * channels.count + channelIndex] = channel[frame] }
        }
        let written = sf_writef_float(file, interleaved, sf_count_t(frameCount))
        guard written == sf_count_t(frameCount) else {
            throw WriteError(description: "\(path): wrote \(written) of \(frameCount) frames: \(String(cString: sf_strerror(file)))")
        }
    }
}
