import ArgumentParser
import SpectrumLive

/// How `run`, `monitor` and `tune` join the JACK graph (see docs/live.md).
struct JackOptions: ParsableArguments {
    @Option(name: [.customLong("server"), .customShort("s")], help: ArgumentHelp(
        "JACK server name (default: $JACK_DEFAULT_SERVER or 'default'). A server is never started.", valueName: "name"))
    var server: String?

    @Option(name: [.customLong("name"), .customShort("j")], help: ArgumentHelp(
        "JACK client name; give each instance its own (kick, bass, vocal).", valueName: "name"))
    var name: String = "spectrum"

    @Option(parsing: .unconditional, help: ArgumentHelp("Input ports: 1 gives 'in', 2 or more give in_1 … in_N, averaged to mono.", valueName: "n"))
    var channels: Int = 1

    @Option(name: .customLong("connect"), help: ArgumentHelp(
        "Connect this source port (repeatable), e.g. system:capture_1. Default: the first physical capture port(s).",
        valueName: "port"))
    var connections: [String] = []

    @Flag(name: .customLong("no-connect"), help: "Connect nothing (patch by hand, or let a session manager restore connections).")
    var noConnect = false

    @Flag(name: .customLong("no-reconnect"), help: "Exit 1 when the JACK server goes away, instead of waiting for it and reconnecting (ports, connections and outputs restored).")
    var noReconnect = false

    func validate() throws {
        guard (1...LiveConfiguration.maximumChannelCount).contains(channels) else {
            throw ValidationError("--channels \(channels): expected 1 to \(LiveConfiguration.maximumChannelCount)")
        }
        guard !(noConnect && !connections.isEmpty) else {
            throw ValidationError("--no-connect: expected either --connect or --no-connect, got both")
        }
        guard !name.isEmpty else { throw ValidationError("--name: expected a client name, got an empty one") }
    }

    var connectionPlan: LiveConnections {
        if noConnect { return .none }
        return connections.isEmpty ? .physicalCapture : .ports(connections)
    }
}
