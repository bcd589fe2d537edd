import Foundation
import PQCrypto
import Sodium

/// Where the client keeps its secrets: device credentials, a follower identity, cached post keys
/// and the offline listing. Each item is an opaque byte string under a name.
///
/// The SDK ships ``FileKeyStore`` (encrypted at rest with a passphrase) and ``InMemoryKeyStore``.
/// An app can bring its own; on Apple platforms that is usually the Keychain:
///
/// ```swift
/// import Security
/// import StationClient
///
/// struct KeychainStore: KeyStore {
///     let service = "com.example.cipher"
///
///     func load(_ name: String) async throws -> [UInt8]? {
///         let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
///                                     kSecAttrService as String: service, kSecAttrAccount as String: name,
///                                     kSecReturnData as String: true]
///         var item: CFTypeRef?
///         let status = SecItemCopyMatching(query as CFDictionary, &item)
///         if status == errSecItemNotFound { return nil }
///         guard status == errSecSuccess, let data = item as? Data else { throw KeychainError(status) }
///         return [UInt8](data)
///     }
///
///     func save(_ secret: [UInt8], as name: String) async throws {
///         try await delete(name)
///         let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
///                                    kSecAttrService as String: service, kSecAttrAccount as String: name,
///                                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
///                                    kSecValueData as String: Data(secret)]
///         let status = SecItemAdd(item as CFDictionary, nil)
///         guard status == errSecSuccess else { throw KeychainError(status) }
///     }
///
///     func delete(_ name: String) async throws {
///         let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
///                                     kSecAttrService as String: service, kSecAttrAccount as String: name]
///         let status = SecItemDelete(query as CFDictionary)
///         guard status == errSecSuccess || status == errSecItemNotFound else { throw KeychainError(status) }
///     }
/// }
/// ```
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

/// Names the client uses in its ``KeyStore``.
public enum KeyStoreItem {
    /// The device credentials of a paired device.
    public static let credentials = "device-credentials"
    /// The follower identity.
    public static let followerIdentity = "follower-identity"
    /// Cached post keys, by post CID.
    public static let postKeys = "post-keys"
    /// The last decrypted listing of a namespace, for offline use.
    public static func offlineListing(namespace: String) -> String { "offline-listing-\(namespace)" }
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
