import Foundation
import PQCrypto

/// A device's two private keys: the ML-KEM-768 key envelopes are sealed to and the ML-DSA-65 key
/// that signs its requests.
///
/// ``generate()`` makes pure-Swift keys (every platform; their bytes are stored in the
/// ``KeyStore``). An app can bring its own instead, such as CryptoKit's Secure Enclave keys on iOS
/// and macOS 26, whose secrets never leave the chip: pass them to
/// ``StationClient/pair(endpoint:deviceName:configuration:trust:keys:pin:)`` or
/// ``FollowerIdentity/init(name:keys:)``. To be saved, such a key conforms to
/// ``ReferenceStorableKey``; see <doc:KeepingDeviceKeys>.
public struct DeviceKeys: Sendable {
    /// The ML-KEM-768 key: opens the envelopes sealed to this device.
    public var kemKey: any MLKEM768DecapsulationKey
    /// The ML-DSA-65 key: signs this device's requests.
    public var signingKey: any MLDSA65SigningKey

    /// Pairs an app's keys.
    public init(kemKey: some MLKEM768DecapsulationKey, signingKey: some MLDSA65SigningKey) {
        self.kemKey = kemKey
        self.signingKey = signingKey
    }

    /// Fresh pure-Swift keys (`MLKEM768.PrivateKey` and `MLDSA65.PrivateKey`): what pairing and
    /// a new follower identity use when the app brings none.
    public static func generate() -> DeviceKeys {
        DeviceKeys(kemKey: MLKEM768.PrivateKey.generate(), signingKey: MLDSA65.PrivateKey.generate())
    }
}

/// A device key that cannot be exported but can be found again from an opaque reference: what
/// lets credentials and a follower identity holding it be saved in a ``KeyStore``.
///
/// The reference is whatever the app needs to get the key back, such as the `dataRepresentation`
/// of a CryptoKit Secure Enclave key (a blob only that device's enclave can use) or a Keychain
/// tag; the SDK stores it beside the key's public key and gives both back to the app's
/// ``KeyReferenceResolver`` when loading. A key that is neither a pure-Swift key nor
/// reference-storable cannot be saved (`StationClientError.Kind.keyStore`).
public protocol ReferenceStorableKey: Sendable {
    /// The opaque reference the app's ``KeyReferenceResolver`` turns back into this key.
    ///
    /// - Throws: when the reference cannot be produced; saving then fails with
    ///   `StationClientError.Kind.keyStore`.
    var keyReference: Data { get throws }
}

/// Turns stored key references back into keys: how an app loads credentials or a follower identity
/// whose keys it keeps itself (``ReferenceStorableKey``).
///
/// Each closure is given the reference the key produced and the public key stored with it, and
/// returns the key. The SDK then checks that the returned key's public key is the stored one, and
/// refuses another with `StationClientError.Kind.keyStore`. Give it to
/// ``DeviceCredentials/init(encoded:keyResolver:)``, ``FollowerIdentity/load(from:keyResolver:)``,
/// or ``StationClientConfiguration/keyReferenceResolver`` (which ``StationClient/load(configuration:)``
/// and following use).
public struct KeyReferenceResolver: Sendable {
    /// Finds the ML-DSA-65 key of a reference.
    public typealias SigningKeyLookup = @Sendable (_ reference: Data, _ publicKey: MLDSA65.PublicKey) throws -> any MLDSA65SigningKey
    /// Finds the ML-KEM-768 key of a reference.
    public typealias KEMKeyLookup = @Sendable (_ reference: Data, _ publicKey: MLKEM768.PublicKey) throws -> any MLKEM768DecapsulationKey

    let signingKey: SigningKeyLookup
    let kemKey: KEMKeyLookup

    /// Creates a resolver from the app's two lookups.
    ///
    /// - Parameters:
    ///   - signingKey: the ML-DSA-65 key for a reference and its stored public key.
    ///   - kemKey: the ML-KEM-768 key for a reference and its stored public key.
    public init(signingKey: @escaping SigningKeyLookup, kemKey: @escaping KEMKeyLookup) {
        self.signingKey = signingKey
        self.kemKey = kemKey
    }
}
