import Foundation

/// A 12-note temperament read from a Scala scale file (.scl; the format of the Scala program
/// and its archive): `!` comment lines, a description line, the number of notes, then one
/// pitch per line above the implicit 1/1 — cents when it holds a period (`696.578`), else a
/// ratio (`3/2`, `2`) — the last one the octave. Mapped onto the keyboard with the scale's
/// 1/1 on `root`, as offsets from equal temperament with A kept at 0, so the reference pitch
/// (A4 = 440 Hz) stays. Main thread; allocates.
public struct Temperament: Sendable, Equatable {
    /// The file's description line.
    public let description: String
    /// Cents above equal temperament for C, C#, … B (A = 0): `PitchConfiguration.temperamentCents`.
    public let offsetsCents: [Double]

    /// A bad file or option: one line naming the file (and line) and what was expected.
    public struct ReadError: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Reads `path` with the scale's 1/1 on `root` (a note name, `C`, `Eb`, `F#`).
    public init(contentsOf path: String, root: String = "C") throws(ReadError) {
        guard let rootPitchClass = Self.pitchClass(of: root) else {
            throw ReadError(description: "--root \(root): expected a note name, C to B with an optional # or b (e.g. C, Eb, F#)")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ReadError(description: "--temperament \(path): expected a Scala scale file (.scl), got no such file")
        }
        guard !isDirectory.boolValue else {
            throw ReadError(description: "--temperament \(path): expected a Scala scale file (.scl), got a directory")
        }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw ReadError(description: "--temperament \(path): expected a readable UTF-8 Scala scale file (.scl), got a file that cannot be read as one")
        }
        try self.init(scala: text, name: path, rootPitchClass: rootPitchClass)
    }

    /// Parses Scala text; `name` names it in errors.
    public init(scala text: String, name: String, rootPitchClass: Int) throws(ReadError) {
        // (line number, text) of the lines that are not comments.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .map { (number: $0.offset + 1, text: $0.element.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))) }
            .filter { !$0.text.hasPrefix("!") }
        guard lines.count >= 2 else { throw ReadError(description: "\(name): expected a description line and the number of notes (Scala .scl format)") }
        description = lines[0].text
        let countLine = lines[1]
        guard let count = Int(countLine.text.split(separator: " ").first ?? "") else {
            throw ReadError(description: "\(name):\(countLine.number): expected the number of notes, got \"\(countLine.text)\"")
        }
        guard count == 12 else {
            throw ReadError(description: "\(name):\(countLine.number): the scale has \(count) notes: expected 12 (a temperament of the keyboard)")
        }
        let pitchLines = lines.dropFirst(2).filter { !$0.text.isEmpty }
        guard pitchLines.count >= count else {
            throw ReadError(description: "\(name): expected \(count) pitch lines after the note count, found \(pitchLines.count)")
        }
        var cents: [Double] = [0]
        for line in pitchLines.prefix(count) {
            let token = String(line.text.split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
            guard let value = Self.cents(of: token) else {
                throw ReadError(description: "\(name):\(line.number): expected cents (with a '.') or a ratio (n/d or n) greater than 0, got \"\(token)\"")
            }
            cents.append(value)
        }
        let lastLine = pitchLines.prefix(count).last!
        guard abs(cents[12] - 1200) < 0.5 else {
            throw ReadError(description: "\(name):\(lastLine.number): the scale repeats at \(String(format: "%.3f", cents[12])) cents: expected the octave (2/1 or 1200.0)")
        }
        var offsets = [Double](repeating: 0, count: 12)
        for degree in 0..<12 { offsets[(rootPitchClass + degree) % 12] = cents[degree] - 100 * Double(degree) }
        let a = offsets[9]
        offsetsCents = offsets.map { $0 - a }
        if let worst = offsetsCents.indices.first(where: { abs(offsetsCents[$0]) >= 100 }) {
            // The line of that degree (the implicit 1/1 has none: then A's, against which all are measured).
            let degree = (worst - rootPitchClass + 12) % 12, named = degree > 0 ? degree : (9 - rootPitchClass + 12) % 12
            let line = pitchLines[pitchLines.startIndex + named - 1]
            throw ReadError(description: "\(name):\(line.number): that degree lies \(String(format: "%.1f", offsetsCents[worst])) cents from equal temperament: expected a 12-note temperament, each note within 100 cents of its equal-tempered pitch")
        }
    }

    /// Cents of a Scala pitch: "701.955" (cents), "3/2" or "2" (a ratio); nil if malformed.
    static func cents(of token: String) -> Double? {
        if token.contains(".") {
            guard let value = Double(token), value.isFinite else { return nil }
            return value
        }
        let parts = token.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let numerator = Double(parts[0]), numerator > 0 else { return nil }
        let denominator = parts.count == 2 ? Double(parts[1]) : 1
        guard let denominator, denominator > 0 else { return nil }
        return 1200 * log2(numerator / denominator)
    }

    /// 0 = C … 11 = B for "C", "C#", "Db", "F#" …; nil otherwise.
    public static func pitchClass(of name: String) -> Int? {
        let letters: [Character: Int] = ["C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11]
        guard let first = name.first.map({ Character($0.uppercased()) }), let base = letters[first], name.count <= 2 else { return nil }
        switch name.dropFirst().first {
        case nil: return base
        case "#", "♯": return (base + 1) % 12
        case "b", "♭": return (base + 11) % 12
        default: return nil
        }
    }
}

/// The string instruments of string mode: their open strings, lowest first (standard tunings).
public enum StringTunings {
    /// Name and MIDI notes of each open string.
    public static let all: [(name: String, notes: [Int])] = [
        ("guitar", [40, 45, 50, 55, 59, 64]),          // E2 A2 D3 G3 B3 E4
        ("guitar-drop-d", [38, 45, 50, 55, 59, 64]),   // D2 A2 D3 G3 B3 E4
        ("bass", [28, 33, 38, 43]),                    // E1 A1 D2 G2
        ("bass-5", [23, 28, 33, 38, 43]),              // B0 E1 A1 D2 G2
        ("violin", [55, 62, 69, 76]),                  // G3 D4 A4 E5
        ("viola", [48, 55, 62, 69]),                   // C3 G3 D4 A4
        ("cello", [36, 43, 50, 57]),                   // C2 G2 D3 A3
        ("ukulele", [60, 64, 67, 69]),                 // C4 E4 G4 A4 (re-entrant G4, listed by pitch)
    ]

    public static func notes(named name: String) -> [Int]? { all.first { $0.name == name }?.notes }
}

/// Transposing instruments: `--transpose Bb|Eb|F|SEMITONES`, the semitones the written note
/// lies above the sounding one.
public enum Transposition {
    public static let named: [(name: String, semitones: Int)] = [("Bb", 2), ("Eb", 9), ("F", 7)]

    /// nil when `text` is neither a name above nor a whole number from −48 to 48.
    public static func semitones(_ text: String) -> Int? {
        if let entry = named.first(where: { $0.name == text }) { return entry.semitones }
        guard let value = Int(text), (-48...48).contains(value) else { return nil }
        return value
    }
}
