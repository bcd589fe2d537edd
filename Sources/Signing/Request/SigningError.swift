import PQCrypto

/// Why a request could not be signed. Each case names the value that would have made the station
/// reject the request (or that could not travel in an HTTP header).
public enum SigningError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The method is empty or not an HTTP token.
    case invalidMethod(String)
    /// The path does not start with `/`, or holds a space, control, `#` or non-ASCII character
    /// (percent-encode those).
    case invalidPath(String)
    /// A header value is empty, holds a character outside printable ASCII, or starts or ends with
    /// a space (HTTP servers strip those, so the station would sign a different string).
    case invalidHeaderValue(name: String, value: String)
    /// A precomputed body digest was not 32 bytes.
    case invalidBodyDigestLength(Int)
    /// ML-DSA signing refused its input.
    case signingFailed(PQCryptoError)

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch self {
        case let .invalidMethod(method): "invalid HTTP method \"\(method)\""
        case let .invalidPath(path): "invalid request path \"\(path)\" (must start with / and be printable ASCII without #)"
        case let .invalidHeaderValue(name, value): "invalid value for \(name): \"\(value)\""
        case let .invalidBodyDigestLength(count): "body SHA-256 must be 32 bytes, got \(count)"
        case let .signingFailed(error): "ML-DSA signing failed: \(error)"
        }
    }
}
