/// Why a `ClassicalCrypto` operation refused its input or failed.
///
/// Every malformed key, nonce, parameter or sealed box from the network, disk or user maps to one
/// of these; nothing in `ClassicalCrypto` traps on bad input.
public enum ClassicalCryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A secret key had the wrong length (`SecretBox` needs 32 bytes, a BLAKE2b key at most 64).
    case invalidKeyLength(expected: Int, actual: Int)
    /// A nonce had the wrong length (`SecretBox` needs 24 bytes).
    case invalidNonceLength(expected: Int, actual: Int)
    /// A sealed box was shorter than the 40 bytes of nonce and tag every box carries.
    case sealedBoxTooShort(minimum: Int, actual: Int)
    /// The Poly1305 tag did not verify: wrong key, or the box was altered or truncated.
    case authenticationFailed
    /// A hash or key-derivation parameter was out of range (digest length, salt, personalization,
    /// Argon2 limits, output length).
    case invalidParameter(name: String, reason: String)
    /// Argon2 could not run, usually because it could not allocate the memory the limits ask for.
    case passwordHashingFailed(errno: Int32)
    /// A file operation failed (`operation` is the system call, `errno` its error code).
    case fileSystem(operation: String, path: String, errno: Int32)
    /// A file changed between the passes of a streamed seal or open, so the result could not be
    /// trusted and was discarded.
    case fileChanged(path: String)

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch self {
        case let .invalidKeyLength(expected, actual):
            "key must be \(expected) bytes, got \(actual)"
        case let .invalidNonceLength(expected, actual):
            "nonce must be \(expected) bytes, got \(actual)"
        case let .sealedBoxTooShort(minimum, actual):
            "sealed box must be at least \(minimum) bytes, got \(actual)"
        case .authenticationFailed:
            "sealed box failed authentication (wrong key or altered data)"
        case let .invalidParameter(name, reason):
            "invalid \(name): \(reason)"
        case let .passwordHashingFailed(errno):
            "Argon2 failed (errno \(errno)); not enough memory for the requested limits?"
        case let .fileSystem(operation, path, errno):
            "\(operation) failed for \(path) (errno \(errno))"
        case let .fileChanged(path):
            "\(path) changed while it was being sealed or opened"
        }
    }
}
