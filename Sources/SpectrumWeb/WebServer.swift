import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import SpectrumControl
import SpectrumCore
import SpectrumOutput
import Synchronization

/// What `--http` serves and tells.
public struct WebServerConfiguration: Sendable {
    /// Host to listen on (`127.0.0.1` unless `--http` names one).
    public var host: String
    /// TCP port; 0 picks a free one (tests).
    public var port: Int
    /// OSCQuery NAME and the page's title: the JACK client name.
    public var name: String
    /// The address space the publisher sends (prefix, bands, groups, rate).
    public var addressSpace: OSCAddressSpace
    /// The live client's inputs by slot, as `PublisherConfiguration.inputNames` (nil: no input
    /// in that slot yet, see `WebServer.setInput`; `[""]`: one unnamed input). OSCQuery lists
    /// each named input's addresses under `<prefix>/NAME`; each page shows the input it asks
    /// for (`/view?input=NAME`), the first one otherwise.
    public var inputNames: [String?] = [""]
    /// The control input, if `--control` is given: its addresses are read-write in the tree and
    /// its port is OSCQuery's OSC_PORT.
    public var control: (host: String, port: UInt16)?
    public var sampleRateHz: Double
    /// Centre frequency of each band, for the page's axis and tuner band.
    public var bandCentreFrequenciesHz: [Double]
    /// Frames that may wait in one client's socket before its next frames are dropped.
    public var maximumPendingFramesPerClient = 4

    public init(host: String, port: Int, name: String, addressSpace: OSCAddressSpace, control: (host: String, port: UInt16)?,
                sampleRateHz: Double, bandCentreFrequenciesHz: [Double], inputNames: [String?] = [""]) {
        self.inputNames = inputNames
        self.host = host
        self.port = port
        self.name = name
        self.addressSpace = addressSpace
        self.control = control
        self.sampleRateHz = sampleRateHz
        self.bandCentreFrequenciesHz = bandCentreFrequenciesHz
    }
}

/// Counters of the web output; any thread may read them.
public struct WebStatistics: Sendable, Equatable {
    /// WebSocket clients connected now: the page's (`/view`) and OSCQuery's.
    public var viewClients = 0
    public var queryClients = 0
    /// View frames written to a client socket, summed over clients.
    public var framesSent = 0
    /// View frames not sent to a client because its socket was still full (a slow client).
    public var framesDropped = 0
    /// OSC messages streamed to OSCQuery listeners, and those dropped for a slow listener.
    public var oscMessagesSent = 0
    public var oscMessagesDropped = 0
    /// HTTP requests answered, and those answered 404.
    public var httpRequests = 0
    public var notFound = 0
}

/// The web output (`--http`): one HTTP + WebSocket server (swift-nio) on one event-loop thread
/// that serves the web view at `/`, streams frames to it over the WebSocket at `/view`, and
/// answers OSCQuery (HOST_INFO, the namespace, LISTEN/IGNORE over a WebSocket at any other
/// path). Fed by `publish(_:)` on the publisher thread, which only encodes and hands over:
/// it never waits for a client. A client whose socket still holds
/// `maximumPendingFramesPerClient` frames, or is over the write-buffer high-water mark, gets
/// no new frame until it catches up (counted in `framesDropped`).
public final class WebServer: @unchecked Sendable {
    public let configuration: WebServerConfiguration
    /// The OSCQuery namespace now (it follows `setInput`).
    public var tree: OSCQueryTree { hub.inputs.withLock { $0.tree } }
    /// The port actually bound (the configured one, or the one picked for 0).
    public let boundPort: Int

    private let group: MultiThreadedEventLoopGroup
    private let eventLoop: EventLoop
    private let serverChannel: Channel
    private let hub: ClientHub
    /// Publisher thread only.
    private var viewBytes: [UInt8]

