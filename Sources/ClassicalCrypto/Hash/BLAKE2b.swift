#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(CSodium)
import CSodium
#endif
import PQCrypto

/// BLAKE2b (RFC 7693) with libsodium's full parameter block: digest length, key, salt and
/// personalization.
///
/// The station derives an envelope's wrap key as BLAKE2b-256 personalized with `"orbit-kem"`:
/// use ``deriveKey(from:byteCount:personalization:)``. Salt and personalization shorter than
/// 16 bytes are zero-padded, as libsodium and Python's `hashlib.blake2b` do. The digest length is
/// part of the parameter block, so BLAKE2b-256 is *not* BLAKE2b-512 cut to 32 bytes.
public enum BLAKE2b {
    /// The longest digest (and key) BLAKE2b supports, in bytes.
    public static let maximumByteCount = 64
    /// Salt and personalization are at most this long (shorter ones are zero-padded).
    public static let parameterByteCount = 16

    /// Returns the BLAKE2b digest of `data`.
    ///
    /// - Parameters:
    ///   - data: the bytes to hash.
    ///   - digestByteCount: 1...64 (32 for BLAKE2b-256).
    ///   - key: an optional MAC key of 1...64 bytes (`nil` or empty for an unkeyed hash).
    ///   - salt: at most 16 bytes, zero-padded.
    ///   - personalization: at most 16 bytes, zero-padded.
    /// - Throws: ``ClassicalCryptoError/invalidParameter(name:reason:)`` when a length is out of range,
    ///   ``ClassicalCryptoError/invalidKeyLength(expected:actual:)`` for a key over 64 bytes.
    public static func hash(
        data: some DataProtocol, digestByteCount: Int = 32, key: SymmetricKey? = nil,
        salt: some DataProtocol = [UInt8](), personalization: some DataProtocol = [UInt8]()
    ) throws(ClassicalCryptoError) -> [UInt8] {
        let parameters = try Parameters(digestByteCount: digestByteCount, key: key, salt: salt, personalization: personalization)
        var digest = [UInt8](repeating: 0, count: digestByteCount)
        digest.withUnsafeMutableBytes { output in
            withContiguousBytes(of: data) { input in parameters.hash(input, into: output) }
        }
        return digest
    }

    /// Returns the BLAKE2b digest of `data` personalized with the UTF-8 bytes of `personalization`
    /// (at most 16), unkeyed with a zero salt: Python's
    /// `hashlib.blake2b(data, digest_size=digestByteCount, person=personalization)`.
    ///
    /// - Throws: ``ClassicalCryptoError/invalidParameter(name:reason:)`` when a length is out of range.
    public static func hash(
        data: some DataProtocol, digestByteCount: Int = 32, personalization: String
    ) throws(ClassicalCryptoError) -> [UInt8] {
        try hash(data: data, digestByteCount: digestByteCount, personalization: Array(personalization.utf8))
    }

    /// Derives a key from a secret (an ML-KEM shared secret) as BLAKE2b of the secret with the
    /// given personalization, unkeyed with a zero salt. The secret and the result stay in
    /// zeroed-on-drop storage.
    ///
    /// The envelope wrap key is `deriveKey(from: sharedSecret, personalization: "orbit-kem")`.
    /// - Throws: ``ClassicalCryptoError/invalidParameter(name:reason:)`` when a length is out of range.
    public static func deriveKey(
        from secret: SymmetricKey, byteCount: Int = 32, personalization: String
    ) throws(ClassicalCryptoError) -> SymmetricKey {
        let parameters = try Parameters(
            digestByteCount: byteCount, key: nil, salt: [UInt8](), personalization: Array(personalization.utf8))
        return SymmetricKey.makeSecure(byteCount: byteCount) { output in
            secret.withUnsafeBytes { input in parameters.hash(input, into: output) }
        }
    }

    /// Checked, padded parameters for one call.
    private struct Parameters {
        let digestByteCount: Int
        let key: SymmetricKey?
        let salt: [UInt8]
        let personalization: [UInt8]

        init(
            digestByteCount: Int, key: SymmetricKey?, salt: some DataProtocol, personalization: some DataProtocol
        ) throws(ClassicalCryptoError) {
            guard (1...maximumByteCount).contains(digestByteCount) else {
                throw .invalidParameter(name: "BLAKE2b digest length", reason: "must be 1...64 bytes, got \(digestByteCount)")
            }
            if let key, key.byteCount > maximumByteCount {
                throw .invalidKeyLength(expected: maximumByteCount, actual: key.byteCount)
            }
            guard salt.count <= parameterByteCount else {
                throw .invalidParameter(name: "BLAKE2b salt", reason: "must be at most 16 bytes, got \(salt.count)")
            }
            guard personalization.count <= parameterByteCount else {
                throw .invalidParameter(
                    name: "BLAKE2b personalization", reason: "must be at most 16 bytes, got \(personalization.count)")
            }
            self.digestByteCount = digestByteCount
            self.key = key
            self.salt = Array(salt) + [UInt8](repeating: 0, count: parameterByteCount - salt.count)
            self.personalization = Array(personalization)
                + [UInt8](repeating: 0, count: parameterByteCount - personalization.count)
        }

        func hash(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) {
            #if !canImport(CSodium)
            salt.withUnsafeBytes { saltBuffer in
                personalization.withUnsafeBytes { personBuffer in
                    func run(_ keyBuffer: UnsafeRawBufferPointer) {
                        BLAKE2bHasher.hash(into: output, message: input, key: keyBuffer, salt: saltBuffer, personalization: personBuffer)
                    }
                    if let key { key.withUnsafeBytes(run) } else { run(UnsafeRawBufferPointer(start: nil, count: 0)) }
                }
            }
            #else
            SodiumLibrary.ensureInitialized()
            let out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            withBase(input) { inputPointer in
                salt.withUnsafeBufferPointer { saltPointer in
                    personalization.withUnsafeBufferPointer { personPointer in
                        let call = { (keyPointer: UnsafePointer<UInt8>?, keyCount: Int) in
                            _ = crypto_generichash_blake2b_salt_personal(
                                out, digestByteCount, inputPointer, UInt64(input.count), keyPointer, keyCount,
                                saltPointer.baseAddress!, personPointer.baseAddress!)
                        }
                        if let key, key.byteCount > 0 {
                            key.withUnsafeBytes { keyBuffer in
                                call(keyBuffer.baseAddress!.assumingMemoryBound(to: UInt8.self), keyBuffer.count)
                            }
                        } else {
                            call(nil, 0)
                        }
                    }
                }
            }
            #endif
        }
    }
}
