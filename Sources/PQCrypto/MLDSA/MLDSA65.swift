#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ML-DSA-65 (FIPS 204), the module-lattice signature scheme at NIST security category 3, shaped
/// like CryptoKit's `MLDSA65`.
///
/// Create a ``PrivateKey`` (fresh, from a 32-byte seed, or from the 4032-byte expanded encoding
/// that stations and dilithium-py exchange), sign with ``PrivateKey/signature(for:context:deterministic:)``
/// and check with ``PublicKey/isValidSignature(_:for:context:)``. This is pure ML-DSA with the
/// FIPS 204 message framing and an optional context of up to 255 bytes; HashML-DSA is not offered.
///
/// Key objects expand their matrix and secret vectors once, when they are created, so reuse one
/// object for many signatures rather than re-parsing the key each time.
public enum MLDSA65 {
    typealias P = MLDSA65Parameters

    /// An ML-DSA-65 signing key.
    ///
    /// The secret material (seed, encoding, and s1, s2, t0 laid out for the signer) is held in
    /// buffers that are zeroed when the last copy of the key is dropped.
    public struct PrivateKey: Sendable {
        let storage: MLDSA65PrivateKeyStorage

        init(storage: MLDSA65PrivateKeyStorage) {
            self.storage = storage
        }

        /// Generates a new key from 32 bytes of the system's secure random generator.
        public init() {
            let seed = MLDSABytes(count: P.seedBytes)
            SystemRandom.fill(UnsafeMutableRawBufferPointer(start: seed.base, count: seed.count))
            storage = MLDSA65PrivateKeyStorage(seed: seed)
        }

        /// Generates a new key from the system's secure random generator (same as ``init()``).
        public static func generate() -> PrivateKey {
            PrivateKey()
        }

        /// Derives the key from its 32-byte seed ξ (ML-DSA.KeyGen_internal), the compact form to
        /// store a key in.
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` unless the seed is 32 bytes.
        public init(seedRepresentation: some DataProtocol) throws(PQCryptoError) {
            guard seedRepresentation.count == P.seedBytes else {
                throw .invalidLength(what: "ML-DSA-65 seed", expected: P.seedBytes, actual: seedRepresentation.count)
            }
            let seed = MLDSABytes(count: P.seedBytes)
            _ = seedRepresentation.copyBytes(to: UnsafeMutableRawBufferPointer(start: seed.base, count: seed.count))
            storage = MLDSA65PrivateKeyStorage(seed: seed)
        }

        /// Loads the 4032-byte FIPS 204 private-key encoding ρ ‖ K ‖ tr ‖ s1 ‖ s2 ‖ t0 (the `sk`
        /// that stations and dilithium-py produce).
        ///
        /// The key is checked: s1 and s2 coefficients must lie in [−4, 4], and t0 and tr must match
        /// the public key recomputed from ρ, s1 and s2.
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` unless the encoding is
        ///   4032 bytes; ``PQCryptoError/invalidPrivateKey(reason:)`` when a check fails.
        public init(expandedRepresentation: some DataProtocol) throws(PQCryptoError) {
            guard expandedRepresentation.count == P.privateKeyBytes else {
                throw .invalidLength(what: "ML-DSA-65 private key", expected: P.privateKeyBytes,
                                     actual: expandedRepresentation.count)
            }
            let encoded = MLDSABytes(count: P.privateKeyBytes)
            _ = expandedRepresentation.copyBytes(
                to: UnsafeMutableRawBufferPointer(start: encoded.base, count: encoded.count))
            storage = try MLDSA65PrivateKeyStorage.load(expanded: encoded)
        }

        /// The 32-byte seed ξ, or nil when the key was loaded from its expanded encoding (which
        /// does not contain the seed).
        public var seedRepresentation: Data? {
            storage.seed.map { Data(bytes: $0.base, count: $0.count) }
        }

        /// The 4032-byte FIPS 204 private-key encoding (the form dilithium-py and stations use).
        ///
        /// A `Data` is never zeroed: prefer ``expandedSecret``, which holds the same bytes in
        /// zeroed-on-drop storage.
        public var expandedRepresentation: Data {
            Data(bytes: storage.encoded.base, count: storage.encoded.count)
        }

        /// The 4032-byte private-key encoding (as ``expandedRepresentation``) in storage that is
        /// zeroed when dropped.
        public var expandedSecret: SecretBytes {
            SecretBytes(copying: UnsafeRawBufferPointer(start: storage.encoded.base, count: storage.encoded.count))
        }

        /// Loads the 4032-byte private-key encoding from zeroizable storage.
        ///
        /// - Throws: as ``init(expandedRepresentation:)``.
        public init(expandedSecret: SecretBytes) throws(PQCryptoError) {
            self = try expandedSecret.withUnsafeBytes { bytes throws(PQCryptoError) in try PrivateKey(expandedRepresentation: bytes) }
        }

