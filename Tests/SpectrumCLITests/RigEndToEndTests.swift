import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// `spectrum run --rig …` into the real desks: a private jackd feeds a tone or a click train,
/// spectrum runs inside a private network namespace with a real olad or QLC+ (both bind
/// wildcard ports), and the test reads back what the desk took, through the desk's own API.
/// Serialized: each test starts a jackd and a daemon, and the machine has two cores.
@Suite(.serialized, .enabled(if: PrivateNetwork.unavailableReason == nil, "needs root, unshare, nsenter and ip for a private network namespace"))
struct RigEndToEndTests {
    /// Samples `read` every 10 ms for `seconds`, with the time of each sample.
    static func sample<T>(seconds: Double, _ read: () throws -> T) rethrows -> [(time: Double, value: T)] {
        let start = Date()
        var samples: [(Double, T)] = []
        while Date().timeIntervalSince(start) < seconds {
            samples.append((Date().timeIntervalSince(start), try read()))
            usleep(10_000)
        }
        return samples
    }

    /// Times at which `values` go from below `low` to at least `high`, and how many of them are
    /// followed by a return below `low` within `returnSeconds` (rises closer than that to the
    /// end of the samples are not counted: their return was not watched).
    static func flashes(_ samples: [(time: Double, value: Int)], high: Int, low: Int, returnSeconds: Double) -> (rises: [Double], returned: Int) {
        var rises: [Double] = []
        var returned = 0
        var wasLow = false
        let end = (samples.last?.time ?? 0) - returnSeconds
        for (index, sample) in samples.enumerated() where sample.time <= end {
            if wasLow && sample.value >= high {
                rises.append(sample.time)
                if samples[index...].contains(where: { $0.value < low && $0.time - sample.time <= returnSeconds }) { returned += 1 }
            }
            if sample.value < low { wasLow = true } else if sample.value >= high { wasLow = false }
        }
        return (rises, returned)
    }

