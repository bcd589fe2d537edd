import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An `HTTPTransport` with no sockets: each request is handed to a ``LoopbackHTTPServer/Handler``
/// in process, run on a thread of its own as on a server connection (it may block, read the body
/// slowly, stall, or cut the answer off).
///
/// The station emulator's `InProcessTransport` is this transport with the emulator's handler; the
/// conformance suite runs it against each case's own server (``loopbackServers``), so the code a
/// client's in-process tests go through is the code the suite checks.
///
/// What a socket transport would do, it does here: the request is validated (`.invalidRequest`),
/// `Host` and `Content-Length` are added (a body of unknown length is marked chunked), a request
/// body is read by the handler as it goes and held to its declared length (`.requestBodyFailed`),
/// the handler's answer is delivered in memory (`.responseTooLarge` past the limit), to a file (mode
/// 0600, removed when the transfer fails) or as a stream that holds the handler back while its
/// reader is behind; a handler that closes mid-body fails the transfer with `.connectionLost`;
/// cancellation and the request's time limits end the exchange (the handler sees the client close);
/// the answer's body reaches the reader in pieces of at most 64 KiB however the handler wrote it (as
/// a socket splits a large write into segments), so progress is reported as bytes move, in steps,
/// and a reader that is behind holds the handler's write back between pieces. Upload progress
/// moves as the handler reads the request body, before its answer, in the steps it reads. There are no connections and no defaults for time limits.
///
/// TLS is simulated from the ``SimulatedCertificate`` the server presents (that given to
/// ``init(handler:certificate:)``, or a loopback server's ``LoopbackHTTPServer/simulatedCertificate``):
/// before anything reaches the handler, an `https` request pinned (`TransferOptions.pinnedPublicKeys`)
/// to a set holding the certificate's key is delivered, one pinned to a set without it fails with
/// `.pinMismatch`, an unpinned one is delivered only when a trusted authority signed the certificate
/// (else `.tlsFailure`, self-signed), and any `https` request to a server presenting no certificate
/// fails with `.tlsFailure` (it speaks no TLS); ``presentedPublicKey(at:)`` answers the certificate's
/// key. A refused request never reaches the handler and is not counted. Plain `http` is delivered
/// as it is (a pinned `http` request is refused with `.invalidRequest`). No handshake bytes exist:
/// only fingerprints are compared.
package struct InProcessHTTPTransport: HTTPTransport {
    private enum Target: Sendable {
        case handler(LoopbackHTTPServer.Handler, certificate: @Sendable () -> SimulatedCertificate?)
        case loopbackServers
    }

    /// The server a request reaches: the certificate it presents, and its handler (taken only once
    /// the handshake passed, so a refused request is not counted).
    private struct Peer {
        let certificate: SimulatedCertificate?
        let accept: () throws -> LoopbackHTTPServer.Handler
    }

    private let target: Target

    /// How many response body bytes wait for a streamed body's reader before the handler's writes wait.
    private static let responseBufferSize = 1024 * 1024
    /// How many request body bytes may be read ahead of the handler.
    private static let requestBufferSize = 256 * 1024

    /// Hands every request to `handler`, whatever its URL's host and port; `https` requests are
    /// judged by the certificate `certificate` answers at the time (`nil`, the default: the server
    /// speaks no TLS, so they fail with `.tlsFailure`).
    package init(handler: @escaping LoopbackHTTPServer.Handler,
                 certificate: @escaping @Sendable () -> SimulatedCertificate? = { nil }) {
        target = .handler(handler, certificate: certificate)
    }

    private init(target: Target) {
        self.target = target
    }

    /// Hands a request for `http://127.0.0.1:<port>/…` (or `localhost`) to the handler of the
    /// ``LoopbackHTTPServer`` of this process listening on that port, counted in its statistics:
    /// `.cannotConnect` when none is, `.dnsFailure` for any other host.
    static let loopbackServers = InProcessHTTPTransport(target: .loopbackServers)

    /// The key of the certificate the server at `url` presents (``SimulatedCertificate/publicKey``),
    /// trusted or not; nothing is delivered to its handler.
    ///
    /// - Throws: `TransportError` for a `GET` of `url`: `.invalidRequest` unless `url` is `https`
    ///   with a host, `.cancelled` when the task is cancelled, `.dnsFailure` / `.cannotConnect` as
    ///   ``send(_:body:options:)`` for ``loopbackServers``, `.tlsFailure` when the server presents
    ///   no certificate.
    package func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw TransportError(.invalidRequest, method: .get, url: url, message: "the URL must be https with a host")
        }
        guard !Task.isCancelled else { throw TransportError(.cancelled, method: .get, url: url, message: "cancelled") }
        guard let certificate = try peer(for: url, method: .get).certificate else {
            throw TransportError(.tlsFailure, method: .get, url: url, message: "the server at \(host) speaks no TLS")
        }
        return certificate.publicKey
    }

    /// Hands `request` to the handler; see the type's description.
    package func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        func failure(_ kind: TransportError.Kind, _ message: String) -> TransportError {
            TransportError(kind, method: request.method, url: request.url, message: message)
        }
        try request.validate()
        if !options.pinnedPublicKeys.isEmpty, request.url.scheme?.lowercased() != "https" {
            throw failure(.invalidRequest, "public-key pins need an https URL")
        }
        guard !Task.isCancelled else { throw failure(.cancelled, "cancelled before sending") }
        let peer = try peer(for: request.url, method: request.method)
        try SimulatedCertificate.handshake(peer.certificate, url: request.url, method: request.method,
                                           pins: options.pinnedPublicKeys)
        let stream = try Self.bodyStream(body, for: request)
        let sink = try ResponseSink.make(options.response, for: request, bufferSize: Self.responseBufferSize,
                                         backpressure: .refuseWhenFull)
        let buffer: ResponseBuffer
        if case .stream(let streamBuffer) = sink {
            buffer = streamBuffer
        } else {
            buffer = ResponseBuffer(highWater: Self.responseBufferSize, backpressure: .refuseWhenFull, request: request)
        }
        let pipe = RequestBodyPipe(declaredLength: stream.length, highWater: Self.requestBufferSize)
        // The request body is reported as the handler reads it, before any answer, as a socket
        // transport reports it as it goes out.
        let progress = Progress(body: pipe, expectedToSend: stream.length, report: options.progress)
        let bodyRead: (@Sendable () -> Void)? = options.progress == nil ? nil : { @Sendable in progress.report(received: 0) }
        let exchange = InProcessExchange(request: request, body: pipe, buffer: buffer, bodyRead: bodyRead)
        let head: InProcessExchange.Head
        do {
            let handler = try peer.accept()
            let target = Self.target(of: request.url)
            let fields = Self.fields(of: request, bodyLength: stream.length)
            // The size the head would have on the wire: request line, fields, empty line.
            let headBytes = fields.reduce("\(request.method.rawValue) \(target) HTTP/1.1\r\n".utf8.count + 2) {
                $0 + $1.name.utf8.count + 2 + $1.value.utf8.count + 2
            }
            let serverRequest = try HTTPServerRequest(method: request.method.rawValue, target: target, headers: fields,
                                                      headBytes: headBytes, source: .inProcess(exchange))
            pipe.start(stream)
            HandlerThread(handler: handler, request: serverRequest, exchange: exchange).start()
            Self.watch(exchange, timeouts: options.timeouts)
            head = try await withTaskCancellationHandler {
                try await exchange.awaitHead()
            } onCancel: {
                exchange.fail(exchange.error(.cancelled, "cancelled"))
            }
            if let refusal = ContentEncoding.refusal(of: HTTPHeaders(head.fields), method: request.method, url: request.url) {
                exchange.fail(refusal)
                throw refusal
            }
        } catch {
            if case .file(let url, let descriptor) = sink {
                _ = close(descriptor)
                _ = unlink(url.path)
            }
            // The head itself could not be framed (a Transfer-Encoding other than chunked, a
            // Content-Length that is not a number): no server would take it.
            guard error is TransportError else { throw failure(.invalidRequest, "the request head cannot be sent: \(error)") }
            throw error
        }
        progress.expect(toReceive: head.length)
        progress.report(received: 0)
        let headers = HTTPHeaders(head.fields)
        switch sink {
        case .stream:
            let token = ResponseStreamToken(buffer: buffer, keeping: exchange)
            let received = Locked<Int64>(0)
            let body = HTTPBodyStream(length: head.length) {
                guard let chunk = try await token.buffer.next() else { return nil }
                progress.report(received: received.withLock { $0 += Int64(chunk.count); return $0 })
                return chunk
            }
            return HTTPResponse(status: head.status, headers: headers, body: .stream(body))
        case .memory(let limit):
            if let length = head.length, length > Int64(limit) {
                let tooLarge = exchange.error(.responseTooLarge(limit: limit), "the response body exceeds \(limit) bytes")
                exchange.fail(tooLarge)
                throw tooLarge
            }
            var data = Data()
            try await Self.drain(exchange) { chunk in
                guard data.count + chunk.count <= limit else {
                    throw exchange.error(.responseTooLarge(limit: limit), "the response body exceeds \(limit) bytes")
                }
                data.append(chunk)
                progress.report(received: Int64(data.count))
            }
            return HTTPResponse(status: head.status, headers: headers, body: .data(data))
        case .file(let url, let descriptor):
            defer { _ = close(descriptor) }
            var written: Int64 = 0
            do {
                try await Self.drain(exchange) { chunk in
                    if let reason = ResponseSink.writeAll(chunk, to: descriptor) {
                        throw exchange.error(.responseBodyFailed, "cannot write \(url.path): \(reason)")
                    }
                    written += Int64(chunk.count)
                    progress.report(received: written)
                }
            } catch {
                _ = unlink(url.path)
                throw error
            }
            return HTTPResponse(status: head.status, headers: headers, body: .file(url, byteCount: written))
        }
    }

    /// The server a request for `url` reaches.
    private func peer(for url: URL, method: HTTPMethod) throws -> Peer {
        switch target {
        case .handler(let handler, let certificate):
            return Peer(certificate: certificate(), accept: { handler })
        case .loopbackServers:
            let host = url.host?.lowercased() ?? ""
            guard host == "127.0.0.1" || host == "localhost" else {
                throw TransportError(.dnsFailure, method: method, url: url, message: "in process only 127.0.0.1 resolves, not \(host)")
            }
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            let refused = TransportError(.cannotConnect, method: method, url: url,
                                         message: "no loopback server of this process listens on port \(port)")
            guard let server = LoopbackHTTPServer.running(onPort: UInt16(clamping: port)) else { throw refused }
            return Peer(certificate: server.simulatedCertificate) {
                guard let handler = server.acceptInProcess() else { throw refused }
                return handler
            }
        }
    }

    /// Reads the whole answer, handing each chunk to `take`; a chunk it refuses (throws) fails the
    /// exchange with that error. Cancelling the task fails it with `.cancelled`.
    private static func drain(_ exchange: InProcessExchange, _ take: (Data) throws -> Void) async throws {
        try await withTaskCancellationHandler {
            while let chunk = try await exchange.buffer.next() {
                do {
                    try take(chunk)
                } catch let error as TransportError {
                    exchange.fail(error)
                    throw error
                }
            }
        } onCancel: {
            exchange.fail(exchange.error(.cancelled, "cancelled"))
        }
    }

    /// The request body as a stream; a file must be a regular file, and is held to the size it had
    /// when the transfer started.
    private static func bodyStream(_ body: HTTPRequestBody, for request: HTTPRequest) throws -> HTTPBodyStream {
        switch body {
        case .none: return HTTPBodyStream(Data())
        case .bytes(let data): return HTTPBodyStream(data)
        case .stream(let stream): return stream
        case .file(let url):
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
            guard attributes?[.type] as? FileAttributeType == .typeRegular,
                  let size = (attributes?[.size] as? NSNumber)?.int64Value,
                  let handle = FileHandle(forReadingAtPath: url.path) else {
                throw TransportError(.requestBodyFailed, method: request.method, url: request.url,
                                     message: "\(url.path) is not a readable regular file")
            }
            return HTTPBodyStream(length: size) {
                guard let piece = try handle.read(upToCount: 256 * 1024), !piece.isEmpty else {
                    try? handle.close()
                    return nil
                }
                return piece
            }
        }
    }

    /// The request target: the URL's path (`/` when empty) and query, percent-encoded as sent.
    private static func target(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// The header fields as a client sends them: the caller's, in order, with `Host` first when
    /// missing and the body's framing (`Content-Length`, or chunked when its length is unknown;
    /// none for an empty body of a method that takes none).
    private static func fields(of request: HTTPRequest, bodyLength: Int64?) -> [(name: String, value: String)] {
        var fields = request.headers.fields.map { (name: $0.name, value: $0.value) }
        if !request.headers.contains("host"), let host = request.url.host {
            fields.insert((name: "Host", value: request.url.port.map { "\(host):\($0)" } ?? host), at: 0)
        }
        guard !request.headers.contains("content-length"), !request.headers.contains("transfer-encoding") else { return fields }
        if let bodyLength {
            if bodyLength > 0 || [HTTPMethod.post, .put, .patch].contains(request.method) {
                fields.append((name: "Content-Length", value: String(bodyLength)))
            }
        } else {
            fields.append((name: "Transfer-Encoding", value: "chunked"))
        }
        return fields
    }

    /// Ends `exchange` with `.timedOut` when it idles or lasts longer than `timeouts` allow. The
    /// watch runs on a thread of its own: a busy task pool must not delay a time limit.
    private static func watch(_ exchange: InProcessExchange, timeouts: TransferTimeouts?) {
        guard let timeouts, timeouts.idle != nil || timeouts.total != nil else { return }
        let started = Date()
        let thread = Thread {
            while !exchange.isOver {
                Thread.sleep(forTimeInterval: 0.02)
                if let total = timeouts.total, Date().timeIntervalSince(started) > total {
                    exchange.fail(exchange.error(.timedOut, "the transfer took longer than \(total) s"))
                } else if let idle = timeouts.idle, let quiet = exchange.idleSeconds, quiet > idle {
                    exchange.fail(exchange.error(.timedOut, "nothing moved for \(idle) s"))
                }
            }
        }
        thread.name = "InProcessHTTPTransport.timeouts"
        thread.start()
    }

    /// Reports progress, never backwards and in order (the handler's thread reports the request
    /// body as it reads it, the transport the response as it is delivered): the request body as
    /// the handler has read it, the response as it is delivered.
    private final class Progress: Sendable {
        let body: RequestBodyPipe
        let expectedToSend: Int64?
        let reporter: (@Sendable (TransferProgress) -> Void)?
        /// The response's declared length, once its head is in; the last figures reported.
        private let state = Locked((expectedToReceive: Int64?.none, sent: Int64(0), received: Int64(0)))

        init(body: RequestBodyPipe, expectedToSend: Int64?, report: (@Sendable (TransferProgress) -> Void)?) {
            self.body = body
            self.expectedToSend = expectedToSend
            reporter = report
        }

        func expect(toReceive length: Int64?) {
            state.withLock { $0.expectedToReceive = length }
        }

        func report(received: Int64) {
            guard let reporter else { return }
            let sent = body.bytesConsumed
            // Under the lock, so two threads' figures reach the handler in the order they were taken.
            state.withLock { state in
                state.sent = max(state.sent, sent)
                state.received = max(state.received, received)
                reporter(TransferProgress(bytesSent: state.sent, expectedBytesToSend: expectedToSend, bytesReceived: state.received,
                                          expectedBytesToReceive: state.expectedToReceive))
            }
        }
    }
}

/// Runs a handler on a thread of its own, as a server connection does, and tells the exchange
/// how it ended.
private final class HandlerThread: @unchecked Sendable {
    private let handler: LoopbackHTTPServer.Handler
    private let request: HTTPServerRequest
    private let exchange: InProcessExchange

    init(handler: @escaping LoopbackHTTPServer.Handler, request: HTTPServerRequest, exchange: InProcessExchange) {
        self.handler = handler
        self.request = request
        self.exchange = exchange
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "InProcessHTTPTransport.handler"
        thread.start()
    }

    private func run() {
        let response = HTTPServerResponse(output: .inProcess(exchange), isHeadRequest: request.method == "HEAD")
        var thrown: (any Error)?
        do {
            try handler(request, response)
        } catch {
            thrown = error
        }
        exchange.handlerEnded(headSent: response.headSent, bodyComplete: response.bodyComplete, error: thrown)
    }
}
