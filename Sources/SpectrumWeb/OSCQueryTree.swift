import Foundation
import SpectrumControl
import SpectrumOutput

/// The OSCQuery namespace (https://github.com/Vidvox/OSCQueryProposal): the addresses of
/// `OSCAddressSpace` — the table `spectrum osc-spec` prints — as a tree of containers and
/// leaves, plus the control addresses (read-write) when `--control` is given. With named
/// inputs each frame address is listed once per input under `<prefix>/NAME` and the status
/// addresses under `<prefix>`, as the publisher sends them. Immutable (rebuilt when an input is
/// added or removed); any thread.
public final class OSCQueryTree: Sendable {
    /// OSCQuery ACCESS values.
    public enum Access: Int, Sendable {
        case none = 0, readOnly = 1, writeOnly = 2, readWrite = 3
    }

    /// One address that carries a message (a leaf; it may also have children, like
    /// `/spectrum/level` and `/spectrum/level/db`).
    public struct Method: Sendable {
        public var typeTags: String
        public var ranges: [ClosedRange<Double>?]
        public var units: [String]
        public var description: String
        public var access: Access
    }

    public final class Node: Sendable {
        public let fullPath: String
        public let method: Method?
        /// Children by name, in table order.
        public let children: [(name: String, node: Node)]

        init(fullPath: String, method: Method?, children: [(name: String, node: Node)]) {
            self.fullPath = fullPath
            self.method = method
            self.children = children
        }
    }

    public let root: Node
    /// Every address with a method (outputs and controls).
    public let methodPaths: Set<String>

    /// - Parameters:
    ///   - addressSpace: what the publisher sends (read-only leaves).
    ///   - controls: the control addresses (read-write leaves under `<prefix>/control/`), or none.
    ///   - inputNames: the live client's inputs (`[""]`: one unnamed input, the table as it is).
    public init(addressSpace: OSCAddressSpace, controls: [ControlAddress], inputNames: [String] = [""]) {
        let prefix = addressSpace.prefix
        var methods: [(path: String, method: Method)] = addressSpace.entries.flatMap { entry in
            let expanded = entry.arguments.flatMap { Array(repeating: $0, count: $0.count) }
            let method = Method(typeTags: entry.typeTags, ranges: expanded.map(\.numericBounds), units: expanded.map(\.unit),
                                description: entry.description, access: .readOnly)
            guard inputNames != [""], !entry.kind.isStatus else { return [(entry.address, method)] }
            return inputNames.map { name in (prefix + "/" + name + entry.kind.suffix, method) }
        }
        for control in controls {
            methods.append((prefix + "/control/" + control.name,
                            Method(typeTags: control.typeTags, ranges: control.ranges, units: control.units, description: control.description,
                                   access: control.typeTags.isEmpty ? .writeOnly : .readWrite)))
        }
        methodPaths = Set(methods.map(\.path))
        root = Self.build(path: "/", methods: methods)
    }

    private static func build(path: String, methods: [(path: String, method: Method)]) -> Node {
        let base = path == "/" ? "" : path
        var childNames: [String] = []
        for item in methods where item.path.hasPrefix(base + "/") {
            let name = String(item.path.dropFirst(base.count + 1).split(separator: "/").first ?? "")
            if !name.isEmpty, !childNames.contains(name) { childNames.append(name) }
        }
        let children = childNames.map { name in
            (name: name, node: build(path: base + "/" + name, methods: methods.filter { $0.path == base + "/" + name || $0.path.hasPrefix(base + "/" + name + "/") }))
        }
        return Node(fullPath: path, method: methods.first { $0.path == path }?.method, children: children)
    }

    /// The node at `path` ("/" or an address, no trailing slash), nil when there is none.
    public func node(at path: String) -> Node? {
        guard path != "/" else { return root }
        var node = root
        for part in path.split(separator: "/") {
            guard let child = node.children.first(where: { $0.name == part }) else { return nil }
            node = child.node
        }
        return node
    }

    /// The node and its subtree as OSCQuery JSON; `values(path)` gives each leaf's latest
    /// arguments (nil: no VALUE yet).
    public func json(_ node: Node, values: (String) -> [Any]?) -> [String: Any] {
        var object: [String: Any] = ["FULL_PATH": node.fullPath]
        if let method = node.method {
            object.merge(attributes(method, path: node.fullPath, values: values)) { $1 }
        } else {
            object["ACCESS"] = Access.none.rawValue
        }
        if !node.children.isEmpty || node.method == nil {
            var contents: [String: Any] = [:]
            for child in node.children { contents[child.name] = json(child.node, values: values) }
            object["CONTENTS"] = contents
        }
        return object
    }

    /// One leaf's attributes (TYPE, ACCESS, RANGE, UNIT, DESCRIPTION, VALUE when known).
    public func attributes(_ method: Method, path: String, values: (String) -> [Any]?) -> [String: Any] {
        var object: [String: Any] = [
            "ACCESS": method.access.rawValue,
            "DESCRIPTION": method.description,
        ]
        if !method.typeTags.isEmpty {
            object["TYPE"] = method.typeTags
            object["RANGE"] = method.ranges.map { range -> Any in range.map { ["MIN": $0.lowerBound, "MAX": $0.upperBound] } ?? NSNull() }
            object["UNIT"] = method.units
        }
        if method.access != .writeOnly, let value = values(path) { object["VALUE"] = value }
        return object
    }
}

/// Reads the arguments of one OSC message written by `OSCWriter` (types f, i, s), for VALUE.
enum OSCMessageArguments {
    static func decode(_ message: [UInt8]) -> [Any]? {
        var offset = 0
        guard let address = string(message, &offset), address.hasPrefix("/"), let tags = string(message, &offset), tags.hasPrefix(",") else { return nil }
        var values: [Any] = []
        for tag in tags.dropFirst() {
            switch tag {
            case "f", "i":
                guard offset + 4 <= message.count else { return nil }
                let bits = UInt32(message[offset]) << 24 | UInt32(message[offset + 1]) << 16 | UInt32(message[offset + 2]) << 8 | UInt32(message[offset + 3])
                offset += 4
                values.append(tag == "f" ? Double(Float(bitPattern: bits)) : Int(Int32(bitPattern: bits)))
            case "s":
                guard let text = string(message, &offset) else { return nil }
                values.append(text)
            default:
                return nil
            }
        }
        return values
    }

    /// A NUL-terminated string padded to four bytes.
    private static func string(_ bytes: [UInt8], _ offset: inout Int) -> String? {
        guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0) else { return nil }
        let text = String(decoding: bytes[offset..<end], as: UTF8.self)
        offset = (end + 4) & ~3
        return text
    }
}
