import Foundation
import Transport

/// Carries a streamed request body from a producing task to the curl thread, holding at most about
/// `highWater` bytes.
///
/// The curl side never blocks: with nothing buffered, the read callback pauses the transfer and
/// the producer resumes it when the next chunk arrives. The producer waits while the buffer is full.
final class RequestPipe: @unchecked Sendable {
    /// What the read callback gets.
    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case end
        case failed(message: String, underlying: (any Error)?)
    }

    private let lock = NSLock()
    private let highWater: Int
    private let declaredLength: Int64?
    private var chunks: [Data] = []
    private var offsetInFirst = 0
    private var buffered = 0
    private var produced: Int64 = 0
    private var consumed: Int64 = 0
    private var producerFinished = false
    private var failure: (message: String, underlying: (any Error)?)?
    private var consumerPaused = false
    private var closed = false
    private var spaceWaiter: CheckedContinuation<Void, Never>?
    private var resumeConsumer: (@Sendable () -> Void)?
    private var producer: Task<Void, Never>?

    init(declaredLength: Int64?, highWater: Int) {
        self.declaredLength = declaredLength
        self.highWater = max(16 * 1024, highWater)
    }

    /// Starts reading `stream` in a task; `resume` unpauses the transfer when data arrives.
    func start(_ stream: HTTPBodyStream, resume: @escaping @Sendable () -> Void) {
        lock.lock()
        resumeConsumer = resume
        lock.unlock()
        let task = Task { [self] in await pump(stream) }
        lock.lock()
        producer = task
        let stopNow = closed
        lock.unlock()
        if stopNow { task.cancel() }
    }

    /// Bytes the curl side has taken so far.
    var bytesConsumed: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return consumed
    }

    // MARK: Curl thread

    /// Copies buffered bytes into libcurl's upload buffer.
    ///
    /// With a declared length, the last byte is held back until the stream has ended, so that a
    /// stream yielding more bytes than declared fails the transfer instead of being cut silently.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        lock.lock()
        if let failure {
            lock.unlock()
            return .failed(message: failure.message, underlying: failure.underlying)
        }
        var limit = buffer.count
        if let declaredLength, !producerFinished {
            limit = Int(clamping: min(Int64(limit), max(0, declaredLength - consumed - 1)))
        }
        if limit > 0, !chunks.isEmpty {
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
            let waiter = buffered < highWater ? spaceWaiter : nil
            if waiter != nil { spaceWaiter = nil }
            lock.unlock()
            waiter?.resume()
            return .bytes(written)
        }
        if chunks.isEmpty, producerFinished {
            lock.unlock()
            return .end
        }
        consumerPaused = true
        lock.unlock()
        return .wouldBlock
    }

    /// The transfer is over: stop the producer and drop what is buffered.
    func close() {
        lock.lock()
        closed = true
        chunks.removeAll()
        buffered = 0
        resumeConsumer = nil
        let waiter = spaceWaiter
        spaceWaiter = nil
        let task = producer
        lock.unlock()
        waiter?.resume()
        task?.cancel()
    }

    // MARK: Producer task

    private func pump(_ stream: HTTPBodyStream) async {
        do {
            for try await chunk in stream {
                await waitForSpace()
                guard append(chunk) else { return }
            }
            finishProducing(nil)
        } catch {
            finishProducing((message: "the request body stream failed: \(error)", underlying: error))
        }
    }

    private func waitForSpace() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if buffered < highWater || closed {
                lock.unlock()
                continuation.resume()
            } else {
                spaceWaiter = continuation
                lock.unlock()
            }
        }
    }

    /// Buffers a chunk; `false` once the transfer is over or the stream broke its declared length.
    private func append(_ chunk: Data) -> Bool {
        lock.lock()
        guard !closed, failure == nil else {
            lock.unlock()
            return false
        }
        if let declaredLength, Int64(chunk.count) > declaredLength - produced {
            failure = ("the request body stream yielded more than its declared \(declaredLength) bytes", nil)
        } else {
            chunks.append(chunk)
            buffered += chunk.count
            produced += Int64(chunk.count)
        }
        let accepted = failure == nil
        let resume = takeResumeLocked()
        lock.unlock()
        resume?()
        return accepted
    }

    private func finishProducing(_ error: (message: String, underlying: (any Error)?)?) {
        lock.lock()
        if failure == nil {
            if let error {
                failure = error
            } else if let declaredLength, produced != declaredLength {
                failure = ("the request body stream ended after \(produced) of its declared \(declaredLength) bytes", nil)
            }
        }
        producerFinished = true
        let resume = takeResumeLocked()
        lock.unlock()
        resume?()
    }

    private func takeResumeLocked() -> (@Sendable () -> Void)? {
        guard consumerPaused, !closed else { return nil }
        consumerPaused = false
        return resumeConsumer
    }
}
