import Foundation
import Transport

/// Runs a request's async handling on the connection's own thread.
///
/// The server blocks one thread per connection while a request is handled. If that handling ran
/// on Swift's shared task pool, a client that blocks pool threads on synchronous I/O (a test
/// calling a blocking socket from an `async` test function, say) could starve it and deadlock
/// against the server. With this executor as the task's preference, every job of the handling
/// task (actor hops included) runs here instead.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
package final class ConnectionExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    /// An executor with no jobs yet.
    package init() {}

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func markFinished() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Runs `work` to completion on the calling thread and returns its result.
    package func run<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) -> Result {
        let box = Locked<Result?>(nil)
        Task(executorPreference: self) {
            let value = await work()
            box.withLock { $0 = value }
            self.markFinished()
        }
        while true {
            condition.lock()
            while jobs.isEmpty, !finished { condition.wait() }
            if jobs.isEmpty, finished {
                condition.unlock()
                break
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
        // `finished` is set inside the task's last job, which has run by now.
        guard let result = box.value else { preconditionFailure("the handling task finished without a result") }
        return result
    }
}
