import Foundation
import Manifest
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing

@Suite("A post this client published is listed without a /rewrap")
struct OwnPostKeyTests {
    static let rewrap = RequestRoute("POST", path: "/rewrap")

    @Test("Publishing N posts (data, file, prepared) and listing them makes no /rewrap; nor does downloading them")
    func ownPostsNeedNoRewrap() async throws {
        let log = LogCollector()
        let (rig, client) = try await StationRig.pairedInProcess(log: log.handler)
        try await Fixture.withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("note.txt")
            try Data("from a file".utf8).write(to: file)
            var published = try await PostKeyPersistenceTests.publish(3, by: client)
            published.append(try await client.publish(fileAt: file, metadata: Fixture.drive("note.txt", size: 11),
                                                      audience: .allFollowers))
            let prepared = try await client.preparePost(data: Data("prepared".utf8), metadata: Fixture.drive("p", size: 8))
            published.append(try await client.submit(prepared))
            #expect(await client.cachedPostKeyCount == 5)

            let listing = try await client.listPosts(as: DriveFileMetadata.self)
            #expect(Set(listing.posts.map(\.postCID)) == Set(published.map(\.postCID)))
            #expect(listing.skipped.isEmpty)
            let fromFile = try #require(listing.posts.first { $0.postCID == published[3].postCID })
            #expect(try await client.download(fromFile) == Data("from a file".utf8))
            #expect(rig.emulator.requests.count(Self.rewrap) == 0)
            // The key is a secret: no log line carries it.
            let key = try #require(await client.postKeys.key(for: prepared.postCID))
            let hex = key.withUnsafeBytes { Hex.encode($0) }
            #expect(!log.messages.contains { $0.contains(hex) })
        }
    }

    @Test("A reshare keeps the new post's key: listing afterwards makes no /rewrap")
    func reshareKeepsTheNewKey() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let post = try await client.publish(data: Data("shared later".utf8), metadata: Fixture.drive("s", size: 12))
        let reshared = try await client.reshare(postCID: post.postCID, audience: .allFollowers)
        #expect(await client.postKeys.key(for: reshared.post.postCID) != nil)
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [reshared.post.postCID])
        #expect(rig.emulator.requests.count(Self.rewrap) == 0)
    }

    @Test("The key is cached only once the station confirmed the post, or the manifest lists it")
    func cachedOnlyWhenConfirmed() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let postRoute = RequestRoute("POST", path: "/post")
        let prepared = try await client.preparePost(data: Data("refused".utf8), metadata: Fixture.drive("r", size: 7))
        rig.emulator.faults.failNextRequests(1, status: 400, route: postRoute)
        await #expect(throws: StationClientError.self) { try await client.submit(prepared) }
        #expect(await client.cachedPostKeyCount == 0)

        // Resubmitted after a lost answer: found in the manifest, and the key is kept.
        rig.emulator.faults.closeNextResponsesMidBody(1, route: postRoute)
        let recovered = try await client.submit(prepared)
        #expect(recovered.wasRecovered)
        #expect(await client.cachedPostKeyCount == 1)
        // Submitted once more: the same post, the same single key.
        _ = try await client.submit(prepared)
        #expect(await client.cachedPostKeyCount == 1)
        _ = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(rig.emulator.requests.count(Self.rewrap) == 0)
    }

    @Test("With persistsPostKeys, a relaunched client lists the posts it published without a /rewrap")
    func persistedAcrossLaunches() async throws {
        let rig = try StationRig.inProcess()
        let keys = InMemoryKeyStore(), cache = InMemoryCacheStore()
        let client = try await rig.pair(keyStore: keys, persistsPostKeys: true, cacheStore: cache)
        let published = try await PostKeyPersistenceTests.publish(3, by: client)
        let relaunched = try await StationClient.load(configuration: rig.configuration(keyStore: keys, persistsPostKeys: true,
                                                                                       cacheStore: cache))
        let listing = try await relaunched.listPosts(as: DriveFileMetadata.self)
        #expect(Set(listing.posts.map(\.postCID)) == Set(published.map(\.postCID)))
        #expect(rig.emulator.requests.count(Self.rewrap) == 0)
    }
}
