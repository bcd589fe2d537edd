import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import OrderedJSON

@Suite("Following another station in one call, and downloading what it shares")
struct FollowingTests {
    /// Alice's and Bob's stations on one network, each with a paired owner device; Bob's device
    /// has its own key store (where its follower identity goes), and pairs with `bobKeys` when
    /// given (its configuration then loads them back with `bobResolver`).
    struct TwoStations {
        let network = StationNetwork()
        let alice: StationEmulator
        let bob: StationEmulator
        let atAlice: StationClient
        let atBob: StationClient
        let bobStore = InMemoryKeyStore()

        init(bobKeys: DeviceKeys? = nil, bobResolver: KeyReferenceResolver? = nil) async throws {
            alice = try StationEmulator()
            bob = try StationEmulator()
            network.attach(alice, host: "alice.test", gatewayHost: "gateway.alice.test")
            network.attach(bob, host: "bob.test", gatewayHost: "gateway.bob.test")
            alice.setEndpoint(network.url(host: "alice.test").absoluteString)
            bob.setEndpoint(network.url(host: "bob.test").absoluteString)
            atAlice = try await Self.pair(alice, host: "alice.test", network: network, keyStore: InMemoryKeyStore())
            atBob = try await Self.pair(bob, host: "bob.test", network: network, keyStore: bobStore, keys: bobKeys,
                                        resolver: bobResolver)
        }

        static func pair(
            _ station: StationEmulator, host: String, network: StationNetwork, keyStore: any KeyStore, keys: DeviceKeys? = nil,
            resolver: KeyReferenceResolver? = nil
        ) async throws -> StationClient {
            let log = station.log
            return try await StationClient.pair(
                endpoint: network.url(host: host), deviceName: "Owner Phone",
                configuration: configuration(host: host, network: network, keyStore: keyStore, resolver: resolver),
                trust: .certificateAuthorityOnly, keys: keys) { _ in log.latestPIN }
        }

        /// The configuration of the owner device of the station at `host`.
        static func configuration(
            host: String, network: StationNetwork, keyStore: any KeyStore, resolver: KeyReferenceResolver? = nil
        ) -> StationClientConfiguration {
            var configuration = StationClientConfiguration(
                namespace: "drive", keyStore: keyStore, transport: network.transport,
                gateway: IPFSGateway(baseURL: network.url(host: "gateway." + host), transport: network.transport))
            configuration.keyReferenceResolver = resolver
            return configuration
        }

        var aliceURL: URL { network.url(host: "alice.test") }
        var aliceGateway: IPFSGateway { IPFSGateway(baseURL: network.url(host: "gateway.alice.test"), transport: network.transport) }
    }

    @Test("Bob follows Alice with follow(stationAt:); once approved he lists and downloads what she shares, to memory and to a file")
    func followAndDownload() async throws {
        let stations = try await TwoStations()
        let handle = try await stations.atBob.follow(stationAt: stations.aliceURL, name: "Bob's Laptop")

        // The handle names Alice's station as her profile does, and the identity Bob's key store now holds.
        let aliceProfile = try await stations.atAlice.profile()
        #expect(handle.uid == aliceProfile.uid)
        #expect(handle.endpoint == stations.aliceURL)
        #expect(handle.mlkemPublicKey == aliceProfile.mlkemPublicKey)
        #expect(handle.mldsaPublicKey == aliceProfile.mldsaPublicKey)
        #expect(handle.publicKeyPin == nil)
        #expect(handle.requestStatus == "follow_request_pending_multi_device")
        let identity = try #require(try await FollowerIdentity.load(from: stations.bobStore))
        #expect(identity.uid == handle.followerUID)
        #expect(identity.uid.hasPrefix("bobslaptop-"))
        // Bob's station follows Alice's, with her keys.
        let following = try await stations.atBob.following()
        #expect(following == [handle.followedStation])
        // Alice's station holds the request, from that identity.
        #expect(try await stations.atAlice.pendingFollowers().map(\.uid) == [identity.uid])

        // Following again loads the same identity rather than making another.
        let again = try await stations.atBob.follow(stationAt: stations.aliceURL)
        #expect(again.followerUID == identity.uid)

        _ = try await stations.atAlice.approveFollower(uid: handle.followerUID)
        let content = Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let metadata = DriveFileMetadata(filename: "holiday.jpg", mimeType: "image/jpeg", sizeBytes: content.count)
        let shared = try await stations.atAlice.publish(data: content, metadata: metadata, audience: .allFollowers)
        _ = try await stations.atAlice.publish(data: Data("mine".utf8), metadata: DriveFileMetadata(filename: "private.txt"))

        let feed = try await stations.atBob.reader(for: handle, gateway: stations.aliceGateway)
        let listing = try await feed.listPosts(namespace: " drive ", as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.postCID) == [shared.postCID])
        #expect(listing.posts.map(\.metadata) == [metadata])
        #expect(listing.skipped.isEmpty)
        let item = try #require(listing.posts.first)
        #expect(item.envelopesCID == shared.envelopesCID)
        #expect(!item.isPublic)

