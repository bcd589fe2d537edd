import Foundation
import Manifest
import ContentAddressing
import OrderedJSON
import PQCrypto
import ClassicalCrypto

/// The post-key cache as the cache store keeps it (with
/// ``StationClientConfiguration/persistsPostKeys``): a journal of sealed items, so a listing writes
/// only what it changed.
///
/// - `post-keys` (``CacheItem/postKeys(station:)``, named after the station) holds every key as of
///   the last compaction;
/// - `post-keys-1` … `post-keys-16` (that name followed by `-1` … `-16`) each hold the changes of
///   one write since: keys learned, and keys dropped (`null`). They are read in order after `post-keys`.
///
/// Each item is a JSON object from post CID to the key's 64 hex digits (or `null`), sealed by the
/// store like any cache item. A listing that learned nothing writes nothing; one that learned keys
/// writes one item with those keys. When the sixteen change items are used up, when a write
/// failed, or when a quarter of the keys belong to posts no longer in the manifest (and at least
/// 32), the next write compacts: `post-keys` is rewritten with the live keys only, then the change
/// items are deleted in order (a crash between the two leaves a tail of changes already in
/// `post-keys`, which reads the same). An item that does not open or parse, and an entry that is
/// not a CID with a 32-byte key, are skipped; reading the change items stops at the first that
/// is missing or does not open.
struct PostKeyJournal {
    /// How many change items may follow `post-keys` before the next write compacts.
    static let changeItemLimit = 16
    /// The longest post CID kept: the manifest reader skips (and reports) an entry with a longer
    /// one, so no key is learned for it; one read back longer is a foreign entry and skipped. With
    /// keys only for the manifest's posts, an item holds at most `maximumManifestPosts` entries
    /// of at most this plus 72 bytes.
    static let maximumCIDLength = ManifestLimits.defaultMaximumCIDBytes

    /// Keys learned since the last write.
    var learned: [String: SymmetricKey] = [:]
    /// Keys dropped since the last write (a post deleted, a key that no longer opened its post).
    var dropped: Set<String> = []
    /// The change items the store holds after `post-keys` (the next one written is `changeItems + 1`).
    var changeItems = 0
    /// Keys dropped from memory because their posts left the manifest, still in the store.
    var staleInStore = 0
    /// Whether the next write rewrites `post-keys` (a write failed, the cache was cleared, or
    /// this client does not persist keys and removes what an earlier run kept).
    var needsCompaction = false
    /// The last write started: each write waits for the write before, so items are written in order.
    var lastWrite: Task<(any Error)?, Never>?

    /// Whether stale keys are many enough to rewrite `post-keys` without them.
    func prunes(liveKeyCount: Int) -> Bool { staleInStore >= max(32, liveKeyCount / 4) }

    /// One write to the store.
    enum Write {
        /// `post-keys` replaced by these keys (deleted when empty), then every change item deleted.
        case compaction([String: SymmetricKey])
        /// Change item `index` holding these changes.
        case changes(index: Int, learned: [String: SymmetricKey], dropped: Set<String>)
    }

    /// Serializes keys (and drops, as `null`) as an item: `{"<post CID>": "<64 hex>" | null, …}`.
    static func serialize(_ keys: [String: SymmetricKey], dropped: Set<String> = []) -> [UInt8] {
        var object = JSONObject()
        for cid in dropped.sorted() { object[cid] = .null }
        for (cid, key) in keys.sorted(by: { $0.key < $1.key }) {
            object[cid] = .string(key.withUnsafeBytes { Hex.encode($0) })
        }
        return WireJSON.serialize(.object(object))
    }

    /// Applies one stored item to `keys`: each valid entry sets or (with `null`) removes a key;
    /// anything else is skipped.
    static func apply(_ item: [UInt8], to keys: inout [String: SymmetricKey]) {
        guard let object = try? WireJSON.parse(item).objectValue else { return }
        for (cid, value) in object where !cid.isEmpty && cid.utf8.count <= maximumCIDLength {
            if value.isNull {
                keys[cid] = nil
            } else if let hex = value.stringValue, hex.utf8.count == 64, let raw = try? Hex.decode(hex), raw.count == 32 {
                keys[cid] = SymmetricKey(data: raw)
            }
        }
    }
}

extension CacheItem {
    /// Change item `index` (1…16) of the post-key journal of the station `station` (see ``PostKeyJournal``).
    static func postKeyChanges(_ index: Int, station: String) -> String { "\(postKeys(station: station))-\(index)" }

