/// The few OSC messages the session protocol needs: strings, 32-bit integers and floats, one
/// message per datagram (NSM servers send no bundles). A strict reader: anything malformed is
/// nil, never a crash. Allocates; not for the real-time thread.
struct OSCDatagram: Equatable, Sendable {
    enum Argument: Equatable, Sendable {
        case string(String)
        case int(Int32)
        case float(Float)

        var typeTag: Character {
            switch self {
            case .string: "s"
            case .int: "i"
            case .float: "f"
            }
        }
    }

    var address: String
    var arguments: [Argument]

    /// The argument at `index` when it is a string / an integer.
    func string(_ index: Int) -> String? {
        guard arguments.indices.contains(index), case .string(let text) = arguments[index] else { return nil }
        return text
    }

    func int(_ index: Int) -> Int32? {
        guard arguments.indices.contains(index), case .int(let value) = arguments[index] else { return nil }
        return value
    }

    /// `,sis`-style type tags without the comma, e.g. `sis`.
    var typeTags: String { String(arguments.map(\.typeTag)) }

    init(_ address: String, _ arguments: [Argument] = []) {
        self.address = address
        self.arguments = arguments
    }

    /// The wire form: padded address, type tags, then each argument big-endian.
    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        Self.appendString(address, to: &bytes)
        Self.appendString("," + typeTags, to: &bytes)
        for argument in arguments {
            switch argument {
            case .string(let text): Self.appendString(text, to: &bytes)
            case .int(let value): withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
            case .float(let value): withUnsafeBytes(of: value.bitPattern.bigEndian) { bytes += $0 }
            }
        }
        return bytes
    }

    /// Reads one message; nil for a bundle, a truncated or misaligned datagram, an unknown type.
    init?(bytes: [UInt8]) {
        var offset = 0
        guard bytes.count % 4 == 0, let address = Self.readString(bytes, at: &offset), address.hasPrefix("/"),
              let tags = Self.readString(bytes, at: &offset), tags.hasPrefix(",") else { return nil }
        var arguments: [Argument] = []
        for tag in tags.dropFirst() {
            switch tag {
            case "s":
                guard let text = Self.readString(bytes, at: &offset) else { return nil }
                arguments.append(.string(text))
            case "i", "f":
                guard offset + 4 <= bytes.count else { return nil }
                let raw = bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                offset += 4
                arguments.append(tag == "i" ? .int(Int32(bitPattern: raw)) : .float(Float(bitPattern: raw)))
            default:
                return nil
            }
        }
        guard offset == bytes.count else { return nil }
        self.address = address
        self.arguments = arguments
    }

    private static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes += Array(text.utf8)
        bytes.append(0)
        while bytes.count % 4 != 0 { bytes.append(0) }
    }

    /// A NUL-terminated string padded to 4 bytes, valid UTF-8.
    private static func readString(_ bytes: [UInt8], at offset: inout Int) -> String? {
        guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0) else { return nil }
        guard let text = String(validating: bytes[offset..<end], as: UTF8.self) else { return nil }
        offset = (end + 4) & ~3
        guard offset <= bytes.count else { return nil }
        return text
    }
}
