import Foundation
import Glibc

extension Process {
    /// Runs the process with no signal blocked in the child. A child inherits the signal mask of
    /// the thread that spawns it, and the threads that start children here often block SIGTERM
    /// (libdispatch and test-runner workers do): a child started from one would ignore the
    /// SIGTERM meant to stop it, and a `setpriv --pdeathsig TERM` child would outlive its parent.
    /// So the calling thread's mask is emptied for the spawn and restored after it. Any thread
    /// but the JACK process thread (it spawns).
    public func runWithNoSignalBlocked() throws {
        var nothing = sigset_t()
        var previous = sigset_t()
        sigemptyset(&nothing)
        pthread_sigmask(SIG_SETMASK, &nothing, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try run()
    }
}
