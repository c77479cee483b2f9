import CJack
import Foundation
import Synchronization

/// A small JACK client of our own that plays a sine, or loops a recording, on one output port
/// (`NAME:out`), for end-to-end tests. Its process callback is a global C-compatible function on
/// a plain context (no allocation on its thread). Frequency and amplitude can change while it
/// plays.
///
/// `init` opens, activates and optionally connects; `stop()` closes (idempotent; deinit stops).
/// Not real-time safe itself (open/close); thread-safe.
public final class ToneClient: @unchecked Sendable {
    public let clientName: String
    /// Full name of the output port, e.g. `tone:out`.
    public let outputPortName: String
    private let client: OpaquePointer
    private let context: UnsafeMutablePointer<ToneContext>
    private let closed = Mutex<Bool>(false)

    public struct OpenError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Plays a sine of `frequencyHz`, or, with `loop`, those samples over and over (times
    /// `amplitude`; e.g. a drum pattern a whole number of bars long).
    ///
    /// Returns once its process callback has run. A client of this process can be opened on a
    /// stale libjack wake-up entry (jack2 issue 721, docs/live.md "A client that is never run")
    /// and then is never run: such a client is closed (which clears the entry) and opened
    /// again, up to `openAttempts` times.
    public init(serverName: String?, clientName: String = "tone", frequencyHz: Double = 1000, amplitude: Double = 0.5,
                loop: [Float]? = nil) throws {
        var attempt = 1
        while true {
            let (client, port, context) = try Self.open(serverName: serverName, clientName: clientName, frequencyHz: frequencyHz,
                                                        amplitude: amplitude, loop: loop)
            if Self.runs(context) || attempt == Self.openAttempts {
                self.client = client
                self.clientName = String(cString: jack_get_client_name(client))
                outputPortName = String(cString: jack_port_name(port))
                self.context = context
                return
            }
            jack_deactivate(client)
            jack_client_close(client)
            Self.free(context)
            // Let this process's other clients take the server's news of the close first (they
            // clear the entry of its number on it, and must not clear the next client's).
            usleep(200_000)
            attempt += 1
        }
    }

    static let openAttempts = 3
    /// How long a new client may take to run its first cycle before it is taken as never run.
    static let firstCycleSeconds = 2.0

    private static func open(serverName: String?, clientName: String, frequencyHz: Double, amplitude: Double, loop: [Float]?) throws
        -> (OpaquePointer, OpaquePointer, UnsafeMutablePointer<ToneContext>) {
        var status = jack_status_t(0)
        let opened: OpaquePointer? = clientName.withCString { name in
            if let serverName {
                return serverName.withCString { spectrum_jack_client_open(name, JackNoStartServer, &status, $0) }
            }
            return spectrum_jack_client_open(name, JackNoStartServer, &status, nil)
        }
        guard let client = opened else {
            throw OpenError(description: "tone client: cannot open JACK client (status 0x\(String(status.rawValue, radix: 16)))")
        }
        guard let port = jack_port_register(client, "out", "32 bit float mono audio", UInt(JackPortIsOutput.rawValue), 0) else {
            jack_client_close(client)
            throw OpenError(description: "tone client: cannot register port")
        }
        let context = UnsafeMutablePointer<ToneContext>.allocate(capacity: 1)
        context.initialize(to: ToneContext(client: client, port: port, sampleRateHz: Double(jack_get_sample_rate(client)), loop: loop))
        context.pointee.frequencyBits.store(frequencyHz.bitPattern, ordering: .relaxed)
        context.pointee.amplitudeBits.store(amplitude.bitPattern, ordering: .relaxed)
        jack_set_process_callback(client, toneProcess, context)
        guard jack_activate(client) == 0 else {
            jack_client_close(client)
            free(context)
            throw OpenError(description: "tone client: cannot activate")
        }
        return (client, port, context)
    }

    /// True once the process callback has run, false if it has not within `firstCycleSeconds`.
    private static func runs(_ context: UnsafeMutablePointer<ToneContext>) -> Bool {
        let deadline = Date().addingTimeInterval(firstCycleSeconds)
        while Date() < deadline {
            if context.pointee.callbacks.load(ordering: .relaxed) > 0 { return true }
            usleep(2_000)
        }
        return false
    }

    private static func free(_ context: UnsafeMutablePointer<ToneContext>) {
        context.pointee.loop?.deallocate()
        context.pointee.origins.deallocate()
        context.deinitialize(count: 1)
        context.deallocate()
    }

    deinit {
        stop()
        Self.free(context)
    }

    /// Connects `out` to `destination` (a full port name such as `spectrum:in`).
    public func connect(to destination: String) throws {
        let code = jack_connect(client, outputPortName, destination)
        guard code == 0 || code == EEXIST else {
            throw OpenError(description: "tone client: cannot connect \(outputPortName) to \(destination) (JACK error \(code))")
        }
    }

    public var frequencyHz: Double {
        get { Double(bitPattern: context.pointee.frequencyBits.load(ordering: .relaxed)) }
        set { context.pointee.frequencyBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    /// Linear peak amplitude (0.5 = −6 dBFS).
    public var amplitude: Double {
        get { Double(bitPattern: context.pointee.amplitudeBits.load(ordering: .relaxed)) }
        set { context.pointee.amplitudeBits.store(newValue.bitPattern, ordering: .relaxed) }
    }

    /// JACK time (µs, `jack_get_time` clock) of the first sample of the latest cycle in which the
    /// amplitude went from 0 to non-zero: when a burst began. 0 before any burst.
    public var burstStartMicroseconds: UInt64 { context.pointee.burstStartMicroseconds.load(ordering: .acquiring) }

    /// JACK time (µs) of the loop's first sample the last time the loop started over; 0 before
    /// that or without a loop.
    public var loopStartMicroseconds: UInt64 { context.pointee.loopStartMicroseconds.load(ordering: .acquiring) }

    /// Where the played stream sits on JACK's frame clock: each entry is the frame time of the
    /// stream's first sample (`originFrame`; sample n sounds at `originFrame + n`, wrapping) from
    /// the cycle at `fromFrame` on. The first entry comes from the first cycle; a new one only
    /// when the server's frame time moved on without this client's stream (a cycle skipped in an
    /// xrun), so a click's true place is measured against the entry in force. At most
    /// `ToneContext.originCapacity` entries.
    public var playbackOrigins: [(fromFrame: UInt32, originFrame: UInt32)] {
        let count = context.pointee.originCount.load(ordering: .acquiring)
        return (0..<count).map { context.pointee.origins[$0] }
    }

    /// Process cycles run so far.
    public var callbacks: UInt64 { context.pointee.callbacks.load(ordering: .relaxed) }

    /// Deactivates and closes. Idempotent.
    public func stop() {
        closed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            jack_deactivate(client)
            jack_client_close(client)
        }
    }
}

struct ToneContext: ~Copyable {
    let client: OpaquePointer
    let port: OpaquePointer
    let sampleRateHz: Double
    /// Phase in cycles (0..<1); only the process thread touches it.
    var phase: Double = 0
    let frequencyBits = Atomic<UInt64>(0)
    let amplitudeBits = Atomic<UInt64>(0)
    let callbacks = Atomic<UInt64>(0)
    let burstStartMicroseconds = Atomic<UInt64>(0)
    let loopStartMicroseconds = Atomic<UInt64>(0)
    /// Amplitude of the previous cycle; only the process thread touches it.
    var previousAmplitude: Double = 0
    /// The looped recording instead of the sine (nil: sine), and the next sample to play.
    let loop: UnsafeMutableBufferPointer<Float>?
    var loopPosition = 0
    /// Frames played so far (wrapping); only the process thread touches it.
    var playedFrames: UInt32 = 0
    /// `ToneClient.playbackOrigins`: written by the process thread up to `originCount`.
    static let originCapacity = 256
    let origins = UnsafeMutableBufferPointer<(fromFrame: UInt32, originFrame: UInt32)>.allocate(capacity: originCapacity)
    let originCount = Atomic<Int>(0)

    init(client: OpaquePointer, port: OpaquePointer, sampleRateHz: Double, loop: [Float]?) {
        self.client = client
        self.port = port
        self.sampleRateHz = sampleRateHz
        if let loop, !loop.isEmpty {
            let copy = UnsafeMutableBufferPointer<Float>.allocate(capacity: loop.count)
            _ = copy.initialize(from: loop)
            self.loop = copy
        } else {
            self.loop = nil
        }
    }
}

/// The tone's process callback: fills `out` with the sine (continuing the phase) or the loop.
func toneProcess(_ frameCount: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let argument else { return 0 }
    let context = argument.assumingMemoryBound(to: ToneContext.self)
    guard let raw = jack_port_get_buffer(context.pointee.port, frameCount) else { return 0 }
    let out = raw.assumingMemoryBound(to: Float.self)
    let step = Double(bitPattern: context.pointee.frequencyBits.load(ordering: .relaxed)) / context.pointee.sampleRateHz
    let amplitude = Double(bitPattern: context.pointee.amplitudeBits.load(ordering: .relaxed))
    let cycleFrame = jack_last_frame_time(context.pointee.client)
    let origin = cycleFrame &- context.pointee.playedFrames
    let origins = context.pointee.originCount.load(ordering: .relaxed)
    if origins < ToneContext.originCapacity && (origins == 0 || context.pointee.origins[origins - 1].originFrame != origin) {
        context.pointee.origins[origins] = (cycleFrame, origin)
        context.pointee.originCount.store(origins + 1, ordering: .releasing)
    }
    context.pointee.playedFrames &+= frameCount
    if let loop = context.pointee.loop {
        var position = context.pointee.loopPosition
        for frame in 0..<Int(frameCount) {
            if position == 0 {
                let startFrame = cycleFrame &+ UInt32(frame)
                context.pointee.loopStartMicroseconds.store(jack_frames_to_time(context.pointee.client, startFrame), ordering: .releasing)
            }
            out[frame] = Float(amplitude) * loop[position]
            position = position + 1 == loop.count ? 0 : position + 1
        }
        context.pointee.loopPosition = position
    } else {
        var phase = context.pointee.phase
        for frame in 0..<Int(frameCount) {
            out[frame] = Float(amplitude * sin(2 * Double.pi * phase))
            phase += step
            if phase >= 1 { phase -= 1 }
        }
        context.pointee.phase = phase
    }
    if amplitude > 0 && context.pointee.previousAmplitude == 0 {
        let start = jack_frames_to_time(context.pointee.client, jack_last_frame_time(context.pointee.client))
        context.pointee.burstStartMicroseconds.store(start, ordering: .releasing)
    }
    context.pointee.previousAmplitude = amplitude
    _ = context.pointee.callbacks.add(1, ordering: .relaxed)
    return 0
}

extension ToneClient {
    /// A client named `click<BPM>` on `server` looping a click on every beat at `bpm`
    /// (`TestSignals.clickLoop` at the server's rate, seamless), at `amplitude`.
    public static func clicks(bpm: Double, on server: PrivateJackServer, amplitude: Double = 1) throws -> ToneClient {
        try ToneClient(serverName: server.name, clientName: "click\(Int(bpm.rounded()))", amplitude: amplitude,
                       loop: TestSignals.clickLoop(bpm: bpm, sampleRateHz: Double(server.sampleRateHz)).samples)
    }
}
