#if canImport(CCurl)
import CurlTransport
#endif
import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
import Transport
import URLSessionTransport

/// The station's clock: the wall clock plus a skew a test sets, for a station whose clock runs
/// ahead of the device's, or for time passing (an expired PIN) without waiting.
final class SkewedClock: StationClock {
    private let skew = Locked<Double>(0)

    func now() -> Double { Date().timeIntervalSince1970 + skew.value }

    func skew(by seconds: Double) { skew.withLock { $0 += seconds } }
}

/// A `StationEmulator` and the client configurations that reach it: the setup every client test
/// starts from.
///
/// In process (``inProcess(losesResharedContent:)``) requests go through `InProcessTransport`,
/// with no sockets; faults, the request log and the clock work as over HTTP, but there are no
/// ports, so a station that moves or goes down needs ``served(maximumUploadSize:)``: the emulator
/// on loopback, reached over `loopbackTransport()`.
struct StationRig {
    let emulator: StationEmulator
    let clock: SkewedClock
    /// The station's URL (in process, a placeholder host: the transport ignores it).
    let station: URL
    let gateway: URL
    let transport: any HTTPTransport

    static func inProcess(losesResharedContent: Bool = false) throws -> StationRig {
        let clock = SkewedClock()
        let emulator = try StationEmulator(configuration: .init(clock: clock, losesResharedContent: losesResharedContent))
        let station = try #require(URL(string: "http://station.test"))
        // As a station's tunnel monitor does: public.json carries the endpoint and the IPNS name.
        emulator.setEndpoint(station.absoluteString)
        return StationRig(emulator: emulator, clock: clock, station: station,
                          gateway: try #require(URL(string: "http://gateway.test")), transport: emulator.transport)
    }

    /// An in-process station and a device paired with it (namespace `drive`, in-memory keys, the
    /// rig's transport): where most client tests start.
    static func pairedInProcess(
        namespace: String = "drive", keyStore: any KeyStore = InMemoryKeyStore(), log: LogHandler? = nil
    ) async throws -> (rig: StationRig, client: StationClient) {
        let rig = try inProcess()
        return (rig, try await rig.pair(namespace: namespace, keyStore: keyStore, log: log))
    }

    /// A station on loopback and a device named `deviceName` paired with it over `transport`
    /// (namespace `drive`, in-memory keys). The caller stops the emulator; a pairing that fails
    /// stops it here.
    static func pairedServed(
        deviceName: String = "Test Phone", transport: any HTTPTransport = loopbackTransport()
    ) async throws -> (rig: StationRig, client: StationClient) {
        let rig = try served(transport: transport)
        do {
            return (rig, try await rig.pair(deviceName: deviceName))
        } catch {
            rig.emulator.stop()
            throw error
        }
    }

    /// The transport a served station is reached over: libcurl's, or URLSession where libcurl is
    /// absent (iOS, tvOS, watchOS, visionOS).
    static func loopbackTransport() -> any HTTPTransport {
        #if canImport(CCurl)
        CurlTransport()
        #else
        URLSessionTransport()
        #endif
    }

    static func served(maximumUploadSize: Int = 104_857_600, transport: any HTTPTransport = loopbackTransport()) throws -> StationRig {
        let clock = SkewedClock()
        let emulator = try StationEmulator(configuration: .init(clock: clock, maximumUploadSize: maximumUploadSize,
                                                                 publishesEndpoint: true))
        let station = try emulator.start()
        return StationRig(emulator: emulator, clock: clock, station: station, gateway: try #require(emulator.gatewayURL),
                          transport: transport)
    }

    /// A configuration for this station; the client sends through `transport` (by default the
    /// rig's), the gateway always through the rig's.
    func configuration(
        namespace: String = "drive", keyStore: any KeyStore = InMemoryKeyStore(), log: LogHandler? = nil,
        persistsPostKeys: Bool = false, temporaryDirectory: URL? = nil, transport: (any HTTPTransport)? = nil,
        stationPublicKeyPins: [PublicKeyFingerprint] = [], cacheStore: (any CacheStore)? = nil
    ) -> StationClientConfiguration {
        StationClientConfiguration(
            namespace: namespace, keyStore: keyStore, transport: transport ?? self.transport,
            gateway: IPFSGateway(baseURL: gateway, transport: self.transport), stationPublicKeyPins: stationPublicKeyPins,
            persistsPostKeys: persistsPostKeys, log: log, temporaryDirectory: temporaryDirectory, cacheStore: cacheStore)
    }

    /// Pairs a device with the PIN from the station's log on the first prompt.
    func pair(
        deviceName: String = "Test Phone", namespace: String = "drive", keyStore: any KeyStore = InMemoryKeyStore(),
        log: LogHandler? = nil, persistsPostKeys: Bool = false, temporaryDirectory: URL? = nil,
        transport: (any HTTPTransport)? = nil, cacheStore: (any CacheStore)? = nil
    ) async throws -> StationClient {
        let stationLog = emulator.log
        return try await StationClient.pair(
            endpoint: station, deviceName: deviceName,
            configuration: configuration(namespace: namespace, keyStore: keyStore, log: log, persistsPostKeys: persistsPostKeys,
                                         temporaryDirectory: temporaryDirectory, transport: transport, cacheStore: cacheStore)
        ) { _ in stationLog.latestPIN }
    }

    /// Pairs a device whose temporary files go to a new `staging` folder inside `directory`;
    /// returns the client and that folder, for checking what the client leaves behind.
    func pair(stagingIn directory: URL) async throws -> (client: StationClient, staging: URL) {
        let staging = directory.appendingPathComponent("staging")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        return (try await pair(temporaryDirectory: staging), staging)
    }

    /// The device `paired` as a second client, with this rig's configuration changed by
    /// `configure`: the same credentials under other client settings.
    func client(
        for paired: StationClient, configuring configure: (inout StationClientConfiguration) -> Void
    ) async throws -> StationClient {
        var configuration = configuration()
        configure(&configuration)
        return try await StationClient(credentials: await paired.credentials, configuration: configuration)
    }

    /// Downloads `post` through `client` to `destination` with its content's answer cut off after
    /// each of `cuts` bytes in turn, and expects the file whole (`content`), from one request per
    /// cut and one more, each cut used.
    func expectResumedDownload(
        of post: PublishedPost, by client: StationClient, to destination: URL, content: Data, cutAfter cuts: [Int],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let route = RequestRoute("GET", path: "/content/\(post.postCID)")
        for cut in cuts { emulator.faults.closeNextResponsesMidBody(1, route: route, afterBytes: cut) }
        try await client.download(postCID: post.postCID, to: destination)
        #expect(try Data(contentsOf: destination) == content, sourceLocation: sourceLocation)
        #expect(emulator.requests.count(route) == cuts.count + 1, sourceLocation: sourceLocation)
        #expect(emulator.faults.pendingFaultCount == 0, sourceLocation: sourceLocation)
    }

    /// Stops the station and lists `client`'s posts, expecting the offline listing (what the
    /// client kept); returns it.
    func offlineListing(of client: StationClient, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> PostListing<DriveFileMetadata> {
        emulator.stop()
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(listing.isOffline, sourceLocation: sourceLocation)
        return listing
    }

    /// Sends `request`, which the station has already answered, again and expects it refused as a
    /// replay (a typed 401).
    func expectReplayRefused(_ request: HTTPRequest, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let replayed = try await transport.send(request, body: .none)
        #expect(replayed.status == 401, sourceLocation: sourceLocation)
        #expect(StationErrorBody.parse([UInt8](replayed.body.data ?? Data()))?.message == "replay", sourceLocation: sourceLocation)
    }

    /// How many `method` `path` requests (exact path) the station or the gateway has answered.
    func count(_ method: String, _ path: String) -> Int { emulator.requests.count(RequestRoute(method, path: path)) }
}
