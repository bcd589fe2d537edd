import Foundation
import Transport

/// Carries a streamed request body from the task reading the `HTTPBodyStream` to the thread
/// URLSession reads the body on, holding at most about `highWater` bytes.
///
/// The reading thread blocks while the pipe is empty, for at most `idleLimit` seconds (a producer
/// that stalls longer is an idle transfer); the producing task waits while the pipe is full.
/// With a declared length the last byte is held back until the stream has ended, so a stream that
/// yields more than it declared fails the transfer instead of being cut silently.
final class StreamBodyPipe: BlockingBodySource, @unchecked Sendable {
    private let condition = NSCondition()
    private let highWater: Int
    private let declaredLength: Int64?
    private let idleLimit: TimeInterval?
    private let onFailure: @Sendable (TransportError.Kind, String, (any Error)?) -> Void
    // Guarded by `condition`.
    private var chunks: [Data] = []
    private var offsetInFirst = 0
    private var buffered = 0
    private var produced: Int64 = 0
    private var consumed: Int64 = 0
    private var producerFinished = false
    private var failed = false
    private var closed = false
    private var spaceWaiter: CheckedContinuation<Void, Never>?
    private var producer: Task<Void, Never>?

    /// - Parameter onFailure: told once why the body failed (kind, message, underlying error).
    init(declaredLength: Int64?, highWater: Int, idleLimit: TimeInterval?,
         onFailure: @escaping @Sendable (TransportError.Kind, String, (any Error)?) -> Void) {
        self.declaredLength = declaredLength
        self.highWater = max(16 * 1024, highWater)
        self.idleLimit = idleLimit
        self.onFailure = onFailure
    }

    /// Starts reading `stream` in a task of its own.
    func start(_ stream: HTTPBodyStream) {
        let task = Task { [self] in await pump(stream) }
        condition.lock()
        producer = task
        let stopNow = closed
        condition.unlock()
        if stopNow { task.cancel() }
    }

    // MARK: Reading thread

    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyRead {
        let deadline = idleLimit.map { Date().addingTimeInterval($0) }
        condition.lock()
        while true {
            if failed || closed {
                condition.unlock()
                return .failed
            }
            var limit = buffer.count
            if let declaredLength, !producerFinished {
                limit = Int(clamping: min(Int64(limit), max(0, declaredLength - consumed - 1)))
            }
            if limit > 0, !chunks.isEmpty {
                let written = copyLocked(into: buffer, limit: limit)
                let waiter = buffered < highWater ? spaceWaiter : nil
                if waiter != nil { spaceWaiter = nil }
                condition.unlock()
                waiter?.resume()
                return .bytes(written)
            }
            if chunks.isEmpty, producerFinished {
                condition.unlock()
                return .end
            }
            if let deadline {
                guard condition.wait(until: deadline) else {
                    failLocked()
                    condition.unlock()
                    onFailure(.timedOut, "the request body stream yielded nothing for \(idleLimit ?? 0) s", nil)
                    return .failed
                }
            } else {
                condition.wait()
            }
        }
    }

    func close() {
        condition.lock()
        closed = true
        chunks.removeAll()
        buffered = 0
        let waiter = spaceWaiter
        spaceWaiter = nil
        let task = producer
        condition.broadcast()
        condition.unlock()
        waiter?.resume()
        task?.cancel()
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

    private func failLocked() {
        failed = true
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
            if buffered < highWater || closed || failed {
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
        guard !closed, !failed else {
            condition.unlock()
            return false
        }
        if let declaredLength, Int64(chunk.count) > declaredLength - produced {
            failLocked()
            condition.unlock()
            onFailure(.requestBodyFailed, "the request body stream yielded more than its declared \(declaredLength) bytes", nil)
            return false
        }
        chunks.append(chunk)
        buffered += chunk.count
        produced += Int64(chunk.count)
        condition.broadcast()
        condition.unlock()
        return true
    }

    private func finishProducing(_ error: (any Error)?) {
        condition.lock()
        guard !closed, !failed else {
            condition.unlock()
            return
        }
        var failure: (TransportError.Kind, String, (any Error)?)?
        if let error {
            failure = error is CancellationError
                ? (.cancelled, "the request body stream was cancelled", error)
                : (.requestBodyFailed, "the request body stream failed: \(error)", error)
        } else if let declaredLength, produced != declaredLength {
            failure = (.requestBodyFailed, "the request body stream ended after \(produced) of its declared \(declaredLength) bytes", nil)
        }
        if failure != nil { failLocked() } else { producerFinished = true }
        condition.broadcast()
        condition.unlock()
        if let failure { onFailure(failure.0, failure.1, failure.2) }
    }
}
