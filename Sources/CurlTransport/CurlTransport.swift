// libcurl's header is absent from the iOS, tvOS, watchOS and visionOS SDKs: there this module is
// empty, and Package.swift leaves every edge to it out (`curlPlatforms`). Each file of the module
// is inside this condition.
#if canImport(CCurl)
import CCurl
import Foundation
import Transport

/// `HTTPTransport` over libcurl: the SDK's default transport on Linux and anywhere libcurl exists.
///
/// All transfers of one transport run on a dedicated thread driving a curl multi handle, so no
/// Swift task ever blocks on the network, and connections to the same host are reused across
/// requests. Create one transport and share it; it is `Sendable`.
///
/// - Timeouts: ordinary requests get an idle limit (no byte moving, default 120 s) and a total
///   limit (default 300 s); transfers with a file or streamed body get only the idle limit, so a
///   large upload on a slow link is not cut off while it progresses. `TransferOptions.timeouts`
///   overrides both per request.
/// - TLS: certificates are checked against the system CA store (or `Configuration.caBundlePath`),
///   except for requests that carry public-key pins (`TransferOptions.pinnedPublicKeys`): those
///   trust the server by its key alone (`CURLOPT_PINNEDPUBLICKEY`), which is how self-signed
///   stations are reached. Use `probeServerCertificate(at:)` to learn a station's key on first
///   contact.
/// - Cancellation: cancelling the calling task, or dropping an unfinished streamed response body,
///   aborts the transfer and throws `TransportError` with kind `.cancelled`.
/// - HTTP: HTTP/2 over TLS where the server offers it (ALPN), with concurrent requests to one
///   origin multiplexed on one connection; HTTP/1.1 otherwise, with connections and easy handles
///   reused. Redirects are returned rather than followed (a signed request must not be replayed
///   elsewhere), and bodies are delivered exactly as received (no content decoding, so hashes and
///   CIDs match the bytes on the wire).
public final class CurlTransport: HTTPTransport {
    /// Settings of a transport; every property has a default.
    public struct Configuration: Sendable {
        /// Fail when no byte moves for this long (seconds). Default 120.
        ///
        /// libcurl counts whole seconds and judges "no byte moving" by the average speed over its
        /// last few seconds, so a stall right after fast traffic is noticed up to ~5 s late.
        public var idleTimeout: TimeInterval = 120
        /// Total limit for requests whose bodies are in memory (seconds). Default 300.
        public var requestTimeout: TimeInterval = 300
        /// Limit for connecting, including DNS and the TLS handshake (seconds). Default 120.
        public var connectTimeout: TimeInterval = 120
        /// A PEM bundle of CA certificates to trust instead of the system store, or `nil`.
        public var caBundlePath: String?
        /// How many idle connections to keep for reuse. Default 16.
        public var maximumIdleConnections = 16
        /// How many bytes of a streamed body may wait in memory between the network and the reader
        /// or writer (per direction). Default 1 MiB.
        public var streamBufferSize = 1024 * 1024
        /// libcurl's receive buffer size in bytes. Default 128 KiB.
        public var receiveBufferSize = 128 * 1024
        /// The `User-Agent` sent unless a request sets its own; `nil` sends none.
        public var userAgent: String? = "swift-cipher-station"
        /// The process environment, read for `no_proxy`/`NO_PROXY` (proxies themselves come from
        /// libcurl's usual `http_proxy`-style variables). Loopback addresses never use a proxy.
        public var environment: [String: String] = ProcessInfo.processInfo.environment

        /// The default configuration.
        public init() {}
    }

    /// The settings this transport was created with.
    public let configuration: Configuration
    private let lifetime: CurlEngineLifetime
    private let noProxy: String

