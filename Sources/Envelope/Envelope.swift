#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto
import ClassicalCrypto

/// The station's KEM-DEM key envelope: a post's 32-byte symmetric key wrapped to one recipient's
/// ML-KEM-768 public key.
///
/// Wire format (lowercase hex, 2324 characters, always starting `0440`):
/// ```
/// uint16be(len(kem_ct)) ‖ kem_ct (1088 B) ‖ SecretBox(wrap_key).seal(post_key) (24 + 16 + 32 B)
/// wrap_key = BLAKE2b-256(shared_secret, person: "orbit-kem")
/// ```
/// Use ``seal(_:to:)`` for the `self_envelope` of a new post (sealed to the station's key from
/// `/profile`) and ``open(_:with:)`` for an envelope from `/rewrap` or a follower's
/// `envelopes[uid]`.
public enum Envelope {
    /// Length of the ML-KEM-768 ciphertext inside an envelope.
    public static let kemCiphertextByteCount = MLKEM768.ciphertextByteCount
    /// Length of the wrapped post key.
    public static let postKeyByteCount = 32
    /// Length of an envelope in bytes: prefix, KEM ciphertext and sealed post key.
    public static let byteCount = 2 + kemCiphertextByteCount + SecretBox.overheadByteCount + postKeyByteCount
    /// Length of an envelope in hex characters.
    public static let hexCount = 2 * byteCount
    /// The BLAKE2b personalization that derives the wrap key from the shared secret.
    public static let wrapKeyPersonalization = "orbit-kem"

    /// Wraps `postKey` to `recipient`: encapsulates a fresh shared secret, derives the wrap key
    /// and seals the post key with a fresh nonce.
    ///
    /// - Returns: the envelope as 2324 lowercase hex characters.
    /// - Throws: ``EnvelopeError/invalidPostKeyLength(expected:actual:)`` unless `postKey` is 32 bytes.
    public static func seal(_ postKey: SymmetricKey, to recipient: MLKEM768.PublicKey) throws(EnvelopeError) -> String {
        let encapsulation = recipient.encapsulate()
        return try assemble(
            kemCiphertext: encapsulation.encapsulated, sharedSecret: encapsulation.sharedSecret,
            postKey: postKey, nonce: SecureRandom.bytes(count: SecretBox.nonceByteCount))
    }

    /// Recovers the post key from an envelope sealed to `privateKey`'s public key.
    ///
    /// `privateKey` only decapsulates the KEM ciphertext (`MLKEM768.PrivateKey`, or a key an
    /// app keeps where its secret cannot be read); deriving the wrap key and opening the sealed
    /// post key happen here. Accepts upper- or lowercase hex.
    /// - Throws: ``EnvelopeError/invalidHex(_:)`` for odd-length or non-hex text,
    ///   ``EnvelopeError/missingLengthPrefix(byteCount:)`` for fewer than 2 bytes,
    ///   ``EnvelopeError/lengthPrefixPastEnd(declared:available:)`` when the prefix claims more
    ///   bytes than follow, ``EnvelopeError/wrongCiphertextLength(expected:actual:)`` when the KEM
    ///   ciphertext is not 1088 bytes, ``EnvelopeError/sealedKeyFailed(_:)`` when the sealed post
    ///   key does not open (the envelope was sealed to another key, or altered), and
    ///   ``EnvelopeError/invalidPostKeyLength(expected:actual:)`` when it holds no 32-byte key, and
    ///   ``EnvelopeError/decapsulationFailed(_:)`` when `privateKey` cannot decapsulate or returns a
    ///   shared secret that is not 32 bytes.
    public static func open(
        _ envelope: some StringProtocol, with privateKey: some MLKEM768DecapsulationKey
    ) throws(EnvelopeError) -> SymmetricKey {
        let bytes: [UInt8]
        do {
            bytes = try Hex.decode(envelope)
        } catch {
            throw .invalidHex(error)
        }
        guard bytes.count >= 2 else { throw .missingLengthPrefix(byteCount: bytes.count) }
        let declared = Int(bytes[0]) << 8 | Int(bytes[1])
        guard declared <= bytes.count - 2 else {
            throw .lengthPrefixPastEnd(declared: declared, available: bytes.count - 2)
        }
        guard declared == kemCiphertextByteCount else {
            throw .wrongCiphertextLength(expected: kemCiphertextByteCount, actual: declared)
        }
        let kemCiphertext = bytes[2..<(2 + declared)]
        let sealedKey = bytes[(2 + declared)...]
        let sharedSecret: SymmetricKey
        do {
            sharedSecret = try privateKey.decapsulate(kemCiphertext)
        } catch {
            // The pure-Swift key refuses only a ciphertext of the wrong length, checked above; a
            // key kept elsewhere can fail for its own reasons (locked, authentication refused).
            throw .decapsulationFailed(String(describing: error))
        }
        let secretLength = sharedSecret.bitCount / 8
        guard secretLength == MLKEM768.sharedSecretByteCount else {
            throw .decapsulationFailed("the key returned a \(secretLength)-byte shared secret, not \(MLKEM768.sharedSecretByteCount)")
        }
        let postKey: SymmetricKey
        do {
            postKey = try SecretBox.openKey(sealedKey, using: wrapKey(sharedSecret: sharedSecret))
        } catch {
            throw .sealedKeyFailed(error)
        }
        let length = postKey.bitCount / 8
        guard length == postKeyByteCount else { throw .invalidPostKeyLength(expected: postKeyByteCount, actual: length) }
        return postKey
    }