    /// Binds and starts serving. Throws one line naming `--http` and the cause.
    public init(configuration: WebServerConfiguration) throws {
        self.configuration = configuration
        let inputs = try WebInputs(configuration: configuration)
        viewBytes = Array(repeating: 0, count: ViewFrameEncoder.byteCount(bandCount: configuration.addressSpace.bandCount))
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        eventLoop = group.next()
        // Named so that per-thread tools (top -H, the benchmark) can tell it from the others.
        eventLoop.execute {
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = WebServer.threadName.withCString { write(comm, $0, strlen($0)) }
                close(comm)
            }
        }
        let hub = ClientHub(configuration: configuration, inputs: inputs, eventLoop: eventLoop)
        self.hub = hub
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            // A fixed kernel send buffer (no autotuning to megabytes): a stuck client holds at
            // most this much (Linux doubles it: about 80 view frames) before its frames are dropped, not seconds of
            // stale frames that it would show late.
            .childChannelOption(.socketOption(.so_sndbuf), value: WebServer.socketSendBufferBytes)
            .childChannelOption(.writeBufferWaterMark, value: .init(low: 64 * 1024, high: 256 * 1024))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let http = HTTPHandler(hub: hub)
                    let boundHTTP = NIOLoopBound(http, eventLoop: channel.eventLoop)
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 1 << 16,
                        shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                        upgradePipelineHandler: { channel, head in
                            channel.eventLoop.makeCompletedFuture {
                                let components = URLComponents(string: head.uri)
                                let kind: WebClient.Kind = components?.path == "/view" ? .view : .query
                                let requestedInput = components?.queryItems?.first { $0.name == "input" }?.value
                                try channel.pipeline.syncOperations.addHandler(WebSocketHandler(hub: hub, kind: kind, requestedInput: requestedInput))
                            }
                        })
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { context in
                            context.pipeline.syncOperations.removeHandler(boundHTTP.value, promise: nil)
                        }))
                    try channel.pipeline.syncOperations.addHandler(http)
                }
            }
        do {
            serverChannel = try bootstrap.bind(host: configuration.host, port: configuration.port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw WebServerError("--http \(configuration.host):\(configuration.port): cannot listen (\(Self.describe(error)))")
        }
        boundPort = serverChannel.localAddress?.port ?? configuration.port
    }

    deinit { stop() }

    /// SO_SNDBUF of every client socket.
    public static let socketSendBufferBytes = 128 * 1024

    /// The event-loop thread's name (`/proc/PID/task/TID/comm`).
    public static let threadName = "spectrum-web"

    /// The page's address, e.g. `http://127.0.0.1:8080/`.
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "http://\(host):\(boundPort)/"
    }

    /// Closes every connection and the listening socket and joins the thread. Safe to call twice.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? serverChannel.close().wait()
        try? group.syncShutdownGracefully()
    }

    private let stopped = Atomic<Bool>(false)

    /// Adds the input `name` in `slot` (an input added at run time) or removes the slot's input
    /// (`name` nil): OSCQuery lists its addresses from now on, or no longer; every page is told
    /// the inputs there are now, and a page that asked for this name gets its frames from now
    /// on (the first input's while it is gone). Allocates; any thread but the publisher's.
    /// Throws a one-line error for a slot the server does not have.
    public func setInput(slot: Int, name: String?) throws {
        let configuration = self.configuration
        try hub.inputs.withLock { inputs in
            guard inputs.names != [""], inputs.names.indices.contains(slot) else {
                throw WebServerError("input slot \(slot): the web server has no such slot")
            }
            inputs.names[slot] = name
            try inputs.rebuild(configuration: configuration)
        }
        hub.updateListened()
        hub.inputsChanged()
    }

    /// Called on the publisher thread with each frame of every input after the OSC targets got
    /// it. Encodes the frames of the inputs pages show (each page its own) and renders
    /// the listened OSC messages (when someone listens), keeps each input's latest frame for
    /// VALUE, and hands everything to the event loop. Never waits for a client.
    public func publish(_ frame: borrowing AnalysisFrame) {
        let latest = copy frame
        let slot = Int(latest.inputIndex)
        let found = hub.inputs.withLock { inputs -> WebInputs.Streams? in
            guard inputs.streams.indices.contains(slot), let streams = inputs.streams[slot] else { return nil }
            inputs.latestFrames[slot] = latest
            return streams
        }
        guard let found else { return }
        let wantsView = hub.viewedSlots.withLock { $0.contains(slot) }
        let listened = hub.listenedAddresses.withLock { $0 }
        guard wantsView || !listened.isEmpty else { return }
        if wantsView { viewBytes.withUnsafeMutableBytes { ViewFrameEncoder.encode(latest, into: $0) } }
        let view = wantsView ? ByteBuffer(bytes: viewBytes) : nil
        var messages: [(address: String, bytes: ByteBuffer)] = []
        if !listened.isEmpty {
            found.publishing.render(latest) { message in
                if let address = OSCMessageStream.address(of: message), listened.contains(address) {
                    messages.append((address, ByteBuffer(bytes: message)))
                }
            }
        }
        let captureMicroseconds = frame.captureTimeMicroseconds
        let hub = self.hub
        eventLoop.execute { [messages] in hub.deliver(view: view, slot: slot, messages: messages, captureMicroseconds: captureMicroseconds) }
    }

    /// Called on the event-loop thread with the capture time of each view frame when its write
    /// to one client completed. Set before frames flow.
    public var sentObserver: (@Sendable (UInt64) -> Void)? {
        get { hub.sentObserver.withLock { $0 } }
        set { hub.sentObserver.withLock { $0 = newValue } }
    }

    public var statistics: WebStatistics { hub.statistics.withLock { $0 } }

    static func describe(_ error: Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        return "\(error)"
    }
}

