/// A preset that cannot be used, as one line in the shape compilers use:
/// `FILE:LINE: KEY: expected …, got …` (line and key left out when they do not apply, e.g. an
/// unreadable file). Any thread.
public struct PresetError: Error, Equatable, CustomStringConvertible {
    public let file: String
    /// 1-based line of the offending value, when there is one.
    public let line: Int?
    /// Key path (`spectrum.band_count`), or what was being read (`syntax`, `preset`).
    public let key: String?
    public let expected: String
    public let got: String

    public init(file: String, line: Int?, key: String?, expected: String, got: String) {
        self.file = file
        self.line = line
        self.key = key
        self.expected = expected
        self.got = got
    }

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(key): " }
        return text + "expected \(expected), got \(got)"
    }
}

/// `--preset NAME` matched no file: names NAME, every place searched and the presets that
/// do exist, on one line. Any thread.
public struct PresetNotFoundError: Error, Equatable, CustomStringConvertible {
    public let name: String
    /// Directories searched, in order, as shown to the user.
    public let searchedDirectories: [String]
    /// Preset names (file names without `.yaml`) found in those directories.
    public let availableNames: [String]

    public var description: String {
        let searched = searchedDirectories.isEmpty ? "nowhere (no preset folder exists)" : searchedDirectories.joined(separator: ", ")
        let available = availableNames.isEmpty ? "none" : availableNames.joined(separator: ", ")
        return "preset \(name): expected \(name).yaml in \(searched), got no such file (available presets: \(available))"
    }
}
