import Foundation
import Manifest
import ClassicalCrypto
import PQCrypto

/// The owner device's post keys: in memory, and (with ``StationClientConfiguration/persistsPostKeys``)
/// in the cache store as a ``PostKeyJournal``, read back once per store before the first lookup
/// of a listing and before any write.
actor PostKeyStore {
    private let cacheStore: any CacheStore
    /// The station whose posts these keys open (it names the cache items).
    private let station: String
    private let persists: Bool
    private let log: LogHandler?

    private var keys: [String: SymmetricKey] = [:]
    private var loaded = false
    /// What the cache store's copy of ``keys`` still lacks, and the writes under way.
    private var journal = PostKeyJournal()

    init(cacheStore: any CacheStore, station: String, persists: Bool, log: LogHandler?) {
        self.cacheStore = cacheStore
        self.station = station
        self.persists = persists
        self.log = log
    }

    /// The number of keys in memory.
    var count: Int { keys.count }

    /// The key of `postCID` in memory.
    func key(for postCID: String) -> SymmetricKey? { keys[postCID] }

    /// The keys of `postCIDs` (same order), after reading the persisted keys once: a listing's
    /// lookups in one call.
    func keys(for postCIDs: [String]) async -> [SymmetricKey?] {
        await load()
        return postCIDs.map { keys[$0] }
    }

    /// Keeps a key learned for `postCID` (written to the store by the next write).
    func cache(_ key: SymmetricKey, for postCID: String) {
        // Only what reads back: a longer CID never comes from the manifest reader.
        guard !postCID.isEmpty, postCID.utf8.count <= PostKeyJournal.maximumCIDLength else { return }
        keys[postCID] = key
        guard persists else { return }
        journal.learned[postCID] = key
        journal.dropped.remove(postCID)
    }

    /// Drops the key of `postCID` (from the store by the next write).
    func drop(_ postCID: String) {
        guard keys.removeValue(forKey: postCID) != nil, persists else { return }
        journal.learned[postCID] = nil
        journal.dropped.insert(postCID)
    }

    /// Keeps what a listing's reads taught: the keys learned, and no key for a post that was
    /// skipped (a cached key that did not open its post is not kept).
    func keep(_ learned: [(postCID: String, key: SymmetricKey)], skipped: [SkippedPost]) {
        for (cid, key) in learned { cache(key, for: cid) }
        for skip in skipped { drop(skip.postCID) }
    }

    /// Reads the persisted keys once (with ``StationClientConfiguration/persistsPostKeys``);
    /// without it, the next write removes keys an earlier run kept. Keys learned meanwhile win.
    func load() async {
        guard !loaded else { return }
        loaded = true
        guard persists else {
            journal.needsCompaction = true
            return
        }
        var stored: [String: SymmetricKey] = [:]
        if var bytes = try? await cacheStore.load(CacheItem.postKeys(station: station)) {
            PostKeyJournal.apply(bytes, to: &stored)
            SecureMemory.zero(&bytes)
        }
        // Change items are written in order, so reading stops at the first missing one (one that
        // does not open reads as missing: the items after it are left out, costing rewraps at
        // worst, since a post's key never changes), and the next write takes its number.
        var lastChangeItem = 0
        for index in 1...PostKeyJournal.changeItemLimit {
            guard var bytes = try? await cacheStore.load(CacheItem.postKeyChanges(index, station: station)) else { break }
            PostKeyJournal.apply(bytes, to: &stored)
            SecureMemory.zero(&bytes)
            lastChangeItem = index
        }
        journal.changeItems = max(journal.changeItems, lastChangeItem)
        for (cid, key) in stored where keys[cid] == nil && !journal.dropped.contains(cid) {
            keys[cid] = key
        }
    }

    /// Writes what changed since the last write, after any write under way and after reading
    /// the persisted keys (a change item written before would take the number of one already
    /// stored); `live`, the manifest the keys were listed from, prunes the keys of posts no
    /// longer in it. Failures are logged (and returned); the next write then compacts.
    @discardableResult
    func write(pruningTo live: Manifest? = nil) async -> (any Error)? {
        await load()
        if persists, let live { prune(keeping: live) }
        let previous = journal.lastWrite
        let write = Task { () -> (any Error)? in
            _ = await previous?.value
            return await self.drain()
        }
        journal.lastWrite = write
        return await write.value
    }

    /// Empties the keys in memory and removes the persisted ones, in order after any write
    /// under way; the error of a store that cannot be written (its items are then removed by
    /// the next write).
    func forget() async -> (any Error)? {
        keys.removeAll()
        loaded = true
        journal.learned.removeAll()
        journal.dropped.removeAll()
        journal.needsCompaction = true
        return await write()
    }

    /// Drops the in-memory keys of posts no longer in `manifest` (the store's copies go at the
    /// next compaction).
    private func prune(keeping manifest: Manifest) {
        var live = Set<String>(minimumCapacity: manifest.postCount)
        for namespace in manifest.clients.values { for post in namespace.posts { live.insert(post.postCID) } }
        let stale = keys.keys.filter { !live.contains($0) }
        for cid in stale {
            keys[cid] = nil
            journal.learned[cid] = nil
            journal.dropped.remove(cid)
        }
        journal.staleInStore += stale.count
    }

    /// Performs the writes due, one at a time; stops at the first failure (then the next write compacts).
    private func drain() async -> (any Error)? {
        while let write = nextWrite() {
            if let error = await Self.perform(write, in: cacheStore, station: station) {
                journal.needsCompaction = true
                log?(LogEvent(level: .warning, message: "cannot persist post keys: \(error)"))
                return error
            }
        }
        return nil
    }

    /// The next write due, taking the changes it writes out of the journal.
    private func nextWrite() -> PostKeyJournal.Write? {
        let learned = journal.learned, dropped = journal.dropped
        let hasChanges = !learned.isEmpty || !dropped.isEmpty
        let compacts = journal.needsCompaction
            || (persists && hasChanges && journal.changeItems >= PostKeyJournal.changeItemLimit)
            || (persists && journal.prunes(liveKeyCount: keys.count))
        guard compacts || (persists && hasChanges) else { return nil }
        journal.learned.removeAll()
        journal.dropped.removeAll()
        if compacts {
            journal.needsCompaction = false
            journal.changeItems = 0
            journal.staleInStore = 0
            return .compaction(persists ? keys : [:])
        }
        journal.changeItems += 1
        return .changes(index: journal.changeItems, learned: learned, dropped: dropped)
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
}

extension StationClient {
    /// The number of post keys in the in-memory cache.
    public var cachedPostKeyCount: Int {
        get async { await postKeys.count }
    }

    /// Empties the post-key cache: the keys in memory, and those kept in
    /// ``StationClientConfiguration/cacheStore`` (with ``StationClientConfiguration/persistsPostKeys``,
    /// the default). The next listing asks the station to rewrap every post again. A store that
    /// cannot be written is reported in the log, and its items are removed by the next listing.
    public func clearPostKeyCache() async {
        if let error = await postKeys.forget() {
            configuration.log(.warning, "cannot remove the persisted post keys: \(error)")
        }
    }
}
