import Foundation
import Transport

/// One request handed to a ``LoopbackHTTPServer/Handler`` in process (see ``InProcessHTTPTransport``):
/// what stands in for the connection. The request body comes from a ``RequestBodyPipe``, the
/// response head goes to the waiting `send`, body bytes go to a ``ResponseBuffer`` in pieces of at
/// most 64 KiB (a write it refuses as full waits until the reader has drained it to half), and the "client closing the connection" is the
/// transport giving up: cancelled, timed out, over a limit, or its stream dropped.
///
/// The handler runs on a thread of its own and may block, as on a server connection.
final class InProcessExchange: @unchecked Sendable {
    /// A response head as the handler wrote it.
    struct Head {
        var status: Int
        var fields: [(String, String)]
        /// The declared body length; `nil` when the body runs until the handler ends.
        var length: Int64?
    }

    let request: HTTPRequest
    let body: RequestBodyPipe
    let buffer: ResponseBuffer
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var head: Result<Head, TransportError>?
    private var headWaiter: CheckedContinuation<Head, any Error>?
    private var failure: TransportError?
    private var clientClosed = false
    private var writerPaused = false
    /// How many times the reader has drained a full buffer: a refused write waits for the next one.
    private var resumes = 0
    private var finished = false
    private var written: Int64 = 0
    private var lastActivity = Date()

    /// An exchange of `request`, its body coming through `body`, the answer going to `buffer`
    /// (which must refuse chunks when full: `.refuseWhenFull`).
    /// Told each time the handler has read request body bytes (the transport's upload progress).
    private let bodyRead: (@Sendable () -> Void)?

    init(request: HTTPRequest, body: RequestBodyPipe, buffer: ResponseBuffer, bodyRead: (@Sendable () -> Void)? = nil) {
        self.request = request
        self.body = body
        self.buffer = buffer
        self.bodyRead = bodyRead
        buffer.attach(resume: { [weak self] in self?.resumeWriter() }, abandon: { [weak self] in self?.abandon() })
    }

    /// A `TransportError` of `kind` naming the request.
    func error(_ kind: TransportError.Kind, _ message: String, underlying: (any Error)? = nil) -> TransportError {
        TransportError(kind, method: request.method, url: request.url, message: message, underlying: underlying)
    }

    // MARK: Transport side

