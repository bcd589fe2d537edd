import PQCrypto

/// Why a `ClassicalCrypto` operation refused its input or failed.
///
/// Every malformed key, nonce, parameter or sealed box from the network, disk or user maps to one
/// of these; nothing in `ClassicalCrypto` traps on bad input.
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .authenticationFailed:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct ClassicalCryptoError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .authenticationFailed:`).
    public typealias Kind = ErrorKind<ClassicalCryptoError>

    private enum Detail: Hashable, Sendable {
        case invalidKeyLength(expected: Int, actual: Int)
        case invalidNonceLength(expected: Int, actual: Int)
        case sealedBoxTooShort(minimum: Int, actual: Int)
        case authenticationFailed
        case invalidParameter(name: String, reason: String)
        case passwordHashingFailed(errno: Int32)
        case fileSystem(operation: String, path: String, errno: Int32)
        case fileChanged(path: String)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// A secret key had the wrong length (`SecretBox` needs 32 bytes, a BLAKE2b key at most 64).
    public static func invalidKeyLength(expected: Int, actual: Int) -> ClassicalCryptoError {
        ClassicalCryptoError(.invalidKeyLength(expected: expected, actual: actual), .invalidKeyLength)
    }

    /// A nonce had the wrong length (`SecretBox` needs 24 bytes).
    public static func invalidNonceLength(expected: Int, actual: Int) -> ClassicalCryptoError {
        ClassicalCryptoError(.invalidNonceLength(expected: expected, actual: actual), .invalidNonceLength)
    }

    /// A sealed box was shorter than the 40 bytes of nonce and tag every box carries.
    public static func sealedBoxTooShort(minimum: Int, actual: Int) -> ClassicalCryptoError {
        ClassicalCryptoError(.sealedBoxTooShort(minimum: minimum, actual: actual), .sealedBoxTooShort)
    }

    /// The Poly1305 tag did not verify: wrong key, or the box was altered or truncated.
    public static let authenticationFailed = ClassicalCryptoError(.authenticationFailed, .authenticationFailed)

    /// A hash or key-derivation parameter was out of range (digest length, salt, personalization,
    /// Argon2 limits, output length).
    public static func invalidParameter(name: String, reason: String) -> ClassicalCryptoError {
        ClassicalCryptoError(.invalidParameter(name: name, reason: reason), .invalidParameter)
    }

    /// Argon2 could not run, usually because it could not allocate the memory the limits ask for.
    public static func passwordHashingFailed(errno: Int32) -> ClassicalCryptoError {
        ClassicalCryptoError(.passwordHashingFailed(errno: errno), .passwordHashingFailed)
    }

    /// A file operation failed (`operation` is the system call, `errno` its error code).
    public static func fileSystem(operation: String, path: String, errno: Int32) -> ClassicalCryptoError {
        ClassicalCryptoError(.fileSystem(operation: operation, path: path, errno: errno), .fileSystem)
    }

    /// A file changed between the passes of a streamed seal or open, so the result could not be
    /// trusted and was discarded.
    public static func fileChanged(path: String) -> ClassicalCryptoError {
        ClassicalCryptoError(.fileChanged(path: path), .fileChanged)
    }

    /// The length required, for `Kind.invalidKeyLength` and `Kind.invalidNonceLength`.
    public var expected: Int? {
        switch detail {
        case .invalidKeyLength(let value, _), .invalidNonceLength(let value, _): value
        default: nil
        }
    }

    /// The length found, for the length kinds.
    public var actual: Int? {
        switch detail {
        case .invalidKeyLength(_, let value), .invalidNonceLength(_, let value), .sealedBoxTooShort(_, let value): value
        default: nil
        }
    }

    /// The shortest sealed box, for `Kind.sealedBoxTooShort`.
    public var minimum: Int? { if case .sealedBoxTooShort(let value, _) = detail { value } else { nil } }

    /// The parameter, for `Kind.invalidParameter`.
    public var name: String? { if case .invalidParameter(let value, _) = detail { value } else { nil } }

    /// Why the parameter is out of range, for `Kind.invalidParameter`.
    public var reason: String? { if case .invalidParameter(_, let value) = detail { value } else { nil } }

    /// The system error code, for `Kind.passwordHashingFailed` and `Kind.fileSystem`.
    public var errno: Int32? {
        switch detail {
        case .passwordHashingFailed(let value), .fileSystem(_, _, let value): value
        default: nil
        }
    }

    /// The system call that failed, for `Kind.fileSystem`.
    public var operation: String? { if case .fileSystem(let value, _, _) = detail { value } else { nil } }

    /// The file's path, for `Kind.fileSystem` and `Kind.fileChanged`.
    public var path: String? {
        switch detail {
        case .fileSystem(_, let value, _), .fileChanged(let value): value
        default: nil
        }
    }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch detail {
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

extension ErrorKind where Failure == ClassicalCryptoError {
    /// A secret key had the wrong length (`SecretBox` needs 32 bytes, a BLAKE2b key at most 64).
    public static var invalidKeyLength: Self { Self() }
    /// A nonce had the wrong length (`SecretBox` needs 24 bytes).
    public static var invalidNonceLength: Self { Self() }
    /// A sealed box was shorter than the 40 bytes of nonce and tag every box carries.
    public static var sealedBoxTooShort: Self { Self() }
    /// The Poly1305 tag did not verify: wrong key, or the box was altered or truncated.
    public static var authenticationFailed: Self { Self() }
    /// A hash or key-derivation parameter was out of range (digest length, salt, personalization,
    /// Argon2 limits, output length).
    public static var invalidParameter: Self { Self() }
    /// Argon2 could not run, usually because it could not allocate the memory the limits ask for.
    public static var passwordHashingFailed: Self { Self() }
    /// A file operation failed (`operation` is the system call, `errno` its error code).
    public static var fileSystem: Self { Self() }
    /// A file changed between the passes of a streamed seal or open, so the result could not be
    /// trusted and was discarded.
    public static var fileChanged: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.invalidKeyLength, .invalidNonceLength, .sealedBoxTooShort, .authenticationFailed, .invalidParameter, .passwordHashingFailed, .fileSystem, .fileChanged] }
}
