/// Why a post-quantum key, ciphertext or signature input was refused.
///
/// Every malformed input from the network, disk or user maps to one of these; nothing in
/// `PQCrypto` traps on bad input.
public enum PQCryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An encoded key, seed or ciphertext had the wrong length.
    case invalidLength(what: String, expected: Int, actual: Int)
    /// An ML-KEM encapsulation key holds a coefficient that is not reduced modulo q (FIPS 203 §7.2).
    case encapsulationKeyNotReduced
    /// An ML-KEM decapsulation key's embedded hash H(ek) does not match its ek (FIPS 203 §7.3).
    case decapsulationKeyHashMismatch
    /// An ML-DSA context string was longer than 255 bytes (FIPS 204 §5.2).
    case contextTooLong(length: Int)
    /// An ML-DSA expanded private key failed its consistency checks (coefficient ranges).
    case invalidPrivateKey(reason: String)

    public var description: String {
        switch self {
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