    /// Creates a transport with its own curl thread and connection cache.
    ///
    /// If libcurl cannot be initialized, every `send` throws `TransportError` with kind `.other`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        lifetime = CurlEngineLifetime(maximumConnections: configuration.maximumIdleConnections)
        noProxy = Self.noProxyList(environment: configuration.environment)
    }

    /// Sends `request` with `body`; see `HTTPTransport.send(_:body:options:)`.
    ///
    /// - Throws: `TransportError`: `.invalidRequest` for a request `HTTPRequest.validate()`
    ///   rejects; `.requestBodyFailed` / `.responseBodyFailed` when a body file cannot be opened or
    ///   created; otherwise the kind of network failure, or `.cancelled`.
    public func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        try request.validate()
        if let failure = lifetime.engine.setupFailure {
            throw TransportError(.other, method: request.method, url: request.url, message: failure)
        }
        if !options.pinnedPublicKeys.isEmpty, request.url.scheme?.lowercased() != "https" {
            throw TransportError(.invalidRequest, method: request.method, url: request.url,
                                 message: "public-key pins need an https URL")
        }
        let preparedBody = try Self.prepare(body, for: request, streamBuffer: configuration.streamBufferSize)
        let destination: CurlHTTPTransfer.Destination
        do {
            destination = try ResponseSink.make(options.response, for: request, bufferSize: configuration.streamBufferSize,
                                                backpressure: .refuseWhenFull)
        } catch {
            if case .file(let descriptor, _, _) = preparedBody { _ = close(descriptor) }
            throw error
        }
        let streaming: Bool
        switch body {
        case .file, .stream: streaming = true
        case .none, .bytes: streaming = options.response.isStreaming
        }
        let timeouts = options.timeouts ?? TransferTimeouts(
            idle: configuration.idleTimeout, total: streaming ? nil : configuration.requestTimeout
        )
        let setup = CurlHTTPTransfer.Setup(
            request: request, body: preparedBody, destination: destination, timeouts: timeouts,
            connectTimeout: configuration.connectTimeout,
            pins: options.pinnedPublicKeys, caBundlePath: configuration.caBundlePath,
            userAgent: configuration.userAgent, noProxy: noProxy, bufferSize: configuration.receiveBufferSize,
            progress: options.progress
        )
        return try await CurlHTTPTransfer(setup: setup, lifetime: lifetime).run()
    }

    /// Connects to `url`'s host without trusting it, completes the TLS handshake and reports the
    /// certificate the server presented: trust on first use. Show the fingerprint to the user (or
    /// compare it with one obtained out of band), then pin it by passing its
    /// `publicKeyFingerprint` in `TransferOptions.pinnedPublicKeys` of the requests to that origin.
    ///
    /// No HTTP request is sent, and the connection is closed afterwards rather than reused.
    /// - Throws: `TransportError`: `.invalidRequest` for a URL that is not `https`; `.dnsFailure`,
    ///   `.cannotConnect`, `.timedOut` or `.tlsFailure` when no handshake completes; `.protocolError`
    ///   when the server presented no certificate this reader can parse; `.cancelled`.
    public func probeServerCertificate(at url: URL) async throws -> ServerCertificate {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else {
            throw TransportError(.invalidRequest, method: .get, url: url, message: "the URL must be https with a host")
        }
        if let failure = lifetime.engine.setupFailure {
            throw TransportError(.other, method: .get, url: url, message: failure)
        }
        let probe = CertificateProbe(url: url, connectTimeout: configuration.connectTimeout, noProxy: noProxy,
                                     lifetime: lifetime)
        return try await probe.run()
    }

    // MARK: Preparing bodies

    private static func prepare(_ body: HTTPRequestBody, for request: HTTPRequest, streamBuffer: Int) throws
        -> CurlHTTPTransfer.Body
    {
        switch body {
        case .none: return .none
        case .bytes(let data): return .bytes(data)
        case .stream(let stream):
            return .stream(RequestBodyPipe(declaredLength: stream.length, highWater: streamBuffer), stream)
        case .file(let fileURL):
            let descriptor = open(fileURL.path, O_RDONLY | O_CLOEXEC)
            var info = stat()
            guard descriptor >= 0, fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                let reason = String(cString: strerror(errno))
                if descriptor >= 0 { _ = close(descriptor) }
                throw TransportError(.requestBodyFailed, method: request.method, url: request.url,
                                     message: "cannot read \(fileURL.path): \(descriptor >= 0 ? "not a regular file" : reason)")
            }
            return .file(descriptor: descriptor, size: Int64(info.st_size), path: fileURL.path)
        }
    }

    /// libcurl's `CURLOPT_NOPROXY` list: the environment's `no_proxy` (or `NO_PROXY`) plus the
    /// loopback names, so that a proxy configured for the outside world never carries loopback
    /// traffic (local stations, the emulator, tests). `*` (no proxy at all) stays as it is.
    static func noProxyList(environment: [String: String]) -> String {
        let configured = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if configured.contains("*") { return "*" }
        var entries = configured
        for loopback in ["localhost", "127.0.0.1", "::1"] where !entries.contains(loopback) {
            entries.append(loopback)
        }
        return entries.joined(separator: ",")
    }
}

extension CurlTransport {
    /// The fingerprint of the key `probeServerCertificate(at:)` reads; see
    /// `HTTPTransport.presentedPublicKey(at:)`.
    ///
    /// - Throws: `TransportError` as `probeServerCertificate(at:)` does.
    public func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        try await probeServerCertificate(at: url).publicKeyFingerprint
    }
}
#endif
