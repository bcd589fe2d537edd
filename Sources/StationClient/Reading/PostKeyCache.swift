import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import PQCrypto
import ClassicalCrypto

// The owner device's post-key cache: in memory on the actor, and (with
// ``StationClientConfiguration/persistsPostKeys``) in the cache store.
extension StationClient {
    func cachedPostKey(_ postCID: String) -> SymmetricKey? { postKeys[postCID] }
    func cachePostKey(_ key: SymmetricKey, for postCID: String) { postKeys[postCID] = key }
    func forgetPostKey(_ postCID: String) { postKeys[postCID] = nil }

    /// Keeps what a listing's reads taught: the keys learned, and no key for a post that was
    /// skipped (a cached key that did not open its post is not kept).
    func keep(_ learned: [(postCID: String, key: SymmetricKey)], skipped: [SkippedPost]) {
        for (cid, key) in learned { postKeys[cid] = key }
        for skip in skipped { postKeys[skip.postCID] = nil }
    }

    /// The number of post keys in the in-memory cache.
    public var cachedPostKeyCount: Int { postKeys.count }

    /// Empties the in-memory post-key cache (the persisted copy stays until the next listing).
    public func clearPostKeyCache() { postKeys.removeAll() }

    func loadPersistedPostKeys() async throws {
        guard configuration.persistsPostKeys, !postKeysLoaded else { return }
        postKeysLoaded = true
        guard var bytes = try? await configuration.cacheStore.load(CacheItem.postKeys) else { return }
        defer { SecureMemory.zero(&bytes) }
        guard let object = try? WireJSON.parse(bytes).objectValue else { return }
        for (cid, value) in object {
            if let hex = value.stringValue, let raw = try? Hex.decode(hex), raw.count == 32, postKeys[cid] == nil {
                postKeys[cid] = SymmetricKey(data: raw)
            }
        }
    }

    func persistPostKeys() async throws {
        guard configuration.persistsPostKeys else { return }
        var object = JSONObject()
        for (cid, key) in postKeys.sorted(by: { $0.key < $1.key }) {
            object[cid] = .string(key.withUnsafeBytes { Hex.encode($0) })
        }
        var bytes = WireJSON.serialize(.object(object))
        defer { SecureMemory.zero(&bytes) }
        do {
            try await configuration.cacheStore.save(bytes, as: CacheItem.postKeys)
        } catch {
            log(.warning, "cannot persist post keys: \(error)")
        }
    }

    /// Removes the caches earlier versions wrote to the key store (once per client; failures
    /// only logged): they now live in the cache store.
    func removeLegacyCaches() async {
        guard !legacyCachesRemoved else { return }
        legacyCachesRemoved = true
        var names = [KeyStoreItem.legacyPostKeys]
        if let namespace = try? Self.normalizedNamespace(configuration.namespace) {
            names.append(KeyStoreItem.legacyOfflineListing(namespace: namespace))
        }
        for name in names {
            do {
                try await configuration.keyStore.delete(name)
            } catch {
                log(.warning, "cannot remove the old cache item \(name) from the key store: \(error)")
            }
        }
    }
}
