import CCurl
import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// Small plain-HTTP exchanges (bodies and responses in memory) that the transport writes and
/// reads itself over a TCP connection libcurl opened: one request, or a batch of repeatable
/// requests pipelined on one connection (HTTP/1.1 §9.3.2: all requests are written at once and the
/// answers read in order).
///
/// Why: libcurl 7.88 (Debian 12) formats every request header one character at a time, which costs
/// ~75 µs of CPU for the 4.4 KB `x-cipher-signature` header of each signed call. Writing the request
/// directly takes ~2 µs. libcurl still resolves the name and connects (asynchronously, with the
/// connect timeout); the socket is then duplicated and libcurl's handle closed, so libcurl never
/// touches the connection again. Idle connections are kept per origin for reuse.
///
/// Shared state (the continuation, the cancel flag) sits in `pending`; the rest is touched only
/// by the curl thread.
final class DirectExchange: @unchecked Sendable {
    struct Setup {
        var request: HTTPRequest
        /// The whole request: request line, head and body.
        var bytes: [UInt8]
        /// `host:port`, the key of the idle-connection pool.
        var origin: String
        var bodyLimit: Int
        var timeouts: TransferTimeouts
        var connectTimeout: TimeInterval
        var noProxy: String
    }

    enum Stage {
        case waiting
        case connecting
        case sending
        case receiving
        case finished
    }

    /// The requests, all to one origin, answered in this order.
    let setups: [Setup]
    /// The time limits of each request (the batch's options; read every loop of the curl thread).
    private let timeouts: TransferTimeouts
    private let lifetime: CurlEngineLifetime
    private let pending = PendingResult<[Result<HTTPResponse, TransportError>]>()

    // Curl thread only.
    private(set) var stage = Stage.waiting
    private(set) var socket: Int32 = -1
    private(set) var reusedConnection = false
    /// The answers so far; the next one read is for `setups[outcomes.count]`.
    private var outcomes: [Result<HTTPResponse, TransportError>] = []
    /// The unanswered requests' bytes, written from `sent` on the current connection.
    private var outgoing: [UInt8] = []
    private var sent = 0
    /// Answers completed on the current connection (a connection that carried some may be
    /// replaced for the rest; the engine learns the answer interval from them).
    private(set) var answeredOnConnection = 0
    private var reader: HTTP1ResponseReader
    /// When the current request reached the head of the line (its total time limit runs from here).
    private var currentStartedAt = 0.0
    private(set) var lastActivity = 0.0
    var connectJob: DirectConnectJob?
    /// The usual time between answers of a pipeline to this origin (the engine learns it), or `nil`.
    private var answerInterval: Double?
    /// When every request was written on the current connection.
    private(set) var sentAt = 0.0
    /// Until then the answers of a pipeline are left to accumulate unread (see `pump`).
    private(set) var readNotBefore = 0.0

    /// - Precondition: `setups` is not empty and names one origin.
    init(setups: [Setup], lifetime: CurlEngineLifetime) {
        self.setups = setups
        self.lifetime = lifetime
        timeouts = setups[0].timeouts
        reader = Self.reader(for: setups[0])
    }

    private static func reader(for setup: Setup) -> HTTP1ResponseReader {
        HTTP1ResponseReader(isHeadRequest: setup.request.method == .head, headLimit: CurlHTTPTransfer.maximumHeaderBytes,
                            bodyLimit: setup.bodyLimit)
    }

    deinit {
        if socket >= 0 { _ = Glibc.close(socket) }
    }

    /// The request at the head of the line (the last one once all are answered).
    private var current: Setup { setups[min(outcomes.count, setups.count - 1)] }
    /// The origin, connect time limit and proxy list, the same for all requests.
    var first: Setup { setups[0] }

    // MARK: Any thread

    /// Runs the exchanges; one outcome per request, in order.
    func run() async throws -> [Result<HTTPResponse, TransportError>] {
        let engine = lifetime.engine
        return try await pending.wait(start: { engine.post(.startDirect(self)) },
                                      onCancel: { [self] in engine.post(.cancelDirect(self)) })
    }

    var isCancelled: Bool { pending.isCancelled }

    // MARK: Curl thread

    /// Starts the clock; `answerInterval` is the engine's estimate for this origin, if any.
    func begin(now: Double, answerInterval: Double?) {
        currentStartedAt = now
        lastActivity = now
        self.answerInterval = answerInterval
    }