public struct WebServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// One WebSocket client; event-loop thread only.
final class WebClient {
    enum Kind { case view, query }
    let channel: Channel
    let kind: Kind
    /// The input a page asked for (`/view?input=NAME`), nil when it asked for none.
    let requestedInput: String?
    /// The slot whose frames a page gets: the requested input's, the first input's otherwise.
    var slot = 0
    var listening: Set<String> = []
    /// Frames (or OSC messages) written but not yet completed.
    var pending = 0

    init(channel: Channel, kind: Kind, requestedInput: String?) {
        self.channel = channel
        self.kind = kind
        self.requestedInput = requestedInput
    }
}

/// The state the handlers share: clients (event-loop thread), the latest frame and the
/// listened addresses (read by the publisher thread), counters (any thread).
final class ClientHub: @unchecked Sendable {
    let configuration: WebServerConfiguration
    let inputs: Mutex<WebInputs>
    var tree: OSCQueryTree { inputs.withLock { $0.tree } }
    let eventLoop: EventLoop
    let page: ByteBuffer
    let listenedAddresses = Mutex<Set<String>>([])
    /// The slots some page shows (read by the publisher thread: only those are encoded).
    let viewedSlots = Mutex<Set<Int>>([])
    let statistics = Mutex(WebStatistics())
    let sentObserver = Mutex<(@Sendable (UInt64) -> Void)?>(nil)
    /// Event-loop thread only.
    private var clients: [ObjectIdentifier: WebClient] = [:]

    init(configuration: WebServerConfiguration, inputs: consuming WebInputs, eventLoop: EventLoop) {
        self.configuration = configuration
        self.inputs = Mutex(inputs)
        self.eventLoop = eventLoop
        page = ByteBuffer(string: WebPage.html)
    }

    // MARK: Clients (event-loop thread)

    func add(_ client: WebClient) {
        clients[ObjectIdentifier(client.channel)] = client
        if client.kind == .view { assignSlots() }
        countClients()
    }

    func remove(_ channel: Channel) {
        guard let client = clients.removeValue(forKey: ObjectIdentifier(channel)) else { return }
        if client.kind == .view { assignSlots() }
        updateListened()
        countClients()
    }

    /// Each slot's input name now (nil: an empty slot, `""`: one unnamed input) and the first
    /// slot with an input.
    private func inputNames() -> (names: [String?], firstSlot: Int) {
        inputs.withLock { ($0.names, $0.firstSlot) }
    }

    /// Gives each page the slot it shows (the input it asked for, else the first) and tells the
    /// publisher which slots to encode. Event-loop thread.
    private func assignSlots() {
        let (names, firstSlot) = inputNames()
        var viewed = Set<Int>()
        for client in clients.values where client.kind == .view {
            let requested = client.requestedInput.flatMap { name in names.firstIndex { $0 == name && !name.isEmpty } }
            client.slot = requested ?? firstSlot
            viewed.insert(client.slot)
        }
        viewedSlots.withLock { $0 = viewed }
    }

