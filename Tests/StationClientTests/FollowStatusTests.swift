import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

@Suite("A follower knows where it stands with a followed station, and a handle keeps its gateway")
struct FollowStatusTests {
    typealias TwoStations = FollowingTests.TwoStations

    /// Bob's configuration reads through Bob's gateway, which does not hold Alice's content: the
    /// handles here keep Alice's gateway, as an app keeps one per followed station.
    static func follow(_ stations: TwoStations) async throws -> FollowedStationHandle {
        var handle = try await stations.atBob.follow(stationAt: stations.aliceURL)
        handle.gateway = stations.aliceGateway.baseURL
        return handle
    }

    /// Another follower ("Carol") whom Alice approves: Alice's station then publishes a social graph.
    static func approveAnotherFollower(at stations: TwoStations) async throws {
        let carol = FollowerIdentity.generate(name: "carol")
        _ = try await carol.sendFollowRequest(to: stations.aliceURL, transport: stations.network.transport)
        _ = try await stations.atAlice.approveFollower(uid: carol.uid)
    }

    @Test("Awaiting approval (graph or not), approved, removed: each as Alice's station publishes it, and the handle keeps what it learned")
    func everyStatus() async throws {
        let stations = try await TwoStations()
        var handle = try await Self.follow(stations)
        #expect(handle.requestWasSent)

        // Alice's station has approved nobody and followed nobody: it has published no graph.
        // Bob sent a request: he is awaiting approval, not "nothing known".
        let first = try await stations.atBob.followStatus(of: handle)
        #expect(first.status == .awaitingApproval)
        handle.record(first)
        #expect(!handle.wasApproved)

        // Once she approves someone else, her graph is published without Bob: still awaiting approval.
        try await Self.approveAnotherFollower(at: stations)
        let pending = try await stations.atBob.followStatus(of: handle)
        #expect(pending.status == .awaitingApproval)
        #expect(pending.ipnsID != nil)
        #expect(pending.recordSequence != nil)
        handle.record(pending)
        #expect(handle.ipnsID != nil)
        #expect(!handle.wasApproved)

        // Approved: her graph holds a decoder envelope for him, and what she shares lists.
        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        let approved = try await stations.atBob.followStatus(of: handle)
        #expect(approved.status == .approved)
        let before = handle.ipnsSequence
        handle.record(approved)
        #expect(handle.wasApproved)
        #expect(handle.ipnsSequence == approved.recordSequence)
        #expect(handle.ipnsSequence.map { $0 >= (before ?? 0) } == true)
        let shared = try await stations.atAlice.publish(data: Data("hello".utf8), metadata: DriveFileMetadata(filename: "hello.txt"),
                                                        audience: .allFollowers)
        let feed = try await stations.atBob.reader(for: handle)
        #expect(try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self).posts.map(\.postCID) == [shared.postCID])
        #expect(try await feed.status().status == .approved)

        // Removed: the handle saw the approval, and her graph no longer holds him.
        let unrecorded = try await Self.follow(stations)
        _ = try await stations.atAlice.removeFollower(uid: handle.followerUID)
        let removed = try await stations.atBob.followStatus(of: handle)
        #expect(removed.status == .removed)
        handle.record(removed)
        #expect(handle.wasApproved)
        // The stated limit: without the approval seen, a removal reads as awaiting approval.
        #expect(unrecorded.wasApproved == false)
        #expect(try await stations.atBob.followStatus(of: unrecorded).status == .awaitingApproval)
    }

    @Test("A station with no IPNS name in the handle is asked for it; one of another uid there is refused")
    func nameFromProfile() async throws {
        let stations = try await TwoStations()
        var handle = try await Self.follow(stations)
        try await Self.approveAnotherFollower(at: stations)
        handle.ipnsID = nil
        let standing = try await stations.atBob.followStatus(of: handle)
        #expect(standing.status == .awaitingApproval)
        #expect(standing.ipnsID != nil)
        handle.record(standing)
        #expect(handle.ipnsID == standing.ipnsID)

        var impostor = handle
        impostor.ipnsID = nil
        impostor.uid = "someone-00000000"
        let refused = await #expect(throws: StationClientError.self) { _ = try await stations.atBob.followStatus(of: impostor) }
        #expect(refused?.kind == .integrity)
    }

