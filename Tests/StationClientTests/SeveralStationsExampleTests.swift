import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing

// The examples of StationEmulator.docc/SeveralStations.md, compiled and run as written (the
// article's top-level code is the body of a test), so the documentation cannot drift from the API.
@Suite("StationEmulator docs: several stations on one network")
struct SeveralStationsExampleTests {
    @Test func twoStationsOneGoesDown() async throws {
        let network = StationNetwork()
        let alice = try StationEmulator()
        let bob = try StationEmulator()
        network.attach(alice, host: "alice.test", gatewayHost: "gateway.alice.test")
        network.attach(bob, host: "bob.test", gatewayHost: "gateway.bob.test")

        /// Pairs a device with the station at `host`, reading the PIN from the station's log.
        func pairDevice(with station: StationEmulator, host: String, gatewayHost: String) async throws -> StationClient {
            let configuration = StationClientConfiguration(
                namespace: "drive", keyStore: InMemoryKeyStore(), transport: network.transport,
                gateway: IPFSGateway(baseURL: network.url(host: gatewayHost), transport: network.transport))
            let log = station.log
            return try await StationClient.pair(endpoint: network.url(host: host), deviceName: "Test Phone",
                                                configuration: configuration) { _ in log.latestPIN }
        }

        let atAlice = try await pairDevice(with: alice, host: "alice.test", gatewayHost: "gateway.alice.test")
        let atBob = try await pairDevice(with: bob, host: "bob.test", gatewayHost: "gateway.bob.test")
        let note = DriveFileMetadata(filename: "note.txt", mimeType: "text/plain", sizeBytes: 2, createdAt: 1_700_000_000,
                                     modifiedAt: 1_700_000_000, path: "/")
        _ = try await atBob.publish(data: Data("hi".utf8), metadata: note)
        let online = try await atBob.listPosts(as: DriveFileMetadata.self)

        // Bob's station leaves the network, and his gateway cannot find where it went.
        network.setDown(true, host: "bob.test")
        bob.faults.inject(.status(404, body: Data("could not resolve name".utf8)), count: .max,
                          route: RequestRoute("GET", pathPrefix: "/ipns/"), server: .gateway)

        let offline = try await atBob.listPosts(as: DriveFileMetadata.self)
        #expect(offline.isOffline && offline.manifestCID == online.manifestCID)
        let alicesListing = try await atAlice.listPosts(as: DriveFileMetadata.self)
        #expect(!alicesListing.isOffline)

        // Back on the network: the next listing is read online again.
        network.setDown(false, host: "bob.test")
        let back = try await atBob.listPosts(as: DriveFileMetadata.self)
        #expect(!back.isOffline && back.posts.count == 1)
    }

    @Test func faultsOnOneRoute() async throws {
        let bob = try StationEmulator()
        let content = RequestRoute("GET", pathPrefix: "/content/")
        bob.faults.inject(.status(502, body: Data("Bad Gateway".utf8)), route: RequestRoute("GET", path: "/profile"))
        bob.faults.inject(.replaceBody(byteCount: 200 << 20), route: RequestRoute("POST", path: "/rewrap"))  // oversized
        bob.faults.inject(.endlessBody, route: content)                                    // never ends
        bob.faults.inject(.delay(seconds: 5), route: content)                              // a slow answer
        bob.faults.inject(.closeMidBody(afterBytes: 1_000), route: RequestRoute("GET", pathPrefix: "/ipfs/"), server: .gateway)
        // The gateway hands out a record the attacker wrote.
        bob.faults.forgeIPNSAnswer(Data(#"{"uid":"someone-else","endpoint":"https://evil.example"}"#.utf8))
        #expect(bob.faults.pendingFaultCount == 5)
    }
}