    /// The post-key items versions before station-keyed caches wrote (removed by the client).
    static var legacyPostKeyItems: [String] { [postKeys] + (1...PostKeyJournal.changeItemLimit).map { "\(postKeys)-\($0)" } }
}

// The owner device's post-key cache: in memory on the actor, and (with
// ``StationClientConfiguration/persistsPostKeys``) in the cache store as a ``PostKeyJournal``.
extension StationClient {
    func cachedPostKey(_ postCID: String) -> SymmetricKey? { postKeys[postCID] }

    /// Caches a key learned for `postCID` (kept in the store by the next write).
    func cachePostKey(_ key: SymmetricKey, for postCID: String) {
        // Only what reads back: a longer CID never comes from the manifest reader.
        guard !postCID.isEmpty, postCID.utf8.count <= PostKeyJournal.maximumCIDLength else { return }
        postKeys[postCID] = key
        guard configuration.persistsPostKeys else { return }
        postKeyJournal.learned[postCID] = key
        postKeyJournal.dropped.remove(postCID)
    }

    /// Forgets the key of `postCID` (dropped from the store by the next write).
    func forgetPostKey(_ postCID: String) {
        guard postKeys.removeValue(forKey: postCID) != nil, configuration.persistsPostKeys else { return }
        postKeyJournal.learned[postCID] = nil
        postKeyJournal.dropped.insert(postCID)
    }

    /// Keeps what a listing's reads taught: the keys learned, and no key for a post that was
    /// skipped (a cached key that did not open its post is not kept).
    func keep(_ learned: [(postCID: String, key: SymmetricKey)], skipped: [SkippedPost]) {
        for (cid, key) in learned { cachePostKey(key, for: cid) }
        for skip in skipped { forgetPostKey(skip.postCID) }
    }

    /// The number of post keys in the in-memory cache.
    public var cachedPostKeyCount: Int { postKeys.count }

    /// Empties the post-key cache: the keys in memory, and those kept in
    /// ``StationClientConfiguration/cacheStore`` (with ``StationClientConfiguration/persistsPostKeys``,
    /// the default). The next listing asks the station to rewrap every post again. A store that
    /// cannot be written is reported in the log, and its items are removed by the next listing.
    public func clearPostKeyCache() async {
        postKeys.removeAll()
        postKeysLoaded = true
        if let error = await removePersistedPostKeys() {
            log(.warning, "cannot remove the persisted post keys: \(error)")
        }
    }

    /// Removes the persisted post keys, in order after any write under way; the error of a
    /// store that cannot be written.
    func removePersistedPostKeys() async -> (any Error)? {
        postKeyJournal.learned.removeAll()
        postKeyJournal.dropped.removeAll()
        postKeyJournal.needsCompaction = true
        return await writePostKeys(manifestCID: nil)
    }

    /// Reads the persisted keys once per client (with ``StationClientConfiguration/persistsPostKeys``);
    /// without it, the next write removes keys an earlier run kept. Keys learned meanwhile win.
    func loadPersistedPostKeys() async {
        guard !postKeysLoaded else { return }
        postKeysLoaded = true
        guard configuration.persistsPostKeys else {
            postKeyJournal.needsCompaction = true
            return
        }
        let store = configuration.cacheStore
        let station = credentials.stationUID
        var stored: [String: SymmetricKey] = [:]
        if var bytes = try? await store.load(CacheItem.postKeys(station: station)) {
            PostKeyJournal.apply(bytes, to: &stored)
            SecureMemory.zero(&bytes)
        }
        // Change items are written in order, so reading stops at the first missing one (one that
        // does not open reads as missing: the items after it are left out, costing rewraps at
        // worst, since a post's key never changes), and the next write takes its number.
        var lastChangeItem = 0
        for index in 1...PostKeyJournal.changeItemLimit {
            guard var bytes = try? await store.load(CacheItem.postKeyChanges(index, station: station)) else { break }
            PostKeyJournal.apply(bytes, to: &stored)
            SecureMemory.zero(&bytes)
            lastChangeItem = index
        }
        postKeyJournal.changeItems = max(postKeyJournal.changeItems, lastChangeItem)
        for (cid, key) in stored where postKeys[cid] == nil && !postKeyJournal.dropped.contains(cid) {
            postKeys[cid] = key
        }
    }

