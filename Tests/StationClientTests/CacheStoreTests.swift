import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
@testable import StationClient
import StationEmulator
import Testing

/// A key store that counts its writes and records every item's size (a Keychain stand-in).
private actor RecordingKeyStore: KeyStore {
    private let base = InMemoryKeyStore()
    private(set) var saved: [String: Int] = [:]

    func load(_ name: String) async throws -> [UInt8]? { await base.load(name) }
    func save(_ secret: [UInt8], as name: String) async throws {
        saved[name] = secret.count
        await base.save(secret, as: name)
    }
    func delete(_ name: String) async throws { await base.delete(name) }
}

@Suite("Caches live in a CacheStore, not the KeyStore")
struct CacheStoreTests {
    @Test("EncryptedFileCacheStore: sealed files under hashed names; its one key-store item is a 32-byte cache key")
    func encryptedFiles() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let keys = RecordingKeyStore()
            let store = EncryptedFileCacheStore(directory: directory.appendingPathComponent("cache"), keyStore: keys)
            let listing = Array(#"{"filename":"secret-plans.pdf"}"#.utf8)
            try await store.save(listing, as: CacheItem.offlineListing(station: "station", namespace: "drive"))
            try await store.save([1, 2, 3], as: CacheItem.postKeys)
            #expect(try await store.load(CacheItem.offlineListing(station: "station", namespace: "drive")) == listing)
            #expect(try await store.load(CacheItem.postKeys) == [1, 2, 3])
            #expect(try await store.load("missing") == nil)
            #expect(await keys.saved == [KeyStoreItem.cacheKey: 32])

            let files = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).sorted()
            #expect(files.count == 2)
            for file in files {
                #expect(file.hasSuffix(".cache") && !file.contains("drive") && !file.contains("post-keys"))
                let bytes = try Data(contentsOf: store.directory.appendingPathComponent(file))
                #expect(bytes.prefix(5) == Data("CSCI".utf8 + [1]))
                #expect(bytes.range(of: Data("secret-plans".utf8)) == nil)
                let mode = try FileManager.default.attributesOfItem(atPath: store.directory.appendingPathComponent(file).path)[.posixPermissions]
                #expect((mode as? NSNumber)?.intValue == 0o600)
            }

            // A restarted app (a new store on the same key store) reads the items; another key store does not.
            let restarted = EncryptedFileCacheStore(directory: store.directory, keyStore: keys)
            #expect(try await restarted.load(CacheItem.offlineListing(station: "station", namespace: "drive")) == listing)
            let stranger = EncryptedFileCacheStore(directory: store.directory, keyStore: InMemoryKeyStore())
            #expect(try await stranger.load(CacheItem.offlineListing(station: "station", namespace: "drive")) == nil)

