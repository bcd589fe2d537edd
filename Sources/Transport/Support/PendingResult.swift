import Foundation

/// The one result a piece of work on another thread hands back to the task waiting for it, and
/// that task's cancellation flag, behind one lock. `CurlTransport`'s jobs (transfer, direct
/// exchange, certificate probe) and `URLSessionTransport`'s key reading wait through one of these.
package final class PendingResult<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var cancelled = false
        var reported = false
    }

    private let state = Locked(State())

    /// A result nobody waits for yet.
    package init() {}

    /// Suspends until ``resume(_:)``. `start` runs once the continuation is stored (it starts the
    /// work); `onCancel` runs on the task's first cancellation, from whatever thread cancels it.
    package func wait(start: () -> Void, onCancel: @escaping @Sendable () -> Void) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                state.withLock { $0.continuation = continuation }
                start()
            }
        } onCancel: {
            if markCancelled() { onCancel() }
        }
    }

    /// Marks the wait cancelled; `true` only the first time.
    package func markCancelled() -> Bool {
        state.withLock { state in
            defer { state.cancelled = true }
            return !state.cancelled
        }
    }

    /// Whether the waiting task has been cancelled.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Hands the result to the waiting task; only the first call counts.
    package func resume(_ result: Result<Value, TransportError>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            defer {
                state.continuation = nil
                state.reported = true
            }
            return state.reported ? nil : state.continuation
        }
        waiting?.resume(with: result.mapError { $0 as any Error })
    }
}
