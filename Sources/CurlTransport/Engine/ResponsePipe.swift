import Foundation
import Transport

/// Carries a streamed response body from the curl thread to the reading task, holding at most
/// about `highWater` bytes.
///
/// The curl side never blocks: when the buffer is full `offer` refuses the chunk and the write
/// callback pauses the transfer (libcurl keeps that chunk and offers it again after resuming). The
/// reader resumes the transfer once it has drained the buffer to half.
final class ResponsePipe: @unchecked Sendable {
    private let lock = NSLock()
    private let highWater: Int
    private var chunks: [Data] = []
    private var firstChunk = 0
    private var buffered = 0
    private var ending: TransportError?? = .none
    private var waiter: CheckedContinuation<Data?, Error>?
    private var producerPaused = false
    private var resumeProducer: (@Sendable () -> Void)?
    private var cancelTransfer: (@Sendable () -> Void)?

    init(highWater: Int) { self.highWater = max(16 * 1024, highWater) }

    /// Connects the pipe to its transfer: how to resume a paused transfer and how to cancel it.
    func attach(resume: @escaping @Sendable () -> Void, cancel: @escaping @Sendable () -> Void) {
        lock.lock()
        resumeProducer = resume
        cancelTransfer = cancel
        lock.unlock()
    }

    // MARK: Curl thread

    /// Takes a chunk; `false` means "full, pause the transfer and offer it again later".
    func offer(_ bytes: UnsafeRawBufferPointer) -> Bool {
        lock.lock()
        if let waiter {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: Data(bytes))
            return true
        }
        guard buffered < highWater else {
            producerPaused = true
            lock.unlock()
            return false
        }
        chunks.append(Data(bytes))
        buffered += bytes.count
        lock.unlock()
        return true
    }

    /// Ends the body: `nil` for a complete body, or the error that cut it short.
    func finish(_ error: TransportError?) {
        lock.lock()
        guard case .none = ending else {
            lock.unlock()
            return
        }
        ending = .some(error)
        resumeProducer = nil
        cancelTransfer = nil
        let waiting = waiter
        waiter = nil
        lock.unlock()
        if let waiting {
            if let error { waiting.resume(throwing: error) } else { waiting.resume(returning: nil) }
        }
    }

    // MARK: Reader

    /// The next chunk, `nil` at the end of the body. Cancelling the reading task cancels the transfer.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, Error>) in
                lock.lock()
                if firstChunk < chunks.count {
                    let chunk = popLocked()
                    var resume: (@Sendable () -> Void)?
                    if producerPaused, buffered <= highWater / 2 {
                        producerPaused = false
                        resume = resumeProducer
                    }
                    lock.unlock()
                    resume?()
                    continuation.resume(returning: chunk)
                    return
                }
                if case .some(let error) = ending {
                    lock.unlock()
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
                    return
                }
                waiter = continuation
                lock.unlock()
            }
        } onCancel: {
            abandon()
        }
    }

    /// The reader gave up (task cancelled or stream dropped): cancel the transfer if it still runs.
    func abandon() {
        lock.lock()
        let cancel = cancelTransfer
        lock.unlock()
        cancel?()
    }

    /// Bytes the pipe's storage still references, taken or not. Equal to the buffered bytes, since a
    /// taken chunk's slot is emptied at once; tests check that it stays bounded.
    var heldBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return chunks.reduce(0) { $0 + $1.count }
    }

    private func popLocked() -> Data {
        let chunk = chunks[firstChunk]
        // Empty the slot now. Kept until the queue next ran dry, taken chunks stayed referenced for as
        // long as curl refilled the queue before the reader emptied it: up to a whole 100 MiB body.
        chunks[firstChunk] = Data()
        firstChunk += 1
        buffered -= chunk.count
        if firstChunk == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            firstChunk = 0
        } else if firstChunk >= 64, firstChunk * 2 >= chunks.count {
            // Drop the emptied slots too, amortised: the array stays within twice the live chunks.
            chunks.removeFirst(firstChunk)
            firstChunk = 0
        }
        return chunk
    }
}

/// Held only by the `HTTPBodyStream` handed to the caller: when the caller drops the stream, this
/// goes away and cancels the transfer (a finished transfer ignores it).
final class ResponseStreamToken: Sendable {
    let pipe: ResponsePipe
    private let lifetime: CurlEngineLifetime

    init(pipe: ResponsePipe, lifetime: CurlEngineLifetime) {
        self.pipe = pipe
        self.lifetime = lifetime
    }

    deinit { pipe.abandon() }
}