    /// The answers still to come.
    var unanswered: Int { setups.count - outcomes.count }

    /// Takes a connected socket; `reused` when it comes from the idle pool. Every unanswered
    /// request is written on it.
    func attach(socket: Int32, reused: Bool, now: Double) {
        self.socket = socket
        reusedConnection = reused
        answeredOnConnection = 0
        outgoing.removeAll(keepingCapacity: true)
        for setup in setups[outcomes.count...] { outgoing.append(contentsOf: setup.bytes) }
        sent = 0
        stage = .sending
        lastActivity = now
    }

    func markConnecting() { stage = .connecting }

    /// The poll events this exchange waits for, or 0. While sending, answers are read too, so a
    /// server that answers early never waits on a full receive buffer.
    var pollEvents: Int16 {
        switch stage {
        case .sending: Int16(CURL_WAIT_POLLOUT | CURL_WAIT_POLLIN)
        case .receiving: readNotBefore > 0 ? 0 : Int16(CURL_WAIT_POLLIN)
        default: 0
        }
    }

    /// Whether the exchange is leaving its answers unread until a time that has now come.
    func readingDue(now: Double) -> Bool {
        guard readNotBefore > 0, now >= readNotBefore else { return false }
        readNotBefore = 0
        return stage == .receiving
    }

    /// What `pump` decided.
    enum Progress {
        /// Waiting for the socket.
        case waiting
        /// Every answer is in; `reusable` says whether the socket may go back to the pool.
        case done(reusable: Bool)
        /// The connection cannot carry the rest: a reused one failed before any answer byte (the
        /// server had closed it), or the server closed one that carried answers. The unanswered
        /// requests go out again on a fresh connection.
        case retry
        /// The exchange failed; the unanswered requests fail with it.
        case failed(TransportError)
    }

