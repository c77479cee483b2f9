// Benchmarks run by scripts/bench in a release build. Each section prints a Markdown table;
// scripts/bench assembles docs/benchmarks.md.
//
//   SpectrumBench hop [HOPS]          cost per hop of the analysis core (default 100000 hops)
//   SpectrumBench live [SECONDS]      process-callback cost under a private jackd, periods 64/256/1024
//   SpectrumBench latency [BURSTS]    audio in → OSC out, tone bursts, period 256
//   SpectrumBench beats [SECONDS]     click → /beat out, periods 64 and 256, with and without the beat mailbox
//   SpectrumBench publisher [FRAMES] publisher cost per frame: spectrum, ola, qlcplus rigs, 4 loopback targets
//   SpectrumBench web [SECONDS]      publisher → 4 OSC targets and 10 WebSocket clients (+1 stuck) at 60 Hz: CPU, push → WebSocket write
//   SpectrumBench process [SECONDS]  whole `spectrum run` process, CPU per thread (binary: $SPECTRUM or .build/release/spectrum)
//   SpectrumBench reconnect [RESTARTS] `spectrum run` through JACK server restarts (binary: $SPECTRUM or .build/release/spectrum)
//   SpectrumBench clock [SECONDS]     MIDI clock ticks against the click's grid (frames), 120 and 128 BPM
//   SpectrumBench link [SECONDS]      Ableton Link: a peer's beat against the click, 120 BPM (binary: $SPECTRUM or .build/release/spectrum)
//   SpectrumBench inputs-callback [SECONDS]  process callback at 64 frames with 1, 4 and 16 inputs in one client
//   SpectrumBench inputs-cpu [SECONDS]       CPU of N inputs in one `spectrum run` against N processes, and jackd's (binary: $SPECTRUM)
//   SpectrumBench inputs-xruns [SECONDS]     xruns of a private jackd at 64 frames: alone, + a sine client, + spectrum, + 4 inputs (binary: $SPECTRUM)
//   SpectrumBench wakeups [SECONDS]  CPU cost of an idle thread's wake-ups on this machine
//   SpectrumBench rhythm              tempo/beat diagnostics on synthetic grooves (not a table)
//   SpectrumBench changes [1]         re-lock after gapless tempo changes (1: with the readings)
import Foundation
import SpectrumTestSupport

let arguments = Array(CommandLine.arguments.dropFirst())
let section = arguments.first ?? "hop"
let count = arguments.dropFirst().first.flatMap(Double.init)
/// The binary the whole-process sections run.
let spectrum = ProcessInfo.processInfo.environment["SPECTRUM"] ?? ".build/release/spectrum"
do {
    switch section {
    case "hop": print(try HopCost.table(hops: Int(count ?? 100_000)))
    case "live": print(try LiveCost.table(seconds: count ?? 10))
    case "latency": print(try Latency.table(period: 256, bursts: Int(count ?? 20)))
    case "beats": print(try BeatDelay.table(periods: [64, 256], seconds: count ?? 15))
    case "publisher": print(try PublisherCost.table(framesPerRig: Int(count ?? 20_000)))
    case "web": print(try WebCost.table(seconds: count ?? 20))
    case "process": print(try ProcessCost.table(spectrum: spectrum, seconds: count ?? 30))
    case "reconnect": print(try ReconnectCost.table(spectrum: spectrum, restarts: Int(count ?? 20)))
    case "clock": print(try ClockTiming.table(seconds: count ?? 60))
    case "link": print(try LinkTiming.table(spectrum: spectrum, seconds: count ?? 60))
    case "inputs-callback": print(try InputsCost.callbackTable(seconds: count ?? 10))
    case "inputs-cpu": print(try InputsCost.cpuTable(spectrum: spectrum, seconds: count ?? 20))
    case "inputs-xruns": print(try InputsCost.xrunTable(spectrum: spectrum, seconds: count ?? 300))
    case "wakeups": print(ProcessCost.wakeupTable(seconds: count ?? 5))
    case "rhythm":
        try rhythmDiagnostics(sampleRates: [44_100, 48_000, 96_000], tempos: [70, 100, 120, 128, 140, 174],
                              patterns: [.clicks, .rock, .fourOnTheFloor, .syncopated], seconds: 10)
    case "changes":
        try changeDiagnostics(patterns: [.rock, .funk, .funkDottedEighth], verbose: count != nil)
    default:
        FileHandle.standardError.write(Data("SpectrumBench: unknown section \"\(section)\": expected hop, live, latency, beats, publisher, web, process, reconnect, clock, link, inputs-callback, inputs-cpu, inputs-xruns, wakeups, rhythm or changes\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("SpectrumBench \(section): \(error)\n".utf8))
    exit(1)
}
