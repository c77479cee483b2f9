import CSndfile
import Glibc

/// A sound file opened for reading through libsndfile (WAV, AIFF, FLAC, Ogg/Vorbis, Opus, MP3,
/// … whatever the installed libsndfile reads), delivered as mono blocks: the average of all
/// channels, as floats in −1..1. `init` opens the file and allocates its block buffer; reading
/// does file I/O. Not real-time safe; use from one thread at a time.
public final class SoundFile {
    public let path: String
    public let sampleRateHz: Double
    public let channelCount: Int
    /// Frames (samples per channel) in the file, as the file's header reports them.
    public let frameCount: Int64
    /// Frames read so far.
    public private(set) var position: Int64 = 0
    /// libsndfile's name for the container and encoding, e.g. "WAV (Microsoft) / Signed 16 bit PCM".
    public let formatDescription: String

    private let handle: OpaquePointer
    /// Interleaved scratch for multi-channel files: `blockFrames × channelCount` samples.
    private let interleaved: UnsafeMutablePointer<Float>
    private let blockFrames: Int

    /// Opens `path` for reading. `blockFrames` sizes the internal buffer used to mix down
    /// multi-channel files (reads of any length still work). Errors name the file and say what
    /// was expected: a missing file, a directory, no permission, or a file that is not audio.
    public init(readingPath path: String, blockFrames: Int = 4096) throws(OfflineError) {
        self.path = path
        // 1) Say precisely what is wrong with the path before libsndfile tries it.
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw OfflineError(file: path, expected: "a sound file", got: systemErrorText(errno))
        }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            throw OfflineError(file: path, expected: "a sound file", got: "a directory")
        }
        guard access(path, R_OK) == 0 else {
            throw OfflineError(file: path, expected: "a readable sound file", got: systemErrorText(errno))
        }
        // 2) Open; libsndfile decides whether it is audio.
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            let reason = String(cString: sf_strerror(nil))
            let trimmed = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            throw OfflineError(file: path, expected: "a sound file in a format libsndfile reads (WAV, AIFF, FLAC, Ogg, MP3, …)",
                               got: trimmed.prefix(1).lowercased() + trimmed.dropFirst())
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(handle)
            throw OfflineError(file: path, expected: "at least one channel and a sample rate", got: "\(info.channels) channels at \(info.samplerate) Hz")
        }
        self.handle = handle
        sampleRateHz = Double(info.samplerate)
        channelCount = Int(info.channels)
        frameCount = max(0, Int64(info.frames))
        formatDescription = Self.describeFormat(info.format)
        self.blockFrames = max(1, blockFrames)
        interleaved = .allocate(capacity: self.blockFrames * channelCount)
    }

    deinit {
        sf_close(handle)
        interleaved.deallocate()
    }

    /// Reads up to `frameCount` frames, mixed to mono, into `buffer`; returns how many were read
    /// (0 at the end of the file).
    public func readMono(into buffer: UnsafeMutablePointer<Float>, frameCount: Int) throws(OfflineError) -> Int {
        var done = 0
        while done < frameCount {
            let wanted = min(frameCount - done, channelCount == 1 ? frameCount - done : blockFrames)
            let got: Int
            if channelCount == 1 {
                got = Int(sf_readf_float(handle, buffer + done, sf_count_t(wanted)))
            } else {
                got = Int(sf_readf_float(handle, interleaved, sf_count_t(wanted)))
                let scale = 1 / Float(channelCount)
                for frame in 0..<got {
                    var sum: Float = 0
                    let base = interleaved + frame * channelCount
                    for channel in 0..<channelCount { sum += base[channel] }
                    buffer[done + frame] = sum * scale
                }
            }
            done += got
            position += Int64(got)
            if got < wanted {
                let code = sf_error(handle)
                if code != 0 {
                    throw OfflineError(file: path, expected: "readable audio after frame \(position)", got: String(cString: sf_error_number(code)))
                }
                break
            }
        }
        return done
    }

    /// The whole rest of the file as mono samples. Allocates; for tests and scripts.
    public func readAllMono() throws(OfflineError) -> [Float] {
        var samples: [Float] = []
        samples.reserveCapacity(Int(max(0, frameCount - position)))
        let chunk = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
        defer { chunk.deallocate() }
        while true {
            let count = try readMono(into: chunk, frameCount: blockFrames)
            if count == 0 { break }
            samples.append(contentsOf: UnsafeBufferPointer(start: chunk, count: count))
        }
        return samples
    }

    private static func describeFormat(_ format: Int32) -> String {
        var major = SF_FORMAT_INFO()
        major.format = format & Int32(SF_FORMAT_TYPEMASK)
        var minor = SF_FORMAT_INFO()
        minor.format = format & Int32(SF_FORMAT_SUBMASK)
        let size = Int32(MemoryLayout<SF_FORMAT_INFO>.size)
        guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &major, size) == 0, let majorName = major.name else { return "unknown format" }
        guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &minor, size) == 0, let minorName = minor.name else { return String(cString: majorName) }
        return "\(String(cString: majorName)) / \(String(cString: minorName))"
    }
}
