import Foundation
import Glibc
import Synchronization

/// A private network namespace for tests that multicast or bind wildcard sockets: its only
/// interface is an up `lo`, so nothing a test sends there can leave through eth0 (the network
/// rule in rig-protocols.md).
///
/// A holder process (`unshare -n sh -c 'ip link set lo up && exec sleep 86400'`) keeps the
/// namespace alive; tools enter it through `command(_:)` (nsenter), Swift code through `run(_:)`.
/// With `privateMounts` the holder has its own mount namespace too (`unshare -n -m`, mounts
/// private), so `setup` can mount over a directory (a tmpfs on /run/avahi-daemon) that only
/// processes entered through `command(_:)` see.
/// Needs root (CAP_SYS_ADMIN) and util-linux's unshare and nsenter; tests check `unavailableReason`
/// and skip when it is not nil. Allocates, spawns processes; for tests only. Thread-safe.
public final class PrivateNetwork: @unchecked Sendable {
    /// The holder's PID: its `/proc/PID/ns/net` is the namespace.
    public let holderPID: Int32
    /// `/proc/PID/ns/net` of the holder.
    public let namespacePath: String
    /// `/proc/PID/ns/mnt` of the holder when it has private mounts, else nil.
    public let mountNamespacePath: String?
    private let holder: Process
    private let stopped = Mutex<Bool>(false)

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts the holder and waits (polling every 5 ms, up to `readyTimeoutSeconds`) until it has
    /// its own network namespace with lo up: the holder execs `sleep` only after
    /// `ip link set lo up` and every `setup` shell command succeeded, so "its command is sleep"
    /// is the ready signal. `privateMounts` gives it its own mount namespace as well.
    /// Throws when the holder exits (not root, no unshare, a setup command failed) or is not
    /// ready in time.
    public init(readyTimeoutSeconds: Double = 5, privateMounts: Bool = false, setup: [String] = []) throws {
        holder = Process()
        holder.executableURL = URL(fileURLWithPath: Self.tool("unshare"))
        holder.arguments = (privateMounts ? ["-n", "-m", "--propagation", "private"] : ["-n"])
            + ["sh", "-c", (["ip link set lo up"] + setup + ["exec sleep 86400"]).joined(separator: " && ")]
        holder.standardInput = FileHandle.nullDevice
        holder.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        holder.standardError = errors
        do {
            try holder.run()
        } catch {
            throw Failure(description: "cannot start unshare: \(error)")
        }
        holderPID = holder.processIdentifier
        namespacePath = "/proc/\(holderPID)/ns/net"
        mountNamespacePath = privateMounts ? "/proc/\(holderPID)/ns/mnt" : nil
        Self.watch(holder: holderPID)

        let ownNamespace = Self.namespaceIdentity("/proc/self/ns/net")
        let deadline = Date().addingTimeInterval(readyTimeoutSeconds)
        while true {
            if !holder.isRunning {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                throw Failure(description: "the namespace holder exited with \(holder.terminationStatus): \(message)")
            }
            let command = (try? String(contentsOfFile: "/proc/\(holderPID)/comm", encoding: .utf8)) ?? ""
            let namespace = Self.namespaceIdentity(namespacePath)
            if command == "sleep\n", namespace != nil, namespace != ownNamespace { break }
            if Date() > deadline {
                stop()
                throw Failure(description: "the namespace holder (PID \(holderPID)) was not ready after \(readyTimeoutSeconds) s")
            }
            usleep(5_000)
        }
    }

    deinit { stop() }

    /// `argv` run inside the namespace: `["nsenter", "--net=/proc/PID/ns/net", "--"] + argv`
    /// (and `--mount=/proc/PID/ns/mnt` with private mounts).
    public func command(_ argv: [String]) -> [String] {
        ["nsenter", "--net=\(namespacePath)"] + (mountNamespacePath.map { ["--mount=\($0)"] } ?? []) + ["--"] + argv
    }

