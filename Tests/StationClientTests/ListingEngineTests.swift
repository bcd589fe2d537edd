import Foundation
import OrderedJSON
@testable import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// One listing engine for one's own station and a followed one: the same limits, envelope sets
/// fetched once per listing, the same offline view, and one post type that downloads the same way.
@Suite("One listing engine for own and followed stations")
struct ListingEngineTests {
    typealias TwoStations = FollowingTests.TwoStations

    /// Bob follows Alice (approved); returns the feed and the follower identity.
    static func following(_ stations: TwoStations) async throws -> (feed: FollowedStationFeed, handle: FollowedStationHandle) {
        let handle = try await stations.atBob.follow(stationAt: stations.aliceURL, name: "Bob's Laptop")
        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        return (try await stations.atBob.reader(for: handle, gateway: stations.aliceGateway), handle)
    }

    @Test("Twenty posts sharing one envelope set: the follower's listing fetches the set once")
    func envelopeSetFetchedOncePerListing() async throws {
        let stations = try await TwoStations()
        let (feed, _) = try await Self.following(stations)
        let metadata = DriveFileMetadata(filename: "shared.txt", sizeBytes: 6)
        let shared = try await stations.atAlice.publish(data: Data("shared".utf8), metadata: metadata, audience: .allFollowers)
        let real = try #require(stations.alice.manifest.posts(in: "drive").first { $0.postCID == shared.postCID })
        let envelopesCID = try #require(real.envelopesCID)

        // A manifest whose 20 posts name that one set, served by Alice's station and gateway.
        var manifest = Manifest()
        manifest.clients["drive"] = ClientNamespace(posts: (0..<20).map { index in
            var entry = real
            entry.postCID = "\(real.postCID)-\(index)"
            return entry
        })
        let crafted = try await stations.atAlice.publishPermanentlyPublic(
            data: Data(try WireJSON.encode(manifest)), metadata: DriveFileMetadata(filename: "manifest.json"), namespace: "store")
        var profile = try await stations.atAlice.profile()
        profile.manifestCID = crafted.postCID
        stations.alice.faults.inject(.status(200, body: Data(try WireJSON.encode(profile))), route: RequestRoute("GET", path: "/profile"))

        stations.alice.requests.removeAll()
        let listing = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        #expect(listing.posts.count == 20)
        #expect(listing.posts.allSatisfy { $0.metadata == metadata })
        #expect(listing.skipped.isEmpty)
        #expect(stations.alice.requests.count(RequestRoute("GET", pathPrefix: "/ipfs/\(envelopesCID)")) == 1)
    }

    @Test("A followed station's listing keeps to the configured manifest limit, through reader(for:) and standalone")
    func configuredLimitsApplyToFollowedStations() async throws {
        let stations = try await TwoStations()
        let (feed, handle) = try await Self.following(stations)
        // One post with long (but not too long) sealed metadata.
        let long = DriveFileMetadata(filename: "long.txt", path: "/" + String(repeating: "d", count: 20_000) + "/")
        let longPost = try await stations.atAlice.publish(data: Data("x".utf8), metadata: long, audience: .allFollowers)
        let identity = try #require(try await FollowerIdentity.load(from: stations.bobStore))

        // reader(for:) carries the client's configuration.
        #expect(feed.reader.settings.maximumManifestPosts == stations.atBob.configuration.maximumManifestPosts)
        #expect(feed.reader.settings.concurrency == stations.atBob.configuration.rewrapConcurrency)
        #expect(try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self).posts.map(\.metadata) == [long])

        let second = DriveFileMetadata(filename: "second.txt")
        let secondPost = try await stations.atAlice.publish(data: Data("y".utf8), metadata: second, audience: .allFollowers)
        var strict = stations.atBob.configuration
        strict.maximumManifestPosts = 1
        let limited = FollowedStationReader(identity: identity, gateway: stations.aliceGateway, transport: stations.network.transport,
                                            configuration: strict)
        let error = await #expect(throws: StationClientError.self) {
            _ = try await limited.listPosts(of: .endpoint(handle.endpoint), namespace: "drive", as: DriveFileMetadata.self)
        }
        #expect(error?.kind == .tooLarge && error?.limit == 1, "\(String(describing: error))")

