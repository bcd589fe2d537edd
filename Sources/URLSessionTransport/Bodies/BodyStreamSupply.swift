import Foundation
import Transport

/// Answers URLSession's `needNewBodyStream` requests for one transfer: once to start a streamed
/// body, and again each time URLSession resends the request after a recoverable error (a pooled
/// connection the server had closed, an authentication challenge). A file (or a body spooled to
/// one), an in-memory body and a restartable stream (a multipart form: every publish) start
/// again from their first byte; only a one-shot stream cannot, and refuses with a typed error.
///
/// Platform-neutral: FoundationNetworking asks again when libcurl rewinds an upload, Darwin's
/// URLSession when it retries a request on a new connection.
final class BodyStreamSupply: Sendable {
    /// Where the body comes from.
    enum Origin: Sendable {
        /// An in-memory body.
        case memory(Data)
        /// A file, read again from its start for every request (the template itself is never read).
        case file(FileBodySource)
        /// A stream body (Apple platforms), read through `pipe` the first time; when the stream is
        /// restartable, each later request reads ``HTTPBodyStream/restarted()`` through a fresh pipe.
        case stream(StreamBodyPipe, HTTPBodyStream)
    }

    /// The answer to one request.
    enum Answer {
        /// A source that reads the body from its first byte; the supply closes it when the next
        /// request comes or the transfer ends.
        case source(any BlockingBodySource)
        /// The whole body in memory.
        case data(Data)
        /// The body cannot be sent again; the transfer fails with this.
        case refused(TransportError.Kind, String)
    }

    private struct State {
        var requests = 0
        var current: (any BlockingBodySource)?
        var stopCurrent: (@Sendable () -> Void)?
        var closed = false
    }

    let origin: Origin
    private let state = Locked(State())

    init(_ origin: Origin) { self.origin = origin }

    /// The body's length, when known before sending.
    var length: Int64? {
        switch origin {
        case .memory(let data): Int64(data.count)
        case .file(let file): file.size
        case .stream(_, let stream): stream.length
        }
    }

    /// How many times a body stream was asked for.
    var requests: Int { state.withLock { $0.requests } }

    /// The body from its first byte, for the `requests`-th time. The source handed out before (and
    /// the pump copying it, if any) is closed first: URLSession has dropped the stream it read.
    func next() -> Answer {
        let (previous, stop, request, closed) = state.withLock { state in
            defer {
                state.requests += 1
                state.current = nil
                state.stopCurrent = nil
            }
            return (state.current, state.stopCurrent, state.requests + 1, state.closed)
        }
        stop?()
        previous?.close()
        if closed { return .refused(.requestBodyFailed, "the transfer is over") }
        let answer: Answer
        switch origin {
        case .memory(let data):
            answer = .data(data)
        case .file(let template):
            guard let fresh = template.restarted() else {
                return .refused(.requestBodyFailed, "cannot open the request body again to resend it")
            }
            answer = .source(fresh)
        case .stream(let first, let stream):
            if request == 1 {
                answer = .source(first)
            } else {
                guard let again = stream.restarted() else { return Self.oneShotRefusal }
                let pipe = first.fresh()
                pipe.start(again)
                answer = .source(pipe)
            }
        }
        if case .source(let source) = answer {
            let lateClose = state.withLock { state -> Bool in
                guard !state.closed else { return true }
                state.current = source
                return false
            }
            if lateClose {
                source.close()
                return .refused(.requestBodyFailed, "the transfer is over")
            }
        }
        return answer
    }

    /// Registers what stops the copy of the current source (Darwin's bound-stream pump); run at
    /// the next request or at `close()`, or at once when the supply is already closed.
    func onStopCurrent(_ stop: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            guard !state.closed else { return true }
            state.stopCurrent = stop
            return false
        }
        if already { stop() }
    }

    /// The transfer is over (finished, failed or cancelled): stops the current copy and closes every
    /// source, so no thread stays blocked on the body.
    func close() {
        let (current, stop) = state.withLock { state in
            defer {
                state.closed = true
                state.current = nil
                state.stopCurrent = nil
            }
            return (state.current, state.stopCurrent)
        }
        stop?()
        current?.close()
        switch origin {
        case .memory: break
        case .file(let template): template.close()
        case .stream(let first, _): first.close()
        }
    }

    private static let oneShotRefusal = Answer.refused(
        .requestBodyFailed,
        "URLSession asked for the body again to resend the request, and this stream body can be sent once; "
            + "send a file body (HTTPRequestBody.file) or a restartable stream (HTTPBodyStream(length:restartable:)) to have it resent")
}
