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
}

extension KeyStore {
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

/// Names the client uses in its ``KeyStore``.
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
