#if canImport(CCurl)
import CCurl
import Foundation
import Transport

/// One HTTP exchange on the curl thread: configures the easy handle, moves body bytes through the
/// libcurl callbacks, parses the response head, and reports the result exactly once.
///
/// Shared state (the continuation, the cancel flag) sits in `pending`; everything else is touched
/// only by the curl thread once `send` has posted the job.
final class CurlHTTPTransfer: CurlJob, @unchecked Sendable {
    /// Where the request body comes from, opened before the job is posted.
    enum Body {
        case none
        case bytes(Data)
        case file(descriptor: Int32, size: Int64, path: String)
        case stream(RequestBodyPipe, HTTPBodyStream)

        /// The length when known before sending.
        var length: Int64? {
            switch self {
            case .none: 0
            case .bytes(let data): Int64(data.count)
            case .file(_, let size, _): size
            case .stream(_, let stream): stream.length
            }
        }
    }

    /// Where the response body goes, opened before the job is posted.
    typealias Destination = ResponseSink

    /// Everything decided before the transfer starts.
    struct Setup {
        var request: HTTPRequest
        var body: Body
        var destination: Destination
        var timeouts: TransferTimeouts
        var connectTimeout: TimeInterval
        var pins: [PublicKeyFingerprint]
        var caBundlePath: String?
        var userAgent: String?
        var noProxy: String
        var bufferSize: Int
        var progress: (@Sendable (TransferProgress) -> Void)?
    }

    /// Response headers larger than this in total fail the transfer: a bound on hostile input.
    static let maximumHeaderBytes = 1024 * 1024

    private let setup: Setup
    private let lifetime: CurlEngineLifetime
    private let pending = PendingResult<HTTPResponse>()

    // Curl thread only.
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var uploadOffset: Int64 = 0
    private var status: Int?
    private var headerFields: [(name: String, value: String)] = []
    private var headers = HTTPHeaders()
    private var headerBytes = 0
    private var headComplete = false
    private var collected = Data()
    private var written: Int64 = 0
    private var failure: TransportError?
    private var lastProgress: TransferProgress?
    private var descriptorsOpen = true
    /// The pipe a restarted stream body is read from (libcurl rewound it), instead of the setup's.
    private var restartedBodyPipe: RequestBodyPipe?
    /// The easy handle while the transfer runs, for `CURLINFO_HTTP_VERSION` once the head is in.
    private var handle: OpaquePointer?
    private var httpVersion: String?

    init(setup: Setup, lifetime: CurlEngineLifetime) {
        self.setup = setup
        self.lifetime = lifetime
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        errorBuffer.deallocate()
        if let headerList { curl_slist_free_all(headerList) }
        closeDescriptors(removeResponseFile: false)
    }

    private var engine: CurlEngine { lifetime.engine }
    private var method: HTTPMethod { setup.request.method }
    private var url: URL { setup.request.url }

    // MARK: Called from `send` (any thread)

    /// Posts the job and suspends until the response (or, for streams, its head) is in.
    func run() async throws -> HTTPResponse {
        try await pending.wait(start: {
            if case .stream(let pipe, let stream) = setup.body {
                pipe.start(stream) { [engine, self] in engine.post(.resume(self)) }
            }
            if case .stream(let pipe) = setup.destination {
                pipe.attach(
                    resume: { [engine, self] in engine.post(.resume(self)) },
                    abandon: { [self] in cancel() }
                )
            }
            engine.post(.start(self))
        }, onCancel: { [engine, self] in engine.post(.cancel(self)) })
    }

    /// Cancels the transfer from any thread; a finished transfer ignores it.
    func cancel() {
        if pending.markCancelled() { engine.post(.cancel(self)) }
    }

    var isCancelled: Bool { pending.isCancelled }

    // MARK: CurlJob (curl thread)

    func configure(_ handle: OpaquePointer) throws {
        self.handle = handle
        var options = CurlOptions(handle)
        configure(&options)
        guard options.failures.isEmpty else {
            throw TransportError(.invalidRequest, method: method, url: url,
                                 message: "libcurl rejected " + options.failures.joined(separator: "; "))
        }
    }

    func finish(_ code: CURLcode, handle: OpaquePointer) {
        self.handle = nil
        if code == CURLE_OK, failure == nil {
            if !headComplete {
                // A response without a final head cannot happen over HTTP/1.1; fail rather than invent one.
                complete(with: TransportError(.protocolError, method: method, url: url,
                                              message: "the response ended before its headers"))
                return
            }
            complete(with: nil)
        } else {
            complete(with: failure ?? CurlErrorMapping.error(code, message: errorText(code), method: method, url: url))
        }
    }

