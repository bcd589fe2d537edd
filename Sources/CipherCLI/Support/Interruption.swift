import Dispatch
import Foundation
import StationClient
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT and SIGTERM into cancellation of the running command: the first signal cancels
/// its task (the SDK then removes its partial downloads on the way out, and `main` exits only
/// once the task has ended), a second one exits at once (a later run sweeps what is left).
///
/// `@unchecked`: the signal sources are set once in `init` and only kept alive after; `caught`
/// is read and written under `state`.
final class Interruption: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let state = NSLock()
    private var caught: Int32?

    /// Installs the handlers (the default actions are ignored from here on, so the process is not
    /// killed before its task has wound down).
    init(cancelling task: Task<ExitCode, Never>) {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            Self.ignore(number)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            // `data`: how many signals arrived since the handler last ran (two quick Ctrl-Cs are one event).
            source.setEventHandler { [self, source] in handle(number, count: source.data, task: task) }
            source.resume()
        }
    }

    /// The first signal received, if any.
    var received: Int32? {
        state.lock()
        defer { state.unlock() }
        return caught
    }

    private func handle(_ number: Int32, count: UInt, task: Task<ExitCode, Never>) {
        state.lock()
        let first = caught == nil
        if first { caught = number }
        state.unlock()
        if first {
            FileHandle.standardError.write(Data("\ncipher: interrupted; cleaning up (interrupt again to quit at once)\n".utf8))
            task.cancel()
            guard count > 1 else { return }
        }
        // A second interrupt: the user does not want to wait for the cleanup. Nothing of a
        // publish is on disk (it encrypts as it sends); a partial download is swept by a later run.
        _exit(128 + number)
    }

    private static func ignore(_ number: Int32) {
        _ = signal(number, SIG_IGN)
    }
}