    /// Writes what changed since the last write, after any write under way; the manifest of
    /// `manifestCID`, when it is the manifest in memory, prunes the keys of posts no longer in it.
    /// Failures are logged (and returned); the next write then compacts.
    @discardableResult
    func writePostKeys(manifestCID: String?) async -> (any Error)? {
        if configuration.persistsPostKeys, let manifestCID, let cached = manifestCache, cached.cid == manifestCID {
            prunePostKeys(keeping: cached.manifest)
        }
        let previous = postKeyJournal.lastWrite
        let write = Task { () -> (any Error)? in
            _ = await previous?.value
            return await self.drainPostKeyJournal()
        }
        postKeyJournal.lastWrite = write
        return await write.value
    }

    /// Drops the in-memory keys of posts no longer in `manifest` (the store's copies go at the
    /// next compaction).
    private func prunePostKeys(keeping manifest: Manifest) {
        var live = Set<String>(minimumCapacity: manifest.postCount)
        for namespace in manifest.clients.values { for post in namespace.posts { live.insert(post.postCID) } }
        let stale = postKeys.keys.filter { !live.contains($0) }
        for cid in stale {
            postKeys[cid] = nil
            postKeyJournal.learned[cid] = nil
            postKeyJournal.dropped.remove(cid)
        }
        postKeyJournal.staleInStore += stale.count
    }

    /// Performs the writes due, one at a time; stops at the first failure (then the next write compacts).
    private func drainPostKeyJournal() async -> (any Error)? {
        while let write = nextPostKeyWrite() {
            if let error = await Self.perform(write, in: configuration.cacheStore, station: credentials.stationUID) {
                postKeyJournal.needsCompaction = true
                log(.warning, "cannot persist post keys: \(error)")
                return error
            }
        }
        return nil
    }

    /// The next write due, taking the changes it writes out of the journal.
    private func nextPostKeyWrite() -> PostKeyJournal.Write? {
        let persists = configuration.persistsPostKeys
        let learned = postKeyJournal.learned, dropped = postKeyJournal.dropped
        let hasChanges = !learned.isEmpty || !dropped.isEmpty
        let compacts = postKeyJournal.needsCompaction
            || (persists && hasChanges && postKeyJournal.changeItems >= PostKeyJournal.changeItemLimit)
            || (persists && postKeyJournal.prunes(liveKeyCount: postKeys.count))
        guard compacts || (persists && hasChanges) else { return nil }
        postKeyJournal.learned.removeAll()
        postKeyJournal.dropped.removeAll()
        if compacts {
            postKeyJournal.needsCompaction = false
            postKeyJournal.changeItems = 0
            postKeyJournal.staleInStore = 0
            return .compaction(persists ? postKeys : [:])
        }
        postKeyJournal.changeItems += 1
        return .changes(index: postKeyJournal.changeItems, learned: learned, dropped: dropped)
    }

    /// Writes one journal item of the station `station` (or, for a compaction, `post-keys` and the
    /// change items' removal).
    private static func perform(_ write: PostKeyJournal.Write, in store: any CacheStore, station: String) async -> (any Error)? {
        do {
            switch write {
            case .compaction(let keys):
                if keys.isEmpty {
                    try await store.delete(CacheItem.postKeys(station: station))
                } else {
                    var bytes = PostKeyJournal.serialize(keys)
                    defer { SecureMemory.zero(&bytes) }
                    try await store.save(bytes, as: CacheItem.postKeys(station: station))
                }
                // In order: a crash part-way leaves the newest changes, which `post-keys` already holds.
                for index in 1...PostKeyJournal.changeItemLimit {
                    try await store.delete(CacheItem.postKeyChanges(index, station: station))
                }
            case .changes(let index, let learned, let dropped):
                var bytes = PostKeyJournal.serialize(learned, dropped: dropped)
                defer { SecureMemory.zero(&bytes) }
                try await store.save(bytes, as: CacheItem.postKeyChanges(index, station: station))
            }
            return nil
        } catch {
            return error
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
        // The caches earlier versions kept in the cache store without naming the station: they
        // may be another station's (a device paired again), so they are never read, only removed.
        if let error = await removeLegacyCacheItems() { log(.warning, "cannot remove an old cache item: \(error)") }
    }

    /// Removes the cache-store items earlier versions named without the station (the offline
    /// listing of the namespace, the post-key journal), those that exist; the first error.
    func removeLegacyCacheItems() async -> (any Error)? {
        let store = configuration.cacheStore
        var names = CacheItem.legacyPostKeyItems
        if let namespace = try? Self.normalizedNamespace(configuration.namespace) {
            names.append(CacheItem.legacyOfflineListing(namespace: namespace))
        }
        for name in names where (try? await store.load(name)) != nil {
            do {
                try await store.delete(name)
            } catch {
                return error
            }
        }
        return nil
    }
}
