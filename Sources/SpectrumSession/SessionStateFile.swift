import Foundation
import Glibc

/// Session state on disk, replaced atomically: written to a temporary file in the same
/// directory, flushed to the disk, then renamed over the old one, so a crash or a power cut
/// leaves the old state or the new, never half of one.
public enum SessionStateFile {
    /// Writes `text` to `url`, creating its directory if needed. Throws one line naming the file.
    public static func writeAtomically(_ text: String, to url: URL) throws(NSMError) {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw NSMError("\(directory.path): cannot create the session directory (\(error.localizedDescription))")
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw NSMError("\(temporary.path): cannot write (\(String(cString: strerror(errno))))") }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            written += count
        }
        let flushed = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, flushed, rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw NSMError("\(url.path): cannot save the session state (\(reason))")
        }
        // The rename itself reaches the disk with the directory.
        let directoryDescriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }
}
