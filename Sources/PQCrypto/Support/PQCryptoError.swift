// `ErrorKind` and `KindedError` come from ErrorKinds, which Transport re-exports as well.
@_exported import ErrorKinds

/// Why a post-quantum key, ciphertext or signature input was refused.
///
/// Every malformed input from the network, disk or user maps to one of these; nothing in
/// `PQCrypto` traps on bad input.
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .invalidLength:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct PQCryptoError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .invalidLength:`).
    public typealias Kind = ErrorKind<PQCryptoError>

    private enum Detail: Hashable, Sendable {
        case invalidLength(what: String, expected: Int, actual: Int)
        case encapsulationKeyNotReduced
        case decapsulationKeyHashMismatch
        case contextTooLong(length: Int)
        case invalidPrivateKey(reason: String)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// An encoded key, seed or ciphertext had the wrong length.
    public static func invalidLength(what: String, expected: Int, actual: Int) -> PQCryptoError {
        PQCryptoError(.invalidLength(what: what, expected: expected, actual: actual), .invalidLength)
    }

    /// An ML-KEM encapsulation key holds a coefficient that is not reduced modulo q (FIPS 203 §7.2).
    public static let encapsulationKeyNotReduced =
        PQCryptoError(.encapsulationKeyNotReduced, .encapsulationKeyNotReduced)

    /// An ML-KEM decapsulation key's embedded hash H(ek) does not match its ek (FIPS 203 §7.3).
    public static let decapsulationKeyHashMismatch =
        PQCryptoError(.decapsulationKeyHashMismatch, .decapsulationKeyHashMismatch)

    /// An ML-DSA context string was longer than 255 bytes (FIPS 204 §5.2).
    public static func contextTooLong(length: Int) -> PQCryptoError {
        PQCryptoError(.contextTooLong(length: length), .contextTooLong)
    }

    /// An ML-DSA expanded private key failed its consistency checks (coefficient ranges).
    public static func invalidPrivateKey(reason: String) -> PQCryptoError {
        PQCryptoError(.invalidPrivateKey(reason: reason), .invalidPrivateKey)
    }

    /// What had the wrong length, for `Kind.invalidLength`.
    public var what: String? { if case .invalidLength(let value, _, _) = detail { value } else { nil } }

    /// The length required, for `Kind.invalidLength`.
    public var expected: Int? { if case .invalidLength(_, let value, _) = detail { value } else { nil } }

    /// The length found, for `Kind.invalidLength`.
    public var actual: Int? { if case .invalidLength(_, _, let value) = detail { value } else { nil } }

    /// The context's length, for `Kind.contextTooLong`.
    public var length: Int? { if case .contextTooLong(let value) = detail { value } else { nil } }

    /// Which check failed, for `Kind.invalidPrivateKey`.
    public var reason: String? { if case .invalidPrivateKey(let value) = detail { value } else { nil } }

    public var description: String {
        switch detail {
        case let .invalidLength(what, expected, actual):
            "\(what) must be \(expected) bytes, got \(actual)"
        case .encapsulationKeyNotReduced:
            "ML-KEM encapsulation key is not reduced modulo q"
        case .decapsulationKeyHashMismatch:
            "ML-KEM decapsulation key hash check failed"
        case let .contextTooLong(length):
            "ML-DSA context must be at most 255 bytes, got \(length)"
        case let .invalidPrivateKey(reason):
            "ML-DSA private key is invalid: \(reason)"
        }
    }
}

extension ErrorKind where Failure == PQCryptoError {
    /// An encoded key, seed or ciphertext had the wrong length.
    public static var invalidLength: Self { Self() }
    /// An ML-KEM encapsulation key holds a coefficient that is not reduced modulo q (FIPS 203 §7.2).
    public static var encapsulationKeyNotReduced: Self { Self() }
    /// An ML-KEM decapsulation key's embedded hash H(ek) does not match its ek (FIPS 203 §7.3).
    public static var decapsulationKeyHashMismatch: Self { Self() }
    /// An ML-DSA context string was longer than 255 bytes (FIPS 204 §5.2).
    public static var contextTooLong: Self { Self() }
    /// An ML-DSA expanded private key failed its consistency checks (coefficient ranges).
    public static var invalidPrivateKey: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.invalidLength, .encapsulationKeyNotReduced, .decapsulationKeyHashMismatch, .contextTooLong, .invalidPrivateKey] }
}
