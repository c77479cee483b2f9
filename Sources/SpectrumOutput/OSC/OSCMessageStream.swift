import SpectrumCore

/// The `spectrum` rig's messages one by one, for outputs that pick addresses (OSCQuery's
/// LISTEN and VALUE): each frame is rendered by the same `RigRenderer` as the UDP targets, with
/// every message kind of `OSCAddressSpace` on (the waveform too), as plain messages rather than
/// one bundle. The status messages need the host's status and are not produced.
///
/// One thread at a time (the renderer keeps pulse state); allocates only in `init`.
public final class OSCMessageStream {
    public let addressSpace: OSCAddressSpace
    private let renderer: RigRenderer

    /// Throws a one-line `OSCConfigurationError` when the rig cannot be built for `bandCount`.
    public init(addressSpace: OSCAddressSpace) throws {
        self.addressSpace = addressSpace
        var rig = addressSpace.rig(messages: .all)
        rig.bundled = false
        renderer = try RigRenderer(rig: rig, prefix: addressSpace.prefix, bandCount: addressSpace.bandCount,
                                   outputRateHz: addressSpace.outputRateHz, targetCount: 0)
    }

    /// Renders `frame` and hands each OSC message (address, type tags, arguments, as on the
    /// wire) to `message`; the bytes are valid only during the call.
    public func render(_ frame: AnalysisFrame, message: (UnsafeRawBufferPointer) -> Void) {
        renderer.render(frame, context: RenderContext(), timeTag: .immediate, send: message)
    }

    /// The address of one OSC message (its first, NUL-terminated string); nil when it has none.
    public static func address(of message: UnsafeRawBufferPointer) -> String? {
        guard let end = message.firstIndex(of: 0), end > 0, message[0] == UInt8(ascii: "/") else { return nil }
        return String(decoding: message[0..<end], as: UTF8.self)
    }
}
