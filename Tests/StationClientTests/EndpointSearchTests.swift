import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// When the station cannot be reached and the search for a new endpoint fails too (the gateway
/// does not resolve the name, or answers with a forged record), the caller gets the original
/// unreachable error, so the listing falls back to its offline view; a tunnel's 5xx on
/// `GET /profile` is unreachable like on every signed call.
@Suite("Endpoint search failures keep the station unreachable")
struct EndpointSearchTests {
    struct Setup {
        let network: StationNetwork
        let emulator: StationEmulator
        let client: StationClient
    }

    /// A station at `station.test` with its gateway at `gateway.test`, a paired client that read
    /// one listing online.
    static func setup() async throws -> Setup {
        let network = StationNetwork()
        let emulator = try StationEmulator()
        network.attach(emulator, host: "station.test", gatewayHost: "gateway.test")
        emulator.setEndpoint("http://station.test")
        let configuration = StationClientConfiguration(
            namespace: "drive", keyStore: InMemoryKeyStore(), transport: network.transport,
            gateway: IPFSGateway(baseURL: network.url(host: "gateway.test"), transport: network.transport))
        let log = emulator.log
        let client = try await StationClient.pair(endpoint: network.url(host: "station.test"), deviceName: "Phone",
                                                  configuration: configuration) { _ in log.latestPIN }
        _ = try await client.publish(data: Data("a".utf8), metadata: Fixture.drive("kept.txt", size: 1))
        let online = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(!online.isOffline && online.posts.count == 1)
        return Setup(network: network, emulator: emulator, client: client)
    }

    @Test("Station down, the gateway answers 404 for /ipns: the original cannot-connect error, and the offline view")
    func gatewayCannotResolve() async throws {
        let setup = try await Self.setup()
        setup.network.setDown(true, host: "station.test")
        setup.emulator.faults.inject(.status(404, body: Data("ipfs resolve -r /ipns/k51: could not resolve name".utf8)), count: .max,
                                     route: RequestRoute("GET", pathPrefix: "/ipns/"), server: .gateway)
        let error = await #expect(throws: StationClientError.self) { try await setup.client.profile() }
        #expect(error?.kind == .unreachable)
        #expect(error?.operation == "GET /profile")
        #expect(error?.transportError?.kind == .cannotConnect)
        // The failed search is attached as context.
        let search = error?.underlying as? StationClientError
        #expect(search?.status == 404)
        #expect(error?.description.contains("no new endpoint found") == true)

        let listing = try await setup.client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.isOffline)
        #expect(listing.posts.map(\.metadata?.filename) == ["kept.txt"])
        #expect(setup.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/")) >= 2)
    }

    @Test("Station down, the gateway forges another station's record: still unreachable, the offline view")
    func forgedRecord() async throws {
        let setup = try await Self.setup()
        setup.network.setDown(true, host: "station.test")
        let forged = #"{"uid":"00000000-0000-4000-8000-000000000000","endpoint":"http://evil.test"}"#
        setup.emulator.faults.forgeIPNSAnswer(Data(forged.utf8))
        let listing = try await setup.client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.isOffline)
        #expect(listing.posts.map(\.metadata?.filename) == ["kept.txt"])
        let error = await #expect(throws: StationClientError.self) { try await setup.client.followers() }
        #expect(error?.kind == .unreachable && error?.transportError?.kind == .cannotConnect)
        #expect((error?.underlying as? StationClientError)?.kind == .integrity)
        // The forged endpoint was never adopted.
        #expect(await setup.client.credentials.endpoint.absoluteString == "http://station.test")
    }

    @Test("A tunnel's 502 on GET /profile is unreachable, as for followers(), and the listing falls back offline")
    func profileTunnelError() async throws {
        let setup = try await Self.setup()
        let faults = setup.emulator.faults
        faults.failNextRequests(.max, status: 502, body: "Bad Gateway", route: RequestRoute("GET", path: "/profile"))
        let error = await #expect(throws: StationClientError.self) { try await setup.client.profile() }
        #expect(error?.kind == .unreachable)
        #expect(error?.status == 502)
        let listing = try await setup.client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.isOffline)
        #expect(listing.posts.map(\.metadata?.filename) == ["kept.txt"])
        // The unpaired read of a profile says the same.
        let direct = await #expect(throws: StationClientError.self) {
            try await StationConnection.read(.profile, at: StationOrigin(url: setup.network.url(host: "station.test"), pins: []),
                                             transport: setup.network.transport)
        }
        #expect(direct?.kind == .unreachable && direct?.status == 502)
        // Under the same fault on its own route, followers() is unreachable too.
        faults.reset()
        faults.failNextRequests(.max, status: 502, body: "Bad Gateway", route: RequestRoute("GET", path: "/followers"))
        let followers = await #expect(throws: StationClientError.self) { try await setup.client.followers() }
        #expect(followers?.kind == error?.kind && followers?.status == 502)
    }
}
