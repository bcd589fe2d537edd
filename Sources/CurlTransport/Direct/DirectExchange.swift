import CCurl
import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#endif

/// A small plain-HTTP exchange (body and response in memory) that the transport writes and reads
/// itself over a TCP connection libcurl opened.
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

    let setup: Setup
    private let lifetime: CurlEngineLifetime
    private let pending = PendingResult<HTTPResponse>()

    // Curl thread only.
    private(set) var stage = Stage.waiting
    private(set) var socket: Int32 = -1
    private(set) var reusedConnection = false
    private var retried = false
    private var sent = 0
    private var reader: HTTP1ResponseReader
    private var startedAt = 0.0
    private(set) var lastActivity = 0.0
    var connectJob: DirectConnectJob?

    init(setup: Setup, lifetime: CurlEngineLifetime) {
        self.setup = setup
        self.lifetime = lifetime
        reader = Self.reader(for: setup)
    }

    private static func reader(for setup: Setup) -> HTTP1ResponseReader {
        HTTP1ResponseReader(isHeadRequest: setup.request.method == .head, headLimit: CurlHTTPTransfer.maximumHeaderBytes,
                            bodyLimit: setup.bodyLimit)
    }

    deinit {
        if socket >= 0 { _ = Glibc.close(socket) }
    }

    private var method: HTTPMethod { setup.request.method }
    private var url: URL { setup.request.url }

    // MARK: Any thread

    func run() async throws -> HTTPResponse {
        let engine = lifetime.engine
        return try await pending.wait(start: { engine.post(.startDirect(self)) },
                                      onCancel: { [self] in engine.post(.cancelDirect(self)) })
    }

    var isCancelled: Bool { pending.isCancelled }

    // MARK: Curl thread

    func begin(now: Double) {
        startedAt = now
        lastActivity = now
    }

    /// Takes a connected socket; `reused` when it comes from the idle pool.
    func attach(socket: Int32, reused: Bool, now: Double) {
        self.socket = socket
        reusedConnection = reused
        stage = .sending
        lastActivity = now
    }

    func markConnecting() { stage = .connecting }

    /// The poll events this exchange waits for, or 0.
    var pollEvents: Int16 {
        switch stage {
        case .sending: Int16(CURL_WAIT_POLLOUT)
        case .receiving: Int16(CURL_WAIT_POLLIN)
        default: 0
        }
    }

    /// What `pump` decided.
    enum Progress {
        /// Waiting for the socket.
        case waiting
        /// The response is complete; `reusable` says whether the socket may go back to the pool.
        case done(reusable: Bool)
        /// The connection failed before any response byte on a reused connection: retry once on
        /// a fresh one.
        case retry
        /// The exchange failed.
        case failed(TransportError)
    }

    /// Moves bytes without blocking until the socket would block or the exchange ends. `scratch`
    /// is the curl thread's receive buffer, shared by all exchanges.
    func pump(now: Double, scratch buffer: UnsafeMutableRawBufferPointer) -> Progress {
        if stage == .sending {
            while sent < setup.bytes.count {
                let count = setup.bytes.withUnsafeBytes { raw in
                    Glibc.send(socket, raw.baseAddress.map { $0 + sent }, raw.count - sent, Int32(MSG_NOSIGNAL))
                }
                if count > 0 {
                    sent += count
                    lastActivity = now
                } else if count < 0, errno == EINTR {
                    continue
                } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                    return .waiting
                } else {
                    return lost("cannot send the request: \(String(cString: strerror(errno)))")
                }
            }
            stage = .receiving
        }
        guard stage == .receiving else { return .waiting }
        while true {
            let count = Glibc.recv(socket, buffer.baseAddress, buffer.count, 0)
            let outcome: Result<HTTP1ResponseReader.Outcome, HTTP1ResponseReader.Failure>
            if count > 0 {
                lastActivity = now
                outcome = Result { () throws(HTTP1ResponseReader.Failure) in
                    try reader.consume(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                }
            } else if count == 0 {
                if mayRetry { return .retry }
                outcome = Result { () throws(HTTP1ResponseReader.Failure) in try reader.consumeEnd() }
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return .waiting
            } else {
                return lost("cannot read the response: \(String(cString: strerror(errno)))")
            }
            switch outcome {
            case .success(.complete(let reusable)): return .done(reusable: reusable)
            case .success(.needMore): continue
            case .failure(let failure): return .failed(translate(failure))
            }
        }
    }

    /// A kept connection that fails before any answer byte was probably closed by the server while
    /// idle: the request is sent once more on a fresh connection (as libcurl does).
    private var mayRetry: Bool { reusedConnection && !retried && !reader.receivedAnything }

    private func lost(_ message: String) -> Progress {
        mayRetry ? .retry : .failed(error(.connectionLost, message))
    }

    /// A `TransportError` about this exchange's request.
    func error(_ kind: TransportError.Kind, _ message: String) -> TransportError {
        TransportError(kind, method: method, url: url, message: message)
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

    /// Forgets the current connection and starts over (the engine reconnects).
    func prepareRetry() -> Int32 {
        let old = socket
        socket = -1
        retried = true
        sent = 0
        reader = Self.reader(for: setup)
        stage = .waiting
        return old
    }

    /// Hands the socket over (to the pool or to be closed) once the exchange is over.
    func detachSocket() -> Int32 {
        let old = socket
        socket = -1
        return old
    }

    /// The time limit this exchange has passed at `now`, if any.
    func expired(now: Double) -> TransportError? {
        if let total = setup.timeouts.total, now - startedAt >= total {
            return error(.timedOut, "the request took longer than \(total) s")
        }
        if let idle = setup.timeouts.idle, stage == .sending || stage == .receiving, now - lastActivity >= idle {
            return error(.timedOut, "no data moved for \(idle) s")
        }
        return nil
    }

    /// Seconds until the next time limit, for the poll timeout.
    func secondsToDeadline(now: Double) -> Double? {
        var next: Double?
        if let total = setup.timeouts.total { next = startedAt + total - now }
        if let idle = setup.timeouts.idle, stage == .sending || stage == .receiving {
            next = min(next ?? .infinity, lastActivity + idle - now)
        }
        return next
    }

    func succeed() {
        stage = .finished
        resume(.success(HTTPResponse(status: reader.status ?? 0, headers: reader.headers, body: .data(Data(reader.body)))))
    }

    func fail(_ error: TransportError) {
        stage = .finished
        resume(.failure(error))
    }

    func fail(_ kind: TransportError.Kind, message: String) {
        fail(error(kind, message))
    }

    private func resume(_ result: Result<HTTPResponse, TransportError>) {
        pending.resume(result)
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
        let request = exchange.setup.request
        guard let handle = curl_easy_init() else { throw exchange.error(.other, "curl_easy_init failed") }
        var options = CurlOptions(handle)
        options.set(CURLOPT_URL, string: request.url.absoluteString, "CURLOPT_URL")
        options.set(CURLOPT_PROTOCOLS_STR, string: "http", "CURLOPT_PROTOCOLS_STR")
        options.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        options.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer), "CURLOPT_ERRORBUFFER")
        options.set(CURLOPT_NOPROXY, string: exchange.setup.noProxy, "CURLOPT_NOPROXY")
        options.set(CURLOPT_CONNECT_ONLY, 1, "CURLOPT_CONNECT_ONLY")
        options.set(CURLOPT_TCP_KEEPALIVE, 1, "CURLOPT_TCP_KEEPALIVE")
        // A connection of its own, never one libcurl keeps for its transfers. (libcurl never reuses a
        // connect-only connection, and closes it when the handle leaves the multi handle.)
        options.set(CURLOPT_FRESH_CONNECT, 1, "CURLOPT_FRESH_CONNECT")
        options.set(CURLOPT_CONNECTTIMEOUT_MS, CurlOptions.milliseconds(exchange.setup.connectTimeout),
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
        let request = exchange.setup.request
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
