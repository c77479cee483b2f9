import Glibc

/// OSC 1.0 bytes written straight into one growing buffer: messages (address, type tags,
/// big-endian arguments, each part padded to 4 bytes) and bundles (`#bundle`, time tag,
/// size-prefixed elements). The same bytes liblo's `lo_message_serialise` and
/// `lo_bundle_serialise` produce, without liblo's allocations: liblo mallocs a message, reallocs
/// its type and data buffers as arguments are added, and a bundle's element list, then copies
/// everything again to serialise — about ten allocator calls per message, which made up much of
/// the publisher's cost (docs/benchmarks.md). Here the buffer is allocated once and only grows.
///
/// Publisher thread only; not thread-safe. `free()` once.
struct OSCWriter {
    private(set) var bytes: UnsafeMutableRawPointer
    private(set) var capacity: Int
    /// Bytes written since the last `reset()`.
    private(set) var count = 0

    init(capacity: Int = 8192) {
        self.capacity = capacity
        bytes = .allocate(byteCount: capacity, alignment: 16)
    }

    func free() { bytes.deallocate() }

    mutating func reset() { count = 0 }

    /// The bytes written so far (valid until the next write or `reset()`).
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes, count: count) }

    private mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let grown = max(count + extra, capacity * 2)
        let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        larger.copyMemory(from: bytes, byteCount: count)
        bytes.deallocate()
        bytes = larger
        capacity = grown
    }

    /// Zeros to a multiple of 4 bytes.
    mutating func alignToFour() {
        let padding = (4 - count % 4) % 4
        reserve(padding)
        for _ in 0..<padding {
            bytes.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
            count += 1
        }
    }

    mutating func append(uint32 value: UInt32) {
        reserve(4)
        bytes.storeBytes(of: value.bigEndian, toByteOffset: count, as: UInt32.self)
        count += 4
    }

    mutating func append(int32 value: Int32) { append(uint32: UInt32(bitPattern: value)) }

    mutating func append(float value: Float) { append(uint32: value.bitPattern) }

    mutating func append(byte value: UInt8) {
        reserve(1)
        bytes.storeBytes(of: value, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// An OSC string: the C string, its NUL, zeros to a multiple of 4.
    mutating func append(string: UnsafePointer<CChar>) {
        let length = strlen(string)
        reserve(length + 4)
        (bytes + count).copyMemory(from: string, byteCount: length)
        count += length
        append(byte: 0)
        alignToFour()
    }

    /// An OSC blob's size; then append its bytes and `alignToFour()`.
    mutating func beginBlob(byteCount: Int) {
        append(int32: Int32(byteCount))
        reserve(byteCount + 3)
    }

    /// The type tag string: `,` then `tags`, NUL, padding.
    mutating func append(typeTags tags: UnsafeBufferPointer<UInt8>) {
        append(byte: UInt8(ascii: ","))
        reserve(tags.count)
        for tag in tags { append(byte: tag) }
        append(byte: 0)
        alignToFour()
    }

    /// A bundle's head: `#bundle`, NUL, the time tag (NTP seconds and fraction).
    mutating func beginBundle(seconds: UInt32, fraction: UInt32) {
        Self.bundleHead.withUnsafeBufferPointer { head in
            reserve(head.count)
            for byte in head { append(byte: byte) }
        }
        append(uint32: seconds)
        append(uint32: fraction)
    }

    /// Starts a bundle element: room for its size, to be filled by `endElement(at:)`.
    mutating func beginElement() -> Int {
        let start = count
        append(uint32: 0)
        return start
    }

    mutating func endElement(at start: Int) {
        let size = UInt32(count - start - 4)
        bytes.storeBytes(of: size.bigEndian, toByteOffset: start, as: UInt32.self)
    }

    /// Drops what was written after `mark` (a message that turned out empty).
    mutating func rewind(to mark: Int) { count = mark }

    private static let bundleHead: [UInt8] = Array("#bundle".utf8) + [0]
}