    /// Runs `body` on a new pthread that first enters the namespace (`setns`), waits for it and
    /// returns its result or rethrows its error. The network namespace is per thread, and a
    /// socket keeps the namespace it was opened in: sockets `body` opens live in the private
    /// network and may be used afterwards from any thread. The calling thread never changes
    /// namespace. Throws `Failure` when setns fails. Allocates; any thread.
    ///
    /// Swift Testing's `#expect`/`#require` must not be used in `body`: its pthread has none of
    /// the test's task-local context, so an issue recorded there is attributed to no test and a
    /// failed `#require` lets the test pass. Return values (or throw) and check them outside.
    public func run<T>(_ body: () throws -> T) throws -> T {
        try withoutActuallyEscaping(body) { body in
            var result: Result<T, any Error>?
            let job = NamespaceJob(namespacePath: namespacePath) {
                result = Result { try body() }
            }
            let context = Unmanaged.passRetained(job).toOpaque()
            var thread = pthread_t()
            let created = pthread_create(&thread, nil, { context in
                let job = Unmanaged<NamespaceJob>.fromOpaque(context!).takeRetainedValue()
                job.execute()
                return nil
            }, context)
            guard created == 0 else {
                Unmanaged<NamespaceJob>.fromOpaque(context).release()
                throw Failure(description: "cannot start a thread (\(String(cString: strerror(created))))")
            }
            pthread_join(thread, nil)
            if job.setnsError != 0 {
                throw Failure(description: "cannot enter \(namespacePath) (\(String(cString: strerror(job.setnsError))))")
            }
            return try result!.get()
        }
    }

    /// Stops the holder by PID (SIGKILL: it only sleeps) and reaps it; the namespace goes with
    /// its last process and its last socket. Idempotent; any thread.
    public func stop() {
        let first = stopped.withLock { isStopped in
            defer { isStopped = true }
            return !isStopped
        }
        guard first else { return }
        if holder.isRunning { kill(holderPID, SIGKILL) }
        holder.waitUntilExit()
    }

    /// Why a private network cannot be made here (not root, no unshare/nsenter/ip, or the kernel
    /// refuses), or nil when it can: a holder is started and stopped once per process to find out.
    public static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "needs root for a private network namespace (unshare -n)" }
        for tool in ["unshare", "nsenter", "ip"] where !FileManager.default.isExecutableFile(atPath: PrivateNetwork.tool(tool)) {
            return "needs \(tool) for a private network namespace"
        }
        do {
            let network = try PrivateNetwork()
            network.stop()
            return nil
        } catch {
            return "cannot make a private network namespace: \(error)"
        }
    }()

    /// The inode behind a namespace link (`net:[4026531840]`), or nil.
    private static func namespaceIdentity(_ path: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: path)
    }

    /// If the test process dies without `stop()` (a crash), a detached shell kills the holder
    /// by PID within half a second, so crashed runs leave no day-long sleepers behind.
    private static func watch(holder: pid_t) {
        let watchdog = Process()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        watchdog.arguments = ["-c", "while kill -0 \(getpid()) 2>/dev/null && kill -0 \(holder) 2>/dev/null; do sleep 0.5; done; kill -KILL \(holder) 2>/dev/null; exit 0"]
        watchdog.standardInput = FileHandle.nullDevice
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try? watchdog.run()
    }

    static func tool(_ name: String) -> String {
        for directory in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        return "/usr/bin/\(name)"
    }
}

/// The work of one `PrivateNetwork.run`, handed to its pthread through a raw pointer.
private final class NamespaceJob {
    let namespacePath: String
    let work: () -> Void
    /// errno of open/setns, 0 when the thread entered the namespace and ran `work`.
    var setnsError: Int32 = 0

    init(namespacePath: String, work: @escaping () -> Void) {
        self.namespacePath = namespacePath
        self.work = work
    }

    func execute() {
        let descriptor = open(namespacePath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { setnsError = errno; return }
        defer { close(descriptor) }
        guard setNamespace(descriptor, cloneNewNet) == 0 else { setnsError = errno; return }
        work()
    }
}

/// `setns(2)`: Glibc's Swift module does not export it (it needs _GNU_SOURCE), so it is looked up
/// once by name; `CLONE_NEWNET` from <linux/sched.h>.
private let setNamespace: @convention(c) (Int32, Int32) -> Int32 =
    unsafeBitCast(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns"), to: (@convention(c) (Int32, Int32) -> Int32).self)
private let cloneNewNet: Int32 = 0x4000_0000
