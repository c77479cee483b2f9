import CLo
import Foundation
import Glibc
import SpectrumTestSupport
import Testing

/// `spectrum run --control PORT` end to end: a private jackd plays A4, control messages go to
/// spectrum over loopback, and what they change is read from its OSC output.
@Suite(.serialized) struct ControlCommandTests {
    /// Sends one OSC message to 127.0.0.1:`port` with liblo (loopback only).
    static func send(_ path: String, port: UInt16, _ build: (lo_message) -> Void = { _ in }) {
        let address = lo_address_new("127.0.0.1", String(port))!
        defer { lo_address_free(address) }
        let message = lo_message_new()!
        defer { lo_message_free(message) }
        build(message)
        lo_send_message(address, path, message)
    }

    static func freePort() -> UInt16 {
        let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 } }
        return UInt16(bigEndian: address.sin_port)
    }

    @Test func eachControlChangesWhatItSaysAndABadValueChangesNothing() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let tone = try ToneClient(serverName: server.name, frequencyHz: 440, amplitude: 0.4)
        defer { tone.stop() }
        let receiver = OSCReceiver()
        let controlPort = Self.freePort()
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--connect", tone.outputPortName, "--osc", "127.0.0.1:\(receiver.port)",
                                            "--control", "\(controlPort)", "--duration", "40", "--quiet"])
        /// The newest bundle's message at `path` once `accept` holds for it (or the last one).
        func newest(_ path: String, within seconds: Double = 10, _ accept: (OSCReceiver.Message) -> Bool) -> OSCReceiver.Message? {
            var found: OSCReceiver.Message?
            receiver.receive(timeoutSeconds: seconds) {
                found = receiver.bundles.last(where: { $0.message(path) != nil })?.message(path) ?? receiver.looseMessages.last { $0.path == path }
                return found.map(accept) ?? false
            }
            return found
        }
        /// The next answer to `address` on /spectrum/status/control (not one seen before).
        var answersSeen = 0
        func controlAnswer(for address: String) -> [String]? {
            var answer: [String]?
            receiver.receive(timeoutSeconds: 10) {
                let answers = receiver.looseMessages.filter { $0.path == "/spectrum/status/control" }
                guard answers.count > answersSeen else { return false }
                answer = answers[answersSeen].strings
                return true
            }
            answersSeen += 1
            #expect(answer?.first == address)
            return answer
        }

        // 1) A4 at 440 Hz reads 0 cents; the reference moves to 442 and the cents follow (−7.85).
        let inTune = newest("/spectrum/pitch") { abs($0.floats[2]) < 1 }
        #expect(inTune.map { abs($0.floats[2]) < 1 } == true, "A4 at 440: \(String(describing: inTune))")
        // The control socket is bound after the outputs start: what is sent before is lost.
        #expect(spectrum.waitForStandardError(containing: "taking OSC control on"), "no control socket")
        Self.send("/spectrum/control/reference", port: controlPort) { lo_message_add_float($0, 442) }
        #expect(controlAnswer(for: "/spectrum/control/reference") == ["/spectrum/control/reference", "ok: reference A4 = 442 Hz"])
        let flat = newest("/spectrum/pitch") { abs($0.floats[2] + 7.85) < 1 }
        #expect(flat.map { abs($0.floats[2] + 7.85) < 1 } == true, "440 Hz against A4 = 442: \(String(describing: flat))")

        // 2) A bad value is answered with the range and changes nothing.
        Self.send("/spectrum/control/reference", port: controlPort) { lo_message_add_float($0, 500) }
        #expect(controlAnswer(for: "/spectrum/control/reference") == ["/spectrum/control/reference", "error: expected 415 to 466 Hz, got 500"])
        let still = newest("/spectrum/pitch", within: 2) { _ in false }
        #expect(still.map { abs($0.floats[2] + 7.85) < 1 } == true, "unchanged: \(String(describing: still))")

        // 3) Blackout: one frame of zeros, then nothing; lifting it resumes.
        Self.send("/spectrum/control/blackout", port: controlPort) { lo_message_add_int32($0, 1) }
        _ = controlAnswer(for: "/spectrum/control/blackout")
        receiver.receive(timeoutSeconds: 1) { false }
        let countAtBlackout = receiver.bundles.count
        let dark = receiver.bundles.last { $0.message("/spectrum/level") != nil }
        #expect(dark?.message("/spectrum/level")?.floats == [0], "the last frame before the blackout's silence is dark")
        #expect(dark?.message("/spectrum/groups")?.floats.allSatisfy { $0 == 0 } == true)
        receiver.receive(timeoutSeconds: 1.5) { false }
        #expect(receiver.bundles.count == countAtBlackout, "nothing sent while blacked out")
        Self.send("/spectrum/control/blackout", port: controlPort) { lo_message_add_int32($0, 0) }
        #expect(controlAnswer(for: "/spectrum/control/blackout")?.last == "ok: blackout lifted: outputs resume")
        let resumed = newest("/spectrum/level") { $0.floats[0] > 0.5 }
        #expect(resumed != nil && receiver.bundles.count > countAtBlackout, "frames again after the blackout")

        // 4) Unknown and malformed packets change nothing, and spectrum still answers.
        Self.send("/spectrum/control/banana", port: controlPort) { lo_message_add_float($0, 1) }
        Self.send("/spectrum/control/relearn", port: controlPort)
        #expect(controlAnswer(for: "/spectrum/control/relearn")?.last == "ok: re-learning the tempo")

        spectrum.signal(SIGINT)
        let result = try #require(spectrum.waitForExit(within: 10))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("taking OSC control on 127.0.0.1:\(controlPort)"))
        #expect(result.standardError.contains("control /spectrum/control/reference: rejected: expected 415 to 466 Hz, got 500"))
    }

    @Test func inputsAreAddedAndRemovedOverOSCControl() throws {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: 256)
        defer { server.stop() }
        let low = try ToneClient(serverName: server.name, clientName: "low", frequencyHz: 250, amplitude: 0.4)
        defer { low.stop() }
        let high = try ToneClient(serverName: server.name, clientName: "high", frequencyHz: 4000, amplitude: 0.4)
        defer { high.stop() }
        let receiver = OSCReceiver()
        let controlPort = Self.freePort()
        let httpPort = Int(Self.freePort())
        let spectrum = try RunningSpectrum(["run", "--server", server.name, "--input", "kick=\(low.outputPortName)", "--osc", "127.0.0.1:\(receiver.port)",
                                            "--control", "\(controlPort)", "--http", "127.0.0.1:\(httpPort)", "--duration", "30", "--quiet"])
        /// The next answer (not one seen before).
        var answersSeen = 0
        func answer(_ address: String) -> [String]? {
            var found: [String]?
            receiver.receive(timeoutSeconds: 10) {
                let answers = receiver.looseMessages.filter { $0.path == "/spectrum/status/control" }
                found = answers.count > answersSeen ? answers[answersSeen].strings : nil
                return found != nil
            }
            answersSeen += 1
            #expect(found?.first == address)
            return found
        }
        func loudest(_ bands: [Float]) -> Int? { bands.indices.max { bands[$0] < bands[$1] } }
        receiver.receive(timeoutSeconds: 10) { receiver.bundles.contains { $0.message("/spectrum/kick/bands") != nil } }
        // A web page asking for bass before there is one: the first input's frames until it is added.
        let page = try RawWebSocketClient(port: httpPort, path: "/view?input=bass")
        defer { page.close() }
        func nextText() throws -> [String: Any] {
            while true {
                let message = try page.readMessage()
                if message.opcode == 1 { return try #require(try JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]) }
            }
        }
        let hello = try nextText()
        #expect(hello["inputs"] as? [String] == ["kick"] && hello["input"] as? String == "kick", "\(hello)")
        // The control socket is bound after the outputs start: what is sent before is lost.
        #expect(spectrum.waitForStandardError(containing: "taking OSC control on"), "no control socket")

        Self.send("/spectrum/control/input/add", port: controlPort) { lo_message_add_string($0, "bass"); lo_message_add_string($0, high.outputPortName) }
        #expect(answer("/spectrum/control/input/add")?.last == "ok: input bass added under /spectrum/bass, from \(high.outputPortName)")
        var bass: [Float]?
        receiver.receive(timeoutSeconds: 10) {
            bass = receiver.bundles.suffix(5).compactMap { $0.message("/spectrum/bass/bands")?.floats }.last
            return bass.flatMap(loudest) == (try? LiveCommandTests.band(of: 4000))
        }
        #expect(bass.flatMap(loudest) == (try LiveCommandTests.band(of: 4000)), "the added input analyses its own source")
        #expect(try server.listPorts().contains("spectrum:bass"))
        // The page hears of the input added and gets its frames from then on.
        let inputs = try nextText()
        #expect(inputs["type"] as? String == "inputs" && inputs["inputs"] as? [String] == ["kick", "bass"] && inputs["input"] as? String == "bass", "\(inputs)")
        let pageFrame = try page.readMessage()
        let pageBands = pageFrame.payload.count >= 64 + 4 * 128 ? (0..<128).map { band in
            Float(bitPattern: pageFrame.payload[(64 + 4 * band)..<(68 + 4 * band)].reversed().reduce(0) { $0 << 8 | UInt32($1) })
        } : []
        #expect(loudest(pageBands) == (try LiveCommandTests.band(of: 4000)), "the page asking for bass shows bass")
        // OSCQuery lists the added input, with its own values (LISTEN and VALUE follow the tree).
        #expect(try LoopbackHTTP.get(port: httpPort, path: "/spectrum/bass/bands").status == 200)
        let kickValue = try LoopbackHTTP.get(port: httpPort, path: "/spectrum/kick/bands?VALUE")
        #expect(kickValue.status == 200 && kickValue.body.hasPrefix("{\"VALUE\":["), "\(kickValue)")
        #expect(try LoopbackHTTP.get(port: httpPort, path: "/spectrum/bands").status == 404, "no unnamed addresses with named inputs")

        Self.send("/spectrum/control/input/remove", port: controlPort) { lo_message_add_string($0, "bass") }
        #expect(answer("/spectrum/control/input/remove")?.last == "ok: input bass removed")
        receiver.receive(timeoutSeconds: 0.5) { false }
        let countAtRemoval = receiver.bundles.count
        receiver.receive(timeoutSeconds: 1.5) { false }
        let later = receiver.bundles.dropFirst(countAtRemoval)
        #expect(later.contains { $0.message("/spectrum/kick/bands") != nil }, "the other input goes on")
        #expect(!later.contains { $0.messages.contains { $0.path.hasPrefix("/spectrum/bass/") } }, "nothing of the removed input")
        #expect(!(try server.listPorts().contains("spectrum:bass")))
        #expect(try LoopbackHTTP.get(port: httpPort, path: "/spectrum/bass").status == 404, "OSCQuery no longer lists the removed input")

        Self.send("/spectrum/control/input/remove", port: controlPort) { lo_message_add_string($0, "nosuch") }
        #expect(answer("/spectrum/control/input/remove")?.last?.hasPrefix("error: input nosuch: no such input") == true)

        spectrum.signal(SIGINT)
        let result = try #require(spectrum.waitForExit(within: 10))
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test func aBadControlPortIsOneLine() throws {
        let result = try SpectrumProcess.run(["run", "--control", "99999", "--duration", "1"])
        #expect(result.status == 64)
        #expect(result.standardError == "spectrum: --control 99999: expected [HOST:]PORT with a port from 1 to 65535, e.g. 7771 or 127.0.0.1:7771\n")
    }
}
