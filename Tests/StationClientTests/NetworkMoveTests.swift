import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport

@Suite("StationNetwork moves a station to a new host in one call, and a paired client follows")
struct NetworkMoveTests {
    @Test("moveStation(from:to:): the old host is down, the new one answers, and the client lists online there")
    func clientFollowsTheMove() async throws {
        let setup = try await EndpointSearchTests.setup()
        let network = setup.network
        let moved = try network.moveStation(from: "station.test", to: "moved.test")
        #expect(moved == network.url(host: "moved.test"))
        #expect(network.isDown(host: "station.test"))
        #expect(network.emulator(at: "moved.test") === setup.emulator)

        let listing = try await setup.client.listPosts(as: DriveFileMetadata.self)
        #expect(!listing.isOffline)
        #expect(listing.posts.map(\.metadata?.filename) == ["kept.txt"])
        #expect(await setup.client.credentials.endpoint.host == "moved.test")
        #expect(setup.emulator.requests.entries.contains { $0.host == "moved.test" })
    }

    @Test("Moving from a host with no station is a typed error and changes nothing")
    func noStationThere() throws {
        let network = StationNetwork()
        let emulator = try StationEmulator()
        network.attach(emulator, host: "station.test", gatewayHost: "gateway.test")
        for host in ["nowhere.test", "gateway.test"] {
            let error = #expect(throws: StationEmulatorError.self) { try network.moveStation(from: host, to: "moved.test") }
            #expect(error?.kind == .noStationAt)
        }
        #expect(network.emulator(at: "moved.test") == nil)
        #expect(!network.isDown(host: "station.test"))
    }
}

@Suite("While the station is down, a download of a post whose key the client holds comes from the gateway")
struct StationDownDownloadTests {
    @Test("Station off the network: a listed post (key cached by publishing) downloads from the gateway; an unknown key cannot")
    func downloadThroughTheGateway() async throws {
        let setup = try await EndpointSearchTests.setup()
        let listed = try #require(try await setup.client.listPosts(as: DriveFileMetadata.self).posts.first)
        setup.network.setDown(true, host: "station.test")
        #expect(try await setup.client.download(listed) == Data("a".utf8))
        #expect(setup.emulator.requests.count(RequestRoute("GET", path: "/ipfs/\(listed.postCID)")) >= 1)

        // A post whose key the client never held needs the station's /rewrap: unreachable.
        await setup.client.clearPostKeyCache()
        let error = await #expect(throws: StationClientError.self) { try await setup.client.download(listed) }
        #expect(error?.kind == .unreachable)
    }
}
