import Foundation
import PQCrypto
@testable import StationClient
import Testing

@Suite("The post-key store: keys in memory, the journal in the cache store")
struct PostKeyStoreTests {
    let station = "station-uid"
    let keyA = SymmetricKey(data: [UInt8](repeating: 1, count: 32))
    let keyB = SymmetricKey(data: [UInt8](repeating: 2, count: 32))
    /// The cache store the stores of a test share, as one app's launches do (each test has its own).
    let cache = InMemoryCacheStore()

    /// A store over ``cache``: a new one is the app relaunched.
    func store(persists: Bool = true) -> PostKeyStore {
        PostKeyStore(cacheStore: cache, station: station, persists: persists, log: nil)
    }

    func bytes(_ key: SymmetricKey?) -> [UInt8]? { key?.withUnsafeBytes { Array($0) } }

    @Test("Keys written by one store are read back by the next, in one lookup for a listing")
    func persistsAcrossRelaunches() async throws {
        let first = store()
        await first.cache(keyA, for: "QmA")
        await first.cache(keyB, for: "QmB")
        #expect(await first.write() == nil)
        let relaunched = store()
        #expect(await relaunched.count == 0, "nothing is read before the first lookup")
        let keys = await relaunched.keys(for: ["QmB", "QmMissing", "QmA"])
        #expect(keys.map(bytes) == [bytes(keyB), nil, bytes(keyA)])
        #expect(await relaunched.count == 2)
    }

    @Test("A write reads the stored journal first, so it never takes the number of a change item already stored")
    func writeLoadsFirst() async throws {
        let first = store()
        await first.cache(keyA, for: "QmA")
        await first.write()
        #expect(await cache.load(CacheItem.postKeyChanges(1, station: station)) != nil)
        let second = store()
        await second.cache(keyB, for: "QmB")
        #expect(await second.write() == nil)
        #expect(await cache.load(CacheItem.postKeyChanges(2, station: station)) != nil)
        let keys = await store().keys(for: ["QmA", "QmB"])
        #expect(keys.map(bytes) == [bytes(keyA), bytes(keyB)])
    }

    @Test("A dropped key is gone after a relaunch; a key that is too long for a CID is never kept")
    func drops() async throws {
        let first = store()
        await first.keep([("QmA", keyA), ("QmB", keyB)], skipped: [])
        await first.write()
        await first.drop("QmA")
        await first.write()
        #expect(await store().keys(for: ["QmA", "QmB"]).map(bytes) == [nil, bytes(keyB)])
        let long = String(repeating: "x", count: PostKeyJournal.maximumCIDLength + 1)
        await first.cache(keyA, for: long)
        #expect(await first.key(for: long) == nil)
    }

    @Test("Forgetting empties memory and the cache store")
    func forget() async throws {
        let first = store()
        await first.cache(keyA, for: "QmA")
        await first.write()
        #expect(await first.forget() == nil)
        #expect(await first.count == 0)
        #expect(await cache.load(CacheItem.postKeys(station: station)) == nil)
        #expect(await cache.load(CacheItem.postKeyChanges(1, station: station)) == nil)
        #expect(await store().keys(for: ["QmA"]).map(bytes) == [nil])
    }

    @Test("A store that does not persist keeps keys in memory and removes what an earlier run kept")
    func notPersisting() async throws {
        let earlier = store()
        await earlier.cache(keyA, for: "QmA")
        await earlier.write()
        let memoryOnly = store(persists: false)
        await memoryOnly.cache(keyB, for: "QmB")
        #expect(await memoryOnly.keys(for: ["QmA", "QmB"]).map(bytes) == [nil, bytes(keyB)])
        await memoryOnly.write()
        #expect(await cache.load(CacheItem.postKeyChanges(1, station: station)) == nil)
        #expect(await store().keys(for: ["QmA", "QmB"]).map(bytes) == [nil, nil])
    }
}
