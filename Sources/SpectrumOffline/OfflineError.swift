/// Why an offline analysis could not run or finish, as one line naming the file:
/// `FILE: expected …, got …` (or `FILE: <analysis configuration error>`). Any thread.
public struct OfflineError: Error, Equatable, CustomStringConvertible {
    public let description: String

    public init(file: String, expected: String, got: String) {
        description = "\(file): expected \(expected), got \(got)"
    }

    public init(file: String, message: String) {
        description = "\(file): \(message)"
    }
}

/// `strerror` text as it reads mid-sentence: "no such file or directory".
func systemErrorText(_ code: Int32) -> String {
    guard let text = strerrorText(code) else { return "error \(code)" }
    return text.prefix(1).lowercased() + text.dropFirst()
}

#if canImport(Glibc)
import Glibc
private func strerrorText(_ code: Int32) -> String? { strerror(code).map { String(cString: $0) } }
#else
import Darwin
private func strerrorText(_ code: Int32) -> String? { strerror(code).map { String(cString: $0) } }
#endif
