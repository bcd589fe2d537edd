import Foundation
import Transport

/// Carries a streamed response body from URLSession's delegate callbacks to the reading task,
/// holding about `highWater` bytes ahead of the reader.
///
/// How the network side is held back depends on what the platform allows:
/// - `.blockDelivery` (FoundationNetworking): `offer` blocks until the reader has made room.
///   FoundationNetworking cannot pause a receiving task (its `suspend()` takes the transfer off
///   libcurl, which starts it over on `resume()`), but it delivers each chunk from libcurl's write
///   callback when the session's delegate queue runs operations in place, so a blocked `offer`
///   holds libcurl, and TCP flow control holds the server.
/// - `.suspendTask` (Darwin): `offer` always takes the chunk and calls `pause` (which suspends the
///   task) once the buffer is full; the reader calls `resume` once it has drained it to half.
final class ResponseBuffer: @unchecked Sendable {
    enum Backpressure {
        case blockDelivery
        case suspendTask
    }

    private let condition = NSCondition()
    private let highWater: Int
    private let backpressure: Backpressure
    // Guarded by `condition`.
    private var chunks: [Data] = []
    private var firstChunk = 0
    private var buffered = 0
    private var ending: TransportError?? = .none
    private var waiter: CheckedContinuation<Data?, any Error>?
    private var paused = false
    private var pause: (@Sendable () -> Void)?
    private var resume: (@Sendable () -> Void)?
    private var abandonTransfer: (@Sendable () -> Void)?

    init(highWater: Int, backpressure: Backpressure) {
        self.highWater = max(16 * 1024, highWater)
        self.backpressure = backpressure
    }

    /// Connects the buffer to its transfer: how to pause and resume delivery (`.suspendTask`), and
    /// how to cancel the transfer when the reader gives up.
    func attach(pause: @escaping @Sendable () -> Void, resume: @escaping @Sendable () -> Void,
                abandon: @escaping @Sendable () -> Void) {
        condition.lock()
        self.pause = pause
        self.resume = resume
        abandonTransfer = abandon
        condition.unlock()
    }

    // MARK: Delegate side

    /// Takes a chunk of the body; may block (`.blockDelivery`) until there is room. A chunk that
    /// arrives after the end (or after the reader gave up) is dropped.
    func offer(_ data: Data) {
        condition.lock()
        guard case .none = ending else {
            condition.unlock()
            return
        }
        if let waiter {
            self.waiter = nil
            condition.unlock()
            waiter.resume(returning: data)
            return
        }
        if backpressure == .blockDelivery {
            while buffered >= highWater, case .none = ending { condition.wait() }
            guard case .none = ending else {
                condition.unlock()
                return
            }
        }
        chunks.append(data)
        buffered += data.count
        var pauseNow: (@Sendable () -> Void)?
        if backpressure == .suspendTask, buffered >= highWater, !paused {
            paused = true
            pauseNow = pause
        }
        condition.unlock()
        pauseNow?()
    }

    /// Ends the body: `nil` for a complete body, or the error that cut it short. Buffered chunks
    /// are still read before the ending is reported.
    func finish(_ error: TransportError?) {
        condition.lock()
        guard case .none = ending else {
            condition.unlock()
            return
        }
        ending = .some(error)
        pause = nil
        resume = nil
        abandonTransfer = nil
        let waiting = firstChunk < chunks.count ? nil : waiter
        if waiting != nil { waiter = nil }
        condition.broadcast()
        condition.unlock()
        if let waiting {
            if let error { waiting.resume(throwing: error) } else { waiting.resume(returning: nil) }
        }
    }

    // MARK: Reader

    /// The next chunk, `nil` at the end of the body. Cancelling the reading task cancels the transfer.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                condition.lock()
                if firstChunk < chunks.count {
                    let chunk = popLocked()
                    var resumeNow: (@Sendable () -> Void)?
                    if paused, buffered <= highWater / 2 {
                        paused = false
                        resumeNow = resume
                    }
                    condition.broadcast()
                    condition.unlock()
                    resumeNow?()
                    continuation.resume(returning: chunk)
                    return
                }
                if case .some(let error) = ending {
                    condition.unlock()
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
                    return
                }
                waiter = continuation
                condition.unlock()
            }
        } onCancel: {
            abandon()
        }
    }

    /// The reader gave up (task cancelled or stream dropped): cancel the transfer if it still runs.
    func abandon() {
        condition.lock()
        let cancel = abandonTransfer
        condition.unlock()
        cancel?()
    }

    /// Bytes waiting for the reader; tests check that it stays bounded.
    var bufferedBytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return buffered
    }

    private func popLocked() -> Data {
        let chunk = chunks[firstChunk]
        chunks[firstChunk] = Data()  // release it now, not when the queue next runs dry
        firstChunk += 1
        buffered -= chunk.count
        if firstChunk == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            firstChunk = 0
        } else if firstChunk >= 64, firstChunk * 2 >= chunks.count {
            chunks.removeFirst(firstChunk)
            firstChunk = 0
        }
        return chunk
    }
}

/// Held only by the `HTTPBodyStream` handed to the caller: when the caller drops the stream, this
/// goes away and cancels the transfer (a finished transfer ignores it).
final class ResponseStreamToken: Sendable {
    let buffer: ResponseBuffer

    init(buffer: ResponseBuffer) { self.buffer = buffer }

    deinit { buffer.abandon() }
}
