import Foundation
import Transport

/// The one result a job on the curl thread hands back to the task waiting for it, and that task's
/// cancellation flag, behind one lock. Every kind of job (transfer, direct exchange, certificate
/// probe) waits through one of these.
final class PendingResult<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Error>?
    private var cancelled = false
    private var reported = false

    /// Suspends until ``resume(_:)``. `start` runs once the continuation is stored (it posts the
    /// job); `onCancel` runs on the task's first cancellation, from whatever thread cancels it.
    func wait(start: () -> Void, onCancel: @escaping @Sendable () -> Void) async throws -> Value {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, Error>) in
                lock.lock()
                self.continuation = continuation
                lock.unlock()
                start()
            }
        } onCancel: {
            if markCancelled() { onCancel() }
        }
    }

    /// Marks the wait cancelled; `true` only the first time.
    func markCancelled() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let first = !cancelled
        cancelled = true
        return first
    }

    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cancelled
    }

    /// Hands the result to the waiting task; only the first call counts.
    func resume(_ result: Result<Value, TransportError>) {
        lock.lock()
        let waiting = continuation
        continuation = nil
        let first = !reported
        reported = true
        lock.unlock()
        guard first, let waiting else { return }
        waiting.resume(with: result.mapError { $0 as Error })
    }
}