            // Replacing is atomic (no temporary files left), deleting removes the file.
            try await restarted.save(Array("v2".utf8), as: CacheItem.postKeys)
            #expect(try await store.load(CacheItem.postKeys) == Array("v2".utf8))
            try await store.delete(CacheItem.postKeys)
            try await store.delete(CacheItem.postKeys)
            #expect(try await restarted.load(CacheItem.postKeys) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).count == 1)
            #expect(await keys.saved == [KeyStoreItem.cacheKey: 32])
        }
    }

    @Test("A damaged cache file reads as missing and is replaced by the next save")
    func damagedFile() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let store = EncryptedFileCacheStore(directory: directory, keyStore: InMemoryKeyStore())
            try await store.save([9, 9, 9], as: "item")
            let file = try await store.fileURL(for: "item")
            var bytes = try Data(contentsOf: file)
            bytes[bytes.count - 1] ^= 1
            try bytes.write(to: file)
            #expect(try await store.load("item") == nil)
            try Data("junk".utf8).write(to: file)
            #expect(try await store.load("item") == nil)
            try await store.save([7], as: "item")
            #expect(try await store.load("item") == [7])
            // An empty file, and one past the size limit (sparse: nothing is written), read as missing too.
            try Data().write(to: file)
            #expect(try await store.load("item") == nil)
            try Fixture.sparseFile(at: file, byteCount: EncryptedFileCacheStore.maximumItemByteCount + 1)
            #expect(try await store.load("item") == nil)
        }
    }

    @Test("Files are read whole up to their limit, and refused past it")
    func boundedFileRead() throws {
        try Fixture.withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("f")
            #expect(throws: BoundedFileRead.Failure.self) { try BoundedFileRead.bytes(of: file, limit: 10) }
            try Data().write(to: file)
            #expect(try BoundedFileRead.bytes(of: file, limit: 10) == [])
            let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            try Data(bytes).write(to: file)
            #expect(try BoundedFileRead.bytes(of: file, limit: 70_000) == bytes)
            do {
                _ = try BoundedFileRead.bytes(of: file, limit: 69_999)
                Issue.record("a file past the limit was read")
            } catch {
                #expect("\(error)" == "larger than 69999 bytes")
            }
        }
    }

    @Test("Concurrent first uses make one cache key")
    func oneKey() async throws {
        try await Fixture.withTemporaryDirectory { directory in
            let keys = InMemoryKeyStore()
            let store = EncryptedFileCacheStore(directory: directory, keyStore: keys)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<8 { group.addTask { try await store.save([UInt8(index)], as: "item-\(index)") } }
                try await group.waitForAll()
            }
            let restarted = EncryptedFileCacheStore(directory: directory, keyStore: keys)
            for index in 0..<8 { #expect(try await restarted.load("item-\(index)") == [UInt8(index)]) }
        }
    }

    @Test("The client writes its listing and post keys to the cache store and removes the old key-store copies")
    func clientUsesTheCacheStore() async throws {
        let rig = try StationRig.inProcess()
        let keys = RecordingKeyStore()
        // Caches an earlier version left in the key store.
        try await keys.save(Array("{}".utf8), as: KeyStoreItem.legacyPostKeys)
        try await keys.save(Array("{}".utf8), as: KeyStoreItem.legacyOfflineListing(namespace: "drive"))
        let cache = InMemoryCacheStore()
        let client = try await rig.pair(keyStore: keys, persistsPostKeys: true, cacheStore: cache)
        _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("a.txt", size: 1))
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        // The first listing's keys are one change item of the post-key journal.
        #expect(await cache.names == [CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive"), CacheItem.postKeyChanges(1, station: client.credentials.stationUID)].sorted())
        #expect(try await keys.load(KeyStoreItem.legacyPostKeys) == nil)
        #expect(try await keys.load(KeyStoreItem.legacyOfflineListing(namespace: "drive")) == nil)
        #expect(Set(await keys.saved.keys) == [KeyStoreItem.credentials, KeyStoreItem.legacyPostKeys,
                                              KeyStoreItem.legacyOfflineListing(namespace: "drive")])
        try await client.forget()
        #expect(await cache.names.isEmpty)
    }

    /// A key store of the app's own (a Keychain's stand-in).
    actor AppKeyStore: KeyStore {
        var items: [String: [UInt8]] = [:]
        func load(_ name: String) -> [UInt8]? { items[name] }
        func save(_ secret: [UInt8], as name: String) { items[name] = secret }
        func delete(_ name: String) { items[name] = nil }
    }

    @Test("Default cache stores: on disk only beside a FileKeyStore; in memory for any other key store, the app's own included")
    func defaults() async throws {
        #expect(StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore()).cacheStore is InMemoryCacheStore)
        // An app's own store gets no file cache (nothing written to disk it did not choose),
        // and its key store receives no cache key.
        let appStore = AppKeyStore()
        #expect(StationClientConfiguration(namespace: "drive", keyStore: appStore).cacheStore is InMemoryCacheStore)
        let appRig = try StationRig.inProcess()
        let appClient = try await appRig.pair(keyStore: appStore, persistsPostKeys: true)
        _ = try await appClient.publish(data: Data("a".utf8), metadata: Fixture.drive("a.txt", size: 1))
        _ = try await appClient.listPosts(as: DriveFileMetadata.self)
        #expect(await appStore.items.keys.sorted() == [KeyStoreItem.credentials])
        try await Fixture.withTemporaryDirectory { directory in
            let files = try FileKeyStore(directory: directory, passphrase: "pass", limits: Argon2.Limits(operations: 1, memoryBytes: 8 << 20))
            let store = try #require(StationClientConfiguration(namespace: "drive", keyStore: files).cacheStore as? EncryptedFileCacheStore)
            #expect(store.directory.path(percentEncoded: false).hasSuffix("/cache/"))
            #expect(store.directory.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)

            // A client on a FileKeyStore: the key store holds credentials and the cache key only.
            let rig = try StationRig.inProcess()
            let client = try await rig.pair(keyStore: files, persistsPostKeys: true)
            _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("a.txt", size: 1))
            _ = try await client.listPosts(as: DriveFileMetadata.self)
            let items = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".csks") }.sorted()
            #expect(items == ["cache-key.csks", "device-credentials.csks"])
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).count == 2)
        }
    }
}
