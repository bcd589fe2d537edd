import Foundation
import Manifest
import OrderedJSON
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// A hostile station whose manifest is within every byte and depth cap but made of the shapes
/// that cost most as trees (the fourth review's finding 1), and long `post_cid`s (finding 3): a
/// listing keeps public metadata as text, charges the trees it builds to one budget, and learns
/// and keeps no key for an entry the reader refused. `scripts/hostile_manifests.sh` measures the
/// same at full size.
@Suite("Listing memory against a hostile station")
struct ListingMemoryTests {
    /// `[{"":{"":…0…}},…]`: one-member objects nested 31 deep, 3.9 KB.
    static let nestedMetadata = "[" + Array(repeating: String(repeating: #"{"":"#, count: 31) + "0" + String(repeating: "}", count: 31),
                                            count: 24).joined(separator: ",") + "]"

    @Test("Public metadata past the listing's memory budget skips its posts as .tooLarge; drive listings read the text")
    func listingBudgetSkipsPosts() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        let entries = (0..<40).map { ManifestCapsTests.publicPost("QmHostile\($0)", metadata: Self.nestedMetadata) }
            + [ManifestCapsTests.publicPost("QmFile", metadata: #"{"filename":"a.txt","size_bytes":3}"#)]
        // What one post's tree costs, as the listing charges it.
        var one = JSONMemoryBudget.unlimited
        _ = try WireJSON.parse(Array(Self.nestedMetadata.utf8), charging: &one)
        let client = try await rig.client(for: owner) { $0.maximumListingMemory = one.used * 10 }
        try await ManifestCapsTests.serve(ManifestCapsTests.manifest(entries), rig: rig, owner: owner, count: 3)

        let json = try await client.listPosts(as: JSONValue.self)
        // Ten trees fit the budget; every later post that needs one is skipped, named and typed.
        #expect(json.posts.count == 10 && json.posts.first?.postCID == "QmHostile0")
        #expect(json.skipped.count == 31 && json.skipped.allSatisfy { $0.error.kind == .tooLarge })
        #expect(json.skipped.first?.error.limit == Int64(one.used * 10))
        #expect(json.skipped.first?.error.message.contains("maximumListingMemory") == true, "\(json.skipped)")

        // Drive metadata is read from the text without a tree: nothing to charge.
        let drive = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(drive.posts.map(\.postCID) == ["QmFile"] && drive.skipped.count == 40)
        #expect(drive.skipped.allSatisfy { $0.error.kind == .invalidResponse })
        // The raw metadata is still there for a post the app looks at.
        #expect(drive.posts.first?.rawMetadata == .object(["filename": "a.txt", "size_bytes": 3]))

        // The offline view holds the text as read and charges its trees the same way.
        let offline = try #require(await client.offline.listing(item: CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive"), as: JSONValue.self,
                                                               dates: .flexible, memoryLimit: one.used * 5))
        #expect(offline.posts.count == 5 && offline.skipped.count == 36 && offline.skipped.allSatisfy { $0.error.kind == .tooLarge })
    }

    @Test("A manifest past maximumManifestMemory fails the listing as .tooLarge naming the limit; the offline view is kept")
    func manifestMemoryLimit() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        _ = try await owner.publish(data: Data("kept".utf8), metadata: DriveFileMetadata(filename: "kept.txt"))
        let client = try await rig.client(for: owner) { $0.maximumManifestMemory = 64 * 1024 }
        let online = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(online.posts.count == 1)
        let entries = (0..<40).map { ManifestCapsTests.publicPost("QmHostile\($0)", metadata: Self.nestedMetadata) }
        try await ManifestCapsTests.serve(ManifestCapsTests.manifest(entries), rig: rig, owner: owner, count: 2)
        let error = await #expect(throws: StationClientError.self) { try await client.listPosts(as: DriveFileMetadata.self) }
        #expect(error?.kind == .tooLarge && error?.limit == 64 * 1024)
        #expect(error?.message.contains("maximumManifestMemory") == true, "\(String(describing: error))")
        let offline = try #require(await client.offline.listing(item: CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive"),
                                                               as: DriveFileMetadata.self, dates: .flexible, memoryLimit: 1 << 20))
        #expect(offline.posts.map(\.postCID) == online.posts.map(\.postCID))
    }

    @Test("Three listings of posts with 3.6 KB post_cids make no /rewrap and leave the persisted key cache as it was")
    func longCIDsDoNotGrowTheKeyCache() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        let real = try await owner.publish(data: Data("real".utf8), metadata: DriveFileMetadata(filename: "real.txt"))
        let client = try await rig.client(for: owner) { _ in }
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        let store = client.configuration.cacheStore
        let station = await client.credentials.stationUID
        let before = try await store.load(CacheItem.postKeys(station: station))
        #expect(await client.cachedPostKeyCount == 1)

        let long = (0..<50).map { "Qm\($0)" + String(repeating: "x", count: 3_600) }
        let document = ManifestCapsTests.manifest(long.map(ManifestCapsTests.encrypted) + [
            #"{"post_cid":"\#(real.postCID)","audience_mode":"all","envelopes_cid":"\#(real.envelopesCID ?? "")","envelopes_count":1,"created_at":1}"#,
        ])
        try await ManifestCapsTests.serve(document, rig: rig, owner: owner, count: 3)
        rig.emulator.requests.removeAll()
        var sizes: [Int] = []
        for _ in 0..<3 {
            let listing = try await client.listPosts(as: DriveFileMetadata.self)
            #expect(listing.skipped.count == 50 && listing.skipped.allSatisfy { $0.error.message.contains("longer than the 256") })
            var total = 0
            for index in 0...PostKeyJournal.changeItemLimit {
                let item = index == 0 ? CacheItem.postKeys(station: station) : CacheItem.postKeyChanges(index, station: station)
                total += try await store.load(item)?.count ?? 0
            }
            sizes.append(total)
        }
        #expect(rig.emulator.requests.count(ManifestCapsTests.rewrapRoute) == 0)
        #expect(Set(sizes).count == 1 && sizes[0] <= (before?.count ?? 0), "\(sizes)")
        #expect(await client.cachedPostKeyCount <= 1)
        // A key offered for such a CID is not kept either.
        await client.postKeys.cache(SymmetricKey(data: [UInt8](repeating: 7, count: 32)), for: long[0])
        #expect(await client.postKeys.key(for: long[0]) == nil)
    }
}
