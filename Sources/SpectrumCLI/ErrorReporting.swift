import ArgumentParser
import Foundation

/// Writes `message` as one line on standard error and returns the exit code to throw, so a
/// failing command prints exactly one line and no usage text:
/// `throw oneLineFailure(error)`. Main thread (command code); not real-time safe.
func oneLineFailure(_ message: Any, exitCode: ExitCode = .failure) -> ExitCode {
    let line = String(describing: message).replacingOccurrences(of: "\n", with: " ")
    FileHandle.standardError.write(Data((line + "\n").utf8))
    return exitCode
}
