import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// `spectrum run --link` against a real Ableton Link peer (PyPI LinkPython-extern) inside a
/// private network namespace (Link discovery multicasts): a 120 BPM click into spectrum on a
/// private jackd.
@Suite(.serialized, .enabled(if: PrivateNetwork.unavailableReason == nil, "needs root, unshare, nsenter and ip for a private network namespace"))
struct LinkCommandTests {
    /// Where the first click of the looped click train falls, from the loop's start.
    static let firstClickSeconds = 0.137
    struct Rig {
        let network: PrivateNetwork
        let server: PrivateJackServer
        let click: ToneClient
        init() throws {
            network = try PrivateNetwork()
            server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
            click = try ToneClient(serverName: server.name, clientName: "click", amplitude: 1,
                                   loop: TestSignals.clickLoop(bpm: 120, sampleRateHz: 48_000, offsetSeconds: LinkCommandTests.firstClickSeconds).samples)
        }
        func spectrum(_ extra: [String], seconds: Int) throws -> RunningSpectrum {
            try RunningSpectrum(["run", "--server", server.name, "--connect", click.outputPortName, "--quiet", "--duration", String(seconds)] + extra,
                                launcher: network.command)
        }
        func stop() {
            click.stop()
            server.stop()
            network.stop()
        }
    }

    @Test func aPeerSeesSpectrumsTempoAndBeat() throws {
        let rig = try Rig()
        defer { rig.stop() }
        _ = try LinkPythonPeer.python()  // the venv first (slow once), outside the timed part
        let spectrum = try rig.spectrum(["--link"], seconds: 22)
        // Alone while the tempo locks: spectrum starts the session, so it leads it.
        usleep(8_000_000)
        let peer = try LinkPythonPeer(network: rig.network, bpm: 100)
        defer { peer.stop() }
        // Where the click is on JACK's clock, over time: on this loaded machine JACK skips
        // cycles now and then, and the click player (one of its clients) skips with it.
        var loopStarts: [(jackNow: Double, loopStart: Double)] = []
        let until = Date().addingTimeInterval(12)
        while Date() < until {
            loopStarts.append((Double(LinkPythonPeer.jackClockMicroseconds()), Double(rig.click.loopStartMicroseconds)))
            usleep(20_000)
        }
        try peer.checkRunning()
        let offset = LinkPythonPeer.linkMinusJackMicroseconds()
        func clickOrigin(atJack time: Double) -> Double {
            (loopStarts.last { $0.jackNow <= time }?.loopStart ?? loopStarts[0].loopStart) + LinkCommandTests.firstClickSeconds * 1_000_000
        }
        let samples = peer.samples
        let joined = samples.drop { $0.peers < 1 }
        let recent = Array(joined.suffix(80))  // the last 4 s
        #expect(recent.count >= 40, "\(samples.count) samples, \(joined.count) with a peer")
        let tempos = recent.map(\.bpm)
        #expect(tempos.allSatisfy { abs($0 - 120) <= 0.5 }, "the peer's tempo \(tempos.min() ?? 0)…\(tempos.max() ?? 0)")
        let errors = recent.map { sample -> Double in
            let jackTime = sample.hostMicroseconds - offset
            let clickBeats = (jackTime - clickOrigin(atJack: jackTime)) / 500_000
            var difference = (sample.beat - sample.beat.rounded(.down)) - (clickBeats - clickBeats.rounded(.down))
            difference -= difference.rounded()
            return difference * 500
        }
        // The median, so that one skipped JACK cycle on a loaded machine does not decide it.
        let median = errors.map(abs).sorted()[errors.count / 2]
        #expect(median <= 20, "the peer's beat against the click: \(errors.map { Int($0.rounded()) }) ms")
        let result = try #require(spectrum.waitForExit(within: 10))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("Ableton Link peer"))
    }

    @Test(arguments: [false, true])
    func joiningASessionAt100BPM(takingTheLead: Bool) throws {
        let rig = try Rig()
        defer { rig.stop() }
        let peer = try LinkPythonPeer(network: rig.network, bpm: 100)
        defer { peer.stop() }
        // Its session first (Python starts slowly on a loaded machine): it prints once enabled;
        // then, as before, a second for the session to be the older one when spectrum joins
        // (without it the peer went to 120 in 2 of 3 loaded runs here; why is not established).
        #expect(eventually(within: 30) { !peer.samples.isEmpty }, "the peer did not start")
        usleep(1_000_000)
        let spectrum = try rig.spectrum(["--link"] + (takingTheLead ? ["--link-lead"] : []), seconds: 14)
        let result = try #require(spectrum.waitForExit(within: 30))
        #expect(result.status == 0, "\(result.standardError)")
        let samples = peer.samples
        #expect(samples.contains { $0.peers >= 1 }, "the peer never saw spectrum")
        let last = try #require(samples.last { $0.peers >= 1 })
        if takingTheLead {
            #expect(abs(last.bpm - 120) <= 0.5, "--link-lead: the session is at \(last.bpm) BPM")
        } else {
            #expect(samples.allSatisfy { abs($0.bpm - 100) < 0.001 }, "the session's tempo moved: \(Set(samples.map(\.bpm)).sorted())")
        }
    }
}
