import Foundation
import PQCrypto
import ClassicalCrypto

/// Where the client keeps its secrets: device credentials, a follower identity and the cache key
/// of an ``EncryptedFileCacheStore``. Each item is an opaque byte string under a name.
///
/// Caches (post keys, the decrypted offline listing) are not written here: they go to the
/// configuration's ``CacheStore``, so a Keychain store holds a few small items only.
///
/// The SDK ships ``FileKeyStore`` (encrypted at rest with a passphrase) and ``InMemoryKeyStore``.
/// An app can bring its own; on Apple platforms that is usually the Keychain: see
/// <doc:BringingYourOwnTransportOrKeyStore> for a Keychain store that keeps the old value when a
/// save fails.
///
/// ## The items a store must hold
///
/// The client saves and loads at most three items, each under a fixed name of lowercase ASCII
/// letters and `-` (the constants of ``KeyStoreItem``):
///
/// | name | what | size |
/// |---|---|---|
/// | `device-credentials` (``KeyStoreItem/credentials``) | the paired device's keys and its station's identity, as JSON | about 20 KB (19,557 bytes for a device with pure-Swift keys: its ML-KEM-768 and ML-DSA-65 private keys and the station's public keys in hex, the endpoint, the TLS pin); keys stored by reference give their references and public keys instead |
/// | `follower-identity` (``KeyStoreItem/followerIdentity``) | the keys this device follows other stations with, and its uid, as JSON | about 13 KB (12,930 bytes with pure-Swift keys) |
/// | `cache-key` (``KeyStoreItem/cacheKey``) | the key an ``EncryptedFileCacheStore`` seals its files with | 32 bytes |
///
/// The client writes nothing else here: caches and the sync state of DriveSync go to the
/// ``CacheStore``. It may also **delete** names that earlier versions wrote: `post-keys`, and
/// `offline-listing-` followed by the namespace (the namespace's own
/// text, which may be any Unicode without control characters); a store that cannot hold such a
/// name should treat deleting it as deleting a missing item (success). ``FileKeyStore`` accepts
/// names of ASCII letters, digits, `.`, `_` and `-` (up to 200 bytes, not starting with `.`)
/// and reads back items of up to 16 MiB; the `cipher` tool also keeps backups of the credentials under
/// `device-credentials.backup-<time>` in its own store.
///
/// ## Unlocking without a person
///
/// An agent that starts on its own (at login, as a service) must open its store without asking
/// for a passphrase. On Apple platforms, use the Keychain with
/// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` (see <doc:ShippingAnAppOnApplePlatforms>):
/// the system unlocks it, and the keys never leave the device. On Linux, use a ``FileKeyStore``
/// whose passphrase the service manager hands the agent: a file readable only by the user
/// (mode 0600), best delivered by systemd (`LoadCredentialEncrypted=`, sealed to the machine's
/// TPM where it has one, read from `$CREDENTIALS_DIRECTORY`). The items stay sealed on disk; the
/// passphrase file is what protects them, so anyone who can read it (the user's account, root, a
/// backup that copied both) can open every key: keep it out of backups, and unpair the device
/// from the station if it may have leaked. The SDK ships no store that writes keys unencrypted.
public protocol KeyStore: Sendable {
    /// Returns the secret stored under `name`, or `nil` when there is none.
    ///
    /// - Throws: when the store cannot be read or the item cannot be decrypted.
    func load(_ name: String) async throws -> [UInt8]?
    /// Stores `secret` under `name`, replacing any previous value atomically.
    ///
    /// - Throws: when the store cannot be written; the previous value then stays in place.
    func save(_ secret: [UInt8], as name: String) async throws
    /// Removes the item stored under `name`; removing a missing item succeeds.
    ///
    /// - Throws: when the store cannot be written.
    func delete(_ name: String) async throws
    /// Returns the secret stored under `name` in zeroizable storage, or `nil` when there is none:
    /// how the client loads private keys (credentials, the follower identity).
    ///
    /// The default implementation calls ``load(_:)`` and zeroes the array it returns; a store
    /// that can decrypt into `SecretBytes` directly should implement this.
    /// - Throws: as ``load(_:)``.
    func loadSecret(_ name: String) async throws -> SecretBytes?
    /// Stores the secret in `secret` under `name`, as ``save(_:as:)``: how the client saves
    /// private keys.
    ///
    /// The default implementation hands a copy to ``save(_:as:)`` and zeroes that copy after.
    /// - Throws: as ``save(_:as:)``.
    func saveSecret(_ secret: SecretBytes, as name: String) async throws
    /// Whether what is saved here survives a relaunch of the app: `false` for a store in memory
    /// only (``InMemoryKeyStore``). An ``EncryptedFileCacheStore`` whose cache key lives here
    /// persists only when this store does.
    ///
    /// The default implementation returns `true`: a store an app brings is taken to persist.
    var persistsAcrossLaunches: Bool { get }
}