    /// What a page is told of the inputs (in the hello and in `inputs` messages): `inputs` the
    /// named inputs there are, `input` the one it is shown (absent for one unnamed input).
    func inputsDescription(for client: WebClient) -> [String: Any] {
        let names = inputNames().names
        var description: [String: Any] = ["inputs": names.compactMap { $0 }.filter { !$0.isEmpty }]
        if client.slot < names.count, let name = names[client.slot], !name.isEmpty { description["input"] = name }
        return description
    }

    /// After `setInput`: every page gets its slot again and an `inputs` message. Any thread.
    func inputsChanged() {
        eventLoop.execute {
            self.assignSlots()
            for client in self.clients.values where client.kind == .view {
                let message = self.inputsDescription(for: client).merging(["type": "inputs"]) { $1 }
                Self.sendText(message, to: client.channel)
            }
        }
    }

    /// One JSON text message (the hello, `inputs`); not subject to the frame dropping.
    static func sendText(_ object: [String: Any], to channel: Channel) {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: data)), promise: nil)
    }

    func client(_ channel: Channel) -> WebClient? { clients[ObjectIdentifier(channel)] }

    private func countClients() {
        let views = clients.values.filter { $0.kind == .view }.count
        statistics.withLock {
            $0.viewClients = views
            $0.queryClients = clients.count - views
        }
    }

    /// The addresses some client listens to and that the tree still has (an input removed
    /// takes its addresses with it). Event-loop thread, or `setInput`'s.
    func updateListened() {
        if !eventLoop.inEventLoop {
            eventLoop.execute { self.updateListened() }
            return
        }
        let methodPaths = tree.methodPaths
        for client in clients.values { client.listening.formIntersection(methodPaths) }
        let all = clients.values.reduce(into: Set<String>()) { $0.formUnion($1.listening) }
        listenedAddresses.withLock { $0 = all }
    }

    func deliver(view: ByteBuffer?, slot: Int, messages: [(address: String, bytes: ByteBuffer)], captureMicroseconds: UInt64) {
        var sent = 0, dropped = 0, oscSent = 0, oscDropped = 0
        let observer = sentObserver.withLock { $0 }
        let onWritten: (@Sendable () -> Void)? = observer.map { observer in { @Sendable in observer(captureMicroseconds) } }
        for client in clients.values {
            switch client.kind {
            case .view:
                guard let view, client.slot == slot else { continue }
                if write(view, to: client, onWritten: onWritten) { sent += 1 } else { dropped += 1 }
            case .query:
                for message in messages where client.listening.contains(message.address) {
                    if write(message.bytes, to: client, onWritten: nil) { oscSent += 1 } else { oscDropped += 1 }
                }
            }
        }
        statistics.withLock {
            $0.framesSent += sent
            $0.framesDropped += dropped
            $0.oscMessagesSent += oscSent
            $0.oscMessagesDropped += oscDropped
        }
    }

    /// Writes one binary message unless the client is behind; false when dropped.
    private func write(_ bytes: ByteBuffer, to client: WebClient, onWritten: (@Sendable () -> Void)?) -> Bool {
        guard client.channel.isActive else { return false }
        guard client.pending < configuration.maximumPendingFramesPerClient, client.channel.isWritable else { return false }
        client.pending += 1
        let frame = WebSocketFrame(fin: true, opcode: .binary, data: bytes)
        let promise = eventLoop.makePromise(of: Void.self)
        nonisolated(unsafe) let unsafeClient = client
        promise.futureResult.whenComplete { result in
            unsafeClient.pending -= 1
            if case .success = result { onWritten?() }
        }
        client.channel.writeAndFlush(frame, promise: promise)
        return true
    }

    // MARK: OSCQuery

    /// The latest arguments of each output address of every input (event-loop thread).
    func latestValues() -> [String: [Any]] {
        let latest = inputs.withLock { inputs in
            inputs.streams.indices.compactMap { slot in inputs.streams[slot].map { (streams: $0, frame: inputs.latestFrames[slot]) } }
        }
        var values: [String: [Any]] = [:]
        for (streams, frame) in latest {
            streams.values.render(frame) { message in
                if let address = OSCMessageStream.address(of: message), let arguments = OSCMessageArguments.decode(Array(message)) {
                    values[address] = arguments
                }
            }
        }
        return values
    }

    func hostInfo() -> [String: Any] {
        let extensions: [String: Bool] = [
            "ACCESS": true, "VALUE": true, "RANGE": true, "DESCRIPTION": true, "UNIT": true, "LISTEN": true,
            "TAGS": false, "EXTENDED_TYPE": false, "CRITICAL": false, "CLIPMODE": false,
            "PATH_CHANGED": false, "PATH_RENAMED": false, "PATH_ADDED": false, "PATH_REMOVED": false,
        ]
        var info: [String: Any] = [:]
        info["NAME"] = configuration.name
        info["OSC_TRANSPORT"] = "UDP"
        info["EXTENSIONS"] = extensions
        // Where Spectrum receives OSC: the control input. Without --control nothing does, so no
        // OSC_PORT; a wildcard host is left out (the client then uses the host it asked).
        if let control = configuration.control {
            if !["0.0.0.0", "::", ""].contains(control.host) { info["OSC_IP"] = control.host }
            info["OSC_PORT"] = Int(control.port)
        }
        return info
    }
}

