/// Why a post-quantum key, ciphertext or signature input was refused.
///
/// Every malformed input from the network, disk or user maps to one of these; nothing in
/// `PQCrypto` traps on bad input.
///
/// A struct with static members rather than an enum, so a new kind in a later release does not
/// break an app's `switch`: switch over ``kind`` (`case .invalidLength:`, ending with `default:`) and
/// read the details from the properties. Two errors are equal when their kind and details are
/// equal.
public struct PQCryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, without the details. Kinds compare equal when they are the same kind;
    /// ``description`` is the kind's name (`"invalidLength"`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Code: String, Sendable, Hashable {
            case invalidLength, encapsulationKeyNotReduced, decapsulationKeyHashMismatch, contextTooLong
            case invalidPrivateKey
        }

        fileprivate let code: Code

        fileprivate init(_ code: Code) { self.code = code }

        /// The kind's name, as written after the dot (`"invalidLength"`).
        public var description: String { code.rawValue }

        /// An encoded key, seed or ciphertext had the wrong length.
        public static let invalidLength = Kind(.invalidLength)

        /// An ML-KEM encapsulation key holds a coefficient that is not reduced modulo q (FIPS 203 §7.2).
        public static let encapsulationKeyNotReduced = Kind(.encapsulationKeyNotReduced)

        /// An ML-KEM decapsulation key's embedded hash H(ek) does not match its ek (FIPS 203 §7.3).
        public static let decapsulationKeyHashMismatch = Kind(.decapsulationKeyHashMismatch)

        /// An ML-DSA context string was longer than 255 bytes (FIPS 204 §5.2).
        public static let contextTooLong = Kind(.contextTooLong)

        /// An ML-DSA expanded private key failed its consistency checks (coefficient ranges).
        public static let invalidPrivateKey = Kind(.invalidPrivateKey)
    }

    /// What went wrong.
    public let kind: Kind
    /// What had the wrong length, for ``Kind/invalidLength``.
    public let what: String?
    /// The length required, for ``Kind/invalidLength``.
    public let expected: Int?
    /// The length found, for ``Kind/invalidLength``.
    public let actual: Int?
    /// The context's length, for ``Kind/contextTooLong``.
    public let length: Int?
    /// Which check failed, for ``Kind/invalidPrivateKey``.
    public let reason: String?

    private init(
        _ kind: Kind,
        what: String? = nil, expected: Int? = nil, actual: Int? = nil, length: Int? = nil, reason: String? = nil
    ) {
        self.kind = kind
        self.what = what
        self.expected = expected
        self.actual = actual
        self.length = length
        self.reason = reason
    }

    /// An encoded key, seed or ciphertext had the wrong length.
    public static func invalidLength(what: String, expected: Int, actual: Int) -> PQCryptoError {
        PQCryptoError(.invalidLength, what: what, expected: expected, actual: actual)
    }

    /// An ML-KEM encapsulation key holds a coefficient that is not reduced modulo q (FIPS 203 §7.2).
    public static let encapsulationKeyNotReduced = PQCryptoError(.encapsulationKeyNotReduced)

    /// An ML-KEM decapsulation key's embedded hash H(ek) does not match its ek (FIPS 203 §7.3).
    public static let decapsulationKeyHashMismatch = PQCryptoError(.decapsulationKeyHashMismatch)

    /// An ML-DSA context string was longer than 255 bytes (FIPS 204 §5.2).
    public static func contextTooLong(length: Int) -> PQCryptoError { PQCryptoError(.contextTooLong, length: length) }

    /// An ML-DSA expanded private key failed its consistency checks (coefficient ranges).
    public static func invalidPrivateKey(reason: String) -> PQCryptoError {
        PQCryptoError(.invalidPrivateKey, reason: reason)
    }

    /// Matches a thrown error equal to `pattern`, so `catch PQCryptoError.x` keeps working as it did when
    /// this type was an enum.
    public static func ~= (pattern: Self, error: any Swift.Error) -> Bool { (error as? Self) == pattern }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        let what = self.what ?? ""
        let expected = self.expected ?? 0
        let actual = self.actual ?? 0
        let length = self.length ?? 0
        let reason = self.reason ?? ""
        switch kind.code {
        case .invalidLength: return "\(what) must be \(expected) bytes, got \(actual)"
        case .encapsulationKeyNotReduced: return "ML-KEM encapsulation key is not reduced modulo q"
        case .decapsulationKeyHashMismatch: return "ML-KEM decapsulation key hash check failed"
        case .contextTooLong: return "ML-DSA context must be at most 255 bytes, got \(length)"
        case .invalidPrivateKey: return "ML-DSA private key is invalid: \(reason)"
        }
    }
}