    @Test(.enabled(if: PrivateOLA.isInstalled, "olad is not installed (Debian package ola; scripts/install-deps)"))
    func theOLARigLightsTheTonesGroupAndFlashesTheBeat() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let ola = try PrivateOLA(network: network)
        defer { ola.stop() }
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }

        // 1) A 1 kHz tone: band group 5 of 8 (20 Hz–20 kHz in 8 equal log steps: 1 kHz lies in
        //    the fifth, 15.8 Hz·… 632 Hz–1.26 kHz), so slot 5 is bright and the others are dark.
        let tone = try ToneClient(serverName: server.name, frequencyHz: 1000, amplitude: 0.5)
        defer { tone.stop() }
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--connect", tone.outputPortName, "--rig", "ola",
                                            "--osc", "127.0.0.1:\(ola.oscPort)", "--duration", "30", "--quiet"], launcher: network.command)
        var slots: [UInt8] = []
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            slots = try ola.dmx()
            if slots.count >= 13, slots[4] > 200 { break }
            usleep(50_000)
        }
        #expect(slots.count >= 13, "OLA holds slots 1–13: \(slots.prefix(16))")
        if slots.count >= 13 {
            #expect(slots[4] > 200, "the tone's group (slot 5): \(slots.prefix(13))")
            for group in [0, 1, 2, 3, 6, 7] { #expect(slots[group] < 100, "group \(group + 1): \(slots.prefix(13))") }
            #expect(slots[8] > 150, "level (slot 9) of a −9 dBFS tone: \(slots[8])")
        }
        // Silenced, not closed: closing an in-process JACK client of this test process while
        // spectrum is connected to it left the later real-time-safety test at 64 frames with no
        // beats (seen three times, not understood yet; closing it at the end is fine).
        tone.amplitude = 0

        // 2) A 120 BPM click train: once the tempo locks, slot 10 flashes 255 and returns to 0
        //    on every beat, and slot 13 holds 120 BPM on the 60..200 scale.
        let clicks = TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 2)
        let player = try ToneClient(serverName: server.name, clientName: "clicks", amplitude: 1, loop: clicks.samples)
        defer { player.stop() }
        try player.connect(to: "spectrum:in")
        var locked = false
        let lockDeadline = Date().addingTimeInterval(15)
        while Date() < lockDeadline, !locked {
            let current = try ola.dmx()
            locked = current.count >= 13 && current[12] > 0
            usleep(50_000)
        }
        #expect(locked, "the tempo slot (13) never left 0")
        let beatSlot = try Self.sample(seconds: 5) { Int(try ola.dmx()[9]) }
        let tempoSlot = Int(try ola.dmx()[12])
        spectrum.signal(SIGINT)
        let result = try #require(spectrum.waitForExit(within: 10))
        #expect(result.status == 0, "\(result.standardError)")

        let (rises, returned) = Self.flashes(beatSlot, high: 255, low: 1, returnSeconds: 0.45)
        // 10 beats in 5 s; a loaded machine may stall a few of our 10 ms polls (a 100 ms flash).
        #expect((7...10).contains(rises.count), "beat flashes in the first 4.55 s of 5: \(rises)")
        #expect(returned == rises.count, "every flash returns to 0 within the beat")
        let steps = zip(rises.dropFirst(), rises).map { $0 - $1 }
        // Mostly 0.5 s apart (the HTTP read-back may stall a poll, and the grid may re-phase once).
        #expect(steps.filter { abs($0 - 0.5) < 0.1 }.count * 2 >= steps.count, "flashes 0.5 s apart: \(steps)")
        #expect(abs(tempoSlot - Int((120.0 - 60) / 140 * 255)) <= 3, "120 BPM on 60..200 → \(tempoSlot)")
    }

    @Test(.enabled(if: PrivateQLCPlus.isInstalled, "qlcplus is not installed (Debian package qlcplus; scripts/install-deps)"))
    func qlcPlusSlidersFollowTheLevelAndFlashOnTheBeat() throws {
        let network = try PrivateNetwork()
        defer { network.stop() }
        let qlc = try PrivateQLCPlus(network: network, oscAddresses: ["/spectrum/level", "/spectrum/beat"])
        defer { qlc.stop() }
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let tone = try ToneClient(serverName: server.name, frequencyHz: 440, amplitude: 0.5)
        defer { tone.stop() }
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--connect", tone.outputPortName, "--rig", "qlcplus",
                                            "--osc", "127.0.0.1:\(qlc.oscPort)", "--duration", "40", "--quiet"], launcher: network.command)

        /// The level slider once it has settled near `expected` (or the last reading).
        func level(near expected: Int) throws -> Int {
            var value = 0
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                value = try qlc.sliderValue(oscAddress: "/spectrum/level")
                if abs(value - expected) <= 12 { break }
                usleep(50_000)
            }
            return value
        }
        // VU: RMS dBFS over −60..0 → 0..1 → QLC+ 255·v. Amplitude 0.5: −9 dBFS → 217; 0.05: −29 dBFS → 132.
        let loud = try level(near: 217)
        #expect(abs(loud - 217) <= 12, "level slider for −9 dBFS: \(loud)")
        tone.amplitude = 0.05
        let quiet = try level(near: 132)
        #expect(abs(quiet - 132) <= 12, "level slider for −29 dBFS: \(quiet)")
        #expect(try qlc.sliderValue(oscAddress: "/spectrum/beat") == 0, "no beat on a steady tone")
        tone.amplitude = 0

        let clicks = TestSignals.clickTrain(bpm: 120, sampleRateHz: 48_000, seconds: 2)
        let player = try ToneClient(serverName: server.name, clientName: "clicks", amplitude: 1, loop: clicks.samples)
        defer { player.stop() }
        try player.connect(to: "spectrum:in")
        // Wait for the first flash (the tempo locks in a few seconds), then watch 5 s.
        var flashed = false
        let lockDeadline = Date().addingTimeInterval(15)
        while Date() < lockDeadline, !flashed {
            flashed = try qlc.sliderValue(oscAddress: "/spectrum/beat") > 0
            usleep(10_000)
        }
        #expect(flashed, "the beat slider never moved")
        let beat = try Self.sample(seconds: 5) { try qlc.sliderValue(oscAddress: "/spectrum/beat") }
        spectrum.signal(SIGINT)
        let result = try #require(spectrum.waitForExit(within: 10))
        #expect(result.status == 0, "\(result.standardError)")
        let (rises, returned) = Self.flashes(beat, high: 255, low: 1, returnSeconds: 0.45)
        #expect((7...10).contains(rises.count), "beat flashes in the first 4.55 s of 5: \(rises)")
        #expect(returned == rises.count, "every flash returns to 0 within the beat")
    }
}
