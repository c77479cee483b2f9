import ArgumentParser
import SpectrumOutput

/// `spectrum osc-spec`: prints the OSC address table from the code that sends it (the same text
/// as docs/osc.md).
struct OscSpecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "osc-spec",
        abstract: "Print the OSC address space (addresses, types, arguments, rates) as Markdown tables."
    )

    @Option(help: "OSC address prefix.")
    var prefix: String = OSCAddressSpace.defaultPrefix

    @Option(parsing: .unconditional, help: "Number of grouped bands (1–64).")
    var groups: Int = OSCAddressSpace.defaultGroupCount

    @Option(parsing: .unconditional, help: "Number of spectrum bands.")
    var bands: Int = 128

    @Option(parsing: .unconditional, help: "Output frames per second.")
    var rate: Double = 60

    func validate() throws {
        var configuration = PublisherConfiguration(targets: [], prefix: prefix, groupCount: groups)
        configuration.outputRateHz = rate
        do { try configuration.validate() } catch { throw ValidationError(String(describing: error)) }
        guard (1...256).contains(bands) else { throw ValidationError("--bands \(bands): expected a band count from 1 to 256") }
    }

    func run() {
        print(OSCAddressSpace(prefix: prefix, bandCount: bands, groupCount: groups, outputRateHz: rate).markdown(), terminator: "")
    }
}
