import Foundation
import PQCrypto
@testable import StationClient
import Testing
import Transport

extension DeviceCredentials {
    /// The pure-Swift ML-KEM key pairing generates (the test fails when the key is another kind).
    var pureKEMKey: MLKEM768.PrivateKey { get throws { try #require(kemPrivateKey as? MLKEM768.PrivateKey) } }
    /// The pure-Swift ML-DSA key pairing generates (the test fails when the key is another kind).
    var pureSigningKey: MLDSA65.PrivateKey { get throws { try #require(signingPrivateKey as? MLDSA65.PrivateKey) } }
}

extension FollowerIdentity {
    /// The pure-Swift ML-KEM key of a generated identity (the test fails when the key is another kind).
    var pureKEMKey: MLKEM768.PrivateKey { get throws { try #require(kemPrivateKey as? MLKEM768.PrivateKey) } }
}

/// A stand-in for a Secure Enclave: the keys it makes keep their secret in a private stored
/// property that no API reaches (neither the SDK's nor the test's). They only sign, decapsulate,
/// give their public key and a reference (`"<enclave id>/kem/<index>"`), which ``resolver`` turns
/// back into the same key. It counts what its keys do, so a test can see that they were used.
final class TestEnclave: Sendable {
    let id = UUID().uuidString
    private let kemKeys = Locked<[NonExportableKEMKey]>([])
    private let signingKeys = Locked<[NonExportableSigningKey]>([])
    let signatures = Locked(0)
    let decapsulations = Locked(0)

    /// A new ML-KEM-768 key inside the enclave.
    func makeKEMKey() -> NonExportableKEMKey {
        kemKeys.withLock { keys in
            let secret = MLKEM768.PrivateKey()
            let key = NonExportableKEMKey(secret: secret, publicKey: secret.publicKey, reference: Data("\(id)/kem/\(keys.count)".utf8),
                                          uses: decapsulations)
            keys.append(key)
            return key
        }
    }

    /// A new ML-DSA-65 key inside the enclave.
    func makeSigningKey() -> NonExportableSigningKey {
        signingKeys.withLock { keys in
            let secret = MLDSA65.PrivateKey()
            let key = NonExportableSigningKey(secret: secret, publicKey: secret.publicKey,
                                              reference: Data("\(id)/signing/\(keys.count)".utf8), uses: signatures)
            keys.append(key)
            return key
        }
    }

    /// Both keys, as pairing and a follower identity take them.
    func makeDeviceKeys() -> DeviceKeys { DeviceKeys(kemKey: makeKEMKey(), signingKey: makeSigningKey()) }

    /// Finds keys by their reference, as an app gives the SDK.
    var resolver: KeyReferenceResolver {
        KeyReferenceResolver(
            signingKey: { reference, _ in try self.key(in: self.signingKeys, reference: reference, kind: "signing") },
            kemKey: { reference, _ in try self.key(in: self.kemKeys, reference: reference, kind: "kem") })
    }

    struct UnknownReference: Error {}

    private func key<Key: Sendable>(in keys: Locked<[Key]>, reference: Data, kind: String) throws -> Key {
        let text = String(decoding: reference, as: UTF8.self)
        let prefix = "\(id)/\(kind)/"
        guard text.hasPrefix(prefix), let index = Int(text.dropFirst(prefix.count)) else { throw UnknownReference() }
        guard let key = keys.withLock({ $0.indices.contains(index) ? $0[index] : nil }) else { throw UnknownReference() }
        return key
    }
}

/// A key inside a ``TestEnclave``: its secret is a private stored property no API reaches; it only
/// gives its public key and reference, and uses the secret (counted) for its one operation.
final class EnclaveKey<Secret: Sendable, PublicKey: Sendable>: ReferenceStorableKey, Sendable {
    private let secret: Secret
    private let reference: Data
    private let uses: Locked<Int>
    let publicKey: PublicKey

    fileprivate init(secret: Secret, publicKey: PublicKey, reference: Data, uses: Locked<Int>) {
        (self.secret, self.publicKey, self.reference, self.uses) = (secret, publicKey, reference, uses)
    }

    var keyReference: Data { reference }

    /// Counts a use and runs `operation` with the secret (reachable from this file only).
    fileprivate func use<R>(_ operation: (Secret) throws -> R) rethrows -> R {
        uses.withLock { $0 += 1 }
        return try operation(secret)
    }
}

/// An ML-KEM-768 key whose secret cannot be read: it only decapsulates.
typealias NonExportableKEMKey = EnclaveKey<MLKEM768.PrivateKey, MLKEM768.PublicKey>
/// An ML-DSA-65 key whose secret cannot be read: it only signs.
typealias NonExportableSigningKey = EnclaveKey<MLDSA65.PrivateKey, MLDSA65.PublicKey>

extension EnclaveKey: MLKEM768DecapsulationKey where Secret == MLKEM768.PrivateKey, PublicKey == MLKEM768.PublicKey {
    func decapsulate(_ ciphertext: some DataProtocol) throws -> SymmetricKey { try use { try $0.decapsulate(ciphertext) } }
}

extension EnclaveKey: MLDSA65SigningKey where Secret == MLDSA65.PrivateKey, PublicKey == MLDSA65.PublicKey {
    func signature(for message: some DataProtocol) throws -> Data { try use { try $0.signature(for: message) } }
}
