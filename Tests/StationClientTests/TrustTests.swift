// TLS fronts with a CA bundle given to the transport are libcurl's (`caBundlePath`): where libcurl
// is absent (iOS, tvOS, watchOS, visionOS) these scenarios compile to nothing; URLSessionTransport's
// pinning is tested in URLSessionTransportTests.
#if canImport(CCurl)
import CurlTransport
import Foundation
import LoopbackHTTP
import Manifest
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
import Transport
import TestSupport
import TransportTestSupport
import OrderedJSON
import ContentAddressing

/// A station served over TLS the way `run.py` serves it (self-signed, `CN=cipherstation`, no SAN),
/// through `scripts/tls-front.py` before the emulator; `public.json` names the TLS endpoint.
private struct TLSStation {
    let rig: StationRig
    let front: TLSFront
    let keyStore = InMemoryKeyStore()

    init(transport: any HTTPTransport = CurlTransport()) throws {
        rig = try StationRig.served(transport: transport)
        front = try TLSFront.start(backendPort: try Self.port(rig.station), certificate: .runPyStyle)
        rig.emulator.setEndpoint(front.url("").absoluteString)
    }

    static func port(_ url: URL) throws -> UInt16 { try #require(url.port.map(UInt16.init)) }

    /// A front with a certificate from the test CA before `rig`'s station (a tunnel with a CA-valid
    /// certificate), and a transport that trusts that CA.
    static func caValidFront(before rig: StationRig) throws -> (front: TLSFront, transport: CurlTransport) {
        let front = try TLSFront.start(backendPort: try port(rig.station), certificate: .testCA)
        var settings = CurlTransport.Configuration()
        settings.caBundlePath = try #require(front.caFile).path
        return (front, CurlTransport(configuration: settings))
    }

    var endpoint: URL { front.url("") }
    var backendPort: UInt16 { (try? Self.port(rig.station)) ?? 0 }

    func configuration() -> StationClientConfiguration { rig.configuration(keyStore: keyStore) }

    func pair(trust: StationKeyTrust, at endpoint: URL? = nil) async throws -> StationClient {
        let log = rig.emulator.log
        return try await StationClient.pair(endpoint: endpoint ?? self.endpoint, deviceName: "Trust Phone",
                                            configuration: configuration(), trust: trust) { _ in log.latestPIN }
    }

    /// The station's current `public.json`, changed by `edit` (an attacker's copy).
    func document(_ edit: (inout PublicDocument) -> Void) throws -> Data {
        var document = try WireJSON.decode(PublicDocument.self, from: [UInt8](try #require(rig.emulator.publishedPublicDocument)))
        edit(&document)
        return Data(try WireJSON.encode(document))
    }

    var startCount: Int { rig.count("POST", "/delegate/start") }
}

/// An HTTP server that answers every request as a healthy station would and counts what it gets:
/// the address a hostile record names.
private final class Impostor: Sendable {
    let server: LoopbackHTTPServer

    init() throws {
        server = try LoopbackHTTPServer { _, response in
            try response.send(status: 200, headers: [("Content-Type", "application/json")],
                              body: Array(#"{"status":"healthy","ipfs":"ok"}"#.utf8))
        }
    }

    var requests: Int { server.statistics.requestsReceived }
    var url: URL { server.url("") }
}

/// The `StationClientError` `body` throws, or `nil` (see `thrownError`).
private func stationError(_ body: () async throws -> Void) async -> StationClientError? {
    await thrownError(StationClientError.self, body)
}

@Suite("Trust: TLS keys pinned from pairing on, endpoint moves verified by signed IPNS records", .serialized)
struct TrustTests {
    // MARK: Pairing

    @Test("Pairing with confirmation: the station's key is shown, pinned in the credentials, and carried by every later request")
    func pairWithConfirmation() async throws {
        let station = try TLSStation()
        let shown = Locked<[StationKeyPrompt]>([])
        let client = try await station.pair(trust: .confirm { prompt in
            shown.withLock { $0.append(prompt) }
            return true
        })
        #expect(shown.value.map(\.fingerprint) == [station.front.pin])
        #expect(shown.value.first?.endpoint == station.endpoint)
        let credentials = await client.credentials
        #expect(credentials.stationPublicKeyPin == station.front.pin)
        #expect(credentials.endpointTrust == .pinnedKey)
        #expect(credentials.ipnsName == station.rig.emulator.ipnsName)
        #expect(credentials.stationMLDSAPublicKeyHex != nil)

        // A fresh process: the pin comes from the stored (encoded) credentials, not the configuration.
        let reloaded = try await StationClient.load(configuration: station.configuration())
        #expect(await reloaded.activePins == [station.front.pin])
        #expect(try await reloaded.health().isHealthy)
        _ = try await reloaded.sendSigned(.get, "/followers", operation: "GET /followers")
        #expect(station.rig.count("GET", "/followers") == 1)
    }

    @Test("Pairing with the expected fingerprint pins it without asking; a wrong one is refused with both fingerprints")
    func pairWithExpectedFingerprint() async throws {
        let station = try TLSStation()
        let other = try TLSFront.start(backendPort: station.backendPort, certificate: .runPyStyle)
        let refused = await stationError { _ = try await station.pair(trust: .expected(other.pin)) }
        #expect(refused?.kind == .untrustedKey)
        #expect(refused?.expectedFingerprint == other.pin)
        #expect(refused?.presentedFingerprint == station.front.pin)
        #expect(station.startCount == 0)

        let client = try await station.pair(trust: .expected(station.front.pin))
        #expect(await client.credentials.stationPublicKeyPin == station.front.pin)
        #expect(station.startCount == 1)
    }

    @Test("Without an expected fingerprint or a confirmation, a self-signed station is refused and nothing is sent")
    func pairRefusedWithoutEither() async throws {
        let station = try TLSStation()
        let refused = await stationError { _ = try await station.pair(trust: .certificateAuthorityOnly) }
        #expect(refused?.kind == .untrustedKey)
        #expect(refused?.presentedFingerprint == station.front.pin)
        let declined = await stationError { _ = try await station.pair(trust: .confirm { _ in false }) }
        #expect(declined?.kind == .untrustedKey)
        #expect(declined?.presentedFingerprint == station.front.pin)
        // The old entry point trusts only certificate authorities.
        let log = station.rig.emulator.log
        let plain = await stationError {
            _ = try await StationClient.pair(endpoint: station.endpoint, deviceName: "x", configuration: station.configuration()) { _ in
                log.latestPIN
            }
        }
        #expect(plain?.kind == .untrustedKey)
        #expect(station.startCount == 0)
        #expect(try await station.configuration().keyStore.load(KeyStoreItem.credentials) == nil)
    }

    @Test("Following a self-signed station trusts its key on first use through the same confirmation as pairing; the handle keeps the pin")
    func followSelfSignedStation() async throws {
        let alice = try TLSStation()
        let owner = try await alice.pair(trust: .expected(alice.front.pin))
        let bob = try StationRig.served()
        let atBob = try await bob.pair()
        // Without a decision it is refused: nothing reaches Alice's inbox, Bob's station follows nothing.
        let refused = await stationError { _ = try await atBob.follow(stationAt: alice.endpoint) }
        #expect(refused?.kind == .untrustedKey)
        #expect(refused?.presentedFingerprint == alice.front.pin)
        #expect(alice.rig.count("POST", "/inbox") == 0)
        #expect(try await atBob.following().isEmpty)

        let shown = Locked<[StationKeyPrompt]>([])
        let handle = try await atBob.follow(stationAt: alice.endpoint, trust: .confirm { prompt in
            shown.withLock { $0.append(prompt) }
            return true
        })
        #expect(shown.value.map(\.fingerprint) == [alice.front.pin])
        #expect(shown.value.first?.endpoint == alice.endpoint)
        #expect(handle.publicKeyPin == alice.front.pin)
        #expect(alice.rig.count("POST", "/inbox") == 1)
        #expect(try await atBob.following().map(\.uid) == [alice.rig.emulator.uid])

        _ = try await owner.approveFollower(uid: handle.followerUID)
        _ = try await owner.publish(data: Data("over tls".utf8), metadata: DriveFileMetadata(filename: "tls.txt"), audience: .allFollowers)
        let gateway = IPFSGateway(baseURL: alice.rig.gateway, transport: alice.rig.transport)
        let feed = try await atBob.reader(for: handle, gateway: gateway)
        let listing = try await feed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        #expect(listing.posts.map(\.metadata?.filename) == ["tls.txt"])
        #expect(try await feed.download(try #require(listing.posts.first)) == Data("over tls".utf8))
        // The pin is what lets the reader through: without it the self-signed profile is refused.
        // The client's offline view still shows what the pinned feed listed, marked offline.
        var unpinned = handle
        unpinned.publicKeyPin = nil
        let unpinnedFeed = try await atBob.reader(for: unpinned, gateway: gateway)
        let offline = try await unpinnedFeed.listPosts(namespace: "drive", as: DriveFileMetadata.self)
        #expect(offline.isOffline && offline.posts.map(\.metadata?.filename) == ["tls.txt"])
        let fresh = FollowedStationReader(identity: unpinnedFeed.reader.identity, gateway: gateway, transport: atBob.configuration.transport)
        let noPin = await stationError { _ = try await fresh.listPosts(of: .endpoint(unpinned.endpoint), namespace: "drive", as: DriveFileMetadata.self) }
        #expect(noPin != nil)
    }

    @Test("A CA-valid station needs no pin")
    func caValidStationNeedsNoPin() async throws {
        let rig = try StationRig.served()
        let (front, transport) = try TLSStation.caValidFront(before: rig)
        let log = rig.emulator.log
        let client = try await StationClient.pair(
            endpoint: front.url(""), deviceName: "CA Phone", configuration: rig.configuration(transport: transport),
            trust: .confirm { _ in Issue.record("asked for a CA-valid certificate"); return false }) { _ in log.latestPIN }
        #expect(await client.credentials.stationPublicKeyPin == nil)
        #expect(await client.credentials.endpointTrust == .certificateAuthority)
        #expect(await client.activePins.isEmpty)
        #expect(try await client.health().isHealthy)
    }

    @Test("After a key change every call is refused naming both keys; trust(fingerprint:) re-pins on purpose")
    func keyChangeAndRetrust() async throws {
        let station = try TLSStation()
        let client = try await station.pair(trust: .expected(station.front.pin))
        let port = station.front.port
        station.front.stop()
        let replaced = try TLSFront.start(backendPort: station.backendPort, certificate: .runPyStyle, port: port)
        let before = station.rig.emulator.requests.count(.any)

        let health = await stationError { _ = try await client.health() }
        #expect(health?.kind == .keyChanged)
        #expect(health?.expectedFingerprint == station.front.pin)
        #expect(health?.presentedFingerprint == replaced.pin)
        let signed = await stationError { _ = try await client.sendSigned(.get, "/followers", operation: "GET /followers") }
        #expect(signed?.kind == .keyChanged)
        #expect(signed?.presentedFingerprint == replaced.pin)
        #expect(station.rig.emulator.requests.count(.any) == before, "nothing reached the station under another key")
        #expect(await client.credentials.stationPublicKeyPin == station.front.pin, "never re-pinned automatically")

        // Re-trusting with a key the station does not present is refused; with its key, it works.
        let wrong = await stationError { try await client.trust(fingerprint: station.front.pin) }
        #expect(wrong?.kind == .untrustedKey)
        #expect(wrong?.presentedFingerprint == replaced.pin)
        try await client.trust(fingerprint: replaced.pin)
        #expect(try await client.health().isHealthy)
        let reloaded = try await StationClient.load(configuration: station.configuration())
        #expect(await reloaded.credentials.stationPublicKeyPin == replaced.pin)
    }

    // MARK: Moves

    @Test("A self-signed station that moved port is found through its signed record, verified, saved and pinned")
    func verifiedMoveBetweenHTTPSEndpoints() async throws {
        let station = try TLSStation()
        let client = try await station.pair(trust: .expected(station.front.pin))
        // Pairing read the record once, for the rollback floor.
        #expect(station.rig.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/")) == 1)
        let moved = try TLSFront.start(backendPort: station.backendPort, sameKeyAs: station.front)
        station.front.stop()
        station.rig.emulator.setEndpoint(moved.url("").absoluteString)

        #expect(try await client.health().isHealthy)
        let credentials = await client.credentials
        #expect(credentials.endpoint == moved.url(""))
        #expect(credentials.endpointTrust == .pinnedKey)
        #expect(credentials.ipnsSequence == station.rig.emulator.ipnsSequence)
        let reloaded = try await StationClient.load(configuration: station.configuration())
        #expect(await reloaded.credentials.endpoint == moved.url(""))
        #expect(station.rig.emulator.requests.count(RequestRoute("GET", pathPrefix: "/ipns/")) == 2)
    }

    @Test("A move to a tunnel with a CA-valid certificate is recorded as trusted by the authorities")
    func verifiedMoveToCATunnel() async throws {
        let rig = try StationRig.served()
        let (tunnel, transport) = try TLSStation.caValidFront(before: rig)
        let front = try TLSFront.start(backendPort: try TLSStation.port(rig.station), certificate: .runPyStyle)
        rig.emulator.setEndpoint(front.url("").absoluteString)
        let log = rig.emulator.log
        let keyStore = InMemoryKeyStore()
        let client = try await StationClient.pair(
            endpoint: front.url(""), deviceName: "Tunnel Phone", configuration: rig.configuration(keyStore: keyStore, transport: transport),
            trust: .expected(front.pin)) { _ in log.latestPIN }
        front.stop()
        rig.emulator.setEndpoint(tunnel.url("").absoluteString)

        #expect(try await client.health().isHealthy)
        #expect(await client.credentials.endpoint == tunnel.url(""))
        #expect(await client.credentials.endpointTrust == .certificateAuthority)
        #expect(await client.activePins.isEmpty)
        #expect(await client.credentials.stationPublicKeyPin == front.pin, "the station's key stays known")
    }

    /// Pairs over TLS, takes the station's address down and makes the gateway serve `record`
    /// (built from the station and an impostor); checks the call ends unreachable with the endpoint
    /// unchanged and nothing sent to the impostor.
    private func expectRefusedMove(
        _ description: String, impostorOverTLS: Bool = true, sourceLocation: SourceLocation = #_sourceLocation,
        prepare: (TLSStation, StationClient) async throws -> Void = { _, _ in },
        record: (TLSStation, URL) throws -> Void
    ) async throws {
        let station = try TLSStation()
        let client = try await station.pair(trust: .expected(station.front.pin))
        let impostor = try Impostor()
        // An impostor over TLS holds the station's own key, so only the record check can stop it.
        let impostorFront = impostorOverTLS ? try TLSFront.start(backendPort: impostor.server.port, sameKeyAs: station.front) : nil
        try await prepare(station, client)
        let address = impostorFront?.url("") ?? impostor.url
        let endpoint = await client.credentials.endpoint
        try record(station, address)
        station.front.stop()
        let error = await stationError { _ = try await client.health() }
        #expect(error?.kind == .unreachable, "\(description): \(String(describing: error))", sourceLocation: sourceLocation)
        #expect((error?.underlying as? StationClientError) != nil, "\(description): the search failure is attached",
                sourceLocation: sourceLocation)
        #expect(await client.credentials.endpoint == endpoint, "\(description): endpoint unchanged", sourceLocation: sourceLocation)
        let stored = try await StationClient.load(configuration: station.configuration())
        #expect(await stored.credentials.endpoint == endpoint, "\(description): stored endpoint unchanged", sourceLocation: sourceLocation)
        #expect(impostor.requests == 0, "\(description): nothing was sent to \(address)", sourceLocation: sourceLocation)
        impostorFront?.stop()
    }

    @Test("A forged record (signed by another key) is refused: endpoint unchanged, nothing sent to its address")
    func forgedRecordRefused() async throws {
        try await expectRefusedMove("forged") { station, address in
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document { $0.endpoint = address.absoluteString }, forged: true)
        }
    }

    @Test("A rolled-back record (validly signed, older sequence than one already seen) is refused")
    func rolledBackRecordRefused() async throws {
        try await expectRefusedMove("rolled back", prepare: { station, client in
            // A verified move first, so the client has seen the newest sequence.
            let moved = try TLSFront.start(backendPort: station.backendPort, sameKeyAs: station.front)
            station.rig.emulator.setEndpoint(moved.url("").absoluteString)
            station.front.stop()
            #expect(try await client.health().isHealthy)
            #expect(await client.credentials.ipnsSequence == station.rig.emulator.ipnsSequence)
            moved.stop()
        }) { station, address in
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document { $0.endpoint = address.absoluteString },
                                                 sequence: station.rig.emulator.ipnsSequence - 1)
        }
    }

    @Test("The rollback floor starts at pairing: a record older than the record current when pairing is refused")
    func rollbackFloorStartsAtPairing() async throws {
        try await expectRefusedMove("older than at pairing", prepare: { station, client in
            #expect(await client.credentials.ipnsSequence == station.rig.emulator.ipnsSequence)
        }) { station, address in
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document { $0.endpoint = address.absoluteString },
                                                 sequence: station.rig.emulator.ipnsSequence - 1)
        }
    }

    @Test("The server the key was pinned for is trusted by the pin alone: a CA-valid certificate there later is refused")
    func pinnedServerNeedsItsPin() async throws {
        let rig = try StationRig.served()
        let tunnel = try TLSFront.start(backendPort: try TLSStation.port(rig.station), certificate: .testCA)
        // The transport trusts the tunnel's CA from a copy that outlives the tunnel.
        let authority = try TemporaryDirectory(prefix: "trusted-ca")
        defer { authority.cleanup() }
        try FileManager.default.copyItem(at: try #require(tunnel.caFile), to: authority.file("ca.pem"))
        var settings = CurlTransport.Configuration()
        settings.caBundlePath = authority.file("ca.pem").path
        let transport = CurlTransport(configuration: settings)
        let front = try TLSFront.start(backendPort: try TLSStation.port(rig.station), certificate: .runPyStyle)
        rig.emulator.setEndpoint(front.url("").absoluteString)
        let log = rig.emulator.log
        let client = try await StationClient.pair(
            endpoint: front.url(""), deviceName: "Back Phone", configuration: rig.configuration(keyStore: InMemoryKeyStore(), transport: transport),
            trust: .expected(front.pin)) { _ in log.latestPIN }
        #expect(await client.credentials.pinnedEndpoint == front.url(""))
        // A move to the CA-valid tunnel, then the pinned server's address comes back holding a
        // certificate the authority vouches for but another key (its host changed hands).
        let pinnedPort = front.port
        front.stop()
        rig.emulator.setEndpoint(tunnel.url("").absoluteString)
        #expect(try await client.health().isHealthy)
        #expect(await client.credentials.endpointTrust == .certificateAuthority)
        let impostor = try Impostor()
        let taken = try TLSFront.start(backendPort: impostor.server.port, sameKeyAs: tunnel, port: pinnedPort)
        defer { taken.stop() }
        rig.emulator.setEndpoint(taken.url("").absoluteString)
        tunnel.stop()
        let error = await stationError { _ = try await client.health() }
        #expect(error?.kind == .unreachable, "\(String(describing: error))")
        // Only the pin was tried there, not the authority.
        #expect(String(describing: error).contains("pinned key:") && !String(describing: error).contains("trusted certificate"),
                "\(String(describing: error))")
        #expect(await client.credentials.endpoint == tunnel.url(""))
        #expect(impostor.requests == 0)
    }

    @Test("An expired record is refused")
    func expiredRecordRefused() async throws {
        try await expectRefusedMove("expired") { station, address in
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document { $0.endpoint = address.absoluteString },
                                                 validity: Date().addingTimeInterval(-60))
        }
    }

