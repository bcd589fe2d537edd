import Foundation
import Sodium

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

    /// Removes the item under `name`.
    public func delete(_ name: String) {
        items[name]?.withUnsafeMutableBytes { SecureMemory.zero($0) }
        items.removeValue(forKey: name)
    }

    deinit {
        for key in items.keys { items[key]?.withUnsafeMutableBytes { SecureMemory.zero($0) } }
    }
}