    /// Moves bytes without blocking until the socket would block or the exchange ends. `scratch`
    /// is the curl thread's receive buffer, shared by all exchanges.
    func pump(now: Double, scratch buffer: UnsafeMutableRawBufferPointer) -> Progress {
        if stage == .sending {
            while sent < outgoing.count {
                let count = outgoing.withUnsafeBytes { raw in
                    Glibc.send(socket, raw.baseAddress.map { $0 + sent }, raw.count - sent, Int32(MSG_NOSIGNAL))
                }
                if count > 0 {
                    sent += count
                    lastActivity = now
                } else if count < 0, errno == EINTR {
                    continue
                } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    break
                } else {
                    return lost("cannot send the request: \(String(cString: strerror(errno)))")
                }
            }
            if sent == outgoing.count {
                stage = .receiving
                outgoing.removeAll()
                sentAt = now
                // A server answers pipelined requests one at a time; reading each as it comes costs a
                // wake-up of this thread per answer. When the pace is known, the answers are left to
                // accumulate for most of the time they will take (at most 50 ms) and read together;
                // the last one arrives no later for it.
                if unanswered >= 2, let answerInterval {
                    readNotBefore = now + min(0.05, 0.9 * Double(unanswered) * answerInterval)
                    return .waiting
                }
            }
        }
        guard stage == .sending || stage == .receiving else { return .waiting }
        while true {
            let count = Glibc.recv(socket, buffer.baseAddress, buffer.count, 0)
            if count > 0 {
                lastActivity = now
                if let progress = consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), now: now) { return progress }
                // A short read drained the socket: wait for the poll rather than spend a call on EAGAIN.
                if count < buffer.count { return .waiting }
            } else if count == 0 {
                if mayRetry { return .retry }
                let outcome = Result { () throws(HTTP1ResponseReader.Failure) in try reader.consumeEnd() }
                switch outcome {
                case .success(.complete(let reusable)):
                    if let progress = answered(reusable: reusable, now: now) { return progress }
                    // More requests wait, and this connection is closed.
                    return .retry
                case .success(.needMore): return .failed(error(.connectionLost, "the connection closed"))
                case .failure(let failure): return .failed(translate(failure))
                }
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return .waiting
            } else {
                return lost("cannot read the response: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Feeds received bytes to the readers, answer after answer; `nil` when more bytes are needed.
    private func consume(_ bytes: UnsafeRawBufferPointer, now: Double) -> Progress? {
        var outcome = Result { () throws(HTTP1ResponseReader.Failure) in try reader.consume(bytes) }
        while true {
            switch outcome {
            case .success(.needMore): return nil
            case .failure(let failure): return .failed(translate(failure))
            case .success(.complete(let reusable)):
                if let progress = answered(reusable: reusable, now: now) { return progress }
                guard reader.keepsConnection else { return .retry }
                // The next answer may have started in the same bytes.
                let leftover = reader.takeLeftover()
                reader = Self.reader(for: current)
                guard !leftover.isEmpty else { return nil }
                outcome = leftover.withUnsafeBytes { raw in
                    Result { () throws(HTTP1ResponseReader.Failure) in try reader.consume(raw) }
                }
            }
        }
    }

    /// Records the answer the reader holds; the final progress when it was the last one, else `nil`.
    private func answered(reusable: Bool, now: Double) -> Progress? {
        outcomes.append(.success(HTTPResponse(status: reader.status ?? 0, headers: reader.headers,
                                              body: .data(Data(reader.body)))))
        answeredOnConnection += 1
        currentStartedAt = now
        // Still sending means the server answered before reading everything: not reusable.
        guard outcomes.count < setups.count else { return .done(reusable: reusable && stage == .receiving) }
        return nil
    }

    /// A connection that fails before any byte of the current answer can carry the unanswered
    /// requests again on a fresh one when it was a kept one (the server probably closed it while
    /// idle, as libcurl assumes) or when it answered some (the server closed it after those). A
    /// fresh connection that answers nothing is not retried, so this ends.
    private var mayRetry: Bool { !reader.receivedAnything && (reusedConnection || answeredOnConnection > 0) }

    private func lost(_ message: String) -> Progress {
        mayRetry ? .retry : .failed(error(.connectionLost, message))
    }

    /// A `TransportError` about the current request.
    func error(_ kind: TransportError.Kind, _ message: String) -> TransportError {
        TransportError(kind, method: current.request.method, url: current.request.url, message: message)
    }

    private func translate(_ failure: HTTP1ResponseReader.Failure) -> TransportError {
        switch failure {
        case .malformed(let message):
            // A connection closed before any reply is a lost connection, as libcurl reports it.
            let kind: TransportError.Kind = reader.receivedAnything && !message.contains("closed before")
                ? .protocolError : .connectionLost
            return error(kind, message)
        case .headTooLarge(let limit):
            return error(.protocolError, "the response headers exceed \(limit) bytes")
        case .bodyTooLarge(let limit):
            return error(.responseTooLarge(limit: limit), "the response body exceeds \(limit) bytes")
        }
    }

    /// Forgets the current connection before the unanswered requests go out again on a fresh one
    /// (the engine reconnects); returns the old socket to close.
    func prepareRetry() -> Int32 {
        let old = socket
        socket = -1
        reader = Self.reader(for: current)
        outgoing.removeAll()
        sent = 0
        stage = .waiting
        return old
    }

    /// Hands the socket over (to the pool or to be closed) once the exchange is over.
    func detachSocket() -> Int32 {
        let old = socket
        socket = -1
        return old
    }

    /// The time limit the current request has passed at `now`, if any. The total limit counts
    /// from when the request reached the head of the line.
    func expired(now: Double) -> TransportError? {
        if let total = timeouts.total, now - currentStartedAt >= total {
            return error(.timedOut, "the request took longer than \(total) s")
        }
        if let idle = timeouts.idle, stage == .sending || stage == .receiving, now - lastActivity >= idle {
            return error(.timedOut, "no data moved for \(idle) s")
        }
        return nil
    }

    /// Seconds until the next time limit, for the poll timeout.
    func secondsToDeadline(now: Double) -> Double? {
        var next: Double?
        if let total = timeouts.total { next = currentStartedAt + total - now }
        if let idle = timeouts.idle, stage == .sending || stage == .receiving {
            next = min(next ?? .infinity, lastActivity + idle - now)
        }
        if readNotBefore > 0 { next = min(next ?? .infinity, readNotBefore - now) }
        return next
    }

    /// Hands every answer over (once all are in).
    func succeed() {
        stage = .finished
        pending.resume(.success(outcomes))
    }

    /// Ends the exchange: the answers so far stand, the unanswered requests fail with `error`
    /// (the current one as it is, the rest as requests that were never answered).
    func fail(_ error: TransportError) {
        stage = .finished
        var all = outcomes
        if all.count < setups.count { all.append(.failure(error)) }
        for setup in setups[all.count...] {
            all.append(.failure(TransportError(error.kind, method: setup.request.method, url: setup.request.url,
                                               message: error.message)))
        }
        pending.resume(.success(all))
    }

    func fail(_ kind: TransportError.Kind, message: String) {
        fail(error(kind, message))
    }
}

/// Opens the TCP connection of a `DirectExchange` with libcurl (`CURLOPT_CONNECT_ONLY`): name
/// resolution and connecting run on the curl thread without blocking it, under the connect timeout.
final class DirectConnectJob: CurlJob, @unchecked Sendable {
    private let exchange: DirectExchange
    private let onResult: (Result<Int32, TransportError>) -> Void
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// Our duplicate of the connected socket, taken while the handle is still in the multi handle
    /// (removing a connect-only handle closes libcurl's descriptor).
    private var ownSocket: Result<Int32, TransportError>?

    init(exchange: DirectExchange, onResult: @escaping (Result<Int32, TransportError>) -> Void) {
        self.exchange = exchange
        self.onResult = onResult
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    var isCancelled: Bool { exchange.isCancelled }

    func makeHandle() throws -> OpaquePointer {
        let request = exchange.first.request
        guard let handle = curl_easy_init() else { throw exchange.error(.other, "curl_easy_init failed") }
        var options = CurlOptions(handle)
        options.set(CURLOPT_URL, string: request.url.absoluteString, "CURLOPT_URL")
        options.set(CURLOPT_PROTOCOLS_STR, string: "http", "CURLOPT_PROTOCOLS_STR")
        options.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        options.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer), "CURLOPT_ERRORBUFFER")
        options.set(CURLOPT_NOPROXY, string: exchange.first.noProxy, "CURLOPT_NOPROXY")
        options.set(CURLOPT_CONNECT_ONLY, 1, "CURLOPT_CONNECT_ONLY")
        options.set(CURLOPT_TCP_KEEPALIVE, 1, "CURLOPT_TCP_KEEPALIVE")
        // A connection of its own, never one libcurl keeps for its transfers. (libcurl never reuses a
        // connect-only connection, and closes it when the handle leaves the multi handle.)
        options.set(CURLOPT_FRESH_CONNECT, 1, "CURLOPT_FRESH_CONNECT")
        options.set(CURLOPT_CONNECTTIMEOUT_MS, CurlOptions.milliseconds(exchange.first.connectTimeout),
                    "CURLOPT_CONNECTTIMEOUT_MS")
        guard options.failures.isEmpty else {
            curl_easy_cleanup(handle)
            throw exchange.error(.invalidRequest, "libcurl rejected " + options.failures.joined(separator: "; "))
        }
        return handle
    }

    func ended(_ code: CURLcode, handle: OpaquePointer) {
        guard code == CURLE_OK else { return }
        var socket: curl_socket_t = -1
        guard ccurl_easy_getinfo_socket(handle, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK, socket >= 0 else {
            ownSocket = .failure(exchange.error(.cannotConnect, Self.noSocket))
            return
        }
        // Our own descriptor for the same connection; libcurl closes its one with the handle.
        let own = fcntl(socket, F_DUPFD_CLOEXEC, 0)
        guard own >= 0 else {
            ownSocket = .failure(exchange.error(.other, "cannot duplicate the socket: \(String(cString: strerror(errno)))"))
            return
        }
        _ = fcntl(own, F_SETFL, fcntl(own, F_GETFL) | O_NONBLOCK)
        var on: Int32 = 1
        _ = setsockopt(own, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        ownSocket = .success(own)
    }

    func finish(_ code: CURLcode, handle: OpaquePointer) {
        let request = exchange.first.request
        guard code == CURLE_OK else {
            let text = String(cString: errorBuffer)
            onResult(.failure(CurlErrorMapping.error(code, message: text.isEmpty ? String(cString: curl_easy_strerror(code)) : text,
                                                     method: request.method, url: request.url)))
            return
        }
        onResult(ownSocket ?? .failure(exchange.error(.cannotConnect, Self.noSocket)))
        ownSocket = nil
    }

    func abort(_ kind: TransportError.Kind, message: String, handle: OpaquePointer?) {
        onResult(.failure(exchange.error(kind, message)))
    }

    private static let noSocket = "libcurl connected but reported no socket"
}
