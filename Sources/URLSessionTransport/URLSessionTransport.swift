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

/// `HTTPTransport` over Foundation's `URLSession`: the system HTTP stack on Apple platforms, and
/// FoundationNetworking (libcurl underneath) on Linux.
///
/// Create one transport and share it; it is `Sendable`. Its requests run on one delegate-based
/// URLSession, so connections to a host are reused.
///
/// - Bodies: in-memory bodies go as upload data; file and stream bodies are streamed through
///   `uploadTask(withStreamedRequest:)`, with `Content-Length` when the length is known, never held
///   in memory whole. On Linux a stream body is first spooled to an unlinked temporary file (see
///   the module overview), so it goes out once the stream has ended, always with `Content-Length`.
/// - Responses: collected in memory up to the limit, written to a file (mode 0600, removed on
///   failure), or handed out as a stream once the head is in, with at most
///   `Configuration.streamBufferSize` bytes in memory: on Apple platforms a slow reader slows the
///   transfer; on Linux the rest waits in an unlinked temporary file (a reader more than 1 GiB
///   behind fails the transfer with `.responseBodyFailed`).
/// - Timeouts: ordinary requests get an idle limit (no byte moving, default 120 s) and a total limit
///   (default 300 s); transfers with a file or streamed body get only the idle limit.
///   `TransferOptions.timeouts` overrides both per request.
/// - TLS: certificates are checked against the system's trusted CAs. Public-key pins
///   (`TransferOptions.pinnedPublicKeys`) are enforced, and a server's key is read for trust on
///   first use (`presentedPublicKey(at:)`), in the server-trust challenge on Apple platforms;
///   FoundationNetworking offers no such challenge, so on Linux a pinned request throws
///   `TransportError` with kind `.pinningUnsupported` without sending anything, and reading a key
///   throws `.probingUnsupported`.
/// - HTTP: redirects are returned rather than followed, no cookies are stored or sent, nothing is
///   cached, and `Accept-Encoding: identity` asks for bodies exactly as stored.
/// - Cancellation: cancelling the calling task, or dropping an unfinished streamed response body,
///   cancels the URLSession task and throws `TransportError` with kind `.cancelled`.
///
/// URLSession keeps header fields in dictionaries: request fields go out in Foundation's order with
/// repeated names joined by commas, and response fields arrive the same way.
public final class URLSessionTransport: HTTPTransport {
    /// Settings of a transport; every property has a default.
    public struct Configuration: Sendable {
        /// Fail when no byte moves for this long (seconds). Default 120. URLSession counts whole
        /// seconds on Linux, so this is rounded up.
        public var idleTimeout: TimeInterval = 120
        /// Total limit for requests whose bodies are in memory (seconds). Default 300.
        public var requestTimeout: TimeInterval = 300
        /// How many bytes of a streamed body may wait in memory between the network and the reader
        /// or writer (per direction). Default 1 MiB. On Linux, response bytes past this wait on disk.
        public var streamBufferSize = 1024 * 1024
        /// The `User-Agent` sent unless a request sets its own; `nil` sends none on Linux and
        /// URLSession's own on Apple platforms.
        public var userAgent: String? = "swift-cipher-station"
        /// Makes the `URLSessionConfiguration` each of the transport's sessions starts from.
        /// Default: `.ephemeral`.
        ///
        /// The transport then switches off cookies, caching, credential storage and URLSession's
        /// resource limit, whatever the base says; proxies, connection limits and the like are kept.
        /// A background configuration (`.background(withIdentifier:)`) is refused: every request
        /// fails with `.invalidRequest`, since a background session runs no data tasks and sends
        /// when the system chooses, later than a station accepts a signature (60 s).
        public var makeSessionConfiguration: @Sendable () -> URLSessionConfiguration = { .ephemeral }

        /// The default configuration.
        public init() {}
    }

    /// The settings this transport was created with.
    public let configuration: Configuration
    private let sessions: SessionPool

