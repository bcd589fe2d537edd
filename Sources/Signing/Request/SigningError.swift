import PQCrypto

/// Why a request could not be signed. Each case names the value that would have made the station
/// reject the request (or that could not travel in an HTTP header).
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .invalidPath:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct SigningError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .invalidPath:`).
    public typealias Kind = ErrorKind<SigningError>

    private enum Detail: Hashable, Sendable {
        case invalidMethod(String)
        case invalidPath(String)
        case invalidHeaderValue(name: String, value: String)
        case invalidBodyDigestLength(Int)
        case signingFailed(PQCryptoError)
        case signingKeyFailed(String)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// The method is empty or not an HTTP token.
    public static func invalidMethod(_ method: String) -> SigningError {
        SigningError(.invalidMethod(method), .invalidMethod)
    }

    /// The path does not start with `/`, or holds a space, control, `#` or non-ASCII character
    /// (percent-encode those).
    public static func invalidPath(_ path: String) -> SigningError { SigningError(.invalidPath(path), .invalidPath) }

    /// A header value is empty, holds a character outside printable ASCII, or starts or ends with
    /// a space (HTTP servers strip those, so the station would sign a different string).
    public static func invalidHeaderValue(name: String, value: String) -> SigningError {
        SigningError(.invalidHeaderValue(name: name, value: value), .invalidHeaderValue)
    }

    /// A precomputed body digest was not 32 bytes.
    public static func invalidBodyDigestLength(_ count: Int) -> SigningError {
        SigningError(.invalidBodyDigestLength(count), .invalidBodyDigestLength)
    }

    /// ML-DSA signing refused its input.
    public static func signingFailed(_ underlying: PQCryptoError) -> SigningError {
        SigningError(.signingFailed(underlying), .signingFailed)
    }

    /// The signing key could not sign: a key kept elsewhere (a Secure Enclave key, a hardware
    /// token) failed or its use was refused.
    public static func signingKeyFailed(_ reason: String) -> SigningError {
        SigningError(.signingKeyFailed(reason), .signingKeyFailed)
    }

    /// Why the signing key could not sign, for `Kind.signingKeyFailed`.
    public var reason: String? { if case .signingKeyFailed(let value) = detail { value } else { nil } }

    /// The method, for `Kind.invalidMethod`.
    public var method: String? { if case .invalidMethod(let value) = detail { value } else { nil } }

    /// The path, for `Kind.invalidPath`.
    public var path: String? { if case .invalidPath(let value) = detail { value } else { nil } }

    /// The header's name, for `Kind.invalidHeaderValue`.
    public var name: String? { if case .invalidHeaderValue(let value, _) = detail { value } else { nil } }

    /// The header's value, for `Kind.invalidHeaderValue`.
    public var value: String? { if case .invalidHeaderValue(_, let value) = detail { value } else { nil } }

    /// The digest's byte count, for `Kind.invalidBodyDigestLength`.
    public var count: Int? { if case .invalidBodyDigestLength(let value) = detail { value } else { nil } }

    /// ML-DSA's refusal, for `Kind.signingFailed`.
    public var underlying: PQCryptoError? { if case .signingFailed(let value) = detail { value } else { nil } }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch detail {
        case let .invalidMethod(method): "invalid HTTP method \"\(method)\""
        case let .invalidPath(path): "invalid request path \"\(path)\" (must start with / and be printable ASCII without #)"
        case let .invalidHeaderValue(name, value): "invalid value for \(name): \"\(value)\""
        case let .invalidBodyDigestLength(count): "body SHA-256 must be 32 bytes, got \(count)"
        case let .signingFailed(error): "ML-DSA signing failed: \(error)"
        case let .signingKeyFailed(reason): "the signing key could not sign: \(reason)"
        }
    }
}

extension ErrorKind where Failure == SigningError {
    /// The method is empty or not an HTTP token.
    public static var invalidMethod: Self { Self() }
    /// The path does not start with `/`, or holds a space, control, `#` or non-ASCII character
    /// (percent-encode those).
    public static var invalidPath: Self { Self() }
    /// A header value is empty, holds a character outside printable ASCII, or starts or ends with
    /// a space (HTTP servers strip those, so the station would sign a different string).
    public static var invalidHeaderValue: Self { Self() }
    /// A precomputed body digest was not 32 bytes.
    public static var invalidBodyDigestLength: Self { Self() }
    /// ML-DSA signing refused its input.
    public static var signingFailed: Self { Self() }
    /// The signing key could not sign (a key kept elsewhere failed or its use was refused).
    public static var signingKeyFailed: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.invalidMethod, .invalidPath, .invalidHeaderValue, .invalidBodyDigestLength, .signingFailed, .signingKeyFailed] }
}
