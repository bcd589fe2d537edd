#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// ML-KEM-768 (FIPS 203), the key-encapsulation mechanism a Cipher Station uses to seal post keys.
///
/// Shaped like CryptoKit's `MLKEM768`: a ``PrivateKey`` decapsulates, its ``PublicKey``
/// encapsulates. Keys load from the encodings stations and kyber-py exchange (the 1184-byte
/// encapsulation key, the 2400-byte expanded decapsulation key) or from the 64-byte seed `d‖z`.
///
/// ```swift
/// let privateKey = MLKEM768.PrivateKey()
/// let result = privateKey.publicKey.encapsulate()
/// let secret = try privateKey.decapsulate(result.encapsulated)   // == result.sharedSecret
/// ```
public enum MLKEM768 {
    /// Length of an encoded encapsulation (public) key.
    public static let publicKeyByteCount = 1184
    /// Length of an encoded (expanded) decapsulation key.
    public static let expandedPrivateKeyByteCount = 2400
    /// Length of the seed form of a private key, `d ‖ z`.
    public static let seedByteCount = 64
    /// Length of a ciphertext.
    public static let ciphertextByteCount = 1088
    /// Length of a shared secret.
    public static let sharedSecretByteCount = 32

    /// The result of ``PublicKey/encapsulate()``: the shared secret and the ciphertext to send.
    public struct EncapsulationResult: Sendable {
        /// The 32-byte shared secret; the holder of the private key recovers it from ``encapsulated``.
        public let sharedSecret: SymmetricKey
        /// The 1088-byte ciphertext to send to the private key's holder.
        public let encapsulated: Data
    }

    /// An encapsulation key. Parsing checks it (FIPS 203 §7.2) and expands the matrix Â once, so
    /// later ``encapsulate()`` calls on the same key are cheaper.
    public struct PublicKey: Sendable {
        @usableFromInline let storage: MLKEMPublicKeyStorage

        @usableFromInline init(storage: MLKEMPublicKeyStorage) {
            self.storage = storage
        }

        /// Loads a 1184-byte encapsulation key.
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` for another length;
        ///   ``PQCryptoError/encapsulationKeyNotReduced`` when a coefficient is not below q.
        public init(rawRepresentation: some DataProtocol) throws(PQCryptoError) {
            let bytes = rawRepresentation.byteArray
            guard bytes.count == MLKEM768.publicKeyByteCount else {
                throw .invalidLength(what: "ML-KEM-768 public key", expected: MLKEM768.publicKeyByteCount, actual: bytes.count)
            }
            guard let storage = MLKEMPublicKeyStorage(encoded: bytes) else { throw .encapsulationKeyNotReduced }
            self.storage = storage
        }

        /// The 1184-byte encoding.
        public var rawRepresentation: Data { Data(storage.encoded) }

        /// Generates a fresh shared secret and its ciphertext for this key.
        public func encapsulate() -> EncapsulationResult {
            SystemRandom.withBytes(count: 32) { encapsulate(randomness: $0) }
        }

        /// ML-KEM.Encaps_internal with caller-supplied 32-byte randomness `m`, for known-answer tests.
        @usableFromInline func encapsulate(randomness m: [UInt8]) -> EncapsulationResult {
            m.withUnsafeBytes { encapsulate(randomness: $0) }
        }

        func encapsulate(randomness m: UnsafeRawBufferPointer) -> EncapsulationResult {
            precondition(m.count == 32, "ML-KEM randomness is 32 bytes")  // internal callers only
            var ciphertext = Data(count: MLKEM768.ciphertextByteCount)
            let secret = SecureBytes(count: 32) { secretBuffer in
                ciphertext.withUnsafeMutableBytes { cipherBuffer in
                    guard let mBase = m.baseAddress?.assumingMemoryBound(to: UInt8.self),
                          let secretBase = secretBuffer.baseAddress,
                          let cipherBase = cipherBuffer.baseAddress else { return }
                    mlkemEncapsulate(
                        storage, randomness: mBase,
                        sharedSecret: secretBase.assumingMemoryBound(to: UInt8.self),
                        ciphertext: cipherBase.assumingMemoryBound(to: UInt8.self))
                }
            }
            return EncapsulationResult(sharedSecret: SymmetricKey(storage: secret), encapsulated: ciphertext)
        }
    }

    /// A decapsulation key. Secret material is held in buffers that are zeroed when the last copy
    /// of the key is dropped.
    public struct PrivateKey: Sendable {
        @usableFromInline let storage: MLKEMPrivateKeyStorage

        /// Generates a fresh key from the system's secure random generator.
        public init() {
            storage = SystemRandom.withBytes(count: MLKEM768.seedByteCount) { Self.generate(seed: $0) }
        }

        /// Generates a fresh key; the same as ``init()``.
        public static func generate() -> PrivateKey {
            PrivateKey()
        }

        /// Derives the key from its 64-byte seed `d ‖ z` (ML-KEM.KeyGen_internal).
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` for another length.
        public init(seedRepresentation: some DataProtocol) throws(PQCryptoError) {
            var seed = seedRepresentation.byteArray
            defer { seed.withUnsafeMutableBufferPointer { secureZero($0) } }
            guard seed.count == MLKEM768.seedByteCount else {
                throw .invalidLength(what: "ML-KEM-768 seed", expected: MLKEM768.seedByteCount, actual: seed.count)
            }
            storage = seed.withUnsafeBytes { Self.generate(seed: $0) }
        }