    @Test("A record whose public.json lacks the station's keys, or carries other keys, is refused")
    func keylessRecordRefused() async throws {
        try await expectRefusedMove("no keys") { station, address in
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document {
                $0.endpoint = address.absoluteString
                $0.mlkemPublicKey = nil
                $0.mldsaPublicKey = nil
            })
        }
        try await expectRefusedMove("no ML-DSA key") { station, address in
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document {
                $0.endpoint = address.absoluteString
                $0.mldsaPublicKey = nil
            })
        }
        try await expectRefusedMove("other ML-DSA key") { station, address in
            let otherKey = String(repeating: "ab", count: 1952)
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document {
                $0.endpoint = address.absoluteString
                $0.mldsaPublicKey = otherKey
            })
        }
    }

    @Test("A validly signed record that moves an https station to http is refused")
    func downgradeRefused() async throws {
        try await expectRefusedMove("https to http", impostorOverTLS: false) { station, address in
            #expect(address.scheme == "http")
            station.rig.emulator.serveIPNSRecord(pointingAt: try station.document { $0.endpoint = address.absoluteString })
        }
    }

    // MARK: The trust anchor

    @Test("A later /profile naming another IPNS key is refused and never adopted")
    func anchorNeverReplaced() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        let stored = await client.credentials.ipnsName
        #expect(stored == rig.emulator.ipnsName)
        var profile = try await client.profile()
        let stranger = try PeerID(ed25519PublicKey: Array(repeating: 7, count: 32))
        profile.ipnsName = stranger.ipnsName
        profile.ipfsPeerID = stranger.description
        let refused = await #expect(throws: StationClientError.self) {
            _ = try await client.connection.adoptAnchor(from: profile, operation: "test")
        }
        #expect(refused?.kind == .integrity)
        #expect(await client.credentials.ipnsName == stored)
    }

    @Test("An IPNS key named only after pairing is adopted by adoptIPNSKey over TLS, never over plain http, never by reading the profile")
    func anchorAdoptedOnlyOverTLS() async throws {
        let (rig, client) = try await StationRig.pairedInProcess()
        var unnamed = await client.credentials
        unnamed.ipnsName = nil
        unnamed.ipfsPeerID = nil
        let plain = try await StationClient(credentials: unnamed, configuration: rig.configuration())
        _ = try await plain.profile()
        let refused = await #expect(throws: StationClientError.self) { try await plain.adoptIPNSKey() }
        #expect(refused?.kind == .refused)
        #expect(await plain.credentials.ipnsName == nil, "not adopted over plain http")
        // The same station over https (the emulator presents a CA-trusted key in process).
        var components = try #require(URLComponents(url: unnamed.endpoint, resolvingAgainstBaseURL: false))
        components.scheme = "https"
        unnamed.endpoint = try #require(components.url)
        let store = InMemoryKeyStore()
        let secure = try await StationClient(credentials: unnamed, configuration: rig.configuration(keyStore: store))
        _ = try await secure.profile()
        _ = try await secure.listPosts(as: DriveFileMetadata.self)
        #expect(await secure.credentials.ipnsName == nil, "reading the profile or listing adopts nothing")
        #expect(try await secure.adoptIPNSKey() == rig.emulator.ipnsName)
        #expect(await secure.credentials.ipnsName == rig.emulator.ipnsName, "adopted over TLS")
        let saved = try await StationClient.load(configuration: rig.configuration(keyStore: store))
        #expect(await saved.credentials.ipnsName == rig.emulator.ipnsName, "saved to the key store")
        #expect(try await secure.adoptIPNSKey() == rig.emulator.ipnsName, "adopting again changes nothing")
    }

    @Test("Credentials written before the pin was kept still load, trusted by the authorities")
    func oldCredentialsLoad() async throws {
        let client = try await StationRig.pairedInProcess().client
        var object = try #require(try await client.credentials.encoded().withUnsafeBytes { try WireJSON.parse(Array($0)) }.objectValue)
        for key in ["tls_public_key_pin", "endpoint_trust", "station_mldsa_public_key", "ipns_sequence"] { object[key] = nil }
        let old = try DeviceCredentials(encoded: SecretBytes(copying: WireJSON.serialize(.object(object))))
        #expect(old.stationPublicKeyPin == nil)
        #expect(old.endpointTrust == .certificateAuthority)
        #expect(old.endpointPins.isEmpty)
        let pin = try PublicKeyFingerprint(sha256: Array(repeating: 1, count: 32))
        var pinned = old
        pinned.stationPublicKeyPin = pin
        pinned.endpointTrust = .pinnedKey
        pinned.ipnsSequence = 41
        let decoded = try DeviceCredentials(encoded: pinned.encoded())
        #expect(decoded.stationPublicKeyPin == pin)
        #expect(decoded.endpointTrust == .pinnedKey)
        #expect(decoded.ipnsSequence == 41)
    }

    @Test("A followed station resolved by IPNS name is read only through a verified record")
    func followedStationVerified() async throws {
        let rig = try StationRig.inProcess()
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: rig.transport)
        let good = try await gateway.resolveVerified(ipnsName: rig.emulator.ipnsName)
        #expect(good.document.uid == rig.emulator.uid)
        #expect(good.sequence == rig.emulator.ipnsSequence)
        var forged = good.document
        forged.manifestPointer = nil
        rig.emulator.serveIPNSRecord(pointingAt: Data(try WireJSON.encode(forged)), forged: true)
        let identity = FollowerIdentity.generate(name: "follower")
        let reader = FollowedStationReader(identity: identity, gateway: gateway, transport: rig.transport)
        let error = await stationError { _ = try await reader.pointers(of: .ipns(rig.emulator.ipnsName)) }
        #expect(error?.kind == .integrity)
    }

    @Test("A followed station read by IPNS name keeps its own rollback floor: an older record is refused")
    func followedStationRollbackRefused() async throws {
        let rig = try StationRig.inProcess()
        let gateway = IPFSGateway(baseURL: rig.gateway, transport: rig.transport)
        let reader = FollowedStationReader(identity: FollowerIdentity.generate(name: "follower"), gateway: gateway, transport: rig.transport)
        let current = rig.emulator.ipnsSequence
        _ = try await reader.pointers(of: .ipns(rig.emulator.ipnsName))
        let document = try #require(rig.emulator.publishedPublicDocument)
        rig.emulator.serveIPNSRecord(pointingAt: document, sequence: current - 1)
        let error = await stationError { _ = try await reader.pointers(of: .ipns(rig.emulator.ipnsName)) }
        #expect(error?.kind == .integrity, "\(String(describing: error))")
        #expect(error?.message.contains("rollback") == true)
        // The same key named as a peer id shares the floor.
        let peerID = try PeerID(rig.emulator.ipnsName).description
        #expect(await stationError { _ = try await reader.pointers(of: .ipns(peerID)) }?.kind == .integrity)
        // A record at the floor or above reads.
        rig.emulator.serveIPNSRecord(pointingAt: document, sequence: current)
        _ = try await reader.pointers(of: .ipns(rig.emulator.ipnsName))
    }

    @Test("A followed station's handle keeps the IPNS sequence seen when following")
    func handleKeepsTheIPNSFloor() throws {
        let handle = FollowedStationHandle(uid: "u", endpoint: try #require(URL(string: "https://example.test")), publicKeyPin: nil,
                                           mlkemPublicKey: "00", mldsaPublicKey: nil, ipnsID: "k51", followerUID: "f", ipnsSequence: 42)
        let data = try JSONEncoder().encode(handle)
        #expect(String(decoding: data, as: UTF8.self).contains(#""ipns_sequence":42"#))
        #expect(try JSONDecoder().decode(FollowedStationHandle.self, from: data).ipnsSequence == 42)
        let old = #"{"uid":"u","endpoint":"https://example.test","mlkem_public_key":"00","follower_uid":"f"}"#
        #expect(try JSONDecoder().decode(FollowedStationHandle.self, from: Data(old.utf8)).ipnsSequence == nil)
    }
}
#endif
