/// Why a `ClassicalCrypto` operation refused its input or failed.
///
/// Every malformed key, nonce, parameter or sealed box from the network, disk or user maps to one
/// of these; nothing in `ClassicalCrypto` traps on bad input.
///
/// A struct with static members rather than an enum, so a new kind in a later release does not
/// break an app's `switch`: switch over ``kind`` (`case .authenticationFailed:`, ending with `default:`) and
/// read the details from the properties. Two errors are equal when their kind and details are
/// equal.
public struct ClassicalCryptoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, without the details. Kinds compare equal when they are the same kind;
    /// ``description`` is the kind's name (`"authenticationFailed"`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Code: String, Sendable, Hashable {
            case invalidKeyLength, invalidNonceLength, sealedBoxTooShort, authenticationFailed, invalidParameter
            case passwordHashingFailed, fileSystem, fileChanged
        }

        fileprivate let code: Code

        fileprivate init(_ code: Code) { self.code = code }

        /// The kind's name, as written after the dot (`"authenticationFailed"`).
        public var description: String { code.rawValue }

        /// A secret key had the wrong length (`SecretBox` needs 32 bytes, a BLAKE2b key at most 64).
        public static let invalidKeyLength = Kind(.invalidKeyLength)

        /// A nonce had the wrong length (`SecretBox` needs 24 bytes).
        public static let invalidNonceLength = Kind(.invalidNonceLength)

        /// A sealed box was shorter than the 40 bytes of nonce and tag every box carries.
        public static let sealedBoxTooShort = Kind(.sealedBoxTooShort)

        /// The Poly1305 tag did not verify: wrong key, or the box was altered or truncated.
        public static let authenticationFailed = Kind(.authenticationFailed)

        /// A hash or key-derivation parameter was out of range (digest length, salt, personalization,
        /// Argon2 limits, output length).
        public static let invalidParameter = Kind(.invalidParameter)

        /// Argon2 could not run, usually because it could not allocate the memory the limits ask for.
        public static let passwordHashingFailed = Kind(.passwordHashingFailed)

        /// A file operation failed (`operation` is the system call, `errno` its error code).
        public static let fileSystem = Kind(.fileSystem)

        /// A file changed between the passes of a streamed seal or open, so the result could not be
        /// trusted and was discarded.
        public static let fileChanged = Kind(.fileChanged)
    }

    /// What went wrong.
    public let kind: Kind
    /// The length required, for ``Kind/invalidKeyLength`` and ``Kind/invalidNonceLength``.
    public let expected: Int?
    /// The length found, for the length kinds.
    public let actual: Int?
    /// The shortest sealed box, for ``Kind/sealedBoxTooShort``.
    public let minimum: Int?
    /// The parameter, for ``Kind/invalidParameter``.
    public let name: String?
    /// Why the parameter is out of range, for ``Kind/invalidParameter``.
    public let reason: String?
    /// The system error code, for ``Kind/passwordHashingFailed`` and ``Kind/fileSystem``.
    public let errno: Int32?
    /// The system call that failed, for ``Kind/fileSystem``.
    public let operation: String?
    /// The file's path, for ``Kind/fileSystem`` and ``Kind/fileChanged``.
    public let path: String?

    private init(
        _ kind: Kind,
        expected: Int? = nil, actual: Int? = nil, minimum: Int? = nil, name: String? = nil, reason: String? = nil,
        errno: Int32? = nil, operation: String? = nil, path: String? = nil
    ) {
        self.kind = kind
        self.expected = expected
        self.actual = actual
        self.minimum = minimum
        self.name = name
        self.reason = reason
        self.errno = errno
        self.operation = operation
        self.path = path
    }

    /// A secret key had the wrong length (`SecretBox` needs 32 bytes, a BLAKE2b key at most 64).
    public static func invalidKeyLength(expected: Int, actual: Int) -> ClassicalCryptoError {
        ClassicalCryptoError(.invalidKeyLength, expected: expected, actual: actual)
    }

    /// A nonce had the wrong length (`SecretBox` needs 24 bytes).
    public static func invalidNonceLength(expected: Int, actual: Int) -> ClassicalCryptoError {
        ClassicalCryptoError(.invalidNonceLength, expected: expected, actual: actual)
    }

    /// A sealed box was shorter than the 40 bytes of nonce and tag every box carries.
    public static func sealedBoxTooShort(minimum: Int, actual: Int) -> ClassicalCryptoError {
        ClassicalCryptoError(.sealedBoxTooShort, actual: actual, minimum: minimum)
    }

    /// The Poly1305 tag did not verify: wrong key, or the box was altered or truncated.
    public static let authenticationFailed = ClassicalCryptoError(.authenticationFailed)

    /// A hash or key-derivation parameter was out of range (digest length, salt, personalization,
    /// Argon2 limits, output length).
    public static func invalidParameter(name: String, reason: String) -> ClassicalCryptoError {
        ClassicalCryptoError(.invalidParameter, name: name, reason: reason)
    }

    /// Argon2 could not run, usually because it could not allocate the memory the limits ask for.
    public static func passwordHashingFailed(errno: Int32) -> ClassicalCryptoError {
        ClassicalCryptoError(.passwordHashingFailed, errno: errno)
    }

    /// A file operation failed (`operation` is the system call, `errno` its error code).
    public static func fileSystem(operation: String, path: String, errno: Int32) -> ClassicalCryptoError {
        ClassicalCryptoError(.fileSystem, errno: errno, operation: operation, path: path)
    }

    /// A file changed between the passes of a streamed seal or open, so the result could not be
    /// trusted and was discarded.
    public static func fileChanged(path: String) -> ClassicalCryptoError {
        ClassicalCryptoError(.fileChanged, path: path)
    }

    /// Matches a thrown error equal to `pattern`, so `catch ClassicalCryptoError.x` keeps working as it did when
    /// this type was an enum.
    public static func ~= (pattern: Self, error: any Swift.Error) -> Bool { (error as? Self) == pattern }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        let expected = self.expected ?? 0
        let actual = self.actual ?? 0
        let minimum = self.minimum ?? 0
        let name = self.name ?? ""
        let reason = self.reason ?? ""
        let errno = self.errno ?? 0
        let operation = self.operation ?? ""
        let path = self.path ?? ""
        switch kind.code {
        case .invalidKeyLength: return "key must be \(expected) bytes, got \(actual)"
        case .invalidNonceLength: return "nonce must be \(expected) bytes, got \(actual)"
        case .sealedBoxTooShort: return "sealed box must be at least \(minimum) bytes, got \(actual)"
        case .authenticationFailed: return "sealed box failed authentication (wrong key or altered data)"
        case .invalidParameter: return "invalid \(name): \(reason)"
        case .passwordHashingFailed: return "Argon2 failed (errno \(errno)); not enough memory for the requested limits?"
        case .fileSystem: return "\(operation) failed for \(path) (errno \(errno))"
        case .fileChanged: return "\(path) changed while it was being sealed or opened"
        }
    }
}