    /// Waits for the handler's head; throws the exchange's failure.
    func awaitHead() async throws -> Head {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Head, any Error>) in
            condition.lock()
            if let head {
                condition.unlock()
                continuation.resume(with: head.mapError { $0 })
                return
            }
            headWaiter = continuation
            condition.unlock()
        }
    }

    /// Ends the exchange with `error` unless it has already ended: the head waiter, the reader and
    /// the handler (its reads and writes throw, ``waitForClientToClose(timeout:)`` returns) all
    /// learn of it. The first failure wins.
    func fail(_ error: TransportError) {
        condition.lock()
        guard failure == nil, !finished else {
            condition.unlock()
            return
        }
        failure = error
        clientClosed = true
        condition.broadcast()
        let waiter = takeHeadWaiterLocked(.failure(error))
        condition.unlock()
        waiter?()
        buffer.finish(error)
        body.close()
    }

    /// The reader gave up (its task was cancelled, or it dropped the stream): the exchange ends
    /// with `.cancelled` and the handler sees the client close.
    private func abandon() {
        fail(error(.cancelled, "the reader of the response gave up"))
    }

    /// Seconds since the handler last moved bytes or wrote a head; `nil` while its writes wait
    /// for the reader (a reader that is behind is not an idle server).
    var idleSeconds: TimeInterval? {
        condition.lock()
        defer { condition.unlock() }
        return writerPaused ? nil : Date().timeIntervalSince(lastActivity)
    }

    /// Whether the exchange has ended (the handler finished or it failed).
    var isOver: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finished || failure != nil
    }

    // MARK: Handler side

    /// Records that the handler moved request body bytes.
    func noteActivity() {
        condition.lock()
        lastActivity = Date()
        condition.unlock()
    }

    /// Records that the handler read request body bytes: activity, and upload progress.
    func noteBodyRead() {
        noteActivity()
        bodyRead?()
    }

    /// Hands the head to the waiting transport.
    func deliverHead(_ delivered: Head) throws {
        condition.lock()
        guard !clientClosed else {
            condition.unlock()
            throw ServerSocketError.closedEarly
        }
        lastActivity = Date()
        let waiter = takeHeadWaiterLocked(.success(delivered))
        condition.unlock()
        waiter?()
    }

    /// The most body bytes handed to the reader at once: a larger write reaches it in pieces of
    /// this size, as a socket delivers a large write in segments, so progress is reported in
    /// steps and the buffer holds the writer back between pieces.
    static let maximumChunkSize = 64 * 1024

    /// Hands body bytes to the reader in pieces of at most ``maximumChunkSize``, waiting while it
    /// is behind; throws once the client has gone.
    func writeBody(_ bytes: UnsafeRawBufferPointer, declaredLength: Int64?) throws {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Self.maximumChunkSize)
            try writeChunk(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), declaredLength: declaredLength)
            start = end
        }
    }

    /// Hands one piece of the body to the reader, waiting while it is behind.
    private func writeChunk(_ bytes: UnsafeRawBufferPointer, declaredLength: Int64?) throws {
        guard !bytes.isEmpty else { return }
        condition.lock()
        guard !clientClosed else {
            condition.unlock()
            throw ServerSocketError.closedEarly
        }
        written += Int64(bytes.count)
        lastActivity = Date()
        let overrun = declaredLength.map { written > $0 } ?? false
        condition.unlock()
        if overrun {
            fail(error(.protocolError, "the handler wrote more body than its Content-Length"))
            throw ServerSocketError.closedEarly
        }
        let data = Data(bytes)
        while true {
            condition.lock()
            let seen = resumes
            condition.unlock()
            // Refused: the buffer is full. The resume that drains it counts up `resumes`, even
            // one that comes before this thread waits.
            if buffer.offer(data) { return }
            condition.lock()
            writerPaused = true
            while resumes == seen, !clientClosed { condition.wait() }
            writerPaused = false
            let gone = clientClosed
            condition.unlock()
            if gone { throw ServerSocketError.closedEarly }
        }
    }

    /// Blocks until the transport gives up on the exchange or `timeout` seconds pass; `true` if it did.
    func waitForClientToClose(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !clientClosed {
            guard condition.wait(until: deadline) else { return clientClosed }
        }
        return true
    }

    /// The handler has returned (or thrown, with `error`): a body still short of its declared
    /// length is cut off, as when a server closes the connection.
    func handlerEnded(headSent: Bool, bodyComplete: Bool, error: (any Error)?) {
        if !isOver {
            if !headSent {
                // The server answers 500 for a handler that wrote no head (LoopbackHTTPServer does the same).
                let text = error.map { "\($0)" } ?? "the handler wrote nothing"
                let answer = Head(status: 500, fields: [("Content-Length", "\(text.utf8.count)")], length: Int64(text.utf8.count))
                try? deliverHead(answer)
                Array(text.utf8).withUnsafeBytes { try? writeBody($0, declaredLength: answer.length) }
            } else if !bodyComplete {
                fail(self.error(.connectionLost, "the handler ended the exchange mid-body"))
            }
        }
        endBody()
    }

    /// The server is done (it returned, or closed the connection after a whole body): the body
    /// ends here unless the exchange has failed, and the handler sees the client gone from now on.
    func endBody() {
        condition.lock()
        let over = finished || failure != nil
        finished = true
        clientClosed = true
        condition.broadcast()
        let waiter = takeHeadWaiterLocked(.failure(error(.connectionLost, "the server closed without a response")))
        condition.unlock()
        waiter?()
        if !over { buffer.finish(nil) }
        body.close()
    }

    /// Body bytes the handler has written.
    var bodyBytesWritten: Int64 {
        condition.lock()
        defer { condition.unlock() }
        return written
    }

    // MARK: Private

    private func resumeWriter() {
        condition.lock()
        resumes += 1
        lastActivity = Date()
        condition.broadcast()
        condition.unlock()
    }

    /// Settles the head once; returns the resumption to run after unlocking.
    private func takeHeadWaiterLocked(_ result: Result<Head, TransportError>) -> (() -> Void)? {
        guard head == nil else { return nil }
        head = result
        guard let waiter = headWaiter else { return nil }
        headWaiter = nil
        return { waiter.resume(with: result.mapError { $0 }) }
    }
}