        #expect(try await feed.download(item) == content)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("follow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("holiday.jpg")
        let reports = Locked<[ByteProgress]>([])
        try await feed.download(item, to: destination, progress: { progress in reports.withLock { $0.append(progress) } })
        #expect(try Data(contentsOf: destination) == content)
        // The progress counts the file's bytes (not the sealed ones), ending at all of them.
        let completed = reports.value.map(\.completed)
        #expect(completed.last == Int64(content.count))
        #expect(completed == completed.sorted())
        // Nothing but the file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["holiday.jpg"])
    }

    @Test("A handle survives encoding with its pin; a damaged one is refused")
    func handleCoding() throws {
        let pin = try PublicKeyFingerprint(sha256: [UInt8](repeating: 7, count: 32))
        let handle = FollowedStationHandle(
            uid: "alice-12345678", endpoint: try #require(URL(string: "https://alice.example:8445")), publicKeyPin: pin,
            mlkemPublicKey: "ab", mldsaPublicKey: nil, ipnsID: "k51", followerUID: "bob-87654321")
        let encoded = try JSONEncoder().encode(handle)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["tls_public_key_pin"] as? String == pin.pinString)
        #expect(object["endpoint"] as? String == "https://alice.example:8445")
        #expect(try JSONDecoder().decode(FollowedStationHandle.self, from: encoded) == handle)
        var damaged = object
        damaged["tls_public_key_pin"] = "md5//nope"
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(FollowedStationHandle.self, from: try JSONSerialization.data(withJSONObject: damaged))
        }
    }

    @Test("Before approval nothing is listed; a handle for another follower identity is refused")
    func beforeApproval() async throws {
        let stations = try await TwoStations()
        let handle = try await stations.atBob.follow(stationAt: stations.aliceURL)
        _ = try await stations.atAlice.publish(data: Data("news".utf8), metadata: DriveFileMetadata(filename: "news.txt"),
                                               audience: .allFollowers)
        let feed = try await stations.atBob.reader(for: handle, gateway: stations.aliceGateway)
        #expect(try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self).posts.isEmpty)

        var other = handle
        other.followerUID = "someone-else-00000000"
        let refused = await #expect(throws: StationClientError.self) {
            _ = try await stations.atBob.reader(for: other, gateway: stations.aliceGateway)
        }
        #expect(refused?.kind == .keyStore)
    }

    @Test("A station whose profile has no ML-KEM key is not followed, and nothing is sent to it")
    func profileWithoutKey() async throws {
        let stations = try await TwoStations()
        var keyless = try await stations.atAlice.profile()
        keyless.mlkemPublicKey = nil
        stations.alice.faults.inject(.status(200, body: Data(try WireJSON.encode(keyless))), route: RequestRoute("GET", path: "/profile"))
        let error = await #expect(throws: StationClientError.self) {
            _ = try await stations.atBob.follow(stationAt: stations.aliceURL)
        }
        #expect(error?.kind == .invalidResponse)
        #expect(stations.alice.requests.count(RequestRoute("POST", path: "/inbox")) == 0)
        #expect(try await stations.atBob.following().isEmpty)
    }
}
