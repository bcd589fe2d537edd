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
/// - TLS: certificates are checked against the system CA store, except for hosts with pinned
///   public keys (`Configuration.pinnedPublicKeys`, `setPinnedPublicKeys(_:forHost:)`): those are
///   trusted by key alone, which is how self-signed stations are reached. Use
///   `probeServerCertificate(at:)` to learn a station's key on first contact.
/// - Cancellation: cancelling the calling task, or dropping an unfinished streamed response body,
///   aborts the transfer and throws `TransportError` with kind `.cancelled`.
/// - HTTP: HTTP/1.1, redirects returned rather than followed (a signed request must not be
///   replayed elsewhere), bodies delivered exactly as received (no content decoding, so hashes
///   and CIDs match the bytes on the wire).
/// - Small plain-HTTP exchanges (body and answer in memory, no proxy for the host, no progress
///   handler) are written and read by the transport itself over a connection libcurl opened, and
///   such connections are kept per host for reuse (at most `maximumIdleConnections`, for about
///   4 s). libcurl formats request headers a character at a time, which costs a signed call
///   ~75 µs of CPU for its 4.4 KB signature header; everything else goes through libcurl.
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
        /// Public-key pins by host name (lowercase, as in the URL; no port). A pinned host is trusted
        /// when its key matches any of its pins, without CA or host-name checks.
        public var pinnedPublicKeys: [String: [PublicKeyFingerprint]] = [:]
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

    /// The settings this transport was created with (pins may change later).
    public let configuration: Configuration
    private let lifetime: CurlEngineLifetime
    private let pins: Locked<[String: [PublicKeyFingerprint]]>
    private let noProxy: String
    /// Whether the process environment, where libcurl looks, names a proxy for `http` URLs
    /// (`http_proxy`, `all_proxy`, `ALL_PROXY`; libcurl ignores `HTTP_PROXY`).
    private let httpProxyConfigured: Bool

    /// Creates a transport with its own curl thread and connection cache.
    ///
    /// If libcurl cannot be initialized, every `send` throws `TransportError` with kind `.other`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        lifetime = CurlEngineLifetime(maximumConnections: configuration.maximumIdleConnections)
        pins = Locked(Dictionary(configuration.pinnedPublicKeys.map { ($0.key.lowercased(), $0.value) },
                                 uniquingKeysWith: { $0 + $1 }))
        noProxy = Self.noProxyList(environment: configuration.environment)
        let process = ProcessInfo.processInfo.environment
        httpProxyConfigured = ["http_proxy", "all_proxy", "ALL_PROXY"].contains { !(process[$0] ?? "").isEmpty }
    }

    /// Replaces the pins of `host` (case-insensitive); an empty list removes them, so the host is
    /// checked against the CAs again. Affects requests sent after the call; connections made under
    /// other pins are not reused for it.
    public func setPinnedPublicKeys(_ fingerprints: [PublicKeyFingerprint], forHost host: String) {
        pins.withLock { $0[host.lowercased()] = fingerprints.isEmpty ? nil : fingerprints }
    }

    /// The pins of `host` (case-insensitive), empty when it has none.
    public func pinnedPublicKeys(forHost host: String) -> [PublicKeyFingerprint] {
        pins.withLock { $0[host.lowercased()] ?? [] }
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
        if let direct = directSetup(request, body: body, options: options) {
            let outcomes = try await DirectExchange(setups: [direct], lifetime: lifetime).run()
            guard let outcome = outcomes.first else {
                throw TransportError(.other, method: request.method, url: request.url, message: "no answer was recorded")
            }
            return try outcome.get()
        }
        let preparedBody = try Self.prepare(body, for: request, streamBuffer: configuration.streamBufferSize)
        let destination: CurlHTTPTransfer.Destination
        do {
            destination = try Self.prepare(options.response, for: request, streamBuffer: configuration.streamBufferSize)
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
            pins: pinnedPublicKeys(forHost: request.url.host ?? ""), caBundlePath: configuration.caBundlePath,
            userAgent: configuration.userAgent, noProxy: noProxy, bufferSize: configuration.receiveBufferSize,
            progress: options.progress
        )
        return try await CurlHTTPTransfer(setup: setup, lifetime: lifetime).run()
    }

    /// Sends a batch of repeatable requests; see `HTTPTransport.send(batch:options:)`.
    ///
    /// Requests that qualify for a direct exchange (plain `http`, no proxy, in-memory response, no
    /// progress handler) are pipelined per host: at most `maximumPipelineDepth` on one connection,
    /// written at once and answered in order. When the server closes the connection part-way
    /// (or answers `Connection: close`), the unanswered requests go out again on a fresh one. The
    /// other requests are sent one by one, concurrently.
    public func send(batch: [HTTPBatchRequest], options: TransferOptions) async -> [Result<HTTPResponse, any Error>] {
        var outcomes = [Result<HTTPResponse, any Error>?](repeating: nil, count: batch.count)
        var pipelines: [String: [(index: Int, setup: DirectExchange.Setup)]] = [:]
        var others: [Int] = []
        // A batch usually goes to one URL: its origin and target are read once.
        var known: (url: URL, target: (authority: String, origin: String, host: String, path: String)?)?
        for (index, item) in batch.enumerated() {
            do {
                try item.request.validate()
            } catch {
                outcomes[index] = .failure(error)
                continue
            }
            if known?.url != item.request.url { known = (item.request.url, Self.originAndTarget(of: item.request.url)) }
            if lifetime.engine.setupFailure == nil,
               let setup = directSetup(item.request, body: item.requestBody, options: options, target: known?.target) {
                pipelines[setup.origin, default: []].append((index, setup))
            } else {
                others.append(index)
            }
        }
        let groups = pipelines.values.flatMap { members in
            stride(from: 0, to: members.count, by: Self.maximumPipelineDepth).map {
                Array(members[$0..<min($0 + Self.maximumPipelineDepth, members.count)])
            }
        }
        if others.isEmpty, groups.count == 1, let members = groups.first {
            // The usual case, one pipeline: no child task.
            for (index, outcome) in await runPipeline(members) { outcomes[index] = outcome }
        } else {
            await withTaskGroup(of: [(Int, Result<HTTPResponse, any Error>)].self) { group in
                for members in groups {
                    group.addTask { await self.runPipeline(members) }
                }
                if !others.isEmpty {
                    group.addTask { [others] in
                        let results = await self.sendConcurrently(others.map { batch[$0] }, options: options)
                        return Array(zip(others, results))
                    }
                }
                for await finished in group {
                    for (index, outcome) in finished { outcomes[index] = outcome }
                }
            }
        }
        return outcomes.enumerated().map { index, outcome in
            outcome ?? .failure(TransportError(.other, method: batch[index].request.method, url: batch[index].request.url,
                                               message: "no answer was recorded"))
        }
    }

    /// Pipelines requests to one origin on one connection; their outcomes by batch index.
    private func runPipeline(_ members: [(index: Int, setup: DirectExchange.Setup)]) async -> [(Int, Result<HTTPResponse, any Error>)] {
        let results: [Result<HTTPResponse, any Error>]
        do {
            results = try await DirectExchange(setups: members.map(\.setup), lifetime: lifetime).run()
                .map { $0.mapError { $0 as any Error } }
        } catch {
            results = members.map { _ in .failure(error) }
        }
        return zip(members, results).map { ($0.index, $1) }
    }

    /// The most requests pipelined on one connection; a larger batch to one host uses several.
    public static let maximumPipelineDepth = 32

    /// Connects to `url`'s host without trusting it, completes the TLS handshake and reports the
    /// certificate the server presented: trust on first use. Show the fingerprint to the user (or
    /// compare it with one obtained out of band), then pin it with `setPinnedPublicKeys(_:forHost:)`.
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

    // MARK: Direct exchanges

    /// The setup of a direct exchange (see `DirectExchange`) when `request` qualifies: plain
    /// `http`, no proxy, body and response in memory, no progress handler. `nil` otherwise, and
    /// libcurl carries the request. `known` is `originAndTarget(of:)` of the request's URL when the
    /// caller has read it already (`.some(nil)`: not a plain `http` URL).
    private func directSetup(
        _ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions,
        target known: (authority: String, origin: String, host: String, path: String)?? = nil
    ) -> DirectExchange.Setup? {
        guard options.progress == nil, case .memory(let limit) = options.response else { return nil }
        let payload: Data?
        switch body {
        case .none: payload = nil
        case .bytes(let data): payload = data
        case .file, .stream: return nil
        }
        guard let target = known ?? Self.originAndTarget(of: request.url) else { return nil }
        if httpProxyConfigured, !Self.noProxyMatches(host: target.host, list: noProxy) { return nil }
        let bytes = Self.requestBytes(request, authority: target.authority, path: target.path, body: payload,
                                      userAgent: configuration.userAgent)
        let timeouts = options.timeouts ?? TransferTimeouts(idle: configuration.idleTimeout, total: configuration.requestTimeout)
        return DirectExchange.Setup(request: request, bytes: bytes, origin: target.origin, bodyLimit: max(0, limit),
                                    timeouts: timeouts, connectTimeout: configuration.connectTimeout, noProxy: noProxy)
    }

    /// For an `http` URL: the `Host` value, the pool key, the bare host and the request target,
    /// read from the URL's text (libcurl sends the path as written).
    static func originAndTarget(of url: URL) -> (authority: String, origin: String, host: String, path: String)? {
        var text = url.absoluteString
        return text.withUTF8 { bytes -> (authority: String, origin: String, host: String, path: String)? in
            guard bytes.count > 7, ASCII.hasPrefixIgnoringCase(bytes, "http://") else { return nil }
            let start = 7
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") {
                end += 1
            }
            var authorityStart = start
            for index in start..<end where bytes[index] == UInt8(ascii: "@") { authorityStart = index + 1 }
            guard authorityStart < end else { return nil }
            var pathEnd = end
            while pathEnd < bytes.count, bytes[pathEnd] != UInt8(ascii: "#") { pathEnd += 1 }
            var authority = String(decoding: UnsafeBufferPointer(rebasing: bytes[authorityStart..<end]), as: UTF8.self)
            if authority.hasSuffix(":80") { authority.removeLast(3) }
            var path = String(decoding: UnsafeBufferPointer(rebasing: bytes[end..<pathEnd]), as: UTF8.self)
            if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
            let origin = authority.lowercased()
            // The host is the authority without its port; an IPv6 literal keeps its brackets off.
            var host = Substring(origin)
            if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
                host = host[host.index(after: host.startIndex)..<close]
            } else if let colon = host.lastIndex(of: ":") {
                host = host[..<colon]
            }
            guard !host.isEmpty else { return nil }
            let hasPort = origin.last != "]" && origin.contains(":")
            return (authority, hasPort ? origin : origin + ":80", String(host), path)
        }
    }

    /// Whether `host` is exempt from proxies under a `no_proxy` list (libcurl's rules: `*`, an
    /// exact name, or a domain suffix).
    static func noProxyMatches(host: String, list: String) -> Bool {
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for entry in list.split(separator: ",") {
            var name = entry.trimmingCharacters(in: .whitespaces).lowercased()
            if name == "*" { return true }
            if name.hasPrefix(".") { name.removeFirst() }
            name = name.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            if !name.isEmpty, host == name || host.hasSuffix("." + name) { return true }
        }
        return false
    }

    /// The HTTP/1.1 request as sent: the request line, `Host`, the request's fields in order,
    /// `User-Agent` and `Accept` unless set, `Content-Length` when there is a body (or the method
    /// is POST, PUT or PATCH), the blank line and the body.
    static func requestBytes(_ request: HTTPRequest, authority: String, path: String, body: Data?, userAgent: String?) -> [UInt8] {
        // One pass over the fields: the size, and which defaults the request overrides.
        var size = 256 + (body?.count ?? 0)
        var hasHost = false, hasUserAgent = false, hasAccept = false
        for header in request.headers {
            size += header.name.utf8.count + header.value.utf8.count + 4
            hasHost = hasHost || ASCII.equalsIgnoringCase(header.name, "host")
            hasAccept = hasAccept || ASCII.equalsIgnoringCase(header.name, "accept")
            hasUserAgent = hasUserAgent || ASCII.equalsIgnoringCase(header.name, "user-agent")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        func field(_ name: String, _ value: String) {
            bytes.append(contentsOf: name.utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: value.utf8)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        bytes.append(contentsOf: request.method.rawValue.utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: path.utf8)
        bytes.append(contentsOf: " HTTP/1.1\r\n".utf8)
        if !hasHost { field("Host", authority) }
        for header in request.headers where !ASCII.isFramingField(header.name) {
            field(header.name, header.value)
        }
        if let userAgent, !hasUserAgent { field("User-Agent", userAgent) }
        if !hasAccept { field("Accept", "*/*") }
        if body != nil || [.post, .put, .patch].contains(request.method) { field("Content-Length", String(body?.count ?? 0)) }
        bytes.append(0x0D)
        bytes.append(0x0A)
        if let body { bytes.append(contentsOf: body) }
        return bytes
    }

    // MARK: Preparing bodies

    private static func prepare(_ body: HTTPRequestBody, for request: HTTPRequest, streamBuffer: Int) throws
        -> CurlHTTPTransfer.Body
    {
        switch body {
        case .none: return .none
        case .bytes(let data): return .bytes(data)
        case .stream(let stream):
            return .stream(RequestPipe(declaredLength: stream.length, highWater: streamBuffer), stream)
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

    private static func prepare(_ destination: ResponseDestination, for request: HTTPRequest, streamBuffer: Int) throws
        -> CurlHTTPTransfer.Destination
    {
        switch destination {
        case .memory(let limit): return .memory(limit: max(0, limit))
        case .stream: return .stream(ResponsePipe(highWater: streamBuffer))
        case .file(let fileURL):
            let descriptor = open(fileURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw TransportError(.responseBodyFailed, method: request.method, url: request.url,
                                     message: "cannot create \(fileURL.path): \(String(cString: strerror(errno)))")
            }
            return .file(fileURL, descriptor: descriptor)
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