    /// Creates a transport with its own URLSession.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let idle = configuration.idleTimeout
        let base = configuration.makeSessionConfiguration
        sessions = SessionPool(makeConfiguration: {
            let session = base()
            session.timeoutIntervalForRequest = URLRequestBuilder.idleInterval(idle)
            return session
        })
    }

    /// Sends `request` with `body`; see `HTTPTransport.send(_:body:options:)`.
    ///
    /// - Throws: `TransportError`: `.invalidRequest` for a request `HTTPRequest.validate()`
    ///   rejects, pins on a plain `http` URL, or a background session configuration
    ///   (`Configuration.makeSessionConfiguration`); `.pinningUnsupported` for pins on Linux;
    ///   `.requestBodyFailed` / `.responseBodyFailed` when a body file cannot be opened or created;
    ///   otherwise the kind of network failure, or `.cancelled`.
    public func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        try request.validate()
        if let refusal = sessions.refusal {
            throw TransportError(.invalidRequest, method: request.method, url: request.url, message: refusal)
        }
        if !options.pinnedPublicKeys.isEmpty {
            guard request.url.scheme?.lowercased() == "https" else {
                throw TransportError(.invalidRequest, method: request.method, url: request.url,
                                     message: "public-key pins need an https URL")
            }
            #if canImport(FoundationNetworking)
            throw TransportError(.pinningUnsupported, method: request.method, url: request.url,
                                 message: "FoundationNetworking offers no server-trust challenge, so pins cannot be enforced")
            #endif
        }
        guard !Task.isCancelled else {
            throw TransportError(.cancelled, method: request.method, url: request.url, message: "the calling task was cancelled")
        }

        let streamsBody: Bool
        switch body {
        case .file, .stream: streamsBody = true
        case .none, .bytes: streamsBody = false
        }
        let timeouts = options.timeouts ?? TransferTimeouts(
            idle: configuration.idleTimeout,
            total: streamsBody || options.response.isStreaming ? nil : configuration.requestTimeout
        )
        let bufferSize = configuration.streamBufferSize

        // The transfer is created after its body source, which reports failures to it.
        let failures = FailureRelay()
        // A file body (and on Linux a stream, spooled to a file) is sent again from its first byte
        // whenever URLSession resends the request; so is a restartable stream on Apple platforms.
        let supply: BodyStreamSupply?
        let bodyLength: Int64?
        switch body {
        case .none, .bytes:
            supply = nil
            bodyLength = nil
        case .file(let fileURL):
            let file = try FileBodySource(url: fileURL, request: request, onFailure: failures.report)
            supply = BodyStreamSupply(.file(file))
            bodyLength = file.size
        case .stream(let stream):
            #if canImport(FoundationNetworking)
            let spooled = try await StreamSpool.spool(stream, for: request, onFailure: failures.report)
            supply = BodyStreamSupply(.file(spooled))
            bodyLength = spooled.size
            #else
            supply = BodyStreamSupply(.stream(StreamBodyPipe(declaredLength: stream.length, highWater: bufferSize,
                                                             idleLimit: timeouts.idle, onFailure: failures.report), stream))
            bodyLength = stream.length
            #endif
        }
        let destination: URLSessionTransfer.Destination
        do {
            // FoundationNetworking can neither pause a receiving task nor let a delegate wait: spill.
            #if canImport(FoundationNetworking)
            destination = try ResponseSink.make(options.response, for: request, bufferSize: bufferSize, backpressure: .spillToDisk)
            #else
            destination = try ResponseSink.make(options.response, for: request, bufferSize: bufferSize, backpressure: .suspendTask)
            #endif
        } catch {
            supply?.close()
            throw error
        }

        let transfer = URLSessionTransfer(setup: URLSessionTransfer.Setup(
            request: request, destination: destination, bodyStreams: supply,
            bodyLength: bodyLength ?? body.knownLength, totalTimeout: timeouts.total, pins: options.pinnedPublicKeys,
            bodyStreamBufferSize: bufferSize, progress: options.progress
        ))
        failures.connect(transfer)
        #if !canImport(FoundationNetworking)
        if case .stream(let pipe, let stream)? = supply?.origin { pipe.start(stream) }
        #endif

        let urlRequest = URLRequestBuilder.make(request, body: body, bodyLength: streamsBody ? bodyLength : nil,
                                                streamsBody: streamsBody, idleTimeout: timeouts.idle,
                                                userAgent: configuration.userAgent)
        let managed = sessions.session(pinnedTo: options.pinnedPublicKeys)
        return try await transfer.run {
            let task: URLSessionTask
            switch body {
            case .none: task = managed.session.dataTask(with: urlRequest)
            case .bytes(let data): task = managed.session.uploadTask(with: urlRequest, from: data)
            case .file, .stream: task = managed.session.uploadTask(withStreamedRequest: urlRequest)
            }
            managed.delegate.register(transfer, for: task)
            return task
        }
    }
}

/// Passes a body source's failure on to its transfer, which is created after the source.
private final class FailureRelay: Sendable {
    private let transfer = Locked<URLSessionTransfer?>(nil)

    func connect(_ transfer: URLSessionTransfer) { self.transfer.withLock { $0 = transfer } }

    var report: @Sendable (TransportError.Kind, String, (any Error)?) -> Void {
        { [self] kind, message, underlying in
            transfer.withLock { $0 }?.fail(kind, message, underlying: underlying)
        }
    }
}

extension URLSessionTransport {
    /// The fingerprint of the key `url`'s server presents, read without trusting it; see
    /// `HTTPTransport.presentedPublicKey(at:)`.
    ///
    /// On Apple platforms a fresh session of its own connects to `url`'s host; in the server-trust
    /// challenge the leaf certificate's key is read and the challenge cancelled, so the handshake
    /// stops before any request is written and the connection is never reused. FoundationNetworking
    /// delivers no such challenge, so on Linux no key can be read.
    ///
    /// - Throws: `TransportError`: `.invalidRequest` for a URL that is not `https` with a host or a
    ///   background session configuration;
    ///   `.probingUnsupported` on Linux; otherwise `.dnsFailure`, `.cannotConnect`, `.timedOut`
    ///   (no byte for `Configuration.idleTimeout`) or `.tlsFailure` when no handshake gets as far as
    ///   the certificate, `.protocolError` when the server presented none whose key can be read, or
    ///   `.cancelled`.
    public func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw TransportError(.invalidRequest, method: .get, url: url, message: "the URL must be https with a host")
        }
        if let refusal = sessions.refusal {
            throw TransportError(.invalidRequest, method: .get, url: url, message: refusal)
        }
        #if canImport(FoundationNetworking)
        throw TransportError.probingUnsupported(
            at: url, reason: "FoundationNetworking offers no server-trust challenge, so a server's key cannot be read")
        #else
        return try await ServerKeyProbe(url: url).run(sessions: sessions, idleTimeout: configuration.idleTimeout)
        #endif
    }
}
