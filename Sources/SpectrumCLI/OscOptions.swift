import ArgumentParser
import SpectrumOutput
import SpectrumPresets

/// The OSC options of `spectrum run`, as an option group:
/// ```
/// struct Run: ParsableCommand {
///     @OptionGroup(title: "OSC output") var osc: OscOptions
///     func run() throws {
///         let configuration = try osc.publisherConfiguration(outputRateHz: analysis.outputRateHz)
///         let publisher = try FramePublisher(configuration: configuration, ring: ring, …)   // resolves hosts
/// ```
/// `validate()` checks the syntax (no DNS) and reports one line per problem, e.g.
/// `--osc "localhost": expected HOST:PORT, e.g. 127.0.0.1:9000`.
struct OscOptions: ParsableArguments {
    @Option(name: .customLong("osc"), help: ArgumentHelp(
        "Send OSC to HOST:PORT (repeatable). HOST is an IPv4 address, a host name (resolved once at start) or [IPv6]; a group in 224.0.0.0/4 is multicast.",
        valueName: "host:port"))
    var targets: [String] = []

    @Option(name: .customLong("osc-interface"), help: ArgumentHelp(
        "Network interface for multicast targets: a name (eth0) or an IPv4 address of this host.",
        valueName: "name|address"))
    var interface: String?

    @Option(name: .customLong("osc-ttl"), parsing: .unconditional, help: ArgumentHelp("Multicast TTL / hop limit, 1–255 (1 keeps packets on the local network).", valueName: "n"))
    var ttl: Int = 1

    @Option(help: "OSC address prefix; give each instance its own (/kick, /bass).")
    var prefix: String = OSCAddressSpace.defaultPrefix

    @Option(parsing: .unconditional, help: "Number of grouped bands sent on <prefix>/groups (1–64).")
    var groups: Int = OSCAddressSpace.defaultGroupCount

    @Flag(help: "Also send the 512-point waveform on <prefix>/waveform (spectrum rig).")
    var waveform = false

    @Option(help: ArgumentHelp(
        "What the --osc targets receive: a rig name (spectrum, ola, qlcplus, grandma3, resolume, touchdesigner: presets/rigs/) or a path to a rig file. Default: spectrum (the address space of `spectrum osc-spec`), or the preset's routes.",
        valueName: "name|path"))
    var rig: String?

    @Option(name: .customLong("wled"), help: ArgumentHelp(
        "Send WLED audio sync v2 (44-byte UDP packets, at most 50 a second) to HOST:PORT (repeatable): 239.0.0.1:11988 is WLED's sync group (with --osc-interface), or a strip's own address.",
        valueName: "host:port"))
    var wledTargets: [String] = []

    /// True when at least one `--osc` or `--wled` target was given.
    var isEnabled: Bool { !targets.isEmpty || !wledTargets.isEmpty }

    mutating func validate() throws {
        do { _ = try publisherConfiguration(outputRateHz: 60, bandCount: 128, presetPath: nil) } catch let error as OSCConfigurationError {
            throw ValidationError(error.description)
        }
    }

    /// The publisher configuration for these options and the preset's output sections (its
    /// `routes:` and `osc: targets:`); throws a one-line error. Does no DNS:
    /// `FramePublisher.init` resolves the hosts and compiles the rigs.
    func publisherConfiguration(outputRateHz: Double, bandCount: Int, presetPath: String?) throws -> PublisherConfiguration {
        var parsed = try targets.map { try OSCTarget(parsing: $0, optionName: "--osc") }
        let presetOutputs = try presetPath.map { try RigLoader.loadOutputs(presetPath: $0) }
        var configuration = PublisherConfiguration(targets: [], prefix: prefix, groupCount: groups, outputRateHz: outputRateHz)
        configuration.bandCount = bandCount
        // --rig wins over the preset's routes (--rig spectrum: the built-in address space).
        configuration.rig = try rig.map { try RigLoader.load(nameOrPath: $0) } ?? (rig == nil ? presetOutputs?.rig : nil)
        for (target, targetRig) in presetOutputs?.targets ?? [] {
            if !parsed.contains(target) { parsed.append(target) }
            if let targetRig { configuration.targetRigs[target] = targetRig }
        }
        configuration.targets = parsed
        configuration.wledTargets = try wledTargets.map { try OSCTarget(parsing: $0, optionName: "--wled") }
        if waveform { configuration.messages.insert(.waveform) }
        configuration.multicastInterface = interface
        configuration.multicastTTL = ttl
        try configuration.validate()
        return configuration
    }
}
