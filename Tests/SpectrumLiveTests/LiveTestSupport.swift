import CAllocationCounter
import Foundation
import SpectrumDSP
import SpectrumTestSupport
import SpectrumCore
@testable import SpectrumLive

/// Where `countingProcess` adds the process thread's heap calls. Allocated once, never freed;
/// only the (serialized) allocation tests read it, as before/after differences.
nonisolated(unsafe) let processThreadTally: UnsafeMutablePointer<allocation_tally> = {
    let tally = UnsafeMutablePointer<allocation_tally>.allocate(capacity: 1)
    tally.initialize(to: allocation_tally(allocations: 0, frees: 0))
    return tally
}()

/// The allocation-counting trampoline: the production process callback, unchanged, between
/// `allocation_counter_enter(processThreadTally)` and `allocation_counter_exit()` on JACK's
/// process thread. A global function in a non-main file, so it is safe as a C callback.
func countingProcess(_ frameCount: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    allocation_counter_enter(processThreadTally)
    let result = spectrumLiveProcess(frameCount, argument)
    allocation_counter_exit()
    return result
}

/// Polls `condition` every 20 ms until it holds or `seconds` pass; returns whether it held.
func eventually(within seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

/// Pops everything waiting in the client's ring.
func drain(_ client: LiveClient) -> [AnalysisFrame] {
    var frames: [AnalysisFrame] = []
    var frame = AnalysisFrame()
    while client.popFrame(into: &frame) { frames.append(frame) }
    return frames
}

/// Collects frames until `count` new ones arrived (or `seconds` pass).
func collect(_ count: Int, from client: LiveClient, within seconds: Double = 10) async -> [AnalysisFrame] {
    var frames: [AnalysisFrame] = []
    _ = await eventually(within: seconds) {
        frames += drain(client)
        return frames.count >= count
    }
    return frames
}

/// The band that should be loudest for a tone at `frequencyHz`, from a reference analyser with
/// the same configuration and rate.
func expectedBand(frequencyHz: Double, sampleRateHz: Double, configuration: AnalysisConfiguration = AnalysisConfiguration()) throws -> Int {
    let reference = try Analyzer(configuration: configuration, sampleRateHz: sampleRateHz)
    return reference.band(containingFrequencyHz: frequencyHz)!
}

/// Runs `body` on another thread and waits at most `seconds`; false if it did not finish
/// (a hang becomes a test failure instead of a stuck test run).
func finishes(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done.wait(timeout: .now() + seconds) == .success
}

func liveConfiguration(server: PrivateJackServer, connections: LiveConnections = .none, channels: Int = 1, name: String = "spectrum") -> LiveConfiguration {
    var configuration = LiveConfiguration()
    configuration.serverName = server.name
    configuration.clientName = name
    configuration.connections = connections
    configuration.channelCount = channels
    return configuration
}