/// Plain HTTP: the page, HOST_INFO, the namespace; 404 for anything else.
final class HTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let hub: ClientHub
    private var request: HTTPRequestHead?

    init(hub: ClientHub) { self.hub = hub }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        hub.statistics.withLock { $0.httpRequests += 1 }
        guard head.method == .GET || head.method == .HEAD else {
            send(status: .methodNotAllowed, type: "text/plain; charset=utf-8", body: ByteBuffer(string: "GET only\n"), head: head, context: context)
            return
        }
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var path = String(parts.first ?? "/")
        let query = parts.count > 1 ? String(parts[1]) : nil
        if path.count > 1, path.hasSuffix("/") { path.removeLast() }
        let acceptsHTML = head.headers["Accept"].contains { $0.contains("text/html") }
        // The page's own query (`?input=NAME`) is not an OSCQuery attribute (`?VALUE`, `?HOST_INFO`).
        let pageQuery = query == nil || query?.hasPrefix("input=") == true
        if pageQuery, path == "/" && acceptsHTML || path == "/index.html" {
            send(status: .ok, type: "text/html; charset=utf-8", body: hub.page, head: head, context: context)
            return
        }
        if query == "HOST_INFO" {
            sendJSON(hub.hostInfo(), head: head, context: context)
            return
        }
        let tree = hub.tree
        guard let node = tree.node(at: path) else {
            hub.statistics.withLock { $0.notFound += 1 }
            send(status: .notFound, type: "text/plain; charset=utf-8", body: ByteBuffer(string: "no such path: \(path)\n"), head: head, context: context)
            return
        }
        let values = hub.latestValues()
        if let query {
            // One attribute: `/spectrum/level?VALUE`.
            let attributes = node.method.map { tree.attributes($0, path: node.fullPath) { values[$0] } } ?? [:]
            let all = attributes.merging(["FULL_PATH": node.fullPath]) { $1 }
            guard let value = all[query] else {
                send(status: .noContent, type: "text/plain", body: ByteBuffer(), head: head, context: context)
                return
            }
            sendJSON([query: value], head: head, context: context)
            return
        }
        sendJSON(tree.json(node) { values[$0] }, head: head, context: context)
    }

    private func sendJSON(_ object: [String: Any], head: HTTPRequestHead, context: ChannelHandlerContext) {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        send(status: .ok, type: "application/json", body: ByteBuffer(bytes: data), head: head, context: context)
    }

    private func send(status: HTTPResponseStatus, type: String, body: ByteBuffer, head: HTTPRequestHead, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Cache-Control", value: "no-store")
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD, body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        }
        let done = context.writeAndFlushPromise()
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            let channel = context.channel
            done.futureResult.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

private extension ChannelHandlerContext {
    func writeAndFlushPromise() -> EventLoopPromise<Void> { eventLoop.makePromise() }
}

