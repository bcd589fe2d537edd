import CurlTransport
import Foundation
import Manifest
@testable import StationClient
import Testing
import Transport

/// The client over `CurlTransport` against the fake station served on real loopback sockets.
@Suite("Over CurlTransport on loopback")
struct LoopbackCurlTests {
    static func rig(namespace: String = "drive", store: any KeyStore = InMemoryKeyStore()) async throws
        -> (LoopbackStation, StationClient, StationClientConfiguration) {
        let fake = FakeStation()
        let served = try await LoopbackStation(fake)
        let transport = CurlTransport()
        let configuration = StationClientConfiguration(
            namespace: namespace, keyStore: store, transport: transport,
            gateway: IPFSGateway(baseURL: served.gatewayURL, transport: transport))
        let pin = await fake.pin
        let client = try await StationClient.pair(endpoint: served.stationURL, deviceName: "curl", configuration: configuration) { _ in pin }
        return (served, client, configuration)
    }

    @Test("Pair, publish a streamed file, list, download with resume, over real HTTP")
    func roundTrip() async throws {
        let (served, client, _) = try await Self.rig()
        defer { served.stop() }
        let directory = try Fixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("photo.raw")
        let content = Data((0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try content.write(to: source)
        let progress = Locked<Int64>(0)
        let post = try await client.publish(fileAt: source, metadata: Fixture.drive("photo.raw", size: content.count)) { update in
            progress.withLock { $0 = max($0, update.completed) }
        }
        #expect(progress.withLock { $0 } > Int64(content.count))
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [post.postCID])

        await served.station.update { $0.breakStreamsAfter = [300_000] }
        let copy = directory.appendingPathComponent("copy.raw")
        try await client.download(postCID: post.postCID, to: copy)
        #expect(try Data(contentsOf: copy) == content)
        #expect(await served.station.requestLog.filter { $0.hasSuffix("/content/\(post.postCID)") }.count == 2)
    }

    @Test("A station that moved ports is found through IPNS over real HTTP; a stopped one gives the offline listing")
    func movedAndOffline() async throws {
        let (served, client, _) = try await Self.rig()
        defer { served.stop() }
        _ = try await client.publish(data: Data("m".utf8), metadata: Fixture.drive("m.txt", size: 1))
        #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.count == 1)
        let moved = try await served.start()
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(!listing.isOffline)
        #expect(await client.credentials.endpoint == moved)

        served.stop()
        let offline = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(offline.isOffline)
        #expect(offline.posts.map(\.metadata?.filename) == ["m.txt"])
    }

    @Test("A lost publish answer over a broken connection is recovered without a duplicate")
    func lostAnswer() async throws {
        let (served, client, _) = try await Self.rig()
        defer { served.stop() }
        await served.station.update { $0.losePostAnswers = 1 }
        let post = try await client.publish(data: Data("once".utf8), metadata: Fixture.drive("once", size: 4))
        #expect(post.wasRecovered)
        #expect(await served.station.postRequests == 1)
        #expect(await served.station.posts(in: "drive").count == 1)
    }
}