    func abort(_ kind: TransportError.Kind, message: String, handle: OpaquePointer?) {
        self.handle = nil
        complete(with: failure ?? TransportError(kind, method: method, url: url, message: message))
    }

    // MARK: Configuration

    /// The transfer behind the data pointer libcurl passes a callback: `self`, set unretained by
    /// ``configure(_:)`` for every callback it installs.
    private static func from(_ data: UnsafeMutableRawPointer) -> CurlHTTPTransfer {
        Unmanaged<CurlHTTPTransfer>.fromOpaque(data).takeUnretainedValue()
    }

    private func configure(_ options: inout CurlOptions) {
        let request = setup.request
        let me = Unmanaged.passUnretained(self).toOpaque()
        options.set(CURLOPT_URL, string: request.url.absoluteString, "CURLOPT_URL")
        options.set(CURLOPT_PROTOCOLS_STR, string: "http,https", "CURLOPT_PROTOCOLS_STR")
        options.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        options.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer), "CURLOPT_ERRORBUFFER")
        // HTTP/2 where a TLS server offers it in ALPN (a tunnel in front of a station), so many
        // requests share one connection; HTTP/1.1 otherwise. PIPEWAIT lets a request wait for a
        // connection being set up to the same origin instead of opening another.
        options.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS), "CURLOPT_HTTP_VERSION")
        options.set(CURLOPT_PIPEWAIT, 1, "CURLOPT_PIPEWAIT")
        options.set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        options.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1, "CURLOPT_SUPPRESS_CONNECT_HEADERS")
        options.set(CURLOPT_TCP_KEEPALIVE, 1, "CURLOPT_TCP_KEEPALIVE")
        options.set(CURLOPT_NOPROXY, string: setup.noProxy, "CURLOPT_NOPROXY")
        // libcurl refuses a new receive-buffer size while the handle holds a buffer, which a handle
        // reused after an HTTP/2 transfer does; it then keeps reading into that buffer at libcurl's
        // default size, so the refusal is not a failure of the transfer.
        _ = ccurl_easy_setopt_long(options.handle, CURLOPT_BUFFERSIZE, setup.bufferSize)
        options.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize(bodyLength: setup.body.length, bufferSize: setup.bufferSize),
                    "CURLOPT_UPLOAD_BUFFERSIZE")
        if let userAgent = setup.userAgent { options.set(CURLOPT_USERAGENT, string: userAgent, "CURLOPT_USERAGENT") }

        // Time limits: idle = fewer than 1 byte/s for N whole seconds; total in milliseconds.
        options.set(CURLOPT_CONNECTTIMEOUT_MS, CurlOptions.milliseconds(setup.connectTimeout), "CURLOPT_CONNECTTIMEOUT_MS")
        if let idle = setup.timeouts.idle {
            options.set(CURLOPT_LOW_SPEED_LIMIT, 1, "CURLOPT_LOW_SPEED_LIMIT")
            options.set(CURLOPT_LOW_SPEED_TIME, max(1, Int(min(idle, 1e9).rounded(.up))), "CURLOPT_LOW_SPEED_TIME")
        }
        if let total = setup.timeouts.total {
            options.set(CURLOPT_TIMEOUT_MS, CurlOptions.milliseconds(total), "CURLOPT_TIMEOUT_MS")
        }

        // TLS: a pinned host is trusted by its key alone (self-signed stations); others by the CAs.
        options.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2), "CURLOPT_SSLVERSION")
        if setup.pins.isEmpty {
            options.set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
            options.set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
            if let path = setup.caBundlePath { options.set(CURLOPT_CAINFO, string: path, "CURLOPT_CAINFO") }
        } else {
            options.set(CURLOPT_SSL_VERIFYPEER, 0, "CURLOPT_SSL_VERIFYPEER")
            options.set(CURLOPT_SSL_VERIFYHOST, 0, "CURLOPT_SSL_VERIFYHOST")
            let pins = setup.pins.map(\.pinString).joined(separator: ";")
            options.set(CURLOPT_PINNEDPUBLICKEY, string: pins, "CURLOPT_PINNEDPUBLICKEY")
        }

        // Method and request body.
        let bodyLength = setup.body.length
        var sendsBody = true
        if case .none = setup.body {
            // POST, PUT and PATCH without a body still say Content-Length: 0.
            sendsBody = [.post, .put, .patch].contains(request.method)
        }
        if sendsBody {
            options.set(CURLOPT_POST, 1, "CURLOPT_POST")
            options.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: bodyLength ?? -1, "CURLOPT_POSTFIELDSIZE_LARGE")
            options.check(ccurl_easy_setopt_read_function(options.handle, CURLOPT_READFUNCTION) { buffer, size, count, me in
                guard let buffer, let me else { return CCURL_READFUNC_ABORT }
                return CurlHTTPTransfer.from(me).readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
            }, "CURLOPT_READFUNCTION")
            options.set(CURLOPT_READDATA, pointer: me, "CURLOPT_READDATA")
            options.check(ccurl_easy_setopt_seek_function(options.handle, CURLOPT_SEEKFUNCTION) { me, offset, origin in
                guard let me else { return CURL_SEEKFUNC_FAIL }
                return CurlHTTPTransfer.from(me).seekBody(Int64(offset), origin: origin)
            }, "CURLOPT_SEEKFUNCTION")
            options.set(CURLOPT_SEEKDATA, pointer: me, "CURLOPT_SEEKDATA")
            if request.method != .post {
                options.set(CURLOPT_CUSTOMREQUEST, string: request.method.rawValue, "CURLOPT_CUSTOMREQUEST")
            }
        } else if request.method == .get {
            options.set(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        } else if request.method == .head {
            options.set(CURLOPT_NOBODY, 1, "CURLOPT_NOBODY")
        } else {
            options.set(CURLOPT_CUSTOMREQUEST, string: request.method.rawValue, "CURLOPT_CUSTOMREQUEST")
        }

        // Header fields, in order and spelling. The transport owns framing, and libcurl's own
        // defaults for a body (form Content-Type, Expect: 100-continue) are switched off.
        var list: UnsafeMutablePointer<curl_slist>?
        func append(_ line: String) {
            if let longer = curl_slist_append(list, line) { list = longer } else { options.failures.append("curl_slist_append") }
        }
        for field in request.headers where !ASCII.isFramingField(field.name) {
            // "Name;" is libcurl's spelling of a header with an empty value.
            append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        if sendsBody {
            append("Expect:")
            if !request.headers.contains("Content-Type") { append("Content-Type:") }
        }
        headerList = list
        options.set(CURLOPT_HTTPHEADER, list: list, "CURLOPT_HTTPHEADER")

        // Response callbacks.
        options.check(ccurl_easy_setopt_write_function(options.handle, CURLOPT_HEADERFUNCTION) { buffer, size, count, me in
            guard let buffer, let me else { return 0 }
            return CurlHTTPTransfer.from(me).receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: size * count))
        }, "CURLOPT_HEADERFUNCTION")
        options.set(CURLOPT_HEADERDATA, pointer: me, "CURLOPT_HEADERDATA")
        options.check(ccurl_easy_setopt_write_function(options.handle, CURLOPT_WRITEFUNCTION) { buffer, size, count, me in
            guard let buffer, let me else { return 0 }
            return CurlHTTPTransfer.from(me).receiveBody(UnsafeRawBufferPointer(start: buffer, count: size * count))
        }, "CURLOPT_WRITEFUNCTION")
        options.set(CURLOPT_WRITEDATA, pointer: me, "CURLOPT_WRITEDATA")
        if setup.progress != nil {
            options.set(CURLOPT_NOPROGRESS, 0, "CURLOPT_NOPROGRESS")
            options.check(ccurl_easy_setopt_xferinfo_function(options.handle, CURLOPT_XFERINFOFUNCTION) { me, dlTotal, dlNow, ulTotal, ulNow in
                guard let me else { return 0 }
                CurlHTTPTransfer.from(me).reportProgress(downloadTotal: Int64(dlTotal), downloaded: Int64(dlNow),
                                                         uploadTotal: Int64(ulTotal), uploaded: Int64(ulNow))
                return 0
            }, "CURLOPT_XFERINFOFUNCTION")
            options.set(CURLOPT_XFERINFODATA, pointer: me, "CURLOPT_XFERINFODATA")
        }
    }

    /// libcurl allocates the upload buffer for every transfer and frees it when the transfer ends.
    /// A small body (a signed call's JSON) gets the smallest buffer libcurl takes (16 KiB), since
    /// 128 KiB crosses glibc's mmap threshold, and freeing a chunk that large makes malloc
    /// consolidate and trim its heap on each request; big and unknown-length bodies keep the large
    /// buffer, which their throughput needs.
    static func uploadBufferSize(bodyLength: Int64?, bufferSize: Int) -> Int {
        let large = min(bufferSize, 2 * 1024 * 1024)
        guard let bodyLength, bodyLength < Int64(large) else { return large }
        return max(Int(bodyLength), 16 * 1024)
    }

    // MARK: Callbacks (curl thread)

    private func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        switch setup.body {
        case .none:
            return 0
        case .bytes(let data):
            let start = Int(uploadOffset)
            let count = min(buffer.count, data.count - start)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
            }
            uploadOffset += Int64(count)
            return count
        case .file(let descriptor, let size, let path):
            let want = Int(min(Int64(buffer.count), size - uploadOffset))
            guard want > 0 else { return 0 }
            let got = Foundation.read(descriptor, buffer.baseAddress, want)
            guard got > 0 else {
                let reason = got == 0 ? "it shrank below \(size) bytes while sending" : String(cString: strerror(errno))
                failure = TransportError(.requestBodyFailed, method: method, url: url, message: "cannot read \(path): \(reason)")
                return CCURL_READFUNC_ABORT
            }
            uploadOffset += Int64(got)
            return got
        case .stream(let first, _):
            switch (restartedBodyPipe ?? first).read(into: buffer) {
            case .bytes(let count): return count
            case .end: return 0
            case .wouldBlock: return CCURL_READFUNC_PAUSE
            case .failed(let broken):
                failure = TransportError(.requestBodyFailed, method: method, url: url, message: broken.message,
                                         underlying: broken.underlying)
                return CCURL_READFUNC_ABORT
            }
        }
    }

    /// libcurl rewinds the body when it must resend it (for example on a stale reused connection).
    private func seekBody(_ offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0 else { return CURL_SEEKFUNC_CANTSEEK }
        switch setup.body {
        case .none:
            return offset == 0 ? CURL_SEEKFUNC_OK : CURL_SEEKFUNC_FAIL
        case .bytes(let data):
            guard offset <= Int64(data.count) else { return CURL_SEEKFUNC_FAIL }
        case .file(let descriptor, let size, _):
            guard offset <= size, lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else { return CURL_SEEKFUNC_FAIL }
        case .stream(let first, let stream):
            let current = restartedBodyPipe ?? first
            // Rewinding before anything was read is a no-op; a restartable stream (a multipart
            // form, bytes in memory) starts over from its first byte in a fresh pipe; a one-shot
            // stream cannot go back.
            if offset == 0 && current.bytesConsumed == 0 { return CURL_SEEKFUNC_OK }
            guard offset == 0, let again = stream.restarted() else { return CURL_SEEKFUNC_CANTSEEK }
            current.close()
            let pipe = current.fresh()
            restartedBodyPipe = pipe
            pipe.start(again) { [engine, self] in engine.post(.resume(self)) }
        }
        uploadOffset = offset
        return CURL_SEEKFUNC_OK
    }

    private func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        headerBytes += line.count
        guard headerBytes <= Self.maximumHeaderBytes else {
            failure = TransportError(.protocolError, method: method, url: url,
                                     message: "the response headers exceed \(Self.maximumHeaderBytes) bytes")
            return 0
        }
        if headComplete { return line.count }  // trailers after a chunked body: not part of the head
        switch ResponseHeadParser.parse(line: Array(line)) {
        case .endOfBlock:
            // A 1xx block is followed by the real one.
            if let status, status >= 200 {
                headComplete = true
                headers = HTTPHeaders(headerFields.map { HTTPHeaders.Field(name: $0.name, value: $0.value) })
                if let refusal = ContentEncoding.refusal(of: headers, method: method, url: url) {
                    failure = refusal
                    return 0
                }
                httpVersion = negotiatedVersion()
                if case .stream(let pipe) = setup.destination { deliverStreamHead(pipe) }
            }
        case .status(let code):
            status = code
            headerFields.removeAll()
        case .continuation(let text):
            // Obsolete line folding (RFC 9112 §5.2): the text continues the previous value.
            if !headerFields.isEmpty {
                let last = headerFields.count - 1
                headerFields[last].value += headerFields[last].value.isEmpty ? text : " " + text
            }
        case .field(let name, let value):
            headerFields.append((name, value))
        case .ignored:
            break
        }
        return line.count
    }

    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch setup.destination {
        case .memory(let limit):
            guard bytes.count <= limit - collected.count else {
                failure = TransportError(.responseTooLarge(limit: limit), method: method, url: url,
                                         message: "the response body exceeds \(limit) bytes")
                return 0
            }
            // The announced length (within the limit) is reserved once: a 5 MB manifest grown by
            // doubling is copied several times and leaves the freed copies scattered in the heap.
            if collected.isEmpty, let announced = announcedLength(), announced <= Int64(limit) {
                collected.reserveCapacity(Int(announced))
            }
            collected.append(contentsOf: bytes)
        case .file(let fileURL, let descriptor):
            if let reason = ResponseSink.writeAll(UnsafeRawBufferPointer(bytes), to: descriptor) {
                failure = TransportError(.responseBodyFailed, method: method, url: url,
                                         message: "cannot write \(fileURL.path): \(reason)")
                return 0
            }
            written += Int64(bytes.count)
        case .stream(let pipe):
            guard pipe.offer(Data(bytes)) else { return CCURL_WRITEFUNC_PAUSE }
            written += Int64(bytes.count)
        }
        reportDelivered()
        return bytes.count
    }

    /// Reports the body bytes delivered so far, as each piece arrives: libcurl's own progress
    /// callback may skip the middle of a fast transfer, and progress is promised in steps.
    private func reportDelivered() {
        guard setup.progress != nil else { return }
        let delivered: Int64
        if case .memory = setup.destination { delivered = Int64(collected.count) } else { delivered = written }
        reportProgress(downloadTotal: lastProgress?.expectedBytesToReceive ?? announcedLength() ?? 0, downloaded: delivered,
                       uploadTotal: lastProgress?.expectedBytesToSend ?? 0, uploaded: lastProgress?.bytesSent ?? 0)
    }

    /// Reports progress, never backwards (libcurl's counters may lag the pieces already delivered).
    private func reportProgress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) {
        guard let handler = setup.progress else { return }
        let progress = TransferProgress(
            bytesSent: max(uploaded, lastProgress?.bytesSent ?? 0), expectedBytesToSend: uploadTotal > 0 ? uploadTotal : setup.body.length,
            bytesReceived: max(downloaded, lastProgress?.bytesReceived ?? 0),
            expectedBytesToReceive: downloadTotal > 0 ? downloadTotal : lastProgress?.expectedBytesToReceive
        )
        guard progress != lastProgress else { return }
        lastProgress = progress
        handler(progress)
    }

    // MARK: Results

    private func deliverStreamHead(_ pipe: ResponseBuffer) {
        let token = ResponseStreamToken(buffer: pipe, keeping: lifetime)
        let stream = HTTPBodyStream(length: announcedLength()) { try await token.buffer.next() }
        resume(.success(HTTPResponse(status: status ?? 0, headers: headers, body: .stream(stream), httpVersion: httpVersion)))
    }

    /// The version libcurl used for this response, in status-line spelling.
    private func negotiatedVersion() -> String? {
        guard let handle else { return nil }
        var version = 0
        guard ccurl_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version) == CURLE_OK else { return nil }
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return nil
        }
    }

    /// The body length the head announces, when it can be trusted (no body for HEAD, 204, 304).
    private func announcedLength() -> Int64? {
        if method == .head || status == 204 || status == 304 { return 0 }
        guard !headers.contains("Transfer-Encoding"), let value = headers["Content-Length"] else { return nil }
        return Int64(value).flatMap { $0 >= 0 ? $0 : nil }
    }

    /// Ends the transfer: `nil` for success. Called once, on the curl thread.
    private func complete(with error: TransportError?) {
        if case .stream(let pipe, _) = setup.body { (restartedBodyPipe ?? pipe).close() }
        closeDescriptors(removeResponseFile: error != nil)
        if let error {
            if case .stream(let pipe) = setup.destination { pipe.finish(error) }
            resume(.failure(error))
            return
        }
        let body: HTTPResponseBody
        switch setup.destination {
        case .memory: body = .data(collected)
        case .file(let fileURL, _): body = .file(fileURL, byteCount: written)
        case .stream(let pipe):
            pipe.finish(nil)
            return  // the head went out when it arrived
        }
        resume(.success(HTTPResponse(status: status ?? 0, headers: headers, body: body, httpVersion: httpVersion)))
    }

    private func resume(_ result: Result<HTTPResponse, TransportError>) {
        pending.resume(result)
    }

    private func closeDescriptors(removeResponseFile: Bool) {
        guard descriptorsOpen else { return }
        descriptorsOpen = false
        if case .file(let descriptor, _, _) = setup.body { _ = close(descriptor) }
        if case .file(let fileURL, let descriptor) = setup.destination {
            _ = close(descriptor)
            if removeResponseFile { _ = unlink(fileURL.path) }
        }
    }

    private func errorText(_ code: CURLcode) -> String {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? String(cString: curl_easy_strerror(code)) : text
    }
}
#endif
