import Foundation

/// Sends one HTTP request and returns its response: the single seam between the SDK and the network.
///
/// The SDK ships `CurlTransport` (libcurl) and `URLSessionTransport` (Foundation); an app can bring
/// its own, and an in-process station emulator conforms in tests. A conformance implements two
/// requirements, `send(_:body:options:)` and `presentedPublicKey(at:)`:
///
/// - Send `request` with `body`: `.none`, `.bytes`, `.file` (length from the file) or `.stream`.
///   Every body the SDK sends has a known length (a real station size-checks only a declared
///   `Content-Length`), so send it with `Content-Length`; chunked framing is only for an app's own
///   unsized streams. Send the header fields in their order and spelling; set the framing headers
///   yourself.
/// - Deliver response bodies exactly as the server sent them, never decoded: a response whose
///   `Content-Encoding` is not `identity` fails with `TransportError` kind
///   `.unsupportedContentEncoding` when its head arrives.
/// - Deliver the response body as `options.response` asks: `.memory` (fail with
///   `.responseTooLarge` past the limit), `.file` or `.stream` (return once the headers are in).
/// - Apply `options.timeouts`, or your defaults when it is `nil`: idle and total limits for
///   ordinary requests, only the idle limit when a body is a file or a stream.
/// - Report progress through `options.progress` when given.
/// - Enforce `options.pinnedPublicKeys` (trust the server by its key alone), or, where the
///   platform offers no way to, throw `TransportError` with kind `.pinningUnsupported` without
///   sending anything. Never send a pinned request unpinned.
/// - Abort the transfer when the calling task is cancelled, and throw `TransportError` with kind
///   `.cancelled`.
/// - Return every HTTP status as a response; throw `TransportError` only when no response could be
///   exchanged, with the kind that fits and the request's method and URL.
/// - Answer `presentedPublicKey(at:)`: read the key a server's certificate carries without trusting
///   it, or, where the platform offers no way to, throw `TransportError` with kind
///   `.probingUnsupported` (``TransportError/probingUnsupported(at:reason:)``). A transport that wraps
///   another (to add a header, count requests, log) forwards both requirements, so trust on first
///   use keeps working through it.
public protocol HTTPTransport: Sendable {
    /// Sends `request` with `body` and returns the response.
    ///
    /// - Parameters:
    ///   - request: method, absolute URL and header fields.
    ///   - body: the request body.
    ///   - options: where the response body goes, time limits, progress, public-key pins.
    /// - Returns: the response, for any HTTP status.
    /// - Throws: `TransportError` when the exchange fails (DNS, connect, TLS, pin, pinning
    ///   unsupported, timeout, broken connection, body source or destination, cancellation,
    ///   invalid request).
    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse

    /// Completes a TLS handshake with `url`'s host without verifying the server and without
    /// sending a request, and returns the fingerprint of the public key in the certificate the
    /// server presented: what trust on first use shows a user before the key is pinned.
    ///
    /// A client that learns a key this way pins it (`TransferOptions.pinnedPublicKeys`) on every
    /// request afterwards, so its requests reach only a server holding that key.
    ///
    /// - Parameter url: an `https` URL; its host and port are probed.
    /// - Returns: the fingerprint of the leaf certificate's public key.
    /// - Throws: `TransportError`: `.probingUnsupported` when this transport cannot read a server's
    ///   key (``TransportError/probingUnsupported(at:reason:)``), `.invalidRequest` for a URL that
    ///   is not `https` with a host, or the kind that fits when no handshake completes
    ///   (`.dnsFailure`, `.cannotConnect`, `.timedOut`, `.tlsFailure`, `.cancelled`).
    func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint
}

extension HTTPTransport {
    /// Sends `request` with `body`, collecting the response body in memory (default limits and
    /// timeouts).
    ///
    /// - Throws: `TransportError` as described on `send(_:body:options:)`.
    public func send(_ request: HTTPRequest, body: HTTPRequestBody = .none) async throws -> HTTPResponse {
        try await send(request, body: body, options: TransferOptions())
    }
}
