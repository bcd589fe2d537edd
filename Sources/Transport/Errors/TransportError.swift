import Foundation
// `ErrorKind` and `KindedError` come from ErrorKinds, which PQCrypto re-exports as well.
@_exported import ErrorKinds

/// A failure to exchange an HTTP message: the request could not be sent or its response could not
/// be read. Every error names the request it belongs to.
///
/// An HTTP error status (404, 500, …) is not a `TransportError`; it arrives as a normal
/// `HTTPResponse`. Match on `kind` to decide what to do: `.cannotConnect`, `.dnsFailure` and
/// `.timedOut` are worth a retry or an endpoint change, `.pinMismatch` never is.
public struct TransportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    ///
    /// A struct with static members rather than an enum, so a new kind in a later release does not
    /// break an app's `switch`: match with `case .timedOut:` as before, and end the `switch` with
    /// `default:`. Kinds compare equal when they are the same kind: the limit of
    /// ``responseTooLarge(limit:)`` does not take part (`.responseTooLarge(limit: 5) ==
    /// .responseTooLarge`); read it from ``limit``. ``description`` is the kind as written after
    /// the dot (`"timedOut"`, `"responseTooLarge(limit: 5)"`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable, CaseIterable {
            case dnsFailure, cannotConnect, timedOut, tlsFailure, pinMismatch, pinningUnsupported, probingUnsupported, cancelled
            case connectionLost, protocolError, responseTooLarge, invalidRequest, requestBodyFailed
            case responseBodyFailed, unsupportedContentEncoding, other
        }

        private let code: Code
        /// The in-memory limit (bytes) the response body passed, for ``responseTooLarge(limit:)``;
        /// `nil` for every other kind (and for the bare ``responseTooLarge``).
        public let limit: Int?

        private init(_ code: Code, limit: Int? = nil) {
            self.code = code
            self.limit = limit
        }

        /// Every kind known to this version of the package, for an app's tests
        /// (``responseTooLarge`` without a limit). A later version may add kinds: an app's
        /// `switch` still ends with `default:`.
        public static var knownValues: [Kind] { Code.allCases.map { Kind($0) } }

        /// Whether both are the same kind; ``limit`` does not take part.
        public static func == (lhs: Kind, rhs: Kind) -> Bool { lhs.code == rhs.code }

        /// Hashes the kind (not ``limit``), matching `==`.
        public func hash(into hasher: inout Hasher) { hasher.combine(code) }

        /// The kind as written after the dot: `"timedOut"`, `"responseTooLarge(limit: 5)"`.
        public var description: String {
            guard let limit else { return code.rawValue }
            return "\(code.rawValue)(limit: \(limit))"
        }

        /// The host name did not resolve.
        public static let dnsFailure = Kind(.dnsFailure)
        /// No connection could be made (refused, unreachable, connect timeout).
        public static let cannotConnect = Kind(.cannotConnect)
        /// A time limit passed: no bytes moved for the idle limit, or the total limit ran out.
        public static let timedOut = Kind(.timedOut)
        /// The TLS handshake failed or the certificate did not verify against the trusted CAs.
        public static let tlsFailure = Kind(.tlsFailure)
        /// The server's public key does not match the pinned fingerprint.
        public static let pinMismatch = Kind(.pinMismatch)
        /// The request carries public-key pins (`TransferOptions.pinnedPublicKeys`) and this
        /// transport cannot enforce them on this platform, so it sent nothing.
        public static let pinningUnsupported = Kind(.pinningUnsupported)
        /// This transport cannot read the key a server presents (`HTTPTransport.presentedPublicKey(at:)`)
        /// on this platform; nothing was sent.
        public static let probingUnsupported = Kind(.probingUnsupported)
        /// The task was cancelled, or a streamed response was dropped before its end.
        public static let cancelled = Kind(.cancelled)
        /// The connection broke mid-exchange: the server closed it early, sent nothing, or a
        /// send or receive failed.
        public static let connectionLost = Kind(.connectionLost)
        /// The server's reply is not valid HTTP.
        public static let protocolError = Kind(.protocolError)
        /// The response body exceeded the in-memory limit (bytes) the caller set.
        public static func responseTooLarge(limit: Int) -> Kind { Kind(.responseTooLarge, limit: limit) }
        /// The response body exceeded the in-memory limit the caller set: the kind to match
        /// (`case .responseTooLarge:`) or compare with; a thrown error carries
        /// ``responseTooLarge(limit:)``, whose ``limit`` is set.
        public static let responseTooLarge = Kind(.responseTooLarge)
        /// The request cannot be sent as given (bad URL, header or body description).
        public static let invalidRequest = Kind(.invalidRequest)
        /// The request body could not be read: a file is missing or shrank, or a stream threw or
        /// yielded a different number of bytes than its declared length.
        public static let requestBodyFailed = Kind(.requestBodyFailed)
        /// The response body could not be stored: writing its file failed.
        public static let responseBodyFailed = Kind(.responseBodyFailed)
        /// The response names a `Content-Encoding` other than `identity` (gzip, br, …): bodies are
        /// taken only as the server sent them, never decoded, so it was refused when its head
        /// arrived.
        public static let unsupportedContentEncoding = Kind(.unsupportedContentEncoding)
        /// Anything else the underlying HTTP library reported; `message` has its text.
        public static let other = Kind(.other)
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

    /// The answer of a transport that cannot read a server's key: kind `.probingUnsupported` for
    /// a probe (`GET`) of `url`, with `reason` as its message.
    ///
    /// - Parameters:
    ///   - url: the URL the probe was asked for.
    ///   - reason: why this transport cannot probe, for logs.
    public static func probingUnsupported(at url: URL, reason: String) -> TransportError {
        TransportError(.probingUnsupported, method: .get, url: url, message: reason)
    }

    /// `"<kind> for <METHOD> <url>: <message>"`.
    public var description: String {
        var text = "\(kind) for \(method) \(url.absoluteString): \(message)"
        if let code { text += " (code \(code))" }
        if let underlying { text += " [\(underlying)]" }
        return text
    }
}
