import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import OrderedJSON

@Suite("Managing posts and followers; following another station")
struct SocialTests {
    @Test("Delete removes the post; deleting again is a typed 404")
    func delete() async throws {
        let client = try await StationRig.pairedInProcess().client
        let post = try await client.publish(data: Data("d".utf8), metadata: Fixture.drive("d", size: 1))
        let deleted = try await client.delete(postCID: post.postCID)
        #expect(deleted.postCID == post.postCID)
        #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.isEmpty)
        let error = await #expect(throws: StationClientError.self) { try await client.delete(postCID: post.postCID) }
        #expect(error?.status == 404)
        #expect(error?.stationMessage == "Post \(post.postCID) not found in manifest")
    }

    /// An owner with one approved follower, on an emulator that loses a post's bytes on
    /// `/post/share` as the real station does.
    private static func ownerWithFollower() async throws -> (rig: StationRig, owner: StationClient, reader: FollowedStationReader) {
        let rig = try StationRig.inProcess(losesResharedContent: true)
        let owner = try await rig.pair()
        let identity = FollowerIdentity.generate(name: "Friend")
        _ = try await identity.sendFollowRequest(to: rig.station, transport: rig.transport)
        _ = try await owner.approveFollower(uid: identity.uid)
        let reader = FollowedStationReader(identity: identity, gateway: try #require(owner.configuration.gateway), transport: rig.transport)
        return (rig, owner, reader)
    }

    @Test("Reshare publishes anew to the new audience and removes the old entry: the content stays downloadable")
    func safeReshare() async throws {
        let (rig, owner, reader) = try await Self.ownerWithFollower()
        let content = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let metadata = Fixture.drive("holiday.jpg", size: content.count)
        let post = try await owner.publish(data: content, metadata: metadata)
        #expect(try await reader.listPosts(of: .endpoint(rig.station), namespace: "drive", as: DriveFileMetadata.self).posts.isEmpty)

        let reshared = try await owner.reshare(postCID: post.postCID, audience: .allFollowers)
        #expect(reshared.previousPostCID == post.postCID)
        #expect(reshared.post.postCID != post.postCID)
        #expect(reshared.previousEntryRemoved)
        #expect(reshared.post.audienceMode == .all)
        let entries = rig.emulator.manifest.posts(in: "drive")
        #expect(entries.map(\.postCID) == [reshared.post.postCID])
        #expect(reshared.post.envelopesCID == entries.first?.envelopesCID)

        // The owner and the new audience read the same content and metadata.
        #expect(try await owner.download(postCID: reshared.post.postCID) == content)
        let listing = try await owner.listPosts(as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.metadata) == [metadata])
        let followed = try await reader.listPosts(of: .endpoint(rig.station), namespace: "drive", as: DriveFileMetadata.self)
        #expect(followed.posts.map(\.metadata) == [metadata])
        let entry = try #require(entries.first)
        #expect(try await reader.download(entry) == content)

        // A post that is not there is refused before anything changes.
        let missing = await #expect(throws: StationClientError.self) {
            try await owner.reshare(postCID: "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX", audience: .selfOnly)
        }
        #expect(missing?.kind == .notFound)
        #expect(rig.emulator.manifest.posts(in: "drive").map(\.postCID) == [reshared.post.postCID])
    }

    @Test("The station's in-place share loses the content (as upstream's unpin + GC); the result reports it")
    func unsafeReshareInPlace() async throws {
        let (rig, owner, reader) = try await Self.ownerWithFollower()
        let post = try await owner.publish(data: Data("r".utf8), metadata: Fixture.drive("r", size: 1))
        let result = try await owner.unsafeReshareInPlace(postCID: post.postCID, audience: .allFollowers)
        #expect(result.response.audienceMode == .all)
        #expect(result.contentLost)
        let entry = try #require(rig.emulator.manifest.entry(forPostCID: post.postCID)?.entry)
        #expect(result.envelopesCID == entry.envelopesCID)
        #expect(result.envelopesCID != post.envelopesCID)
        // Shared with the follower, but its bytes are gone: neither the owner nor the follower can download it.
        let ownerError = await #expect(throws: StationClientError.self) { try await owner.download(postCID: post.postCID) }
        #expect(ownerError?.kind == .contentLost)
        #expect(ownerError?.status == 404)
        let readerError = await #expect(throws: StationClientError.self) { try await reader.download(entry) }
        #expect(readerError?.kind == .contentLost)
        let missing = await #expect(throws: StationClientError.self) {
            try await owner.unsafeReshareInPlace(postCID: "QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX", audience: .selfOnly)
        }
        #expect(missing?.status == 404)
        #expect(missing?.kind == .notFound)
    }

    @Test("A follower requests, is approved, and reads only what was shared with it")
    func follower() async throws {
        let rig = try StationRig.inProcess()
        let owner = try await rig.pair(namespace: "cipherframe")
        let followerStore = InMemoryKeyStore()
        let identity = FollowerIdentity.generate(name: "Friend's Laptop")
        try await identity.save(to: followerStore)
        let restored = try #require(try await FollowerIdentity.load(from: followerStore))
        #expect(restored.uid == identity.uid)
        #expect(try await FollowerIdentity.load(from: InMemoryKeyStore()) == nil)

        let transport = rig.transport
        let endpoint = rig.station
        let result = try await restored.sendFollowRequest(to: endpoint, transport: transport)
        #expect(result.status == "follow_request_pending_multi_device")
        let pending = try await owner.pendingFollowers()
        #expect(pending.map(\.uid) == [identity.uid])
        _ = try await owner.approveFollower(uid: identity.uid)
        #expect(try await owner.followers().map(\.uid) == [identity.uid])
        #expect(try await owner.pendingFollowers().isEmpty)

        let shared = try await owner.publish(data: Data("for friends".utf8), metadata: FramePost(caption: "shared", likes: 1),
                                             audience: .allFollowers)
        _ = try await owner.publish(data: Data("just me".utf8), metadata: FramePost(caption: "private", likes: 0))
        let specific = try await owner.publish(data: Data("for you".utf8), metadata: FramePost(caption: "specific", likes: 2),
                                               audience: .specific([identity.uid]))

        let gateway = try #require(owner.configuration.gateway)
        let reader = FollowedStationReader(identity: restored, gateway: gateway, transport: transport)
        for address in [FollowedStationAddress.endpoint(endpoint), .ipns(rig.emulator.ipnsName)] {
            let listing = try await reader.listPosts(of: address, namespace: "cipherframe", as: FramePost.self)
            #expect(listing.posts.map(\.metadata?.caption) == ["shared", "specific"])
            #expect(listing.skipped.isEmpty)
        }
        let entries = rig.emulator.manifest.posts(in: "cipherframe")
        let sharedEntry = try #require(entries.first { $0.postCID == shared.postCID })
        #expect(try await reader.download(sharedEntry) == Data("for friends".utf8))
        let privateEntry = try #require(entries.first { $0.audienceMode == .selfOnly })
        let refused = await #expect(throws: StationClientError.self) { try await reader.download(privateEntry) }
        #expect(refused?.kind == .notShared)
        #expect(specific.audienceMode == .specific)

        // The social graph opens with the follower's decoder envelope.
        let document = try await gateway.resolve(ipnsName: rig.emulator.ipnsName)
        let graph = try #require(try await reader.socialGraph(of: document))
        // Like the real station, the graph lists every Allowed row: the station itself, the owner's
        // paired device (both under the station's uid), and the follower.
        let listed = try #require(graph.followers?["followers"]?.arrayValue?.compactMap { $0["uid"]?.stringValue })
        #expect(listed.filter { $0 != rig.emulator.uid } == [identity.uid])
        #expect(listed.count == 3)
        #expect(graph.following?["following"]?.arrayValue?.isEmpty == true)

        // A stranger with its own identity reads nothing encrypted and holds no decoder envelope.
        let stranger = FollowedStationReader(identity: .generate(name: "stranger"), gateway: gateway, transport: transport)
        #expect(try await stranger.listPosts(of: .endpoint(endpoint), namespace: "cipherframe", as: FramePost.self).posts.isEmpty)
        #expect(try await stranger.socialGraph(of: document) == nil)
    }

    @Test("A follow request with bad keys is a typed error carrying result.error")
    func badFollowRequest() async throws {
        let rig = try StationRig.inProcess()
        let broken = BrokenKeyTransport(base: rig.transport)
        let identity = FollowerIdentity.generate(name: "x")
        let error = await #expect(throws: StationClientError.self) {
            try await identity.sendFollowRequest(to: rig.station, transport: broken)
        }
        // The station's text for a bad key in the `devices` list (the form the SDK sends).
        #expect(error?.stationMessage == "Bad mlkem_public_key for device \(identity.uid) (expected 2368 hex chars)")
        #expect(error?.status == 200)
    }
}

/// Cuts the ML-KEM key in an inbox request, to provoke the station's validation error.
struct BrokenKeyTransport: WrappingTransport {
    let base: any HTTPTransport

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        let bytes = try await body.collect(upTo: 1 << 20, for: request)
        guard var object = try WireJSON.parse(bytes).objectValue, var device = object["devices"]?.arrayValue?.first?.objectValue else {
            return try await base.send(request, body: body, options: options)
        }
        device["mlkem_public_key"] = "00"
        object["devices"] = .array([.object(device)])
        return try await base.send(request, body: .bytes(Data(WireJSON.serialize(.object(object)))), options: options)
    }
}
