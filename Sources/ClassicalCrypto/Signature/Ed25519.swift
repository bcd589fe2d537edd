#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(CSodium)
import CSodium
#endif
import PQCrypto

/// Ed25519 (RFC 8032) key pairs and signatures (in libsodium on Linux by default, in pure Swift
/// elsewhere; verification accepts exactly what libsodium 1.0.18 accepts), as an IPFS node's
/// identity key and to verify IPNS records.
///
/// A libp2p peer id (`12D3KooW…`) and an IPNS name (`k51…`) are derived from an Ed25519 public key;
/// the station emulator uses this to give its IPFS node a real identity. The 32-byte seed is the
/// secret: it is held in a `SymmetricKey` (zeroed on drop).
public enum Ed25519 {
    /// The seed length in bytes.
    public static let seedByteCount = 32
    /// The public key length in bytes.
    public static let publicKeyByteCount = 32
    /// The signature length in bytes.
    public static let signatureByteCount = 64

    /// An Ed25519 key pair, kept as its seed.
    public struct PrivateKey: Sendable {
        /// The 32-byte seed the key pair is derived from (secret).
        public let seed: SymmetricKey
        /// The 32-byte public key.
        public let publicKey: [UInt8]

        /// A fresh key pair from the system's secure random source.
        public init() {
            // A 32-byte random seed is always a valid seed, so this cannot fail.
            self.init(validSeed: SecureRandom.symmetricKey(byteCount: Ed25519.seedByteCount))
        }

        /// The key pair derived from a 32-byte seed (RFC 8032 "secret key").
        ///
        /// - Throws: ``ClassicalCryptoError/invalidKeyLength(expected:actual:)`` when the seed is not 32 bytes.
        public init(seed: SymmetricKey) throws(ClassicalCryptoError) {
            guard seed.bitCount == Ed25519.seedByteCount * 8 else {
                throw .invalidKeyLength(expected: Ed25519.seedByteCount, actual: seed.bitCount / 8)
            }
            self.init(validSeed: seed)
        }

        private init(validSeed seed: SymmetricKey) {
            #if canImport(CSodium)
            var (publicKey, secretKey) = Self.expand(seed)
            SecureMemory.zero(&secretKey)
            #else
            var publicKey = [UInt8](repeating: 0, count: Ed25519.publicKeyByteCount)
            publicKey.withUnsafeMutableBytes { output in
                seed.withUnsafeBytes { seedBytes in _ = Ed25519Core.publicKey(seed: seedBytes, into: output) }
            }
            #endif
            self.seed = seed
            self.publicKey = publicKey
        }
        #if canImport(CSodium)

        /// libsodium's 32-byte public key and 64-byte secret key (seed ‖ public key) for `seed`.
        private static func expand(_ seed: SymmetricKey) -> (publicKey: [UInt8], secretKey: [UInt8]) {
            SodiumLibrary.ensureInitialized()
            var publicKey = [UInt8](repeating: 0, count: Ed25519.publicKeyByteCount)
            var secretKey = [UInt8](repeating: 0, count: 64)
            seed.withUnsafeBytes { seedBytes in
                // The seed length was checked by the caller, so the buffer is never empty.
                guard let base = seedBytes.bindMemory(to: UInt8.self).baseAddress else { return }
                _ = crypto_sign_seed_keypair(&publicKey, &secretKey, base)
            }
            return (publicKey, secretKey)
        }

        #endif

        /// Signs `message` (pure Ed25519, deterministic).
        ///
        /// - Returns: the 64-byte signature.
        public func signature(for message: some DataProtocol) -> [UInt8] {
            #if !canImport(CSodium)
            var signature = [UInt8](repeating: 0, count: Ed25519.signatureByteCount)
            signature.withUnsafeMutableBytes { output in
                withContiguousBytes(of: message) { messageBytes in
                    seed.withUnsafeBytes { seedBytes in
                        publicKey.withUnsafeBytes { publicKeyBytes in
                            _ = Ed25519Core.sign(message: messageBytes, seed: seedBytes, publicKey: publicKeyBytes, into: output)
                        }
                    }
                }
            }
            return signature
            #else
            var (_, secretKey) = Self.expand(seed)
            defer { SecureMemory.zero(&secretKey) }
            var signature = [UInt8](repeating: 0, count: Ed25519.signatureByteCount)
            let bytes = [UInt8](message)
            _ = crypto_sign_detached(&signature, nil, bytes, UInt64(bytes.count), secretKey)
            return signature
            #endif
        }
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` under `publicKey`.
    public static func isValidSignature(_ signature: some DataProtocol, for message: some DataProtocol,
                                        publicKey: some DataProtocol) -> Bool {
        let signature = [UInt8](signature), publicKey = [UInt8](publicKey), message = [UInt8](message)
        guard signature.count == signatureByteCount, publicKey.count == publicKeyByteCount else { return false }
        #if canImport(CSodium)
        SodiumLibrary.ensureInitialized()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
        #else
        return signature.withUnsafeBytes { signatureBytes in
            message.withUnsafeBytes { messageBytes in
                publicKey.withUnsafeBytes { publicKeyBytes in
                    Ed25519Core.verify(signature: signatureBytes, message: messageBytes, publicKey: publicKeyBytes)
                }
            }
        }
        #endif
    }
}