        /// Loads the 2400-byte FIPS 203 decapsulation key `dk_PKE ‖ ek ‖ H(ek) ‖ z` that stations and
        /// kyber-py store.
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` for another length;
        ///   ``PQCryptoError/decapsulationKeyHashMismatch`` when the embedded H(ek) does not match
        ///   (FIPS 203 §7.3); ``PQCryptoError/encapsulationKeyNotReduced`` when the embedded ek fails
        ///   the modulus check.
        public init(expandedRepresentation: some DataProtocol) throws(PQCryptoError) {
            var bytes = expandedRepresentation.byteArray
            defer { bytes.withUnsafeMutableBufferPointer { secureZero($0) } }
            guard bytes.count == MLKEM768.expandedPrivateKeyByteCount else {
                throw .invalidLength(
                    what: "ML-KEM-768 private key", expected: MLKEM768.expandedPrivateKeyByteCount, actual: bytes.count)
            }
            let encoded = Array(bytes[1152..<2336])
            guard constantTimeEquals(SHA3_256.hash(data: encoded), bytes[2336..<2368]) else {
                throw .decapsulationKeyHashMismatch
            }
            guard let publicKey = MLKEMPublicKeyStorage(encoded: encoded) else { throw .encapsulationKeyNotReduced }
            let sHat = UnsafeMutablePointer<Int16>.allocate(capacity: 3 * 256)
            bytes.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                for i in 0..<3 {
                    // dk_PKE is not range-checked by FIPS 203; reduce so arithmetic stays in bounds.
                    _ = kyberDecode12(base + 384 * i, into: sHat + 256 * i)
                }
            }
            for x in 0..<(3 * 256) { sHat[x] = kyberCanonical(kyberBarrettReduce(sHat[x])) }
            let z = SecureBytes(bytes: bytes[2368..<2400])
            storage = MLKEMPrivateKeyStorage(publicKey: publicKey, sHat: sHat, z: z, seed: nil)
        }

        @usableFromInline init(storage: MLKEMPrivateKeyStorage) {
            self.storage = storage
        }

        /// KeyGen_internal from exactly 64 bytes `d ‖ z` (the callers check the length).
        static func generate(seed: UnsafeRawBufferPointer) -> MLKEMPrivateKeyStorage {
            guard seed.count == MLKEM768.seedByteCount, let d = seed.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                preconditionFailure("ML-KEM seed is 64 bytes")  // internal callers only
            }
            return mlkemGenerateKey(d: d, z: d + 32)
        }

        /// The 64-byte seed `d ‖ z`, or nil when the key was loaded from its expanded form.
        public var seedRepresentation: Data? {
            storage.seed.map { Data(UnsafeRawBufferPointer($0.pointer)) }
        }

        /// The 2400-byte FIPS 203 decapsulation key `dk_PKE ‖ ek ‖ H(ek) ‖ z`.
        ///
        /// A `Data` is never zeroed: prefer ``expandedSecret``, which holds the same bytes in
        /// zeroed-on-drop storage.
        public var expandedRepresentation: Data {
            var out = Data(count: MLKEM768.expandedPrivateKeyByteCount)
            out.withUnsafeMutableBytes { writeExpanded(into: $0) }
            return out
        }

        /// The 2400-byte decapsulation key (as ``expandedRepresentation``), written straight into
        /// storage that is zeroed when dropped.
        public var expandedSecret: SecretBytes {
            SecretBytes(count: MLKEM768.expandedPrivateKeyByteCount) { writeExpanded(into: $0) }
        }

        /// Loads a 2400-byte decapsulation key from zeroizable storage (no other copy is made
        /// except scratch space that is zeroed before this returns).
        ///
        /// - Throws: as ``init(expandedRepresentation:)``.
        public init(expandedSecret: SecretBytes) throws(PQCryptoError) {
            self = try expandedSecret.withUnsafeBytes { bytes throws(PQCryptoError) in try PrivateKey(expandedRepresentation: bytes) }
        }

        private func writeExpanded(into buffer: UnsafeMutableRawBufferPointer) {
            guard buffer.count == MLKEM768.expandedPrivateKeyByteCount,
                  let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            for i in 0..<3 { kyberEncode12(storage.sHat + 256 * i, into: base + 384 * i) }
            let publicKey = storage.publicKey
            UnsafeMutableRawBufferPointer(rebasing: buffer[1152..<2336]).copyBytes(from: publicKey.encoded)
            UnsafeMutableRawBufferPointer(rebasing: buffer[2336..<2368]).copyBytes(from: publicKey.hash)
            UnsafeMutableRawBufferPointer(rebasing: buffer[2368..<2400]).copyMemory(
                from: UnsafeRawBufferPointer(storage.z.pointer))
        }

        /// The matching encapsulation key.
        public var publicKey: PublicKey { PublicKey(storage: storage.publicKey) }

        /// Recovers the shared secret from a 1088-byte ciphertext.
        ///
        /// A ciphertext that was tampered with does not throw: it yields a pseudo-random secret
        /// (implicit rejection, FIPS 203 §6.3), so the failure shows only when the secret is used.
        ///
        /// - Throws: ``PQCryptoError/invalidLength(what:expected:actual:)`` for a ciphertext of
        ///   another length.
        public func decapsulate(_ encapsulated: some DataProtocol) throws(PQCryptoError) -> SymmetricKey {
            let ciphertext = encapsulated.byteArray
            guard ciphertext.count == MLKEM768.ciphertextByteCount else {
                throw .invalidLength(what: "ML-KEM-768 ciphertext", expected: MLKEM768.ciphertextByteCount, actual: ciphertext.count)
            }
            let secret = SecureBytes(count: 32) { secretBuffer in
                ciphertext.withUnsafeBufferPointer { cipher in
                    guard let cipherBase = cipher.baseAddress, let secretBase = secretBuffer.baseAddress else { return }
                    mlkemDecapsulate(storage, ciphertext: cipherBase, sharedSecret: secretBase.assumingMemoryBound(to: UInt8.self))
                }
            }
            return SymmetricKey(storage: secret)
        }
    }
}
