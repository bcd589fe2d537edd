#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(CSodium)
import CSodium
#endif
import PQCrypto

/// Password-based key derivation with Argon2 (RFC 9106), byte for byte libsodium's `crypto_pwhash`
/// (in libsodium on Linux by default, in pure Swift elsewhere), for keys that protect key files at
/// rest.
///
/// Argon2id is the default and the right choice for new files. Argon2i is here because the
/// station protects its own key files with it (PyNaCl `argon2i.kdf`).
public enum Argon2 {
    /// The salt length in bytes.
    public static let saltByteCount = 16
    /// The shortest derived key, in bytes.
    public static let minimumKeyByteCount = 16

    /// The Argon2 variant.
    public enum Variant: Sendable, Equatable {
        /// Argon2id v1.3 (`crypto_pwhash_ALG_ARGON2ID13`).
        case argon2id
        /// Argon2i v1.3 (`crypto_pwhash_ALG_ARGON2I13`).
        case argon2i
    }

    /// The cost of one derivation: passes over memory and memory in bytes.
    public struct Limits: Sendable, Equatable {
        /// Number of passes (libsodium's `opslimit`): at least 1 for Argon2id, 3 for Argon2i.
        public var operations: Int
        /// Memory in bytes (libsodium's `memlimit`): at least 8 KiB.
        public var memoryBytes: Int

        /// Creates limits; they are checked when a key is derived.
        public init(operations: Int, memoryBytes: Int) {
            self.operations = operations
            self.memoryBytes = memoryBytes
        }

        /// libsodium's interactive limits (2 passes, 64 MiB): for keys unlocked on every launch.
        public static let interactive = Limits(operations: 2, memoryBytes: 64 << 20)
        /// libsodium's moderate limits (3 passes, 256 MiB): for key files.
        public static let moderate = Limits(operations: 3, memoryBytes: 256 << 20)
        /// libsodium's sensitive limits (4 passes, 1 GiB): for rarely used, high-value keys.
        public static let sensitive = Limits(operations: 4, memoryBytes: 1 << 30)
    }

    /// Derives a `byteCount`-byte key from `password` and `salt`.
    ///
    /// - Throws: ``ClassicalCryptoError/invalidParameter(name:reason:)`` for a salt that is not 16 bytes,
    ///   a key shorter than 16 bytes or limits out of range;
    ///   ``ClassicalCryptoError/passwordHashingFailed(errno:)`` when Argon2 cannot run (out of memory).
    public static func deriveKey(
        byteCount: Int = 32, password: some DataProtocol, salt: some DataProtocol, limits: Limits,
        variant: Variant = .argon2id
    ) throws(ClassicalCryptoError) -> SymmetricKey {
        guard byteCount >= minimumKeyByteCount else {
            throw .invalidParameter(name: "Argon2 key length", reason: "must be at least 16 bytes, got \(byteCount)")
        }
        guard salt.count == saltByteCount else {
            throw .invalidParameter(name: "Argon2 salt", reason: "must be 16 bytes, got \(salt.count)")
        }
        let minimumOperations = variant == .argon2id ? 1 : 3
        guard limits.operations >= minimumOperations, UInt64(limits.operations) <= UInt64(UInt32.max) else {
            throw .invalidParameter(
                name: "Argon2 operations", reason: "must be at least \(minimumOperations), got \(limits.operations)")
        }
        guard limits.memoryBytes >= 8192, UInt64(limits.memoryBytes) <= 4_398_046_510_080 else {
            throw .invalidParameter(name: "Argon2 memory", reason: "must be at least 8192 bytes, got \(limits.memoryBytes)")
        }
        let saltBytes = [UInt8](salt)
        #if !canImport(CSodium)
        // libsodium's crypto_pwhash: one lane, memory in KiB, no secret and no associated data.
        return try SymmetricKey.makeSecure(byteCount: byteCount) { output throws(ClassicalCryptoError) in
            let succeeded = withContiguousBytes(of: password) { passwordBuffer in
                saltBytes.withUnsafeBytes { saltBuffer in
                    let none = UnsafeRawBufferPointer(start: nil, count: 0)
                    do {
                        try Argon2Core.deriveKey(
                            into: output, password: passwordBuffer, salt: saltBuffer, passes: limits.operations,
                            memoryKiB: limits.memoryBytes / 1024, lanes: 1, secret: none, associatedData: none,
                            variant: variant == .argon2id ? .argon2id : .argon2i)
                        return true
                    } catch {
                        return false
                    }
                }
            }
            // The limits were checked above, so the only failure left is memory that cannot be had.
            guard succeeded else { throw .passwordHashingFailed(errno: ENOMEM) }
        }
        #else
        SodiumLibrary.ensureInitialized()
        let algorithm = variant == .argon2id ? crypto_pwhash_ALG_ARGON2ID13 : crypto_pwhash_ALG_ARGON2I13
        return try SymmetricKey.makeSecure(byteCount: byteCount) { output throws(ClassicalCryptoError) in
            let status = withContiguousBytes(of: password) { passwordBuffer in
                withBase(passwordBuffer) { passwordPointer in
                    passwordPointer.withMemoryRebound(to: CChar.self, capacity: max(passwordBuffer.count, 1)) { chars in
                        crypto_pwhash(
                            output.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(byteCount),
                            chars, UInt64(passwordBuffer.count), saltBytes,
                            UInt64(limits.operations), limits.memoryBytes, algorithm)
                    }
                }
            }
            guard status == 0 else { throw .passwordHashingFailed(errno: errno) }
        }
        #endif
    }

    /// Derives a key from the UTF-8 bytes of `password` (see
    /// ``deriveKey(byteCount:password:salt:limits:variant:)-(_,DataProtocol,_,_,_)``).
    ///
    /// - Throws: as the byte form.
    public static func deriveKey(
        byteCount: Int = 32, password: String, salt: some DataProtocol, limits: Limits, variant: Variant = .argon2id
    ) throws(ClassicalCryptoError) -> SymmetricKey {
        try deriveKey(byteCount: byteCount, password: Array(password.utf8), salt: salt, limits: limits, variant: variant)
    }
}