/// One WebSocket connection: the page's (`/view`: a hello, then frames) or OSCQuery's (LISTEN
/// and IGNORE commands as JSON text, binary OSC out).
final class WebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let hub: ClientHub
    private let kind: WebClient.Kind
    private let requestedInput: String?

    init(hub: ClientHub, kind: WebClient.Kind, requestedInput: String?) {
        self.hub = hub
        self.kind = kind
        self.requestedInput = requestedInput
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let client = WebClient(channel: context.channel, kind: kind, requestedInput: requestedInput)
        hub.add(client)
        if kind == .view {
            let configuration = hub.configuration
            let hello: [String: Any] = [
                "type": "hello", "format": 1, "name": configuration.name,
                "bandCount": configuration.addressSpace.bandCount, "outputRateHz": configuration.addressSpace.outputRateHz,
                "sampleRateHz": configuration.sampleRateHz, "bandCentresHz": configuration.bandCentreFrequenciesHz,
            ]
            ClientHub.sendText(hello.merging(hub.inputsDescription(for: client)) { $1 }, to: context.channel)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        hub.remove(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        hub.remove(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readWebSocketErrorCode() ?? .normalClosure
            var reply = context.channel.allocator.buffer(capacity: 2)
            reply.write(webSocketErrorCode: code)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: reply))).whenComplete { _ in
                channel.close(promise: nil)
            }
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .text:
            command(frame.unmaskedData, context: context)
        default:
            break
        }
    }

    /// OSCQuery: `{"COMMAND": "LISTEN" | "IGNORE", "DATA": "/spectrum/bands"}`.
    private func command(_ data: ByteBuffer, context: ChannelHandlerContext) {
        guard let bytes = data.getBytes(at: data.readerIndex, length: data.readableBytes),
              let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let command = object["COMMAND"] as? String, let path = object["DATA"] as? String,
              let client = hub.client(context.channel) else { return }
        switch command {
        case "LISTEN": if hub.tree.methodPaths.contains(path) { client.listening.insert(path) }
        case "IGNORE": client.listening.remove(path)
        default: return
        }
        hub.updateListened()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

/// The inputs the web server knows, by slot, and what is derived from them: the OSCQuery tree
/// and each input's message streams. Held under `ClientHub.inputs`.
struct WebInputs {
    /// One input's renderers of its OSC messages (under `<prefix>` or `<prefix>/NAME`): one for
    /// the publisher thread (LISTEN), one for the event loop (VALUE); each keeps pulse state.
    final class Streams: @unchecked Sendable {
        let publishing: OSCMessageStream
        let values: OSCMessageStream
        init(_ addressSpace: OSCAddressSpace) throws {
            publishing = try OSCMessageStream(addressSpace: addressSpace)
            values = try OSCMessageStream(addressSpace: addressSpace)
        }
    }

    var names: [String?]
    private(set) var tree: OSCQueryTree
    private(set) var streams: [Streams?]
    /// The first slot with an input: the one a page shows unless it asks for another.
    private(set) var firstSlot = 0
    /// Each slot's latest frame, for VALUE.
    var latestFrames: [AnalysisFrame]

    init(configuration: WebServerConfiguration) throws {
        names = configuration.inputNames
        tree = OSCQueryTree(addressSpace: configuration.addressSpace, controls: [])
        streams = []
        latestFrames = Array(repeating: AnalysisFrame(), count: configuration.inputNames.count)
        try rebuild(configuration: configuration)
    }

    /// Rebuilds the tree and the streams from `names`; a slot whose name is unchanged keeps
    /// its streams.
    mutating func rebuild(configuration: WebServerConfiguration) throws {
        let space = configuration.addressSpace
        let present = names.compactMap { $0 }
        tree = OSCQueryTree(addressSpace: space, controls: configuration.control == nil ? [] : ControlAddress.all, inputNames: present)
        var rebuilt: [Streams?] = []
        for (slot, name) in names.enumerated() {
            guard let name else { rebuilt.append(nil); continue }
            let prefix = name.isEmpty ? space.prefix : space.prefix + "/" + name
            if slot < streams.count, let existing = streams[slot], existing.publishing.addressSpace.prefix == prefix {
                rebuilt.append(existing)
            } else {
                rebuilt.append(try Streams(OSCAddressSpace(prefix: prefix, bandCount: space.bandCount, groupCount: space.groupCount, outputRateHz: space.outputRateHz)))
            }
        }
        streams = rebuilt
        firstSlot = names.firstIndex { $0 != nil } ?? 0
    }
}
