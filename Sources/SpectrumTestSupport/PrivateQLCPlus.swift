// liblo's headers (CLo) can own the socket declarations in a build: import it wherever they are used.
import CLo
import Foundation
import Glibc

/// A private QLC+ (Debian `qlcplus` 4.12.6) as a real lighting-desk peer for end-to-end tests:
/// headless (`QT_QPA_PLATFORM=offscreen`), in operate mode, with a generated workspace whose
/// Virtual Console has one slider per OSC address, driven by QLC+'s OSC input plugin on
/// `oscPort`. `sliderValue(oscAddress:)` reads a slider back through QLC+'s web API.
///
/// QLC+ binds its web port and UDP 3330 (the Enttec Wing plugin) on the wildcard address, so it
/// runs inside a `PrivateNetwork`; send to it from inside the same network. There the only IPv4
/// interface is lo, so the OSC plugin's one line is 127.0.0.1 and its input socket is bound
/// there. It gets a temporary HOME so that no user settings (recent files, plugin parameters)
/// leak in or out. Allocates, spawns processes; for tests only. Thread-safe.
public final class PrivateQLCPlus: @unchecked Sendable {
    /// True if `qlcplus` is installed (Debian package `qlcplus`, see scripts/install-deps).
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/qlcplus") }

    /// One Virtual Console slider and the OSC address that moves it.
    public struct Slider: Sendable, Equatable {
        public let oscAddress: String
        /// The slider's widget ID in the workspace and the web API.
        public let widgetID: Int
        /// The input channel QLC+ gives `oscAddress`: `inputChannel(oscAddress:)`.
        public let inputChannel: UInt16
    }

    /// The UDP port of QLC+'s OSC input (universe 1).
    public let oscPort: UInt16
    /// The port of QLC+'s web interface and its WebSocket API (`/qlcplusWS`).
    public let webPort: UInt16
    public let sliders: [Slider]

    private let network: PrivateNetwork
    private let home: URL
    private let application: PeerProcess

