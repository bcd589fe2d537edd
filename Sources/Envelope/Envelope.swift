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

    /// Recovers the post key from an envelope sealed to `privateKey`.
    ///
    /// Accepts upper- or lowercase hex.
    /// - Throws: ``EnvelopeError/invalidHex(_:)`` for odd-length or non-hex text,
    ///   ``EnvelopeError/missingLengthPrefix(byteCount:)`` for fewer than 2 bytes,
    ///   ``EnvelopeError/lengthPrefixPastEnd(declared:available:)`` when the prefix claims more
    ///   bytes than follow, ``EnvelopeError/wrongCiphertextLength(expected:actual:)`` when the KEM
    ///   ciphertext is not 1088 bytes, ``EnvelopeError/sealedKeyFailed(_:)`` when the sealed post
    ///   key does not open (the envelope was sealed to another key, or altered), and
    ///   ``EnvelopeError/invalidPostKeyLength(expected:actual:)`` when it holds no 32-byte key.
    public static func open(_ envelope: some StringProtocol, with privateKey: MLKEM768.PrivateKey) throws(EnvelopeError) -> SymmetricKey {
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
            // ML-KEM refuses only a ciphertext of the wrong length, which was checked above.
            throw .wrongCiphertextLength(expected: kemCiphertextByteCount, actual: kemCiphertext.count)
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
public enum EnvelopeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The envelope text has an odd length or a character that is not a hex digit.
    case invalidHex(HexDecodingError)
    /// The envelope is shorter than its 2-byte length prefix.
    case missingLengthPrefix(byteCount: Int)
    /// The length prefix claims more KEM-ciphertext bytes than the envelope holds.
    case lengthPrefixPastEnd(declared: Int, available: Int)
    /// The KEM ciphertext is not the 1088 bytes of ML-KEM-768.
    case wrongCiphertextLength(expected: Int, actual: Int)
    /// The sealed post key did not open: the envelope was sealed to another key or altered (or,
    /// when sealing, the wrap could not be made).
    case sealedKeyFailed(ClassicalCryptoError)
    /// The post key is not 32 bytes.
    case invalidPostKeyLength(expected: Int, actual: Int)

    /// A readable explanation, for logs and error messages.
    public var description: String {
        switch self {
        case let .invalidHex(error): "envelope is not hex: \(error)"
        case let .missingLengthPrefix(count): "envelope of \(count) bytes has no 2-byte length prefix"
        case let .lengthPrefixPastEnd(declared, available):
            "envelope length prefix says \(declared) ciphertext bytes, only \(available) follow"
        case let .wrongCiphertextLength(expected, actual):
            "envelope KEM ciphertext must be \(expected) bytes, got \(actual)"
        case let .sealedKeyFailed(error): "envelope's sealed post key did not open: \(error)"
        case let .invalidPostKeyLength(expected, actual): "post key must be \(expected) bytes, got \(actual)"
        }
    }
}
