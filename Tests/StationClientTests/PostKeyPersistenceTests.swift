import Foundation
import Manifest
import OrderedJSON
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing

/// A cache store that records every write (name and size) and deletion, over an in-memory store.
private actor RecordingCacheStore: CacheStore {
    let base = InMemoryCacheStore()
    private(set) var saves: [(name: String, byteCount: Int)] = []
    private(set) var deletes: [String] = []

    func load(_ name: String) async throws -> [UInt8]? { await base.load(name) }
    func save(_ bytes: [UInt8], as name: String) async throws {
        saves.append((name, bytes.count))
        await base.save(bytes, as: name)
    }
    func delete(_ name: String) async throws {
        deletes.append(name)
        await base.delete(name)
    }
    func forgetHistory() {
        saves.removeAll()
        deletes.removeAll()
    }
    /// The names of the post-key items held.
    var postKeyItems: [String] { get async { await base.names.filter { $0.hasPrefix(CacheItem.postKeys) } } }
}

@Suite("Post keys persist by default and spare a relaunched client the rewraps")
struct PostKeyPersistenceTests {
    static let rewrapRoute = RequestRoute("POST", path: "/rewrap")

    /// Publishes `count` small posts, eight at a time.
    static func publish(_ count: Int, by client: StationClient, prefix: String = "p") async throws -> [PublishedPost] {
        try await withThrowingTaskGroup(of: PublishedPost.self) { group in
            var posts: [PublishedPost] = []
            for index in 0..<count {
                if index >= 8, let post = try await group.next() { posts.append(post) }
                group.addTask {
                    try await client.publish(data: Data("\(prefix)\(index)".utf8), metadata: Fixture.drive("\(prefix)\(index).txt", size: 2))
                }
            }
            for try await post in group { posts.append(post) }
            return posts
        }
    }

    /// The keys the store holds, read back as a client reads them.
    static func storedKeys(in store: any CacheStore, station: String) async throws -> [String: SymmetricKey] {
        var keys: [String: SymmetricKey] = [:]
        for name in [CacheItem.postKeys(station: station)]
            + (1...PostKeyJournal.changeItemLimit).map({ CacheItem.postKeyChanges($0, station: station) }) {
            if let item = try await store.load(name) { PostKeyJournal.apply(item, to: &keys) }
        }
        return keys
    }

    /// `count` drive entries for one real post of `client`'s (whose key it learns through one
    /// `/rewrap`): its entry under `count` distinct post CIDs, all opened by its key. Returns them
    /// with that key; a manifest of them is served with ``serve(_:rig:owner:count:)``.
    static func entries(_ count: Int, rig: StationRig, client: StationClient) async throws -> (entries: [PostEntry], key: SymmetricKey) {
        let real = try await client.publish(data: Data("real".utf8), metadata: Fixture.drive("real.txt", size: 4))
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        let entry = try #require(rig.emulator.manifest.posts(in: "drive").first { $0.postCID == real.postCID })
        let key = try #require(await client.postKeys.key(for: real.postCID))
        return ((0..<count).map { index in
            var copy = entry
            copy.postCID += "-\(index)"
            return copy
        }, key)
    }

    /// Makes the station's `/profile` name a manifest of `entries` (in `drive`) for the next `count` listings.
    static func serve(_ entries: [PostEntry], rig: StationRig, owner: StationClient, count: Int = 1) async throws {
        var manifest = Manifest()
        manifest.clients["drive"] = ClientNamespace(posts: entries)
        try await ManifestCapsTests.serve(Array(try WireJSON.encode(manifest)), rig: rig, owner: owner, count: count)
    }

    @Test("persistsPostKeys defaults to true")
    func defaultIsOn() {
        #expect(StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore()).persistsPostKeys)
    }