    /// Writes the workspace, starts QLC+ inside `network` and waits until its web API lists every
    /// slider. QLC+ opens the web server only after loading the workspace (and its OSC input)
    /// and entering operate mode, so a message sent after `init` returns moves the slider. (A
    /// workspace it cannot load opens a modal dialog instead, and `init` ends in its timeout.)
    /// `oscAddresses` must be distinct OSC addresses ("/spectrum/level").
    public init(network: PrivateNetwork, oscAddresses: [String], readyTimeoutSeconds: Double = 30) throws {
        // QLC+ ends a path at the message's first comma and checksums as many UTF-8 bytes as the
        // path has UTF-16 units: printable ASCII without commas keeps both right.
        guard !oscAddresses.isEmpty, Set(oscAddresses).count == oscAddresses.count,
              oscAddresses.allSatisfy({ $0.hasPrefix("/") && $0.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) && $0 != "," && $0 != "#" } }) else {
            throw RigPeerError(description: "QLC+ sliders need distinct OSC addresses of printable ASCII starting with /, without # or commas: \(oscAddresses)")
        }
        self.network = network
        sliders = oscAddresses.enumerated().map {
            Slider(oscAddress: $0.element, widgetID: $0.offset + 1, inputChannel: Self.inputChannel(oscAddress: $0.element))
        }
        oscPort = try freeLoopbackPort(SOCK_DGRAM, in: network)
        webPort = try freeLoopbackPort(SOCK_STREAM, in: network)
        home = try makeTemporaryDirectory(prefix: "spectrum-qlcplus")

        let workspace = home.appendingPathComponent("spectrum.qxw")
        var environment = ProcessInfo.processInfo.environment
        environment["QT_QPA_PLATFORM"] = "offscreen"
        environment["HOME"] = home.path
        // Qt wants a private runtime directory (mode 0700, as `home` is) and warns otherwise.
        environment["XDG_RUNTIME_DIR"] = home.path
        environment["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        do {
            try Self.workspace(sliders: sliders, oscPort: oscPort).write(to: workspace, atomically: false, encoding: .utf8)
            application = try PeerProcess(
                name: "qlcplus",
                argv: network.command(["qlcplus", "--operate", "--web", "--web-port", String(webPort), "--open", workspace.path]),
                environment: environment, logURL: home.appendingPathComponent("qlcplus.log"))
        } catch {
            try? FileManager.default.removeItem(at: home)
            throw error
        }

        let deadline = Date().addingTimeInterval(readyTimeoutSeconds)
        let expected = Set(sliders.map(\.widgetID))
        while true {
            do {
                try application.checkRunning(during: "during start-up")
                if let listed = try? widgetIDs(timeoutSeconds: 1), expected.isSubset(of: listed) { break }
                guard Date() < deadline else {
                    throw RigPeerError(description: "QLC+ not ready after \(readyTimeoutSeconds) s (its web API does not list the sliders): \(application.logTail())")
                }
                usleep(20_000)
            } catch {
                stop()
                throw error
            }
        }
    }

    deinit { stop() }

    /// The current value of the slider for `oscAddress`, 0…255: an OSC float v (0…1) sets it to
    /// Int(255·v), an int below 256 as is. Asks QLC+'s WebSocket API
    /// (`QLC+API|getWidgetStatus|ID` → `QLC+API|getWidgetStatus|VALUE`) on a fresh connection,
    /// so a late answer to an earlier, timed-out question can never be taken for this one.
    public func sliderValue(oscAddress: String, timeoutSeconds: Double = 5) throws -> Int {
        guard let slider = sliders.first(where: { $0.oscAddress == oscAddress }) else {
            throw RigPeerError(description: "QLC+ has no slider for \(oscAddress) (sliders: \(sliders.map(\.oscAddress)))")
        }
        let reply = try ask("getWidgetStatus|\(slider.widgetID)", timeoutSeconds: timeoutSeconds)
        guard let value = Int(reply) else {
            throw RigPeerError(description: "QLC+ answered getWidgetStatus|\(slider.widgetID) with \(reply.debugDescription)")
        }
        return value
    }

    /// Stops QLC+ by PID (SIGTERM, SIGKILL after 5 s) and removes its HOME. Idempotent.
    public func stop() {
        application.stop()
        try? FileManager.default.removeItem(at: home)
    }

    /// The input channel QLC+'s OSC plugin gives a message's path: its CRC-16 as Qt 5's
    /// `qChecksum` computes it (ISO 3309, i.e. CRC-16/X.25: reflected polynomial 0x1021, initial
    /// value and final XOR 0xFFFF). A message with N > 1 arguments feeds N channels instead, those
    /// of `path_0` … `path_{N-1}`.
    public static func inputChannel(oscAddress: String) -> UInt16 {
        var crc: UInt16 = 0xFFFF
        for byte in oscAddress.utf8 {
            crc ^= UInt16(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x8408 : crc >> 1 }
        }
        return ~crc
    }

    /// The workspace (.qxw) QLC+ 4.12.6 loads: universe 1 (ID 0) takes input from the OSC
    /// plugin's 127.0.0.1 line on `oscPort`; each slider is a Level slider 0…255 without channels,
    /// its external input universe 0 and its path's channel. `InvertedAppearance="false"` must be
    /// written: QLC+ reads a missing attribute as inverted and would then show 255 − v.
    static func workspace(sliders: [Slider], oscPort: UInt16) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE Workspace>
            <Workspace xmlns="http://www.qlcplus.org/Workspace" CurrentWindow="VirtualConsole">
             <Creator>
              <Name>Q Light Controller Plus</Name>
              <Version>4.12.6</Version>
              <Author>Spectrum tests</Author>
             </Creator>
             <Engine>
              <InputOutputMap>
               <Universe Name="Universe 1" ID="0">
                <Input Plugin="OSC" UID="127.0.0.1" Line="0">
                 <PluginParameters inputPort="\(oscPort)"/>
                </Input>
               </Universe>
              </InputOutputMap>
             </Engine>
             <VirtualConsole>
              <Frame Caption="">

            """
        for (index, slider) in sliders.enumerated() {
            xml += """
                   <Slider Caption="\(xmlEscaped(slider.oscAddress))" ID="\(slider.widgetID)" WidgetStyle="Slider" InvertedAppearance="false">
                    <WindowState Visible="False" X="\(10 + 70 * index)" Y="10" Width="60" Height="200"/>
                    <SliderMode ValueDisplayStyle="Exact">Level</SliderMode>
                    <Level LowLimit="0" HighLimit="255" Value="0"/>
                    <Input Universe="0" Channel="\(slider.inputChannel)"/>
                   </Slider>

                """
        }
        xml += """
              </Frame>
             </VirtualConsole>
            </Workspace>

            """
        return xml
    }

    /// The widget IDs the web API lists (`QLC+API|getWidgetsList` → `…|ID|caption|ID|caption`).
    private func widgetIDs(timeoutSeconds: Double) throws -> Set<Int> {
        let fields = try ask("getWidgetsList", timeoutSeconds: timeoutSeconds).split(separator: "|", omittingEmptySubsequences: false)
        return Set(stride(from: 0, to: fields.count - 1, by: 2).compactMap { Int(fields[$0]) })
    }

    /// Sends `QLC+API|<command>` and returns what follows `QLC+API|<name>|` in the answer. Other
    /// messages QLC+ pushes meanwhile (`ID|SLIDER|value|text` when a slider moves) are skipped.
    private func ask(_ command: String, timeoutSeconds: Double) throws -> String {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        let prefix = "QLC+API|\(command.prefix { $0 != "|" })|"
        do {
            let socket = try WebSocketConnection(port: webPort, path: "/qlcplusWS", in: network, deadline: deadline)
            try socket.send(text: "QLC+API|\(command)")
            while true {
                let message = try socket.receiveText(deadline: deadline)
                if message.hasPrefix(prefix) { return String(message.dropFirst(prefix.count)) }
            }
        } catch {
            throw RigPeerError(description: "QLC+API|\(command) on 127.0.0.1:\(webPort): \(error)")
        }
    }
}

private func xmlEscaped(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
}
