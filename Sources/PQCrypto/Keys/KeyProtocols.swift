#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A private key that signs with ML-DSA-65 and gives its public key: what signs a device's
/// requests.
///
/// ``MLDSA65/PrivateKey`` is the default implementation (pure Swift, on every platform). An app
/// can bring a key whose secret never leaves where it lives (CryptoKit's
/// `SecureEnclave.MLDSA65.PrivateKey` on iOS and macOS 26, a hardware token): the SDK only asks
/// it to sign and for its public key, never for its secret bytes.
public protocol MLDSA65SigningKey: Sendable {
    /// The ML-DSA-65 public key the signatures verify with, as the station stores it.
    var publicKey: MLDSA65.PublicKey { get }

    /// Signs `message` with pure ML-DSA-65 (FIPS 204 ML-DSA.Sign) and an empty context, as the
    /// station verifies; hedged or deterministic, as the key chooses.
    ///
    /// - Returns: the 3309-byte signature.
    /// - Throws: when the key cannot sign (for example, the user refused an authentication the
    ///   key requires).
    func signature(for message: some DataProtocol) throws -> Data
}

/// A private key that decapsulates ML-KEM-768 ciphertexts and gives its public key: what opens
/// the key envelopes sealed to a device or a follower.
///
/// ``MLKEM768/PrivateKey`` is the default implementation (pure Swift, on every platform). An app
/// can bring a key whose secret never leaves where it lives (CryptoKit's
/// `SecureEnclave.MLKEM768.PrivateKey` on iOS and macOS 26): the SDK only asks it to decapsulate
/// and for its public key, never for its secret bytes.
public protocol MLKEM768DecapsulationKey: Sendable {
    /// The ML-KEM-768 public key ciphertexts are encapsulated to, as the station stores it.
    var publicKey: MLKEM768.PublicKey { get }

    /// Decapsulates a 1088-byte ML-KEM-768 ciphertext (FIPS 203 ML-KEM.Decaps).
    ///
    /// - Returns: the 32-byte shared secret, in storage that is zeroed when dropped.
    /// - Throws: when the ciphertext is not 1088 bytes or the key cannot decapsulate.
    func decapsulate(_ ciphertext: some DataProtocol) throws -> SymmetricKey
}

extension MLDSA65.PrivateKey: MLDSA65SigningKey {
    /// Signs `message` with an empty context, hedged: ``signature(for:context:deterministic:)``
    /// with its defaults.
    ///
    /// - Throws: never in practice (an empty context is always in range); typed as the full method.
    public func signature(for message: some DataProtocol) throws(PQCryptoError) -> Data {
        try signature(for: message, context: Data(), deterministic: false)
    }
}

extension MLKEM768.PrivateKey: MLKEM768DecapsulationKey {}
