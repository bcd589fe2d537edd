import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One exchange on a URLSession task: moves body bytes between the delegate callbacks and the
/// caller, applies the total limit, and reports the result exactly once.
///
/// A failure the transport decides on itself (cancellation, total limit, memory limit, a body that
/// broke) is recorded before the task is cancelled, and wins over the `URLError.cancelled` that
/// URLSession then reports.
final class URLSessionTransfer: @unchecked Sendable {
    /// Where the response body goes, opened before the task starts.
    typealias Destination = ResponseSink

    /// Everything decided before the transfer starts.
    struct Setup {
        var request: HTTPRequest
        var destination: Destination
        /// What answers `needNewBodyStream` for a streamed (file or stream) request body.
        var bodyStreams: BodyStreamSupply?
        var bodyLength: Int64?
        var totalTimeout: TimeInterval?
        var pins: [PublicKeyFingerprint]
        var bodyStreamBufferSize: Int
        var progress: (@Sendable (TransferProgress) -> Void)?
    }

    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var task: URLSessionTask?
        var failure: TransportError?
        var head: ResponseHead?
        var finished = false
        var responseFileClosed = false
        var collected = Data()
        var written: Int64 = 0
        var progress = TransferProgress(bytesSent: 0, expectedBytesToSend: nil, bytesReceived: 0,
                                        expectedBytesToReceive: nil)
        var lastReported: TransferProgress?
    }

    let setup: Setup
    private let state: Locked<State>

    init(setup: Setup) {
        self.setup = setup
        var initial = State()
        initial.progress.expectedBytesToSend = setup.bodyLength
        state = Locked(initial)
    }

    private var method: HTTPMethod { setup.request.method }
    private var url: URL { setup.request.url }
    var pins: [PublicKeyFingerprint] { setup.pins }

    // MARK: Running (caller's task)

    /// Starts the task `makeTask` creates and suspends until the response (or, for a streamed
    /// response, its head) is in.
    func run(makeTask: @escaping @Sendable () -> URLSessionTask) async throws -> HTTPResponse {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let failedEarly = state.withLock { state -> TransportError? in
                    guard state.failure == nil else { return state.failure }
                    state.continuation = continuation
                    return nil
                }
                if let failedEarly {
                    finishWithoutTask(failedEarly)
                    continuation.resume(throwing: failedEarly)
                    return
                }
                start(makeTask())
            }
        } onCancel: {
            fail(.cancelled, "the calling task was cancelled")
        }
    }

    private func start(_ task: URLSessionTask) {
        if case .stream(let buffer) = setup.destination {
            buffer.attach(pause: { task.suspend() }, resume: { task.resume() },
                          abandon: { [self] in fail(.cancelled, "the response body stream was dropped before its end") },
                          fail: { [self] reason in fail(.responseBodyFailed, reason) })
        }
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.failure != nil
        }
        // A Dispatch timer rather than a sleeping task: it fires on time even while Swift's
        // cooperative threads are busy. A transfer that has finished by then ignores it.
        if let limit = setup.totalTimeout {
            DispatchQueue.global().asyncAfter(deadline: .now() + min(limit, 1e9)) { [weak self] in
                self?.fail(.timedOut, "the total limit of \(limit) s passed")
            }
        }
        task.resume()
        if cancelNow { task.cancel() }
    }

    /// Fails the transfer for a reason of the transport's own; the first reason wins.
    func fail(_ kind: TransportError.Kind, _ message: String, underlying: (any Error)? = nil) {
        let error = TransportError(kind, method: method, url: url, message: message, underlying: underlying)
        let task = state.withLock { state -> URLSessionTask?? in
            guard !state.finished, state.failure == nil else { return .none }
            state.failure = error
            return .some(state.task)
        }
        guard case .some(let running) = task else { return }
        // Wake a body read blocked on the caller and stop Darwin's pump thread; wake a reader.
        if case .stream(let buffer) = setup.destination { buffer.finish(error) }
        setup.bodyStreams?.close()
        // Not from the caller's thread: a body read fails on FoundationNetworking's session queue,
        // and its `cancel()` waits for that queue.
        if let running { DispatchQueue.global().async { running.cancel() } }
    }

    // MARK: Delegate callbacks

    /// The input stream for a streamed request body, from its first byte: URLSession asks once to
    /// start and again each time it resends the request. A body that cannot be sent again (a
    /// one-shot stream) fails the transfer with `.requestBodyFailed`.
    func makeBodyStream() -> InputStream? {
        guard let supply = setup.bodyStreams else { return nil }
        switch supply.next() {
        case .refused(let kind, let message):
            fail(kind, message)
            return nil
        case .data(let data):
            return InputStream(data: data)
        case .source(let source):
            #if canImport(FoundationNetworking)
            return BodyInputStream(source: source)  // a file (or spooled stream): its bytes never wait
            #else
            guard let started = BoundStreamPump.start(reading: source, bufferSize: setup.bodyStreamBufferSize) else {
                fail(.requestBodyFailed, "cannot make a stream pair for the request body")
                return nil
            }
            let pump = started.pump
            supply.onStopCurrent { pump.stop() }
            return started.input
            #endif
        }
    }

    func didSend(totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        report { progress in
            progress.bytesSent = max(progress.bytesSent, totalBytesSent)
            if totalBytesExpectedToSend > 0 { progress.expectedBytesToSend = totalBytesExpectedToSend }
        }
    }

    func didReceive(_ response: URLResponse) {
        // FoundationNetworking reports an informational (1xx) head as a response of its own, then
        // the final one: skip the former.
        guard let http = response as? HTTPURLResponse, !(100..<200).contains(http.statusCode) else { return }
        let head = ResponseHead(http, method: method)
        if let refusal = ContentEncoding.refusal(of: head.headers, method: method, url: url) {
            fail(refusal.kind, refusal.message)
            return
        }
        let continuation = state.withLock { state -> CheckedContinuation<HTTPResponse, any Error>? in
            guard state.head == nil, state.failure == nil else { return nil }
            state.head = head
            state.progress.expectedBytesToReceive = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
            guard case .stream = setup.destination else { return nil }
            defer { state.continuation = nil }
            return state.continuation
        }
        if let continuation, case .stream(let buffer) = setup.destination {
            continuation.resume(returning: streamedResponse(head, buffer))
        }
    }

    func didReceive(_ data: Data) {
        switch setup.destination {
        case .memory(let limit):
            let fits = state.withLock { state -> Bool in
                guard state.failure == nil, data.count <= limit - state.collected.count else { return false }
                state.collected.append(data)
                return true
            }
            if !fits { fail(.responseTooLarge(limit: limit), "the response body exceeds \(limit) bytes") }
        case .file(let fileURL, let descriptor):
            guard state.withLock({ $0.failure == nil }) else { return }
            if let reason = ResponseSink.writeAll(data, to: descriptor) {
                fail(.responseBodyFailed, "cannot write \(fileURL.path): \(reason)")
                return
            }
            state.withLock { $0.written += Int64(data.count) }
        case .stream(let buffer):
            buffer.offer(data)
        }
        report { $0.bytesReceived += Int64(data.count) }
    }

    func didComplete(with error: (any Error)?) {
        let taken = state.withLock { state -> (CheckedContinuation<HTTPResponse, any Error>?, State)? in
            guard !state.finished else { return nil }
            state.finished = true
            let continuation = state.continuation
            state.continuation = nil
            return (continuation, state)
        }
        guard let (continuation, final) = taken else { return }
        setup.bodyStreams?.close()
        var failure = final.failure ?? error.map { URLErrorMapping.error($0, method: method, url: url, pinned: !setup.pins.isEmpty) }
        var head = final.head
        if failure == nil, head == nil {
            if let http = final.task?.response as? HTTPURLResponse {
                head = ResponseHead(http, method: method)
            } else {
                failure = TransportError(.protocolError, method: method, url: url, message: "the response ended before its headers")
            }
        }
        closeResponseFile(removing: failure != nil)
        if case .stream(let buffer) = setup.destination { buffer.finish(failure) }
        guard let continuation else { return }
        if let failure {
            continuation.resume(throwing: failure)
            return
        }
        guard let head else { return }
        switch setup.destination {
        case .memory:
            continuation.resume(returning: HTTPResponse(status: head.status, headers: head.headers, body: .data(final.collected)))
        case .file(let fileURL, _):
            continuation.resume(returning: HTTPResponse(status: head.status, headers: head.headers,
                                                        body: .file(fileURL, byteCount: final.written)))
        case .stream(let buffer):
            // The head came with the completion (a redirect, or a response URLSession held back).
            continuation.resume(returning: streamedResponse(head, buffer))
        }
    }

    // MARK: Helpers

    /// Cleans up a transfer that never got a task (cancelled before it started).
    private func finishWithoutTask(_ error: TransportError) {
        state.withLock { $0.finished = true }
        setup.bodyStreams?.close()
        closeResponseFile(removing: true)
        if case .stream(let buffer) = setup.destination { buffer.finish(error) }
    }

    private func streamedResponse(_ head: ResponseHead, _ buffer: ResponseBuffer) -> HTTPResponse {
        let token = ResponseStreamToken(buffer: buffer)
        let stream = HTTPBodyStream(length: head.announcedLength) { try await token.buffer.next() }
        return HTTPResponse(status: head.status, headers: head.headers, body: .stream(stream))
    }

    private func report(_ update: (inout TransferProgress) -> Void) {
        guard let handler = setup.progress else { return }
        let changed = state.withLock { state -> TransferProgress? in
            update(&state.progress)
            guard state.progress != state.lastReported else { return nil }
            state.lastReported = state.progress
            return state.progress
        }
        if let changed { handler(changed) }
    }

    private func closeResponseFile(removing: Bool) {
        guard case .file(let fileURL, let descriptor) = setup.destination else { return }
        let first = state.withLock { state -> Bool in
            defer { state.responseFileClosed = true }
            return !state.responseFileClosed
        }
        guard first else { return }
        _ = close(descriptor)
        if removing { _ = unlink(fileURL.path) }
    }
}
