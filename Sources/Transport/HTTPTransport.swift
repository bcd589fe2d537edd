import Foundation

/// Sends one HTTP request and returns its response: the single seam between the SDK and the network.
///
/// The SDK ships `CurlTransport` (libcurl) and `URLSessionTransport` (Foundation); an app can bring
/// its own, and an in-process station emulator conforms in tests. A conformance implements the one
/// requirement, `send(_:body:options:)`:
///
/// - Send `request` with `body`: `.none`, `.bytes`, `.file` (length from the file) or `.stream`.
///   Every body the SDK sends has a known length (a real station size-checks only a declared
///   `Content-Length`), so send it with `Content-Length`; chunked framing is only for an app's own
///   unsized streams. Send the header fields in their order and spelling; set the framing headers
///   yourself.
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
