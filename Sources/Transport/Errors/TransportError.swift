import Foundation

/// A failure to exchange an HTTP message: the request could not be sent or its response could not
/// be read. Every error names the request it belongs to.
///
/// An HTTP error status (404, 500, …) is not a `TransportError`; it arrives as a normal
/// `HTTPResponse`. Match on `kind` to decide what to do: `.cannotConnect`, `.dnsFailure` and
/// `.timedOut` are worth a retry or an endpoint change, `.pinMismatch` never is.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Hashable {
        /// The host name did not resolve.
        case dnsFailure
        /// No connection could be made (refused, unreachable, connect timeout).
        case cannotConnect
        /// A time limit passed: no bytes moved for the idle limit, or the total limit ran out.
        case timedOut
        /// The TLS handshake failed or the certificate did not verify against the trusted CAs.
        case tlsFailure
        /// The server's public key does not match the pinned fingerprint.
        case pinMismatch
        /// The request carries public-key pins (`TransferOptions.pinnedPublicKeys`) and this
        /// transport cannot enforce them on this platform, so it sent nothing.
        case pinningUnsupported
        /// The task was cancelled, or a streamed response was dropped before its end.
        case cancelled
        /// The connection broke mid-exchange: the server closed it early, sent nothing, or a
        /// send or receive failed.
        case connectionLost
        /// The server's reply is not valid HTTP.
        case protocolError
        /// The response body exceeded the in-memory limit (bytes) the caller set.
        case responseTooLarge(limit: Int)
        /// The request cannot be sent as given (bad URL, header or body description).
        case invalidRequest
        /// The request body could not be read: a file is missing or shrank, or a stream threw or
        /// yielded a different number of bytes than its declared length.
        case requestBodyFailed
        /// The response body could not be stored: writing its file failed.
        case responseBodyFailed
        /// Anything else the underlying HTTP library reported; `message` has its text.
        case other
    }

    /// What went wrong.
    public var kind: Kind
    /// The method of the request that failed.
    public var method: HTTPMethod
    /// The URL of the request that failed.
    public var url: URL
    /// A human-readable explanation, for logs (never contains request bodies or secrets).
    public var message: String
    /// The underlying library's own error code when there is one (for `CurlTransport`, the
    /// `CURLcode`).
    public var code: Int?
    /// The error that caused this one, such as the error a request body stream threw.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(
        _ kind: Kind, method: HTTPMethod, url: URL, message: String, code: Int? = nil, underlying: (any Error)? = nil
    ) {
        self.kind = kind
        self.method = method
        self.url = url
        self.message = message
        self.code = code
        self.underlying = underlying
    }

    /// `"<kind> for <METHOD> <url>: <message>"`.
    public var description: String {
        var text = "\(kind) for \(method) \(url.absoluteString): \(message)"
        if let code { text += " (code \(code))" }
        if let underlying { text += " [\(underlying)]" }
        return text
    }
}
