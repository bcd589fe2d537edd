import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Carries a streamed response body from an HTTP library's callbacks to the reading task, holding
/// at most about `highWater` bytes in memory: the response collector of `CurlTransport` and
/// `URLSessionTransport`.
///
/// What happens when the reader falls behind depends on what the library allows:
/// - `.refuseWhenFull` (libcurl): once the buffer is full `offer` refuses the chunk and returns
///   `false`, the write callback pauses the transfer (libcurl keeps that chunk and offers it again
///   after resuming), and the reader calls `resume` once it has drained the buffer to half.
/// - `.suspendTask` (URLSession on Darwin): `offer` calls `pause` (which suspends the task) once the buffer is
///   full, and the reader calls `resume` once it has drained it to half: a slow reader slows the
///   transfer.
/// - `.spillToDisk` (FoundationNetworking): further chunks go to an unlinked temporary file and are
///   read back in order. FoundationNetworking can neither pause a receiving task (its `suspend()`
///   takes the transfer off libcurl, which starts it over on `resume()`) nor let a delegate wait
///   (every URLSession in the process shares one serial queue), so memory stays bounded but the
///   server is not held back: the disk holds what the reader has not taken yet, up to
///   `maximumSpill` bytes, past which the transfer fails with `.responseBodyFailed`.
package final class ResponseBuffer: @unchecked Sendable {
    /// How a reader that falls behind holds the transfer back (see the type's description).
    package enum Backpressure: Sendable {
        /// Refuse the chunk that finds the buffer full; the caller pauses and offers it again.
        case refuseWhenFull
        /// Take the chunk, then call `pause` once the buffer is full.
        case suspendTask
        /// Take every chunk, spilling past the buffer to an unlinked temporary file.
        case spillToDisk
    }

    /// The most bytes read back from the spill file per chunk.
    package static let spillChunkSize = 256 * 1024

    private let lock = NSLock()
    private let highWater: Int
    private let backpressure: Backpressure
    private let request: HTTPRequest
    /// The most bytes the spill file may hold before the transfer fails.
    private let maximumSpill: Int64
    // Guarded by `lock`.
    private var chunks: [Data] = []
    private var firstChunk = 0
    private var buffered = 0
    private var spill: Int32 = -1
    private var spillWritten: Int64 = 0
    private var spillRead: Int64 = 0
    private var spillFailure: String?
    private var spillWriting = false
    private var ending: TransportError?? = .none
    private var waiter: CheckedContinuation<Data?, any Error>?
    private var paused = false
    private var pause: (@Sendable () -> Void)?
    private var resume: (@Sendable () -> Void)?
    private var abandonTransfer: (@Sendable () -> Void)?
    private var failTransfer: (@Sendable (String) -> Void)?

    /// - Parameters:
    ///   - highWater: about how many bytes may wait in memory (at least 16 KiB).
    ///   - request: the request, named by the errors the reader gets.
    ///   - maximumSpill: with `.spillToDisk`, the most bytes the file may hold.
    package init(highWater: Int, backpressure: Backpressure, request: HTTPRequest, maximumSpill: Int64 = 1 << 30) {
        self.maximumSpill = maximumSpill
        self.highWater = max(16 * 1024, highWater)
        self.backpressure = backpressure
        self.request = request
    }

    deinit {
        if spill >= 0 { _ = close(spill) }
    }

    /// Connects the buffer to its transfer: how to pause (`.suspendTask`) and resume delivery, how
    /// to cancel the transfer when the reader gives up, and how to fail it when spilling fails.
    package func attach(pause: @escaping @Sendable () -> Void = {}, resume: @escaping @Sendable () -> Void,
                        abandon: @escaping @Sendable () -> Void, fail: @escaping @Sendable (String) -> Void = { _ in }) {
        lock.lock()
        self.pause = pause
        self.resume = resume
        abandonTransfer = abandon
        failTransfer = fail
        lock.unlock()
    }

    // MARK: Library side

    /// Takes a chunk of the body; `false` only with `.refuseWhenFull`, for "full: pause the
    /// transfer and offer this chunk again after `resume`". A chunk that arrives after the end (or
    /// after the reader gave up) is dropped.
    @discardableResult
    package func offer(_ data: Data) -> Bool {
        lock.lock()
        guard case .none = ending else {
            lock.unlock()
            return true
        }
        // A waiting reader has taken everything before this chunk, so it may have this one directly.
        if let waiter, firstChunk == chunks.count, spillWritten == spillRead {
            self.waiter = nil
            lock.unlock()
            waiter.resume(returning: data)
            return true
        }
        switch backpressure {
        case .refuseWhenFull:
            guard buffered < highWater else {
                paused = true
                lock.unlock()
                return false
            }
            chunks.append(data)
            buffered += data.count
            lock.unlock()
        case .suspendTask:
            chunks.append(data)
            buffered += data.count
            var pauseNow: (@Sendable () -> Void)?
            if buffered >= highWater, !paused {
                paused = true
                pauseNow = pause
            }
            lock.unlock()
            pauseNow?()
        case .spillToDisk:
            // Once spilling has begun, every chunk goes to the file until the reader has caught up,
            // so the order holds.
            guard spillWritten > spillRead || buffered >= highWater else {
                chunks.append(data)
                buffered += data.count
                lock.unlock()
                return true
            }
            let failure = spill(data)  // unlocks
            if let failure {
                lock.lock()
                let fail = failTransfer
                lock.unlock()
                fail?(failure)
            }
        }
        return true
    }

    /// Ends the body: `nil` for a complete body, or the error that cut it short. What is buffered
    /// is still read before the ending is reported.
    package func finish(_ error: TransportError?) {
        lock.lock()
        guard case .none = ending else {
            lock.unlock()
            return
        }
        ending = .some(error)
        pause = nil
        resume = nil
        abandonTransfer = nil
        failTransfer = nil
        let waiting = waiter
        waiter = nil
        lock.unlock()
        if let waiting {
            if let error { waiting.resume(throwing: error) } else { waiting.resume(returning: nil) }
        }
    }

    // MARK: Reader

    /// The next chunk, `nil` at the end of the body. Cancelling the reading task cancels the transfer.
    package func next() async throws -> Data? {
        // A cancelled reader stops at once, even with chunks waiting: on FoundationNetworking one
        // far behind can have a gigabyte spilled, and the transfer keeps arriving until the
        // session acts on the cancel, so draining first could end in the spill limit instead.
        if Task.isCancelled {
            abandon()
            throw TransportError(.cancelled, method: request.method, url: request.url, message: "the reading task was cancelled")
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                lock.lock()
                if let chunk = takeLocked() {
                    var resumeNow: (@Sendable () -> Void)?
                    if paused, buffered <= highWater / 2 {
                        paused = false
                        resumeNow = resume
                    }
                    lock.unlock()
                    resumeNow?()
                    continuation.resume(with: chunk)
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
    package func abandon() {
        lock.lock()
        let cancel = abandonTransfer
        lock.unlock()
        cancel?()
    }

    /// Bytes waiting in memory for the reader; tests check that it stays bounded.
    package var bufferedBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return buffered
    }

    /// Bytes waiting in the spill file for the reader.
    package var spilledBytes: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return spillWritten - spillRead
    }

    /// Bytes the buffer's storage still references, taken or not. Equal to the buffered bytes,
    /// since a taken chunk's slot is emptied at once; tests check that it stays bounded.
    package var heldBytes: Int {
        lock.lock()
        defer { lock.unlock() }
        return chunks.reduce(0) { $0 + $1.count }
    }

    // MARK: Storage

    /// The next chunk from memory, then from the spill file; `nil` when nothing is waiting.
    private func takeLocked() -> Result<Data?, any Error>? {
        if firstChunk < chunks.count { return .success(popLocked()) }
        guard spillWritten > spillRead else { return nil }
        let count = Int(min(Int64(Self.spillChunkSize), spillWritten - spillRead))
        var chunk = Data(count: count)
        let got = chunk.withUnsafeMutableBytes { pread(spill, $0.baseAddress, count, off_t(spillRead)) }
        guard got == count else {
            let reason = String(cString: strerror(errno))
            return .failure(TransportError(.other, method: request.method, url: request.url,
                                           message: "cannot read back the spilled response body: \(reason)"))
        }
        spillRead += Int64(count)
        if spillRead == spillWritten, !spillWriting {
            // Caught up: start the file over, so it only ever holds what the reader is behind by.
            _ = ftruncate(spill, 0)
            spillRead = 0
            spillWritten = 0
        }
        return .success(chunk)
    }

    /// Appends to the spill file, creating it on first use; the failure's text, or `nil`. Called
    /// with the lock held, and returns with it released: the write itself runs unlocked, so the
    /// reader is not held up by the disk (only the delegate queue ever writes).
    private func spill(_ data: Data) -> String? {
        if spillFailure == nil, spill < 0 {
            let path = FileManager.default.temporaryDirectory
                .appendingPathComponent("urlsession-transport-\(UUID().uuidString).spill").path
            spill = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if spill >= 0 {
                _ = unlink(path)
            } else {
                spillFailure = "cannot create a spill file for the response body: \(String(cString: strerror(errno)))"
            }
        }
        if spillFailure == nil, spillWritten - spillRead + Int64(data.count) > maximumSpill {
            spillFailure = "the reader of the streamed response fell more than \(maximumSpill) bytes behind"
        }
        if let spillFailure {
            lock.unlock()
            return spillFailure
        }
        let descriptor = spill
        let offset = spillWritten
        spillWriting = true
        lock.unlock()
        let written = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, data.count, off_t(offset)) }
        let reason = written == data.count ? nil : String(cString: strerror(errno))
        lock.lock()
        spillWriting = false
        if let reason {
            spillFailure = "cannot spill the response body: \(reason)"
        } else {
            spillWritten += Int64(data.count)
        }
        let failure = spillFailure
        // A reader that found nothing while the write was under way waits: hand it the next chunk
        // now, in order (a later chunk must not overtake the spilled ones).
        var handOff: (CheckedContinuation<Data?, any Error>, Result<Data?, any Error>)?
        if failure == nil, let waiting = waiter, let chunk = takeLocked() {
            waiter = nil
            handOff = (waiting, chunk)
        }
        lock.unlock()
        if let handOff { handOff.0.resume(with: handOff.1) }
        return failure
    }

    private func popLocked() -> Data {
        let chunk = chunks[firstChunk]
        // Empty the slot now. Kept until the queue next ran dry, taken chunks stayed referenced for as
        // long as the library refilled the queue before the reader emptied it: up to a whole body.
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
/// goes away and cancels the transfer (a finished transfer ignores it). It also keeps `owner` (the
/// transport's engine, say) alive for as long as the stream can be read.
package final class ResponseStreamToken: Sendable {
    /// The buffer the stream reads.
    package let buffer: ResponseBuffer
    private let owner: (any AnyObject & Sendable)?

    /// A token for `buffer`, keeping `owner` alive.
    package init(buffer: ResponseBuffer, keeping owner: (any AnyObject & Sendable)? = nil) {
        self.buffer = buffer
        self.owner = owner
    }

    deinit { buffer.abandon() }
}