    @Test("A relaunched client (new StationClient, same key and cache stores) lists 1,000 known posts with 0 /rewrap calls")
    func relaunchListsWithoutRewraps() async throws {
        let rig = try StationRig.inProcess()
        let keys = InMemoryKeyStore()
        let cache = InMemoryCacheStore()
        let first = try await rig.pair(keyStore: keys, persistsPostKeys: true, cacheStore: cache)
        // 1,000 posts the first client knows the keys of (as 1,000 rewraps would have taught it:
        // publishing and rewrapping 1,000 posts takes minutes in a debug build).
        let (entries, key) = try await Self.entries(1_000, rig: rig, client: first)
        for entry in entries { await first.postKeys.cache(key, for: entry.postCID) }
        try await Self.serve(entries, rig: rig, owner: first, count: 2)
        rig.emulator.requests.removeAll()
        let listed = try await first.listPosts(as: DriveFileMetadata.self)
        #expect(listed.posts.count == 1_000 && listed.skipped.isEmpty)
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 0)

        let relaunched = try await StationClient.load(configuration: rig.configuration(keyStore: keys, persistsPostKeys: true, cacheStore: cache))
        let listing = try await relaunched.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.count == 1_000 && listing.skipped.isEmpty)
        #expect(listing.posts.map(\.postCID) == entries.map(\.postCID))
        #expect(listing.posts.allSatisfy { $0.metadata?.filename == "real.txt" })
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 0)
        #expect(await relaunched.cachedPostKeyCount == 1_000)
    }

    @Test("A relaunched client listing an unchanged manifest writes nothing; after a change, or over an older stored form, it stores the new listing")
    func relaunchKeepsTheStoredOfflineListing() async throws {
        let rig = try StationRig.served()
        let keys = InMemoryKeyStore()
        let cache = RecordingCacheStore()
        let first = try await rig.pair(keyStore: keys, persistsPostKeys: true, cacheStore: cache)
        _ = try await Self.publish(3, by: first)
        let listed = try await first.listPosts(as: DriveFileMetadata.self)
        let item = CacheItem.offlineListing(station: await first.credentials.stationUID, namespace: "drive")
        #expect(await cache.saves.contains { $0.name == item })
        let relaunch = { try await StationClient.load(configuration: rig.configuration(keyStore: keys, persistsPostKeys: true, cacheStore: cache)) }

        // The same manifest: the stored listing is this listing already, and nothing is written.
        await cache.forgetHistory()
        let relaunched = try await relaunch()
        let same = try await relaunched.listPosts(as: DriveFileMetadata.self)
        #expect(same.posts.map(\.postCID) == listed.posts.map(\.postCID))
        #expect(await cache.saves.map(\.name) == [])

        // A listing stored in the older form (no `complete`) is stored again in the current one.
        let manifestCID = try #require(listed.manifestCID)
        await cache.base.save(WireJSON.serialize(.object(["manifest_cid": .string(manifestCID), "posts": .array([])])), as: item)
        _ = try await relaunch().listPosts(as: DriveFileMetadata.self)
        #expect(await cache.saves.map(\.name) == [item])

        // A new post: the relaunched client stores the new listing, and shows it offline.
        await cache.forgetHistory()
        _ = try await first.publish(data: Data("new".utf8), metadata: Fixture.drive("new.txt", size: 3))
        let changed = try await relaunched.listPosts(as: DriveFileMetadata.self)
        #expect(changed.posts.count == 4)
        #expect(await cache.saves.map(\.name).filter { !$0.hasPrefix(CacheItem.postKeys) } == [item])
        let offline = try await rig.offlineListing(of: relaunched)
        #expect(offline.posts.map(\.postCID) == changed.posts.map(\.postCID))
        #expect(offline.manifestCID == changed.manifestCID)
        let fromStore = try await relaunch().listPosts(as: DriveFileMetadata.self)
        #expect(fromStore.isOffline)
        #expect(fromStore.posts.map(\.metadata?.filename).contains("new.txt"))
        #expect(fromStore.posts.count == 4)
    }

    @Test("A listing writes only what changed: nothing when it learned no key, one item with the new keys otherwise")
    func writesOnlyChanges() async throws {
        let rig = try StationRig.inProcess()
        let cache = RecordingCacheStore()
        let client = try await rig.pair(persistsPostKeys: true, cacheStore: cache)
        // Another device publishes: this client learns the keys by listing (its own posts' keys
        // it keeps when publishing).
        let other = try await rig.pair(deviceName: "Other Phone")
        _ = try await Self.publish(8, by: other)
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        let firstWrites = await cache.saves.filter { $0.name.hasPrefix(CacheItem.postKeys) }
        #expect(firstWrites.map(\.name) == [CacheItem.postKeyChanges(1, station: rig.emulator.uid)])
        let eightKeys = try #require(firstWrites.first).byteCount

        // A listing that learns nothing writes nothing.
        await cache.forgetHistory()
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(await cache.saves.filter { $0.name.hasPrefix(CacheItem.postKeys) }.isEmpty)

        // One new post: one item holding its key alone.
        await cache.forgetHistory()
        let new = try await other.publish(data: Data("new".utf8), metadata: Fixture.drive("new.txt", size: 3))
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        let writes = await cache.saves.filter { $0.name.hasPrefix(CacheItem.postKeys) }
        #expect(writes.map(\.name) == [CacheItem.postKeyChanges(2, station: rig.emulator.uid)])
        #expect(try #require(writes.first).byteCount * 5 < eightKeys, "\(writes) after \(eightKeys)")
        let item = try #require(try await cache.load(CacheItem.postKeyChanges(2, station: rig.emulator.uid)))
        #expect(try WireJSON.parse(item).objectValue?.keys.map { $0 } == [new.postCID])

        // A deleted post's key is dropped in the store too.
        _ = try await client.delete(postCID: new.postCID)
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        let stored = try await Self.storedKeys(in: cache, station: rig.emulator.uid)
        #expect(stored.count == 8 && stored[new.postCID] == nil)
    }

    @Test("Past 16 change items the next write compacts: post-keys rewritten, the change items removed")
    func compactsAfterSixteenChangeItems() async throws {
        let rig = try StationRig.inProcess()
        let cache = RecordingCacheStore()
        let client = try await rig.pair(persistsPostKeys: true, cacheStore: cache)
        await client.postKeys.load()
        // Each write after one key learned (as a listing or a download teaches it).
        let key = SymmetricKey(randomByteCount: 32)
        let learned = (0...PostKeyJournal.changeItemLimit).map { "QmLearned\($0)" }
        for (index, cid) in learned.enumerated() {
            await client.postKeys.cache(key, for: cid)
            #expect(await client.postKeys.write() == nil)
            if index < PostKeyJournal.changeItemLimit {
                #expect(await cache.postKeyItems.contains(CacheItem.postKeyChanges(index + 1, station: rig.emulator.uid)))
            }
        }
        #expect(await cache.postKeyItems == [CacheItem.postKeys(station: rig.emulator.uid)])
        #expect(await cache.deletes.filter { $0.hasPrefix(CacheItem.postKeys) }.count == PostKeyJournal.changeItemLimit)
        #expect(Set(try await Self.storedKeys(in: cache, station: rig.emulator.uid).keys) == Set(learned))

        // Writing goes on after the compaction, and a relaunched client reads both.
        await client.postKeys.cache(key, for: "QmAfter")
        await client.postKeys.write()
        #expect(await cache.postKeyItems == [CacheItem.postKeys(station: rig.emulator.uid), CacheItem.postKeyChanges(1, station: rig.emulator.uid)])
        let relaunched = try await StationClient.load(configuration: client.configuration)
        await relaunched.postKeys.load()
        #expect(await relaunched.cachedPostKeyCount == learned.count + 1)
    }

    @Test("Keys of posts no longer in the manifest are pruned from the store")
    func prunesStaleKeys() async throws {
        let rig = try StationRig.inProcess()
        let cache = RecordingCacheStore()
        let client = try await rig.pair(persistsPostKeys: true, cacheStore: cache)
        let (entries, key) = try await Self.entries(40, rig: rig, client: client)
        for entry in entries { await client.postKeys.cache(key, for: entry.postCID) }
        try await Self.serve(entries, rig: rig, owner: client)
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(Set(try await Self.storedKeys(in: cache, station: rig.emulator.uid).keys).isSuperset(of: Set(entries.map(\.postCID))))

        // 36 posts leave the manifest (deleted by another device): the listing drops their keys
        // and, as they are many, rewrites the store without them.
        try await Self.serve(Array(entries.prefix(4)), rig: rig, owner: client)
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.count == 4)
        #expect(await cache.postKeyItems == [CacheItem.postKeys(station: rig.emulator.uid)])
        #expect(Set(try await Self.storedKeys(in: cache, station: rig.emulator.uid).keys) == Set(entries.prefix(4).map(\.postCID)))
        #expect(await client.cachedPostKeyCount == 4)
    }

    @Test("A damaged or foreign item or entry is skipped, never fatal")
    func skipsDamagedRecords() async throws {
        let rig = try StationRig.inProcess()
        let cache = InMemoryCacheStore()
        let client = try await rig.pair(persistsPostKeys: true, cacheStore: cache)
        let posts = try await Self.publish(4, by: try await rig.pair(deviceName: "Other Phone"))
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        let good = try #require(await cache.load(CacheItem.postKeyChanges(1, station: rig.emulator.uid)))
        var object = try #require(try WireJSON.parse(good).objectValue)
        // One entry damaged (a short key), one foreign (not hex), one a stray (an unknown CID).
        object[posts[0].postCID] = .string("abcd")
        object[posts[1].postCID] = .string(String(repeating: "zz", count: 32))
        object["QmNotAPostOfThisStation"] = .string(String(repeating: "00", count: 32))
        await cache.save(WireJSON.serialize(.object(object)), as: CacheItem.postKeyChanges(1, station: rig.emulator.uid))
        // An item that is not JSON at all, and one that is JSON but no object.
        await cache.save(Array("garbage".utf8), as: CacheItem.postKeys(station: rig.emulator.uid))
        await cache.save(Array("[1,2]".utf8), as: CacheItem.postKeyChanges(2, station: rig.emulator.uid))

        rig.emulator.requests.removeAll()
        let relaunched = try await StationClient.load(configuration: client.configuration)
        let listing = try await relaunched.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.count == 4 && listing.skipped.isEmpty)
        // Only the two damaged entries are rewrapped; the stray key is pruned.
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 2)
        #expect(await relaunched.cachedPostKeyCount == 4)
        // The relearned keys went after the last item found.
        #expect(await cache.load(CacheItem.postKeyChanges(3, station: rig.emulator.uid)) != nil)
        let stored = try await Self.storedKeys(in: cache, station: rig.emulator.uid)
        #expect(Set(posts.map(\.postCID)).isSubset(of: Set(stored.keys)))
    }

    @Test("clearPostKeyCache and forget remove the persisted keys; persistsPostKeys false removes an earlier run's")
    func clearingRemovesPersistedKeys() async throws {
        let rig = try StationRig.inProcess()
        let keys = InMemoryKeyStore()
        let cache = RecordingCacheStore()
        let client = try await rig.pair(keyStore: keys, persistsPostKeys: true, cacheStore: cache)
        _ = try await Self.publish(3, by: client)
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(try await Self.storedKeys(in: cache, station: rig.emulator.uid).count == 3)

        await client.clearPostKeyCache()
        #expect(await cache.postKeyItems.isEmpty)
        #expect(await client.cachedPostKeyCount == 0)
        rig.emulator.requests.removeAll()
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 3)
        #expect(try await Self.storedKeys(in: cache, station: rig.emulator.uid).count == 3)

        // An app that turns persistence off: its first listing removes what the earlier run kept.
        let offConfiguration = rig.configuration(keyStore: keys, persistsPostKeys: false, cacheStore: cache)
        let off = try await StationClient.load(configuration: offConfiguration)
        _ = try await off.listPosts(as: DriveFileMetadata.self)
        #expect(await cache.postKeyItems.isEmpty)
        #expect(await off.cachedPostKeyCount == 3)

        // forget() removes them with the credentials.
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        _ = try await Self.publish(1, by: client, prefix: "more")
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(await !cache.postKeyItems.isEmpty)
        try await client.forget()
        #expect(await cache.postKeyItems.isEmpty)
    }
}
