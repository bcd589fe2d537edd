import Foundation

/// Carries a streamed request body from the task reading its `HTTPBodyStream` to the thread an
/// HTTP library reads the body on, holding at most about `highWater` bytes: the request-body
/// pipe of `CurlTransport` and `URLSessionTransport`.
///
/// The producing task waits while the pipe is full. The reading side either never blocks
/// (``read(into:)``: with nothing buffered it answers `.wouldBlock`, and the `resume` given to
/// ``start(_:resume:)`` is called once there is something to read, as libcurl's paused read
/// callback needs), or blocks until bytes arrive for at most an idle limit
/// (``read(into:idleLimit:)``, for URLSession's body thread).
///
/// With a declared length the last byte is held back until the stream has ended, so a stream that
/// yields more than it declared fails the transfer instead of being cut silently.
package final class RequestBodyPipe: @unchecked Sendable {
    /// Why the body failed.
    package struct Failure: @unchecked Sendable {
        /// `.requestBodyFailed`, `.cancelled` (the stream threw `CancellationError`) or `.timedOut`
        /// (the stream yielded nothing within the idle limit of a blocking read).
        package var kind: TransportError.Kind
        /// What happened, for `TransportError.message`.
        package var message: String
        /// The error the stream threw, if any.
        package var underlying: (any Error)?
    }

    /// What a read yields.
    package enum ReadResult {
        /// This many bytes (more than zero) were copied into the buffer.
        case bytes(Int)
        /// Nothing yet (non-blocking reads only): the `resume` callback is called when there is.
        case wouldBlock
        /// The body is complete.
        case end
        /// The body failed, or the pipe was closed.
        case failed(Failure)
    }

    private let condition = NSCondition()
    private let highWater: Int
    private let declaredLength: Int64?
    private let onFailure: (@Sendable (Failure) -> Void)?
    // Guarded by `condition`.
    private var chunks: [Data] = []
    private var offsetInFirst = 0
    private var buffered = 0
    private var produced: Int64 = 0
    private var consumed: Int64 = 0
    private var producerFinished = false
    private var failure: Failure?
    /// Whether `onFailure` was (or is being) told, so it is told once.
    private var failureReported = false
    private var closed = false
    private var consumerPaused = false
    private var spaceWaiter: CheckedContinuation<Void, Never>?
    private var resumeConsumer: (@Sendable () -> Void)?
    private var producer: Task<Void, Never>?

    /// - Parameters:
    ///   - declaredLength: the stream's declared length, held to exactly.
    ///   - highWater: about how many bytes may wait in the pipe (at least 16 KiB).
    ///   - onFailure: told once why the body failed, when it fails.
    package init(declaredLength: Int64?, highWater: Int, onFailure: (@Sendable (Failure) -> Void)? = nil) {
        self.declaredLength = declaredLength
        self.highWater = max(16 * 1024, highWater)
        self.onFailure = onFailure
    }

    /// A new, empty pipe like this one (the same declared length, high-water mark and failure
    /// report): what a transport reads next when it sends a restartable body again from its
    /// first byte (``HTTPBodyStream/restarted()``, started in it).
    package func fresh() -> RequestBodyPipe {
        RequestBodyPipe(declaredLength: declaredLength, highWater: highWater, onFailure: onFailure)
    }

    /// Starts reading `stream` in a task of its own; `resume` is called when a non-blocking read
    /// that answered `.wouldBlock` can go on.
    package func start(_ stream: HTTPBodyStream, resume: (@Sendable () -> Void)? = nil) {
        condition.lock()
        resumeConsumer = resume
        condition.unlock()
        let task = Task { [self] in await pump(stream) }
        condition.lock()
        producer = task
        let stopNow = closed
        condition.unlock()
        if stopNow { task.cancel() }
    }

    /// Bytes the reading side has taken so far.
    package var bytesConsumed: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return consumed
    }

    // MARK: Reading side

    /// Copies buffered bytes into `buffer` without waiting: `.wouldBlock` when there are none yet.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        condition.lock()
        let result = takeLocked(into: buffer)
        if case .wouldBlock = result { consumerPaused = true }
        condition.unlock()
        return result
    }

    /// Copies the next bytes into `buffer`, waiting until there are some; a producer that yields
    /// nothing for `idleLimit` seconds (`nil`: no limit) fails the body with `.timedOut`.
    package func read(into buffer: UnsafeMutableRawBufferPointer, idleLimit: TimeInterval?) -> ReadResult {
        let deadline = idleLimit.map { Date().addingTimeInterval($0) }
        condition.lock()
        while true {
            let result = takeLocked(into: buffer)
            guard case .wouldBlock = result else {
                condition.unlock()
                return result
            }
            if let deadline {
                guard condition.wait(until: deadline) else {
                    let timedOut = Failure(kind: .timedOut, message: "the request body stream yielded nothing for \(idleLimit ?? 0) s",
                                           underlying: nil)
                    failLocked(timedOut)
                    let report = !failureReported
                    failureReported = true
                    condition.unlock()
                    if report { onFailure?(timedOut) }
                    return .failed(timedOut)
                }
            } else {
                condition.wait()
            }
        }
    }

    /// The transfer is over: stop the producer, drop what is buffered, wake a waiting read.
    package func close() {
        condition.lock()
        closed = true
        chunks.removeAll()
        buffered = 0
        resumeConsumer = nil
        let waiter = spaceWaiter
        spaceWaiter = nil
        let task = producer
        condition.broadcast()
        condition.unlock()
        waiter?.resume()
        task?.cancel()
    }

    /// One read under the lock: bytes, the end, the failure, or `.wouldBlock`.
    private func takeLocked(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        if let failure { return .failed(failure) }
        if closed { return .failed(Failure(kind: .cancelled, message: "the transfer is over", underlying: nil)) }
        var limit = buffer.count
        if let declaredLength, !producerFinished {
            limit = Int(clamping: min(Int64(limit), max(0, declaredLength - consumed - 1)))
        }
        if limit > 0, !chunks.isEmpty {
            let written = copyLocked(into: buffer, limit: limit)
            if buffered < highWater, let waiter = spaceWaiter {
                spaceWaiter = nil
                waiter.resume()
            }
            return .bytes(written)
        }
        if chunks.isEmpty, producerFinished { return .end }
        return .wouldBlock
    }

    private func copyLocked(into buffer: UnsafeMutableRawBufferPointer, limit: Int) -> Int {
        var written = 0
        while written < limit, !chunks.isEmpty {
            let chunk = chunks[0]
            let take = min(limit - written, chunk.count - offsetInFirst)
            chunk.withUnsafeBytes { source in
                let from = UnsafeRawBufferPointer(rebasing: source[offsetInFirst..<(offsetInFirst + take)])
                UnsafeMutableRawBufferPointer(rebasing: buffer[written..<(written + take)]).copyMemory(from: from)
            }
            written += take
            offsetInFirst += take
            if offsetInFirst == chunk.count {
                chunks.removeFirst()
                offsetInFirst = 0
            }
        }
        buffered -= written
        consumed += Int64(written)
        return written
    }

    /// Records the failure and drops what is buffered; the caller reports it after unlocking.
    private func failLocked(_ error: Failure) {
        failure = error
        chunks.removeAll()
        buffered = 0
        condition.broadcast()
    }

    // MARK: Producing task

    private func pump(_ stream: HTTPBodyStream) async {
        do {
            for try await chunk in stream {
                await waitForSpace()
                guard append(chunk) else { return }
            }
            finishProducing(nil)
        } catch {
            finishProducing(error)
        }
    }

    private func waitForSpace() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            condition.lock()
            if buffered < highWater || closed || failure != nil {
                condition.unlock()
                continuation.resume()
            } else {
                spaceWaiter = continuation
                condition.unlock()
            }
        }
    }

    /// Buffers a chunk; `false` once the transfer is over or the stream broke its declared length.
    private func append(_ chunk: Data) -> Bool {
        condition.lock()
        guard !closed, failure == nil else {
            condition.unlock()
            return false
        }
        if let declaredLength, Int64(chunk.count) > declaredLength - produced {
            condition.unlock()
            fail(Failure(kind: .requestBodyFailed,
                         message: "the request body stream yielded more than its declared \(declaredLength) bytes", underlying: nil))
            return false
        }
        chunks.append(chunk)
        buffered += chunk.count
        produced += Int64(chunk.count)
        condition.broadcast()
        let resume = takeResumeLocked()
        condition.unlock()
        resume?()
        return true
    }

    /// Fails the body from the producing side: `onFailure` is told first, and only then does a
    /// read see the failure, so a transport that ends the transfer on that read already knows why.
    private func fail(_ broken: Failure) {
        condition.lock()
        let report = !failureReported
        failureReported = true
        condition.unlock()
        if report { onFailure?(broken) }
        condition.lock()
        if !closed, failure == nil { failLocked(broken) }
        let resume = takeResumeLocked()
        condition.unlock()
        resume?()
    }

    private func finishProducing(_ error: (any Error)?) {
        condition.lock()
        guard !closed, failure == nil else {
            condition.unlock()
            return
        }
        var broken: Failure?
        if let error {
            broken = error is CancellationError
                ? Failure(kind: .cancelled, message: "the request body stream was cancelled", underlying: error)
                : Failure(kind: .requestBodyFailed, message: "the request body stream failed: \(error)", underlying: error)
        } else if let declaredLength, produced != declaredLength {
            broken = Failure(kind: .requestBodyFailed,
                             message: "the request body stream ended after \(produced) of its declared \(declaredLength) bytes",
                             underlying: nil)
        }
        if let broken {
            condition.unlock()
            fail(broken)
            return
        }
        producerFinished = true
        condition.broadcast()
        let resume = takeResumeLocked()
        condition.unlock()
        resume?()
    }

    /// The resume callback, when a non-blocking read is waiting for it.
    private func takeResumeLocked() -> (@Sendable () -> Void)? {
        guard consumerPaused, !closed else { return nil }
        consumerPaused = false
        return resumeConsumer
    }
}