extension KeyStore {
    /// `true`: a store an app brings is taken to survive a relaunch.
    public var persistsAcrossLaunches: Bool { true }

    /// Calls ``load(_:)``, moves the bytes into `SecretBytes` and zeroes the array.
    ///
    /// - Throws: as ``load(_:)``.
    public func loadSecret(_ name: String) async throws -> SecretBytes? {
        guard var bytes = try await load(name) else { return nil }
        return SecretBytes(zeroing: &bytes)
    }

    /// Calls ``save(_:as:)`` with a copy of `secret`, zeroed once it returns.
    ///
    /// - Throws: as ``save(_:as:)``.
    public func saveSecret(_ secret: SecretBytes, as name: String) async throws {
        var bytes = secret.withUnsafeBytes { [UInt8]($0) }
        defer { SecureMemory.zero(&bytes) }
        try await save(bytes, as: name)
    }
}

extension KeyStore {
    /// ``loadSecret(_:)`` for the client's own items: a failing store throws
    /// ``StationClientError`` `.keyStore` for `operation`.
    func loadSecret(_ name: String, operation: String) async throws -> SecretBytes? {
        do {
            return try await loadSecret(name)
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "\(error)", underlying: error)
        }
    }

    /// ``saveSecret(_:as:)`` for the client's own items: a failing store throws
    /// ``StationClientError`` `.keyStore` for `operation`.
    func saveSecret(_ secret: SecretBytes, as name: String, operation: String) async throws {
        do {
            try await saveSecret(secret, as: name)
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "\(error)", underlying: error)
        }
    }
}

/// Names the client uses in its ``KeyStore``: lowercase ASCII letters and `-` (see
/// ``KeyStore`` for what each holds and its size).
public enum KeyStoreItem {
    /// The device credentials of a paired device.
    public static let credentials = "device-credentials"
    /// The follower identity.
    public static let followerIdentity = "follower-identity"
    /// The random 32-byte key an ``EncryptedFileCacheStore`` seals its files with.
    public static let cacheKey = "cache-key"

    /// Where earlier versions kept cached post keys; the client removes it (see ``CacheItem``).
    static let legacyPostKeys = "post-keys"
    /// Where earlier versions kept an offline listing; the client removes it (see ``CacheItem``).
    static func legacyOfflineListing(namespace: String) -> String { "offline-listing-\(namespace)" }
}

/// A ``KeyStore`` that keeps items in memory only (tests, ephemeral sessions). Items are zeroed
/// when replaced, deleted, or when the store is dropped.
public actor InMemoryKeyStore: KeyStore {
    private var items: [String: [UInt8]] = [:]

    /// Creates an empty store.
    public init() {}

    /// `false`: the items are gone when the process ends.
    public nonisolated var persistsAcrossLaunches: Bool { false }

    /// Returns a copy of the item under `name`, or `nil`.
    public func load(_ name: String) -> [UInt8]? { items[name] }

    /// Stores a copy of `secret` under `name`.
    public func save(_ secret: [UInt8], as name: String) {
        items[name]?.withUnsafeMutableBytes { SecureMemory.zero($0) }
        items[name] = secret
    }

    /// A copy of the item under `name` in zeroizable storage, or `nil`.
    public func loadSecret(_ name: String) -> SecretBytes? { items[name].map { SecretBytes(copying: $0) } }

    /// Stores a copy of the bytes of `secret` under `name`.
    public func saveSecret(_ secret: SecretBytes, as name: String) {
        save(secret.withUnsafeBytes { [UInt8]($0) }, as: name)
    }

    /// Removes the item under `name`.
    public func delete(_ name: String) {
        items[name]?.withUnsafeMutableBytes { SecureMemory.zero($0) }
        items.removeValue(forKey: name)
    }

    deinit {
        for key in items.keys { items[key]?.withUnsafeMutableBytes { SecureMemory.zero($0) } }
    }
}
