import Foundation
import PQCrypto
import ClassicalCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the client keeps what it can always rebuild from the station: the post-key cache and
/// the decrypted offline listing (file names included). Each item is an opaque byte string under
/// a name (see ``CacheItem``).
///
/// Caches are kept apart from ``KeyStore``, which holds only secrets that cannot be rebuilt
/// (credentials, identities) and is often small and slow (the Keychain). Losing a cache item
/// costs a few `/rewrap` calls or the offline view, never data: the client treats a failed or
/// unreadable cache item as missing.
///
/// The SDK ships ``EncryptedFileCacheStore`` (the default beside a ``FileKeyStore``) and
/// ``InMemoryCacheStore`` (the default for any other key store). With an app's own ``KeyStore``
/// (the Keychain), pass an ``EncryptedFileCacheStore`` to keep caches across launches:
///
///     let configuration = StationClientConfiguration(
///         namespace: "drive", keyStore: keychain,
///         cacheStore: EncryptedFileCacheStore(directory: EncryptedFileCacheStore.defaultDirectory, keyStore: keychain))
public protocol CacheStore: Sendable {
    /// Returns the item stored under `name`, or `nil` when there is none (or it does not open).
    ///
    /// - Throws: when the store cannot be read at all.
    func load(_ name: String) async throws -> [UInt8]?
    /// Stores `bytes` under `name`, replacing any previous value atomically.
    ///
    /// - Throws: when the store cannot be written; the previous value then stays in place.
    func save(_ bytes: [UInt8], as name: String) async throws
    /// Removes the item stored under `name`; removing a missing item succeeds.
    ///
    /// - Throws: when the store cannot be written.
    func delete(_ name: String) async throws
    /// Whether what is saved here survives a relaunch of the app: `false` for a store in memory
    /// only (``InMemoryCacheStore``). DriveSync refuses to keep a folder's sync state in a store
    /// that does not (`DriveSyncError.Kind.cacheStoreNotPersistent`), unless the app says it may.
    ///
    /// The default implementation returns `true`: a store an app brings is taken to persist.
    /// An ``EncryptedFileCacheStore`` persists when the ``KeyStore`` holding its cache key does
    /// (``KeyStore/persistsAcrossLaunches``): its files do not open without that key.
    var persistsAcrossLaunches: Bool { get }
}

extension CacheStore {
    /// `true`: a store an app brings is taken to survive a relaunch.
    public var persistsAcrossLaunches: Bool { true }
}

/// Names the client uses in its ``CacheStore``.
public enum CacheItem {
    /// Cached post keys of the station `station` (its uid), by post CID (with
    /// ``StationClientConfiguration/persistsPostKeys``). The keys learned since this item was last
    /// rewritten are in the items of this name followed by `-1` … `-16`, one item per listing that
    /// learned or dropped keys, so a listing writes only what changed. Keyed by station, so a
    /// device paired with another station never reads the first station's cache.
    public static func postKeys(station: String) -> String {
        // The uid's length first: no uid names the items of another.
        "post-keys-station-\(station.utf8.count)-\(station)"
    }

    /// Where versions before station-keyed caches kept the post keys (whichever station they came
    /// from), with `post-keys-1` … `post-keys-16`. The client no longer reads these items and
    /// removes them; every name of the post-key cache still starts with this.
    public static let postKeys = "post-keys"
    /// The last decrypted listing of a namespace of the station `station` (its uid), for offline
    /// use. Keyed by station as well as namespace, so a device paired with another station
    /// (`pair --replace`, restored credentials) never shows one station's listing as another's.
    public static func offlineListing(station: String, namespace: String) -> String {
        // The uid's length first: no uid and namespace pair names the item of another.
        "offline-listing-station-\(station.utf8.count)-\(station)-\(namespace)"
    }

    /// Where versions before station-keyed listings kept the last decrypted listing of a
    /// namespace, whichever station it came from. The client no longer reads it and removes it.
    @available(*, deprecated, renamed: "offlineListing(station:namespace:)",
               message: "the listing of one namespace is kept per station: offlineListing(station:namespace:)")
    public static func offlineListing(namespace: String) -> String { legacyOfflineListing(namespace: namespace) }