        /// The matching public key.
        public var publicKey: PublicKey {
            PublicKey(storage: storage.publicKey)
        }

        /// Signs `message` with ML-DSA.Sign (FIPS 204 Algorithm 2): pure ML-DSA over
        /// M' = 0 ‖ len(context) ‖ context ‖ message.
        ///
        /// By default the signature is hedged: it mixes 32 fresh random bytes into the per-signature
        /// randomness, so two signatures of one message differ. With `deterministic: true` the
        /// randomness is 32 zero bytes and the same inputs always give the same signature.
        ///
        /// - Parameters:
        ///   - message: the bytes to sign.
        ///   - context: an application context string of at most 255 bytes (empty by default).
        ///   - deterministic: use the deterministic variant instead of the hedged one.
        /// - Returns: the 3309-byte signature.
        /// - Throws: ``PQCryptoError/contextTooLong(length:)`` when the context exceeds 255 bytes.
        public func signature(
            for message: some DataProtocol, context: some DataProtocol = Data(), deterministic: Bool = false
        ) throws(PQCryptoError) -> Data {
            guard context.count <= P.maxContextBytes else { throw .contextTooLong(length: context.count) }
            let randomness = MLDSABytes(count: 32)
            if !deterministic { SystemRandom.fill(UnsafeMutableRawBufferPointer(start: randomness.base, count: randomness.count)) }
            return signature(for: message, context: context, randomness: randomness.rawBytes)
        }

        /// External-interface signing with a given rnd (for known-answer tests and the public API).
        func signature(
            for message: some DataProtocol, context: some DataProtocol, randomness: UnsafeRawBufferPointer
        ) -> Data {
            let mu = MLDSABytes(count: P.hashBytes)
            var hash = MLDSAHash()
            hash.absorb(storage.tr)
            hash.absorbFramedMessage(message, context: context)
            hash.finalize(into: UnsafeMutableRawBufferPointer(start: mu.base, count: mu.count))
            let signature = storage.sign(mu: mu.rawBytes, randomness: randomness)
            return Data(bytes: signature.base, count: signature.count)
        }
    }

    /// An ML-DSA-65 verification key.
    public struct PublicKey: Sendable {
        let storage: MLDSA65PublicKeyStorage

        init(storage: MLDSA65PublicKeyStorage) {
            self.storage = storage
        }

        /// Loads the 1952-byte FIPS 204 public-key encoding ρ ‖ t1 and expands it (the matrix Â, and
        /// t1 laid out for the verifier) so that each verification starts from there.
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` unless the encoding is
        ///   1952 bytes (every 1952-byte string is a valid key).
        public init(rawRepresentation: some DataProtocol) throws(PQCryptoError) {
            guard rawRepresentation.count == P.publicKeyBytes else {
                throw .invalidLength(what: "ML-DSA-65 public key", expected: P.publicKeyBytes,
                                     actual: rawRepresentation.count)
            }
            // Not zeroed first: copyBytes fills all of it (the count was checked).
            let encoded = MLDSABytes(count: P.publicKeyBytes, secret: false, zeroed: false)
            _ = rawRepresentation.copyBytes(to: UnsafeMutableRawBufferPointer(start: encoded.base, count: encoded.count))
            storage = MLDSA65PublicKeyStorage(encoded: encoded)
        }

        /// The 1952-byte FIPS 204 encoding.
        public var rawRepresentation: Data {
            Data(bytes: storage.encoded.base, count: storage.encoded.count)
        }

        /// Checks a pure ML-DSA signature (ML-DSA.Verify, FIPS 204 Algorithm 3) of `message` under
        /// `context`.
        ///
        /// Returns false, never throwing or trapping, for anything that is not a valid signature:
        /// a wrong length, a malformed hint, an out-of-range z, a wrong message or context, or a
        /// context longer than 255 bytes.
        public func isValidSignature(
            _ signature: some DataProtocol, for message: some DataProtocol, context: some DataProtocol = Data()
        ) -> Bool {
            guard context.count <= P.maxContextBytes, signature.count == P.signatureBytes else { return false }
            let mu = MLDSABytes(count: P.hashBytes)
            var hash = MLDSAHash()
            hash.absorb(storage.tr.rawBytes)
            hash.absorbFramedMessage(message, context: context)
            hash.finalize(into: UnsafeMutableRawBufferPointer(start: mu.base, count: mu.count))
            return verify(signature, mu: mu.rawBytes)
        }

        /// Verify_internal from μ on, for any DataProtocol signature.
        func verify(_ signature: some DataProtocol, mu: UnsafeRawBufferPointer) -> Bool {
            if let result = signature.withContiguousStorageIfAvailable({ buffer in
                storage.verify(mu: mu, signature: UnsafeRawBufferPointer(buffer))
            }) {
                return result
            }
            return Array(signature).withUnsafeBytes { storage.verify(mu: mu, signature: $0) }
        }
    }
}
