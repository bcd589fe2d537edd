import Foundation
import StationClient
import Transport

/// Stops a run that stopped moving: a station (or a hostile one) can hold a transfer open and
/// trickle bytes within every per-request limit, so the run as a whole must show progress, an
/// action finished or ``minimumProgressBytes`` moved, at least once per timeout.
///
/// Fed by the run's own progress reports (the one progress path); it sleeps until the moment
/// the run would have stalled and never polls.
struct ProgressWatchdog: Sendable {
    /// Bytes that count as progress between two finished actions: 64 KiB per timeout (at the
    /// default five minutes, about 218 bytes a second) lets any working link through and stops
    /// a trickle of a few bytes a second.
    static let minimumProgressBytes: Int64 = 64 * 1024

    let timeout: Duration
    private let mark: Locked<Mark>

    /// The last moment the run showed progress, and where it stood then.
    private struct Mark {
        var instant: ContinuousClock.Instant
        var completedActions: Int
        var completedBytes: Int64
    }

    init(timeout: Duration) {
        self.timeout = timeout
        mark = Locked(Mark(instant: .now, completedActions: 0, completedBytes: 0))
    }

    /// Takes a progress report of the run: progress moves the mark.
    func observe(_ progress: SyncProgress) {
        mark.withLock { mark in
            let finished = progress.completedActions > mark.completedActions
            let moved = progress.completedBytes.addingSaturated(-mark.completedBytes) >= Self.minimumProgressBytes
            // Bytes can go back (a retried transfer restarts its count): a new base, not progress.
            let restarted = progress.completedBytes < mark.completedBytes
            if finished || moved {
                mark = Mark(instant: .now, completedActions: progress.completedActions, completedBytes: progress.completedBytes)
            } else if restarted {
                mark.completedBytes = progress.completedBytes
            }
        }
    }

    /// A progress handler that shows each report to the watchdog, then to `handler`.
    func watching(_ handler: (@Sendable (SyncProgress) -> Void)?) -> @Sendable (SyncProgress) -> Void {
        { progress in
            observe(progress)
            handler?(progress)
        }
    }

    /// Local work between transfers (an action starting, a file hashed or checked) moves the
    /// mark: only the station's silence is a stall, not the client's own disk and CPU.
    func heartbeat() {
        mark.withLock { $0.instant = .now }
    }

    /// The last moment the run showed progress.
    var markInstant: ContinuousClock.Instant { mark.value.instant }

    /// Returns when the run has gone `timeout` without progress; throws `CancellationError` when
    /// cancelled first.
    func stalled() async throws {
        while true {
            let deadline = markInstant + timeout
            guard deadline > .now else { return }
            try await Task.sleep(until: deadline, clock: .continuous)
        }
    }

    /// Runs `body` (the run, fed to ``observe(_:)`` through its progress) and stops it, by
    /// cancelling it, when it stalls: then `.station`, its underlying `StationClientError`
    /// `.tooSlow`. What was done is in the journal, as after any cancellation.
    static func run<Value: Sendable>(timeout: Duration?, operation: String,
                                     _ body: @escaping @Sendable (ProgressWatchdog?) async throws(DriveSyncError) -> Value)
        async throws(DriveSyncError) -> Value {
        guard let timeout, timeout > .zero else { return try await body(nil) }
        let watchdog = ProgressWatchdog(timeout: timeout)
        let outcome = await withTaskGroup(of: Outcome<Value>.self) { group in
            group.addTask {
                do throws(DriveSyncError) { return .finished(try await body(watchdog)) } catch { return .failed(error) }
            }
            group.addTask {
                do { try await watchdog.stalled() } catch { return .watchEnded }
                return .stalled
            }
            let first = await group.next() ?? .watchEnded
            group.cancelAll()
            switch first {
            case .finished, .failed:
                return first
            case .watchEnded:
                // The caller was cancelled: the run's own outcome (`.cancelled`) stands.
                while let next = await group.next() { if case .watchEnded = next { continue } else { return next } }
                return first
            case .stalled:
                // The run stops at its next cancellation point, its journal written; one that
                // finished meanwhile stands.
                while let next = await group.next() { if case .finished = next { return next } }
                return first
            }
        }
        switch outcome {
        case let .finished(value): return value
        case let .failed(error): throw error
        case .watchEnded: throw DriveSyncError(.cancelled, "cancelled; the next sync resumes")
        case .stalled:
            let seconds = timeout.components.seconds
            let slow = StationClientError(.tooSlow, operation: operation,
                                          message: "nothing moved for \(seconds) s (less than \(minimumProgressBytes / 1024) KiB and no action finished)")
            throw DriveSyncError(.station, "the sync made no progress for \(seconds) s; the next sync resumes", underlying: slow)
        }
    }

    private enum Outcome<Value: Sendable>: Sendable {
        case finished(Value)
        case failed(DriveSyncError)
        case stalled
        /// The watchdog was stopped because the run ended first.
        case watchEnded
    }
}
