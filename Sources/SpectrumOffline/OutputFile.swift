import Glibc

/// A file (or standard output) written in large chunks with `write(2)`. `init` opens or
/// creates the file; `write` is blocking I/O. Not real-time safe; one thread at a time.
public final class OutputFile {
    /// The path as given, or "standard output".
    public let name: String
    private let descriptor: Int32
    private let ownsDescriptor: Bool

    /// Creates or truncates `path`; nil or "-" means standard output.
    public init(path: String?) throws(OfflineError) {
        guard let path, path != "-" else {
            name = "standard output"
            descriptor = STDOUT_FILENO
            ownsDescriptor = false
            return
        }
        name = path
        let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw OfflineError(file: path, expected: "a writable output file", got: systemErrorText(errno))
        }
        descriptor = opened
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Writes all of `bytes`, retrying short writes and interrupted calls.
    public func write(_ bytes: [UInt8]) throws(OfflineError) {
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure != 0 {
            throw OfflineError(file: name, expected: "to write the output", got: systemErrorText(failure))
        }
    }
}
