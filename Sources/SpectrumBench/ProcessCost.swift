import Foundation
import Glibc
import SpectrumOutput
import SpectrumTestSupport
import Synchronization

/// CPU time of one thread between two readings of /proc.
struct ThreadSample {
    var name: String
    /// `schedstat`'s first field: nanoseconds on a CPU (exact, not sampled).
    var runNanoseconds: UInt64
    /// `stat`'s utime + stime, in clock ticks (1/100 s: coarse).
    var ticks: UInt64
    /// Voluntary context switches: how often the thread went to sleep and was woken.
    var wakeups: UInt64
    /// SCHED_FIFO or SCHED_RR (JACK's process thread).
    var isRealtime: Bool

    /// Every thread of process `pid`, by thread id.
    static func all(pid: pid_t) -> [Int: ThreadSample] {
        var result: [Int: ThreadSample] = [:]
        let directory = "/proc/\(pid)/task"
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return result }
        for tid in tids {
            guard let id = Int(tid),
                  let stat = try? String(contentsOfFile: "\(directory)/\(tid)/stat", encoding: .utf8),
                  let schedstat = try? String(contentsOfFile: "\(directory)/\(tid)/schedstat", encoding: .utf8),
                  let status = try? String(contentsOfFile: "\(directory)/\(tid)/status", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { continue }
            let name = String(stat[stat.index(after: stat.firstIndex(of: "(")!)..<close])
            // Fields after "(comm)": state is field 3, so field N is at index N - 3.
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            let ticks = (UInt64(fields[14 - 3]) ?? 0) + (UInt64(fields[15 - 3]) ?? 0)
            let policy = Int(fields[41 - 3]) ?? 0
            let run = UInt64(schedstat.split(separator: " ").first ?? "0") ?? 0
            let voluntary = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
                .flatMap { UInt64($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            result[id] = ThreadSample(name: name, runNanoseconds: run, ticks: ticks, wakeups: voluntary, isRealtime: policy == 1 || policy == 2)
        }
        return result
    }
}

/// A group of threads' use of one core over an interval.
struct ThreadUse {
    var percent = 0.0
    var tickPercent = 0.0
    var wakeupsPerSecond = 0.0
    var threads = 0

    mutating func add(before: ThreadSample, after: ThreadSample, seconds: Double) {
        percent += Double(after.runNanoseconds &- before.runNanoseconds) / seconds / 1e7
        tickPercent += Double(after.ticks &- before.ticks) / seconds   // 100 ticks per second
        wakeupsPerSecond += Double(after.wakeups &- before.wakeups) / seconds
        threads += 1
    }

    var cell: String { threads == 0 ? "–" : "\(format(percent, 3)) % (\(format(wakeupsPerSecond, 0))/s)" }
}

/// `spectrum run` as a user runs it, measured from outside: a private jackd (dummy driver,
/// 48 kHz), our tone client playing a 220 Hz sine into `spectrum:in`, one `--osc` target on
/// loopback that drains, and the CPU time of every thread of the `spectrum` process over the
/// measured interval, from /proc/PID/task/*/schedstat (exact) and stat's utime + stime (ticks,
/// as a cross-check).
enum ProcessCost {
    struct Run {
        var periodFrames: Int
        var terminal: Bool
    }

    static func table(spectrum: String, seconds: Double) throws -> String {
        var rows = ["| period | standard output | seconds | **whole process** | (ticks: utime + stime) | JACK process thread | publisher thread | main thread | JACK's other threads | floor: a JACK client that only writes a sine, its process thread |",
                    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for run in [Run(periodFrames: 256, terminal: false), Run(periodFrames: 256, terminal: true), Run(periodFrames: 1024, terminal: false)] {
            rows.append(try measure(spectrum: spectrum, run: run, seconds: seconds))
        }
        return rows.joined(separator: "\n")
    }

    static func measure(spectrum: String, run: Run, seconds: Double) throws -> String {
        let server = try PrivateJackServer(sampleRateHz: 48_000, periodFrames: run.periodFrames)
        defer { server.stop() }
        let tone = try ToneClient(serverName: server.name, frequencyHz: 220, amplitude: 0.4)
        defer { tone.stop() }
        let receiver = try PublisherCost.Receivers(count: 1)
        defer { receiver.stop() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: spectrum)
        process.arguments = ["run", "--server", server.name, "--connect", tone.outputPortName,
                             "--osc", receiver.targets[0].description]
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        var terminal: PseudoTerminal?
        if run.terminal {
            let pty = try PseudoTerminal()
            process.standardOutput = pty.follower
            terminal = pty
        } else {
            process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        }
        try process.run()
        defer {
            if process.isRunning {
                kill(process.processIdentifier, SIGINT)
                process.waitUntilExit()
            }
            terminal?.close()
        }
        let pid = process.processIdentifier
        // Start-up (FFTW plans, connections) and a settled tempo are not measured.
        usleep(3_000_000)
        guard process.isRunning else { throw BenchError("spectrum run exited during start-up (status \(process.terminationStatus))") }
        let datagramsBefore = receiver.datagrams.load(ordering: .relaxed)
        let before = ThreadSample.all(pid: pid)
        let toneBefore = ThreadSample.all(pid: getpid()).filter { $0.value.isRealtime }
        let start = nowNanoseconds()
        usleep(UInt32(seconds * 1_000_000))
        let after = ThreadSample.all(pid: pid)
        let toneAfter = ThreadSample.all(pid: getpid()).filter { $0.value.isRealtime }
        let elapsed = Double(nowNanoseconds() - start) / 1e9
        let datagrams = receiver.datagrams.load(ordering: .relaxed) - datagramsBefore
        guard process.isRunning else { throw BenchError("spectrum run exited while measured (status \(process.terminationStatus))") }

        var whole = ThreadUse(), jack = ThreadUse(), publisher = ThreadUse(), main = ThreadUse(), others = ThreadUse(), floor = ThreadUse()
        for (tid, end) in after {
            guard let begin = before[tid] else { continue }
            whole.add(before: begin, after: end, seconds: elapsed)
            if tid == Int(pid) {
                main.add(before: begin, after: end, seconds: elapsed)
            } else if end.isRealtime {
                jack.add(before: begin, after: end, seconds: elapsed)
            } else if end.name == FramePublisher.threadName {
                publisher.add(before: begin, after: end, seconds: elapsed)
            } else {
                others.add(before: begin, after: end, seconds: elapsed)
            }
        }
        for (tid, end) in toneAfter {
            guard let begin = toneBefore[tid] else { continue }
            floor.add(before: begin, after: end, seconds: elapsed)
        }
        let period = "\(run.periodFrames) frames (\(format(Double(run.periodFrames) / 48, 2)) ms)"
        let output = run.terminal ? "a terminal (redrawn 10×/s)" : "/dev/null (a line a second)"
        guard datagrams > 0 else { throw BenchError("no OSC datagram reached the receiver") }
        return "| \(period) | \(output) | \(format(elapsed, 1)) | **\(format(whole.percent, 3)) %** | \(format(whole.tickPercent, 2)) % | \(jack.cell) | \(publisher.cell) | \(main.cell) | \(others.cell) | \(floor.cell) |"
    }

    /// What one wake-up of an idle thread costs on this machine: a thread that sleeps `interval`
    /// and does nothing else, its CPU time per second.
    static func wakeupTable(seconds: Double) -> String {
        var rows = ["| a thread that only sleeps, interval | wake-ups per second | CPU, % of one core | µs per wake-up |",
                    "| --- | --- | --- | --- |"]
        for milliseconds in [2.0, 5.333, 16.667] {
            let sleeper = Sleeper(intervalNanoseconds: Int(milliseconds * 1_000_000))
            usleep(200_000)
            let tid = sleeper.tid.load(ordering: .acquiring)
            let before = ThreadSample.all(pid: getpid())[tid]
            let start = nowNanoseconds()
            usleep(UInt32(seconds * 1_000_000))
            let after = ThreadSample.all(pid: getpid())[tid]
            let elapsed = Double(nowNanoseconds() - start) / 1e9
            sleeper.stop()
            guard let before, let after else { continue }
            var use = ThreadUse()
            use.add(before: before, after: after, seconds: elapsed)
            rows.append("| \(format(milliseconds, 3)) ms | \(format(use.wakeupsPerSecond, 0)) | \(format(use.percent, 3)) % | \(format(use.percent * 1e4 / max(use.wakeupsPerSecond, 1), 1)) |")
        }
        return rows.joined(separator: "\n")
    }

    final class Sleeper: @unchecked Sendable {
        let tid = Atomic<Int>(0)
        private let stopRequested = Atomic<Bool>(false)
        private var thread: Thread?
        init(intervalNanoseconds: Int) {
            let thread = Thread { [self] in
                tid.store(currentThreadID(), ordering: .releasing)
                var pause = timespec(tv_sec: 0, tv_nsec: intervalNanoseconds)
                while !stopRequested.load(ordering: .relaxed) { nanosleep(&pause, nil) }
            }
            thread.start()
            self.thread = thread
        }
        func stop() {
            stopRequested.store(true, ordering: .relaxed)
            while thread?.isFinished == false { usleep(1_000) }
        }
    }
}

/// This thread's id, from /proc/thread-self (a link to PID/task/TID; gettid is not imported).
func currentThreadID() -> Int {
    var buffer = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    guard length > 0 else { return 0 }
    return Int(String(cString: buffer).split(separator: "/").last ?? "") ?? 0
}

/// A pseudo-terminal for a child's standard output (so `spectrum run` redraws its summary as
/// on a terminal); what the child writes is read and thrown away.
final class PseudoTerminal: @unchecked Sendable {
    let follower: FileHandle
    private let leader: Int32
    private let stopRequested = Atomic<Bool>(false)
    private var thread: Thread?

    init() throws {
        // posix_openpt/unlockpt/ptsname are not imported into Swift; this is what they do on Linux
        // (the ioctl numbers are _IOW('T', 0x31, int) and _IOR('T', 0x30, unsigned), whose macros
        // are not imported either).
        leader = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0, number: UInt32 = 0
        guard leader >= 0, ioctl(leader, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
              ioctl(leader, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
            throw BenchError("pseudo-terminal: cannot open one (errno \(errno))")
        }
        var size = winsize(ws_row: 24, ws_col: 160, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(leader, UInt(TIOCSWINSZ), &size)
        guard let follower = FileHandle(forWritingAtPath: "/dev/pts/\(number)") else {
            throw BenchError("pseudo-terminal: cannot open /dev/pts/\(number)")
        }
        self.follower = follower
        let leader = self.leader
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var poller = pollfd(fd: leader, events: Int16(POLLIN), revents: 0)
            while !stopRequested.load(ordering: .relaxed) {
                guard poll(&poller, 1, 50) > 0 else { continue }
                if read(leader, &buffer, buffer.count) <= 0 { break }
            }
        }
        thread.start()
        self.thread = thread
    }

    func close() {
        try? follower.close()
        stopRequested.store(true, ordering: .relaxed)
        while thread?.isFinished == false { usleep(1_000) }
        _ = Glibc.close(leader)
    }
}
