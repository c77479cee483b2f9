import CJack
import Foundation
import Synchronization

/// A JACK client of our own with one MIDI input (`NAME:in`) that records every event's status
/// byte at its JACK frame time (`jack_last_frame_time` + the event's offset), into memory
/// prepared in advance: frame-exact timing of a MIDI clock against other clients on the same
/// server (e.g. `ToneClient.playbackOrigins`). For tests and benchmarks; thread-safe.
public final class MidiTickRecorder: @unchecked Sendable {
    public let inputPortName: String
    private let client: OpaquePointer
    private let context: UnsafeMutablePointer<MidiRecorderContext>
    private let closed = Mutex<Bool>(false)

    /// One recorded event: its JACK frame time (wrapping at 2³²) and its status byte.
    public struct Event: Equatable, Sendable {
        public var frame: UInt32
        public var status: UInt8
    }

    /// Opens, registers `in` and activates; records up to `capacity` events.
    public init(serverName: String?, clientName: String = "recorder", capacity: Int = 1 << 17) throws {
        var status = jack_status_t(0)
        let opened: OpaquePointer? = clientName.withCString { name in
            if let serverName { return serverName.withCString { spectrum_jack_client_open(name, JackNoStartServer, &status, $0) } }
            return spectrum_jack_client_open(name, JackNoStartServer, &status, nil)
        }
        guard let client = opened else { throw ToneClient.OpenError(description: "MIDI recorder: cannot open JACK client (status 0x\(String(status.rawValue, radix: 16)))") }
        guard let port = jack_port_register(client, "in", "8 bit raw midi", UInt(JackPortIsInput.rawValue), 0) else {
            jack_client_close(client)
            throw ToneClient.OpenError(description: "MIDI recorder: cannot register port")
        }
        self.client = client
        inputPortName = String(cString: jack_port_name(port))
        context = .allocate(capacity: 1)
        context.initialize(to: MidiRecorderContext(client: client, port: port, capacity: capacity))
        jack_set_process_callback(client, midiRecorderProcess, context)
        guard jack_activate(client) == 0 else {
            jack_client_close(client)
            throw ToneClient.OpenError(description: "MIDI recorder: cannot activate")
        }
    }

    deinit {
        stop()
        context.pointee.frames.deallocate()
        context.pointee.statuses.deallocate()
        context.deinitialize(count: 1)
        context.deallocate()
    }

    /// The events recorded so far, oldest first.
    public var events: [Event] {
        let count = min(context.pointee.count.load(ordering: .acquiring), context.pointee.capacity)
        return (0..<count).map { Event(frame: context.pointee.frames[$0], status: context.pointee.statuses[$0]) }
    }

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

struct MidiRecorderContext: ~Copyable {
    let client: OpaquePointer
    let port: OpaquePointer
    let capacity: Int
    let frames: UnsafeMutablePointer<UInt32>
    let statuses: UnsafeMutablePointer<UInt8>
    let count = Atomic<Int>(0)

    init(client: OpaquePointer, port: OpaquePointer, capacity: Int) {
        self.client = client
        self.port = port
        self.capacity = capacity
        frames = .allocate(capacity: capacity)
        frames.initialize(repeating: 0, count: capacity)
        statuses = .allocate(capacity: capacity)
        statuses.initialize(repeating: 0, count: capacity)
    }
}

func midiRecorderProcess(_ frameCount: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let argument else { return 0 }
    let context = argument.assumingMemoryBound(to: MidiRecorderContext.self)
    guard let buffer = jack_port_get_buffer(context.pointee.port, frameCount) else { return 0 }
    let cycleStart = jack_last_frame_time(context.pointee.client)
    var written = context.pointee.count.load(ordering: .relaxed)
    for index in 0..<jack_midi_get_event_count(buffer) {
        var event = jack_midi_event_t()
        guard jack_midi_event_get(&event, buffer, index) == 0, event.size > 0, written < context.pointee.capacity else { continue }
        context.pointee.frames[written] = cycleStart &+ event.time
        context.pointee.statuses[written] = event.buffer[0]
        written += 1
    }
    context.pointee.count.store(written, ordering: .releasing)
    return 0
}
