// CurlTransport is empty where libcurl is absent (iOS, tvOS, watchOS, visionOS).
#if canImport(CCurl)
import CurlTransport
import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// The client over `CurlTransport` against the emulator served on real loopback sockets: exact
/// streamed multipart bytes, `Content-Length`, `Range`, broken and refused connections.
@Suite("Over CurlTransport on loopback")
struct LoopbackCurlTests {
    @Test("Pair, publish a streamed file, list, download with resume, over real HTTP")
    func roundTrip() async throws {
        let (rig, client) = try await StationRig.pairedServed(deviceName: "curl")
        defer { rig.emulator.stop() }
        try await Fixture.withTemporaryDirectory { directory in
            let source = directory.appendingPathComponent("photo.raw")
            let content = Data((0..<900_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
            try content.write(to: source)
            let progress = Locked<Int64>(0)
            let post = try await client.publish(fileAt: source, metadata: Fixture.drive("photo.raw", size: content.count)) { update in
                progress.withLock { $0 = max($0, update.completed) }
            }
            #expect(progress.withLock { $0 } == Int64(content.count), "told in the file's bytes, ending at all of them")
            let listing = try await client.listPosts(as: DriveFileMetadata.self)
            #expect(listing.posts.map(\.postCID) == [post.postCID])

            try await rig.expectResumedDownload(of: post, by: client, to: directory.appendingPathComponent("copy.raw"),
                                                content: content, cutAfter: [300_000])
        }
    }

    @Test("A station that moved ports is found through IPNS over real HTTP; a stopped one gives the offline listing")
    func movedAndOffline() async throws {
        let (rig, client) = try await StationRig.pairedServed(deviceName: "curl")
        defer { rig.emulator.stop() }
        _ = try await client.publish(data: Data("m".utf8), metadata: Fixture.drive("m.txt", size: 1))
        #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.count == 1)
        let moved = try rig.emulator.moveStation()
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(!listing.isOffline)
        #expect(await client.credentials.endpoint == moved)

        let offline = try await rig.offlineListing(of: client)
        #expect(offline.posts.map(\.metadata?.filename) == ["m.txt"])
    }

    @Test("A lost publish answer over a broken connection is recovered without a duplicate")
    func lostAnswer() async throws {
        let (rig, client) = try await StationRig.pairedServed(deviceName: "curl")
        defer { rig.emulator.stop() }
        let route = RequestRoute("POST", path: "/post")
        rig.emulator.faults.closeNextResponsesMidBody(1, route: route)
        let post = try await client.publish(data: Data("once".utf8), metadata: Fixture.drive("once", size: 4))
        #expect(post.wasRecovered)
        #expect(rig.emulator.requests.count(route) == 1)
        #expect(rig.emulator.manifest.posts(in: "drive").count == 1)
    }
}
#endif