        // The metadata caps apply too: the long post is skipped and reported, the other listed.
        var small = stations.atBob.configuration
        small.maximumPostMetadataBytes = 4_096
        let capped = FollowedStationReader(identity: identity, gateway: stations.aliceGateway, transport: stations.network.transport,
                                           configuration: small)
        let listing = try await capped.listPosts(of: .endpoint(handle.endpoint), namespace: "drive", as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [secondPost.postCID])
        #expect(listing.skipped.map(\.postCID) == [longPost.postCID])
    }

    @Test("A followed station that cannot be reached shows its last listing, marked offline, as one's own does")
    func followedOfflineView() async throws {
        let stations = try await TwoStations()
        let (feed, handle) = try await Self.following(stations)
        let metadata = DriveFileMetadata(filename: "news.txt")
        let shared = try await stations.atAlice.publish(data: Data("news".utf8), metadata: metadata, audience: .allFollowers)

        // Before any listing read online there is nothing to show.
        stations.network.setDown(true, host: "alice.test")
        let unreachable = await #expect(throws: StationClientError.self) {
            _ = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        }
        #expect(unreachable?.kind == .unreachable)
        stations.network.setDown(false, host: "alice.test")

        let online = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        #expect(!online.isOffline && online.posts.map(\.postCID) == [shared.postCID])

        stations.network.setDown(true, host: "alice.test")
        // Another feed from the same client shows it too; so does one's own namespace, unchanged.
        let again = try await stations.atBob.reader(for: handle, gateway: stations.aliceGateway)
        for reader in [feed, again] {
            let offline = try await reader.listPosts(namespace: "drive", as: DriveFileMetadata.self)
            #expect(offline.isOffline)
            #expect(offline.manifestCID == online.manifestCID)
            #expect(offline.posts.map(\.postCID) == [shared.postCID])
            #expect(offline.posts.map(\.metadata) == [metadata])
        }
        // Cleared from memory, it is read back from the cache store.
        await stations.atBob.clearOfflineListingCache()
        #expect(try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self).isOffline)
    }

    @Test("Own and followed listings give ListedPosts that download the same way, to memory and to a file")
    func onePostTypeDownloadsAlike() async throws {
        let stations = try await TwoStations()
        let (feed, _) = try await Self.following(stations)
        let content = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let metadata = DriveFileMetadata(filename: "both.bin", sizeBytes: content.count)
        let shared = try await stations.atAlice.publish(data: content, metadata: metadata, audience: .allFollowers)

        let own: [ListedPost<DriveFileMetadata>] = try await stations.atAlice.listPosts(as: DriveFileMetadata.self).posts
        let followed: [ListedPost<DriveFileMetadata>] = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self).posts
        let ownPost = try #require(own.first { $0.postCID == shared.postCID })
        let followedPost = try #require(followed.first)
        #expect(followedPost.postCID == ownPost.postCID && followedPost.envelopesCID == ownPost.envelopesCID)
        #expect(followedPost.metadata == ownPost.metadata)

        #expect(try await stations.atAlice.download(ownPost) == content)
        #expect(try await feed.download(followedPost) == content)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("one-post-type-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await stations.atAlice.download(ownPost, to: directory.appendingPathComponent("own.bin"))
        try await feed.download(followedPost, to: directory.appendingPathComponent("followed.bin"))
        #expect(try Data(contentsOf: directory.appendingPathComponent("own.bin")) == content)
        #expect(try Data(contentsOf: directory.appendingPathComponent("followed.bin")) == content)
    }
}
