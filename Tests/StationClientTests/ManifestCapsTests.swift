import Foundation
import Manifest
import OrderedJSON
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// A hostile station's manifest, with small numbers: past `maximumManifestPosts` the listing fails
/// typed before any `/rewrap` and keeps the offline view; posts whose metadata is past the caps
/// are skipped and reported, and left out of the offline view; a listing makes at most one
/// `/rewrap` call per post. (`scripts/hostile_manifests.sh` measures the same with the real sizes.)
@Suite("Manifest caps against a hostile station")
struct ManifestCapsTests {
    static let rewrapRoute = RequestRoute("POST", path: "/rewrap")

    /// Makes the station serve `document` as its manifest to the next `count` listings: stored as
    /// a public file (so `/content/<cid>` serves it, matching its CID) and named by `/profile`.
    static func serve(_ document: [UInt8], rig: StationRig, owner: StationClient, count: Int = 1) async throws {
        let crafted = try await owner.publishPermanentlyPublic(
            data: Data(document), metadata: DriveFileMetadata(filename: "manifest.json"), namespace: "store")
        var profile = try await owner.profile()
        profile.manifestCID = crafted.postCID
        rig.emulator.faults.inject(.status(200, body: Data(try WireJSON.encode(profile))), count: count,
                                   route: RequestRoute("GET", path: "/profile"))
    }

    /// A manifest of `drive` entries.
    static func manifest(_ entries: [String]) -> [UInt8] {
        Array((#"{"clients":{"drive":{"posts":["# + entries.joined(separator: ",") + "]}}}").utf8)
    }

    /// An encrypted entry with sealed metadata: listing it needs a `/rewrap`.
    static func encrypted(_ cid: String) -> String {
        #"{"post_cid":"\#(cid)","audience_mode":"all","envelopes_cid":"QmEnv\#(cid)","envelopes_count":1,"created_at":1,"metadata":"abcd"}"#
    }

    static func publicPost(_ cid: String, metadata: String) -> String {
        #"{"post_cid":"\#(cid)","audience_mode":"public","encrypted":false,"envelopes_cid":null,"envelopes_count":0,"created_at":1,"metadata":\#(metadata)}"#
    }

    @Test("Past maximumManifestPosts: .tooLarge naming the limit, no /rewrap, the offline view kept")
    func postCapFailsTypedAndKeepsTheOfflineView() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        let client = try await rig.client(for: owner) { $0.maximumManifestPosts = 5 }
        let real = try await client.publish(data: Data("real".utf8), metadata: Fixture.drive("real.txt", size: 4))
        let online = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(online.posts.map(\.postCID) == [real.postCID])

        try await Self.serve(Self.manifest((0..<6).map { Self.encrypted("QmHostile\($0)") }), rig: rig, owner: owner, count: 2)
        rig.emulator.requests.removeAll()
        let error = await #expect(throws: StationClientError.self) { try await client.listPosts(as: DriveFileMetadata.self) }
        #expect(error?.kind == .tooLarge && error?.limit == 5, "\(String(describing: error))")
        #expect(error?.message.contains("5 posts") == true)
        // The sequence fails the same way, on its first step.
        let sequenceError = await #expect(throws: StationClientError.self) {
            for try await _ in client.posts(as: DriveFileMetadata.self) {}
        }
        #expect(sequenceError?.kind == .tooLarge)
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 0)
        let offline = await client.offline.listing(item: CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive"), as: DriveFileMetadata.self,
                                                  dates: .flexible, memoryLimit: 1 << 26)
        #expect(offline?.posts.map(\.postCID) == [real.postCID] && offline?.manifestCID == online.manifestCID)

        // Exactly at the limit, the listing reads (each unknown post skipped, one /rewrap each).
        let atLimit = try await rig.client(for: owner) { $0.maximumManifestPosts = 6 }
        try await Self.serve(Self.manifest((0..<6).map { Self.encrypted("QmHostile\($0)") }), rig: rig, owner: owner)
        rig.emulator.requests.removeAll()
        let listing = try await atLimit.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.isEmpty && listing.skipped.count == 6)
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 6)
    }

    @Test("Posts with metadata past the size or depth cap are skipped and reported, and left out of the offline view")
    func metadataCapsSkipPosts() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        let client = try await rig.client(for: owner) {
            $0.maximumPostMetadataBytes = 256
            $0.maximumPostMetadataDepth = 4
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        try await Self.serve(Self.manifest([
            Self.publicPost("QmFine", metadata: #"{"filename":"fine.txt"}"#),
            Self.publicPost("QmLong", metadata: #"{"filename":"\#(String(repeating: "x", count: 300))"}"#),
            Self.publicPost("QmDeep", metadata: #"{"a":[[[[1]]]]}"#),
            Self.publicPost("QmPastParser", metadata: deep),
            Self.encrypted("QmLongHex").replacingOccurrences(of: #""abcd""#, with: "\"" + String(repeating: "ab", count: 200) + "\""),
            #"{"audience_mode":"public"}"#,
        ]), rig: rig, owner: owner)
        rig.emulator.requests.removeAll()
        let listing = try await client.listPosts(as: JSONValue.self)
        #expect(listing.posts.map(\.postCID) == ["QmFine"])
        #expect(listing.skipped.map(\.postCID) == ["QmLong", "QmDeep", "QmPastParser", "QmLongHex", "posts[5]"])
        #expect(listing.skipped.allSatisfy { $0.error.kind == .invalidResponse })
        #expect(listing.skipped[0].error.message.contains("more than the 256 allowed"), "\(listing.skipped[0])")
        #expect(listing.skipped[1].error.message.contains("deeper than the 4 allowed"), "\(listing.skipped[1])")
        // The post skipped for its metadata needed no key.
        #expect(rig.emulator.requests.count(Self.rewrapRoute) == 0)
        // The offline view (and the file it is stored in) holds only the listed post.
        let offline = await client.offline.listing(item: CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive"), as: JSONValue.self,
                                                  dates: .flexible, memoryLimit: 1 << 26)
        #expect(offline?.posts.map(\.postCID) == ["QmFine"])
        let stored = try #require(try await client.configuration.cacheStore.load(CacheItem.offlineListing(station: client.credentials.stationUID, namespace: "drive")))
        #expect(stored.count < 512, "\(stored.count) bytes")
    }

    @Test("A listing makes at most one /rewrap per post, even when the station answers every one as stale")
    func oneRewrapPerPost() async throws {
        let (rig, owner) = try await StationRig.pairedInProcess()
        try await Self.serve(Self.manifest((0..<4).map { Self.encrypted("QmStale\($0)") }), rig: rig, owner: owner)
        rig.emulator.requests.removeAll()
        let date = "Sun, 06 Nov 1994 08:49:37 GMT"
        rig.emulator.faults.failNextRequests(Int.max, status: 401, body: #"{"detail":"stale request"}"#, headers: ["Date": date],
                                             route: Self.rewrapRoute)
        let listing = try await owner.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.isEmpty && listing.skipped.count == 4)
        #expect(rig.emulator.requests.count(Self.rewrapRoute) <= 4, "\(rig.emulator.requests.count(Self.rewrapRoute)) calls")
    }
}