    @Test("A record older than the handle's floor is a rollback, not a status")
    func olderRecordRefused() async throws {
        let stations = try await TwoStations()
        var handle = try await Self.follow(stations)
        try await Self.approveAnotherFollower(at: stations)
        let current = try #require(try await stations.atBob.followStatus(of: handle).recordSequence)
        // As if a newer record had been seen: the gateway's current one is then a replay.
        handle.ipnsSequence = current + 1
        let refused = await #expect(throws: StationClientError.self) { _ = try await stations.atBob.followStatus(of: handle) }
        #expect(refused?.kind == .integrity)
    }

    @Test("A gateway 404 for a record the handle verified before keeps the last verified standing, marked not refreshed")
    func recordMissingAtTheGateway() async throws {
        let stations = try await TwoStations()
        var handle = try await Self.follow(stations)
        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        let approved = try await stations.atBob.followStatus(of: handle)
        #expect(approved.status == .approved)
        #expect(approved.isRefreshed && approved.refreshFailure == nil)
        handle.record(approved)
        #expect(handle.wasApproved)
        let floor = handle.ipnsSequence

        // The gateway loses Alice's record (a node that dropped it, a cache miss): 404 for every /ipns/.
        stations.alice.faults.inject(.status(404, body: Data("ipfs resolve -r /ipns/k51: could not resolve name".utf8)), count: .max,
                                     route: RequestRoute("GET", pathPrefix: "/ipns/"), server: .gateway)
        let kept = try await stations.atBob.followStatus(of: handle)
        #expect(kept.status == .approved)
        #expect(kept.status != .nothingKnown)
        #expect(!kept.isRefreshed)
        let failure = try #require(kept.refreshFailure)
        #expect(failure.kind == .gateway)
        #expect(failure.status == 404)
        #expect(kept.recordSequence == nil)
        // Recording a kept standing changes nothing.
        let before = handle
        handle.record(kept)
        #expect(handle == before)
        #expect(handle.ipnsSequence == floor)

        // A handle that verified a record but never saw an approval keeps "awaiting approval".
        var unapproved = handle
        unapproved.wasApproved = false
        let pending = try await stations.atBob.followStatus(of: unapproved)
        #expect(pending.status == .awaitingApproval)
        #expect(pending.refreshFailure?.status == 404)

        // A handle with nothing verified yet: a 404 is refreshed, awaiting approval (a request was
        // sent), or nothing known when the handle records no request.
        var fresh = handle
        fresh.wasApproved = false
        fresh.ipnsSequence = nil
        let awaiting = try await stations.atBob.followStatus(of: fresh)
        #expect(awaiting.status == .awaitingApproval)
        #expect(awaiting.isRefreshed)
        fresh.requestStatus = nil
        let nothing = try await stations.atBob.followStatus(of: fresh)
        #expect(nothing.status == .nothingKnown)
        #expect(nothing.isRefreshed)

        // Once the gateway serves the record again, the standing is read afresh.
        stations.alice.faults.reset()
        let again = try await stations.atBob.followStatus(of: handle)
        #expect(again.status == .approved && again.isRefreshed)
    }

    @Test("The status comes from the gateway: an unreachable one is an error, not a status")
    func gatewayDown() async throws {
        let stations = try await TwoStations()
        var handle = try await Self.follow(stations)
        handle.gateway = URL(string: "http://nowhere.test")
        await #expect(throws: StationClientError.self) { _ = try await stations.atBob.followStatus(of: handle) }
    }

    @Test("The handle's gateway is read through unless the call names another; the configured one otherwise")
    func handleGateway() async throws {
        let stations = try await TwoStations()
        var handle = try await stations.atBob.follow(stationAt: stations.aliceURL)
        #expect(handle.gateway == nil)
        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        let shared = try await stations.atAlice.publish(data: Data("news".utf8), metadata: DriveFileMetadata(filename: "news.txt"),
                                                        audience: .allFollowers)
        // Without a gateway in the handle, Bob's configured gateway is used: it holds none of Alice's blocks.
        let configured = try await stations.atBob.reader(for: handle)
        #expect(configured.reader.gateway.baseURL == stations.atBob.configuration.gateway?.baseURL)
        await #expect(throws: StationClientError.self) {
            _ = try await configured.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        }