    /// The SecretBox key that wraps the post key: BLAKE2b-256 of the ML-KEM shared secret,
    /// personalized with `"orbit-kem"` (zero-padded to 16 bytes, zero salt, no key).
    public static func wrapKey(sharedSecret: SymmetricKey) -> SymmetricKey {
        do {
            return try BLAKE2b.deriveKey(from: sharedSecret, byteCount: 32, personalization: wrapKeyPersonalization)
        } catch {
            // A 32-byte digest with a 9-byte personalization is always in range.
            preconditionFailure("BLAKE2b rejected fixed, valid parameters: \(error)")
        }
    }

    /// Builds the envelope from an encapsulation's parts and a nonce: the deterministic half of
    /// ``seal(_:to:)``.
    static func assemble(
        kemCiphertext: some DataProtocol, sharedSecret: SymmetricKey, postKey: SymmetricKey, nonce: [UInt8]
    ) throws(EnvelopeError) -> String {
        let length = postKey.bitCount / 8
        guard length == postKeyByteCount else { throw .invalidPostKeyLength(expected: postKeyByteCount, actual: length) }
        // The 2-byte prefix cannot hold any other length, and `open` accepts only this one.
        guard kemCiphertext.count == kemCiphertextByteCount else {
            throw .wrongCiphertextLength(expected: kemCiphertextByteCount, actual: kemCiphertext.count)
        }
        var envelope = [UInt8]()
        envelope.reserveCapacity(byteCount)
        envelope.append(UInt8(truncatingIfNeeded: kemCiphertext.count >> 8))
        envelope.append(UInt8(truncatingIfNeeded: kemCiphertext.count))
        envelope.append(contentsOf: kemCiphertext)
        let wrapKey = wrapKey(sharedSecret: sharedSecret)
        let sealed = postKey.withUnsafeBytes { keyBytes in
            Result { () throws(ClassicalCryptoError) in try SecretBox.seal(keyBytes, using: wrapKey, nonce: nonce) }
        }
        switch sealed {
        case let .success(box): envelope.append(contentsOf: box)
        case let .failure(error): throw .sealedKeyFailed(error)
        }
        return Hex.encode(envelope)
    }
}

/// Why an envelope could not be sealed or opened.
///
/// A struct rather than an enum, so a kind added in a later release does not break an app's
/// `switch`: switch over ``kind`` (`case .sealedKeyFailed:`, ending with `default:`) and read the details
/// from the properties. Two errors are equal when their kind and details are equal.
public struct EnvelopeError: KindedError, Sendable {
    /// What went wrong, without the details: compare it or `switch` over it (`case .sealedKeyFailed:`).
    public typealias Kind = ErrorKind<EnvelopeError>

    private enum Detail: Hashable, Sendable {
        case invalidHex(HexDecodingError)
        case missingLengthPrefix(byteCount: Int)
        case lengthPrefixPastEnd(declared: Int, available: Int)
        case wrongCiphertextLength(expected: Int, actual: Int)
        case sealedKeyFailed(ClassicalCryptoError)
        case invalidPostKeyLength(expected: Int, actual: Int)
        case decapsulationFailed(String)
    }

    /// What went wrong.
    public let kind: Kind
    private let detail: Detail

    private init(_ detail: Detail, _ kind: Kind) { (self.detail, self.kind) = (detail, kind) }

    /// The envelope text has an odd length or a character that is not a hex digit.
    public static func invalidHex(_ hexError: HexDecodingError) -> EnvelopeError {
        EnvelopeError(.invalidHex(hexError), .invalidHex)
    }

    /// The envelope is shorter than its 2-byte length prefix.
    public static func missingLengthPrefix(byteCount: Int) -> EnvelopeError {
        EnvelopeError(.missingLengthPrefix(byteCount: byteCount), .missingLengthPrefix)
    }

    /// The length prefix claims more KEM-ciphertext bytes than the envelope holds.
    public static func lengthPrefixPastEnd(declared: Int, available: Int) -> EnvelopeError {
        EnvelopeError(.lengthPrefixPastEnd(declared: declared, available: available), .lengthPrefixPastEnd)
    }

