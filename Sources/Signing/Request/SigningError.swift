import PQCrypto

/// Why a request could not be signed. Each kind names the value that would have made the station
/// reject the request (or that could not travel in an HTTP header).
///
/// A struct with static members rather than an enum, so a new kind in a later release does not
/// break an app's `switch`: switch over ``kind`` (`case .invalidPath:`, ending with `default:`) and
/// read the details from the properties. Two errors are equal when their kind and details are
/// equal.
public struct SigningError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, without the details. Kinds compare equal when they are the same kind;
    /// ``description`` is the kind's name (`"invalidPath"`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Code: String, Sendable, Hashable {
            case invalidMethod, invalidPath, invalidHeaderValue, invalidBodyDigestLength, signingFailed
        }

        fileprivate let code: Code

        fileprivate init(_ code: Code) { self.code = code }

        /// The kind's name, as written after the dot (`"invalidPath"`).
        public var description: String { code.rawValue }

        /// The method is empty or not an HTTP token.
        public static let invalidMethod = Kind(.invalidMethod)

        /// The path does not start with `/`, or holds a space, control, `#` or non-ASCII character
        /// (percent-encode those).
        public static let invalidPath = Kind(.invalidPath)

        /// A header value is empty, holds a character outside printable ASCII, or starts or ends with
        /// a space (HTTP servers strip those, so the station would sign a different string).
        public static let invalidHeaderValue = Kind(.invalidHeaderValue)

        /// A precomputed body digest was not 32 bytes.
        public static let invalidBodyDigestLength = Kind(.invalidBodyDigestLength)

        /// ML-DSA signing refused its input.
        public static let signingFailed = Kind(.signingFailed)
    }

    /// What went wrong.
    public let kind: Kind
    /// The method, for ``Kind/invalidMethod``.
    public let method: String?
    /// The path, for ``Kind/invalidPath``.
    public let path: String?
    /// The header's name, for ``Kind/invalidHeaderValue``.
    public let name: String?
    /// The header's value, for ``Kind/invalidHeaderValue``.
    public let value: String?
    /// The digest's byte count, for ``Kind/invalidBodyDigestLength``.
    public let count: Int?
    /// ML-DSA's refusal, for ``Kind/signingFailed``.
    public let underlying: PQCryptoError?

    private init(
        _ kind: Kind,
        method: String? = nil, path: String? = nil, name: String? = nil, value: String? = nil, count: Int? = nil,
        underlying: PQCryptoError? = nil
    ) {
        self.kind = kind
        self.method = method
        self.path = path
        self.name = name
        self.value = value
        self.count = count
        self.underlying = underlying
    }

    /// The method is empty or not an HTTP token.
    public static func invalidMethod(_ method: String) -> SigningError { SigningError(.invalidMethod, method: method) }

    /// The path does not start with `/`, or holds a space, control, `#` or non-ASCII character
    /// (percent-encode those).
    public static func invalidPath(_ path: String) -> SigningError { SigningError(.invalidPath, path: path) }

    /// A header value is empty, holds a character outside printable ASCII, or starts or ends with
    /// a space (HTTP servers strip those, so the station would sign a different string).
    public static func invalidHeaderValue(name: String, value: String) -> SigningError {
        SigningError(.invalidHeaderValue, name: name, value: value)
    }

    /// A precomputed body digest was not 32 bytes.
    public static func invalidBodyDigestLength(_ count: Int) -> SigningError {
        SigningError(.invalidBodyDigestLength, count: count)
    }

    /// ML-DSA signing refused its input.
    public static func signingFailed(_ underlying: PQCryptoError) -> SigningError {
        SigningError(.signingFailed, underlying: underlying)
    }

    /// Matches a thrown error equal to `pattern`, so `catch SigningError.x` keeps working as it did when
    /// this type was an enum.
    public static func ~= (pattern: Self, error: any Swift.Error) -> Bool { (error as? Self) == pattern }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        let method = self.method ?? ""
        let path = self.path ?? ""
        let name = self.name ?? ""
        let value = self.value ?? ""
        let count = self.count ?? 0
        switch kind.code {
        case .invalidMethod: return "invalid HTTP method \"\(method)\""
        case .invalidPath: return "invalid request path \"\(path)\" (must start with / and be printable ASCII without #)"
        case .invalidHeaderValue: return "invalid value for \(name): \"\(value)\""
        case .invalidBodyDigestLength: return "body SHA-256 must be 32 bytes, got \(count)"
        case .signingFailed: return "ML-DSA signing failed: \(underlying.map { "\($0)" } ?? "")"
        }
    }
}