    /// The name ``offlineListing(namespace:)`` gave (items earlier versions wrote, removed by the client).
    static func legacyOfflineListing(namespace: String) -> String { "offline-listing-\(namespace)" }
    /// The last decrypted listing of a namespace of a followed station, for offline use.
    public static func offlineListing(followedStation station: FollowedStationAddress, namespace: String) -> String {
        switch station {
        case .endpoint(let url): "offline-listing-followed-\(url.absoluteString)-\(namespace)"
        case .ipns(let name): "offline-listing-followed-ipns-\(name)-\(namespace)"
        }
    }
}

/// A ``CacheStore`` that keeps items in memory only (tests, ephemeral sessions). Items are zeroed
/// when replaced, deleted, or when the store is dropped.
public actor InMemoryCacheStore: CacheStore {
    private var items: [String: [UInt8]] = [:]

    /// Creates an empty store.
    public init() {}

    /// `false`: the items are gone when the process ends.
    public nonisolated var persistsAcrossLaunches: Bool { false }

    /// The names of the items held, sorted.
    public var names: [String] { items.keys.sorted() }

    /// Returns a copy of the item under `name`, or `nil`.
    public func load(_ name: String) -> [UInt8]? { items[name] }

    /// Stores a copy of `bytes` under `name`.
    public func save(_ bytes: [UInt8], as name: String) {
        items[name]?.withUnsafeMutableBytes { SecureMemory.zero($0) }
        items[name] = bytes
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

/// A ``CacheStore`` of encrypted files in one directory. Its only secret, a random 32-byte cache
/// key, is the only item it keeps in a ``KeyStore`` (under ``KeyStoreItem/cacheKey``, created on
/// first use), so a Keychain holds 32 bytes however large the caches grow.
///
/// Each item is sealed with SecretBox under the cache key, in a file named by a keyed BLAKE2b hash
/// of its name (a directory listing reveals neither namespaces nor sizes per name). Writes are
/// atomic: a temporary file (mode 0600) in the same directory, flushed, renamed over the old one.
/// A file that does not open (damaged, or sealed under a cache key that was since lost) reads as
/// missing and is overwritten by the next save. Deleting the directory, or the cache key, only
/// empties the cache.
///
/// Layout of an item file: `CSCI` ‖ version `1` ‖ SecretBox(`nonce ‖ tag ‖ ciphertext`).
public actor EncryptedFileCacheStore: CacheStore {
    /// The directory holding the item files (created with mode 0700 when missing).
    public nonisolated let directory: URL
    private nonisolated let keyStore: any KeyStore
    private var key: SymmetricKey?
    /// The first load-or-create of the cache key; concurrent first calls share it, so only one
    /// key is ever made.
    private var keyTask: Task<SymmetricKey, any Error>?

    private static let magic: [UInt8] = Array("CSCI".utf8) + [1]

    /// Whether the key store holding the cache key survives a relaunch
    /// (``KeyStore/persistsAcrossLaunches``): without that key the files read as missing.
    public nonisolated var persistsAcrossLaunches: Bool { keyStore.persistsAcrossLaunches }

    /// Creates a store in `directory` whose cache key lives in `keyStore`. Nothing is read or
    /// created until the first call.
    ///
    /// - Parameters:
    ///   - directory: where the item files go.
    ///   - keyStore: where the 32-byte cache key is kept.
    public init(directory: URL, keyStore: any KeyStore) {
        self.directory = directory
        self.keyStore = keyStore
    }

    /// A directory for the store of an app whose key store is not a ``FileKeyStore`` (whose
    /// default store lives beside its files): `cipher-station` in the user's caches directory
    /// (`~/Library/Caches` on Apple platforms, `$XDG_CACHE_HOME` or `~/.cache` on Linux). Pass it
    /// (or a directory of the app's own, for an app with several clients) to ``init(directory:keyStore:)``.
    public static var defaultDirectory: URL {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("cipher-station", isDirectory: true)
    }

    /// The cache key: loaded from the key store, or made and saved there on first use.
    private func cacheKey() async throws -> SymmetricKey {
        if let key { return key }
        if let keyTask { return try await keyTask.value }
        // The first caller starts the task; callers arriving while it runs await the same one.
        let keyStore = keyStore
        let task = Task { try await Self.loadOrMakeKey(in: keyStore) }
        keyTask = task
        do {
            let loaded = try await task.value
            key = loaded
            return loaded
        } catch {
            keyTask = nil
            throw error
        }
    }

    private static func loadOrMakeKey(in keyStore: any KeyStore) async throws -> SymmetricKey {
        if let stored = try await keyStore.loadSecret(KeyStoreItem.cacheKey, operation: "loading the cache key"), stored.count == 32 {
            return stored.withUnsafeBytes { SymmetricKey(data: $0) }
        }
        let made = SymmetricKey(randomByteCount: 32)
        let secret = made.withUnsafeBytes { SecretBytes(copying: $0) }
        try await keyStore.saveSecret(secret, as: KeyStoreItem.cacheKey, operation: "saving the cache key")
        return made
    }

    /// The file of the item `name`: a keyed hash of the name, so names stay private.
    func fileURL(for name: String) async throws -> URL { try await item(name).url }

    /// The file of the item `name` and the key its contents are sealed with.
    private func item(_ name: String) async throws -> (url: URL, key: SymmetricKey) {
        let key = try await cacheKey()
        let digest: [UInt8]
        do {
            digest = try BLAKE2b.hash(data: Array(name.utf8), digestByteCount: 16, key: key,
                                      personalization: Array("cipher-cache".utf8))
        } catch {
            throw StationClientError(.keyStore, operation: "naming cache item \(name)", message: "\(error)", underlying: error)
        }
        return (directory.appendingPathComponent(Hex.encode(digest) + ".cache"), key)
    }

    /// The largest item file read back (256 MiB): an offline listing of 100,000 posts is about 30 MB.
    static let maximumItemByteCount = 256 << 20

    /// Reads and decrypts the item under `name`; `nil` when it is missing, larger than 256 MiB,
    /// or does not open.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the cache key cannot be read or made.
    public func load(_ name: String) async throws -> [UInt8]? {
        let (url, key) = try await item(name)
        guard let bytes = try? BoundedFileRead.bytes(of: url, limit: Self.maximumItemByteCount) else { return nil }
        guard bytes.count >= Self.magic.count + SecretBox.overheadByteCount, Array(bytes[0..<Self.magic.count]) == Self.magic
        else { return nil }
        return try? [UInt8](SecretBox.open(bytes[Self.magic.count...], using: key))
    }

    /// Encrypts `bytes` and writes them atomically under `name`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the cache key cannot be read or made,
    ///   or the file cannot be written (the old file, if any, is then unchanged).
    public func save(_ bytes: [UInt8], as name: String) async throws {
        let (url, key) = try await item(name)
        let operation = "saving cache item \(name)"
        let sealed: Data
        do {
            sealed = try SecretBox.seal(bytes, using: key)
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot seal the item", underlying: error)
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "cannot create \(directory.path)", underlying: error)
        }
        // Ordering, not power loss: a cache item lost to a power cut costs a few `/rewrap` calls or a
        // comparison (DriveSync's state), never data, and the client takes a missing item as empty;
        // `F_FULLFSYNC` on every listing and journal write would cost far more than that.
        try AtomicFile.replace(url, with: Self.magic + sealed, need: .ordering, operation: operation)
    }

    /// Deletes the file under `name`.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the file exists and cannot be removed.
    public func delete(_ name: String) async throws {
        let url = try await fileURL(for: name)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw StationClientError(.keyStore, operation: "deleting cache item \(name)", message: "cannot remove \(url.path)",
                                     underlying: error)
        }
    }
}