        handle.gateway = stations.aliceGateway.baseURL
        let feed = try await stations.atBob.reader(for: handle)
        #expect(feed.reader.gateway.baseURL == stations.aliceGateway.baseURL)
        let listing = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [shared.postCID])
        #expect(try await feed.download(try #require(listing.posts.first)) == Data("news".utf8))

        // A gateway given to the call wins over the handle's.
        let elsewhere = IPFSGateway(baseURL: stations.network.url(host: "gateway.bob.test"), transport: stations.network.transport)
        #expect(try await stations.atBob.reader(for: handle, gateway: elsewhere).reader.gateway.baseURL == elsewhere.baseURL)
    }

    @Test("A handle keeps its gateway and approval through Codable; one saved before they existed decodes as nil and false")
    func handleCoding() throws {
        let endpoint = try #require(URL(string: "https://alice.example:8445"))
        let gateway = try #require(URL(string: "https://ipfs.alice.example"))
        let handle = FollowedStationHandle(uid: "alice-12345678", endpoint: endpoint, publicKeyPin: nil, mlkemPublicKey: "ab",
                                           mldsaPublicKey: nil, ipnsID: "k51", followerUID: "bob-87654321", gateway: gateway,
                                           wasApproved: true)
        let encoded = try JSONEncoder().encode(handle)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["gateway"] as? String == "https://ipfs.alice.example")
        #expect(object["was_approved"] as? Bool == true)
        #expect(try JSONDecoder().decode(FollowedStationHandle.self, from: encoded) == handle)

        // As a handle was saved before this release.
        let older = Data("""
            {"uid":"alice-12345678","endpoint":"https://alice.example:8445","mlkem_public_key":"ab","ipns_id":"k51",
             "follower_uid":"bob-87654321","request_status":"follow_request_pending_multi_device"}
            """.utf8)
        let decoded = try JSONDecoder().decode(FollowedStationHandle.self, from: older)
        #expect(decoded.gateway == nil)
        #expect(decoded.wasApproved == false)
        #expect(decoded.requestStatus == "follow_request_pending_multi_device")
        // A handle not yet approved writes no approval field, so older readers see what they knew.
        var fresh = decoded
        fresh.gateway = nil
        let written = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(fresh)) as? [String: Any])
        #expect(written["was_approved"] == nil)
        #expect(written["gateway"] == nil)

        var damaged = object
        damaged["gateway"] = "not a url"
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(FollowedStationHandle.self, from: try JSONSerialization.data(withJSONObject: damaged))
        }
    }

    @Test("Statuses are named values: equal by name, described in words; the former names are the same values")
    func statusValues() {
        let all = FollowStatus.knownValues
        #expect(all.map(\.description) == ["approved", "awaitingApproval", "nothingKnown", "removed"])
        #expect(Set(all).count == 4)
        #expect(all.allSatisfy { !$0.explanation.isEmpty })
        #expect((FormerStatusNames.self as any FormerNames.Type).names == [.awaitingApproval, .nothingKnown])
    }

    @Test("A handle that records no request is 'nothing known' where one that does is 'awaiting approval', graph or not")
    func awaitingApprovalNeedsARequest() async throws {
        let stations = try await TwoStations()
        let handle = try await Self.follow(stations)
        var unrecorded = handle
        unrecorded.requestStatus = nil
        #expect(!unrecorded.requestWasSent)
        #expect(try await stations.atBob.followStatus(of: handle).status == .awaitingApproval)
        #expect(try await stations.atBob.followStatus(of: unrecorded).status == .nothingKnown)
        try await Self.approveAnotherFollower(at: stations)
        #expect(try await stations.atBob.followStatus(of: handle).status == .awaitingApproval)
        #expect(try await stations.atBob.followStatus(of: unrecorded).status == .nothingKnown)
    }
}

/// Reads deprecated names through a protocol requirement, so the test builds without a warning.
private protocol FormerNames {
    static var names: [FollowStatus] { get }
}

/// `.pending` and `.notPublished`, as an app written for an earlier release names them.
private enum FormerStatusNames: FormerNames {
    @available(*, deprecated)
    static var names: [FollowStatus] { [.pending, .notPublished] }
}