    /// The KEM ciphertext is not the 1088 bytes of ML-KEM-768.
    public static func wrongCiphertextLength(expected: Int, actual: Int) -> EnvelopeError {
        EnvelopeError(.wrongCiphertextLength(expected: expected, actual: actual), .wrongCiphertextLength)
    }

    /// The sealed post key did not open: the envelope was sealed to another key or altered (or,
    /// when sealing, the wrap could not be made).
    public static func sealedKeyFailed(_ cryptoError: ClassicalCryptoError) -> EnvelopeError {
        EnvelopeError(.sealedKeyFailed(cryptoError), .sealedKeyFailed)
    }

    /// The post key is not 32 bytes.
    public static func invalidPostKeyLength(expected: Int, actual: Int) -> EnvelopeError {
        EnvelopeError(.invalidPostKeyLength(expected: expected, actual: actual), .invalidPostKeyLength)
    }

    /// The recipient's key could not decapsulate the KEM ciphertext (a key kept elsewhere that is
    /// locked or whose use was refused), or gave a shared secret that is not 32 bytes.
    public static func decapsulationFailed(_ reason: String) -> EnvelopeError {
        EnvelopeError(.decapsulationFailed(reason), .decapsulationFailed)
    }

    /// Why the key could not decapsulate, for `Kind.decapsulationFailed`.
    public var reason: String? { if case .decapsulationFailed(let value) = detail { value } else { nil } }

    /// The hex decoder's refusal, for `Kind.invalidHex`.
    public var hexError: HexDecodingError? { if case .invalidHex(let value) = detail { value } else { nil } }

    /// The envelope's byte count, for `Kind.missingLengthPrefix`.
    public var byteCount: Int? { if case .missingLengthPrefix(let value) = detail { value } else { nil } }

    /// The ciphertext length the prefix claims, for `Kind.lengthPrefixPastEnd`.
    public var declared: Int? { if case .lengthPrefixPastEnd(let value, _) = detail { value } else { nil } }

    /// The bytes that follow the prefix, for `Kind.lengthPrefixPastEnd`.
    public var available: Int? { if case .lengthPrefixPastEnd(_, let value) = detail { value } else { nil } }

    /// The length required, for `Kind.wrongCiphertextLength` and `Kind.invalidPostKeyLength`.
    public var expected: Int? {
        switch detail {
        case .wrongCiphertextLength(let value, _), .invalidPostKeyLength(let value, _): value
        default: nil
        }
    }

    /// The length found, for `Kind.wrongCiphertextLength` and `Kind.invalidPostKeyLength`.
    public var actual: Int? {
        switch detail {
        case .wrongCiphertextLength(_, let value), .invalidPostKeyLength(_, let value): value
        default: nil
        }
    }

    /// The SecretBox's refusal, for `Kind.sealedKeyFailed`.
    public var cryptoError: ClassicalCryptoError? {
        switch detail {
        case .sealedKeyFailed(let value): value
        default: nil
        }
    }

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch detail {
        case let .invalidHex(error): "envelope is not hex: \(error)"
        case let .missingLengthPrefix(count): "envelope of \(count) bytes has no 2-byte length prefix"
        case let .lengthPrefixPastEnd(declared, available):
            "envelope length prefix says \(declared) ciphertext bytes, only \(available) follow"
        case let .wrongCiphertextLength(expected, actual):
            "envelope KEM ciphertext must be \(expected) bytes, got \(actual)"
        case let .sealedKeyFailed(error): "envelope's sealed post key did not open: \(error)"
        case let .invalidPostKeyLength(expected, actual): "post key must be \(expected) bytes, got \(actual)"
        case let .decapsulationFailed(reason): "the recipient key could not decapsulate the envelope: \(reason)"
        }
    }
}

extension ErrorKind where Failure == EnvelopeError {
    /// The envelope text has an odd length or a character that is not a hex digit.
    public static var invalidHex: Self { Self() }
    /// The envelope is shorter than its 2-byte length prefix.
    public static var missingLengthPrefix: Self { Self() }
    /// The length prefix claims more KEM-ciphertext bytes than the envelope holds.
    public static var lengthPrefixPastEnd: Self { Self() }
    /// The KEM ciphertext is not the 1088 bytes of ML-KEM-768.
    public static var wrongCiphertextLength: Self { Self() }
    /// The sealed post key did not open: the envelope was sealed to another key or altered (or,
    /// when sealing, the wrap could not be made).
    public static var sealedKeyFailed: Self { Self() }
    /// The post key is not 32 bytes.
    public static var invalidPostKeyLength: Self { Self() }
    /// The recipient's key could not decapsulate the KEM ciphertext.
    public static var decapsulationFailed: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.invalidHex, .missingLengthPrefix, .lengthPrefixPastEnd, .wrongCiphertextLength, .sealedKeyFailed, .invalidPostKeyLength, .decapsulationFailed] }
}
