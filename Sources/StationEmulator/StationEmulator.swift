import Foundation
import LoopbackHTTP
import Transport
import Manifest
import ClassicalCrypto
import OrderedJSON
import ContentAddressing

/// A Cipher Station on loopback, for tests, examples and apps' own test suites.
///
/// It behaves like the real station as measured in WIRE_NOTES: the same routes, response keys in
/// the same order, status codes and error texts, real ML-KEM-768/ML-DSA-65 keys, envelopes that
/// open with any conforming client, and Kubo-exact CIDs. Two deliberate differences: reshare
/// keeps the post's bytes (the station loses them; ``Configuration/losesResharedContent``
/// reproduces that), and signed `/inbox` messages other than
/// `follow_request` authenticate (the station rejects them all). It also publishes at once
/// instead of 2 s later, and keeps the PIN check value as a salted SHA-256 instead of scrypt.
///
/// Use it in process through ``transport`` or serve it over HTTP with ``start(port:gatewayPort:)``:
///
///     let emulator = try StationEmulator()
///     let url = try emulator.start()            // http://127.0.0.1:<port>
///     // POST /delegate/start … then:
///     let pin = emulator.log.latestPIN
public final class StationEmulator: Sendable {
    /// How an emulator is set up.
    public struct Configuration: Sendable {
        /// Where state, keys and blocks persist (`nil`: memory only).
        public var dataDirectory: URL?
        /// A file the log (with the PIN lines) is appended to.
        public var logFile: URL?
        /// Whether log lines are also written to standard error.
        public var echoLogToStandardError: Bool
        /// The clock for auth windows, pairing expiry, `created_at` and `Date`.
        public var clock: any StationClock
        /// `MAX_UPLOAD_SIZE`: a declared body over this gets 413 (default 100 MiB).
        public var maximumUploadSize: Int
        /// `CIPHER_DEV_AUTO_ACCEPT_FOLLOWS`: follow requests are Allowed at once.
        public var autoAcceptFollows: Bool
        /// Whether serving over HTTP writes the station URL into `public.json`'s `endpoint` and
        /// publishes it (as a station's tunnel monitor does), so clients can find it through IPNS.
        /// Off by default: a fresh station has `endpoint`, `ipfs_peer_id` and `ipns_name` null.
        /// ``StationEmulator/moveStation(toPort:)`` always publishes the new endpoint.
        public var publishesEndpoint: Bool
        /// Whether `POST /post/share` loses the post's bytes as the real station does (upstream
        /// `209b852`): it unpins the post and garbage-collects, so afterwards `/content/<post_cid>`
        /// answers 404 and the gateway no longer has the file. Off by default: the emulator keeps
        /// the bytes, so tests exercise the protocol rather than the bug. Turn it on to test how an
        /// app copes with the real station.
        public var losesResharedContent: Bool
        /// What each HTTP connection may take when serving with ``StationEmulator/start(port:gatewayPort:)``:
        /// the connection cap and the head and body deadlines (see `LoopbackHTTPServer.Limits` in
        /// the `LoopbackHTTP` module).
        /// Bodies are also capped at ``maximumUploadSize``: over HTTP none longer is read into
        /// memory (a chunked one gets 413 once it passes the limit, and the connection closes).
        public var serverLimits: LoopbackHTTPServer.Limits

        /// Creates a configuration; every parameter has the station's default.
        public init(dataDirectory: URL? = nil, logFile: URL? = nil, echoLogToStandardError: Bool = false,
                    clock: any StationClock = SystemClock(), maximumUploadSize: Int = 104_857_600,
                    autoAcceptFollows: Bool = false, publishesEndpoint: Bool = false, losesResharedContent: Bool = false,
                    serverLimits: LoopbackHTTPServer.Limits = LoopbackHTTPServer.Limits()) {
            self.serverLimits = serverLimits
            self.dataDirectory = dataDirectory
            self.logFile = logFile
            self.echoLogToStandardError = echoLogToStandardError
            self.clock = clock
            self.maximumUploadSize = maximumUploadSize
            self.autoAcceptFollows = autoAcceptFollows
            self.publishesEndpoint = publishesEndpoint
            self.losesResharedContent = losesResharedContent
        }
    }

    private struct Servers {
        var station: StationHTTPServer?
        var gateway: StationHTTPServer?
    }

    let core: StationCore
    let router: StationRouter
    private let gateway: Gateway
    private let servers = Locked(Servers())
    /// The TLS certificates the in-process transports present (see ``serverKeyFingerprint``).
    let serverKeys = ServerKeys()

    /// The log, holding the pairing PIN lines.
    public let log: StationLog
    /// Fault injection switches.
    public let faults: FaultInjector
    /// Every request answered, station and gateway, for assertions on what a client sent.
    public let requests: RequestLog
    /// The clock the emulator runs on.
    public var clock: any StationClock { core.clock }

    /// Creates (or, with a data directory that holds one, reopens) a station.
    ///
    /// - Throws: ``StationEmulatorError/corruptState(path:reason:)`` when the data directory holds
    ///   unusable state; file-system errors when it or the log file cannot be created.
    public init(configuration: Configuration = Configuration()) throws {
        log = try StationLog(file: configuration.logFile, echoToStandardError: configuration.echoLogToStandardError,
                             clock: configuration.clock)
        faults = FaultInjector()
        requests = RequestLog()
        core = try StationCore(configuration: configuration, log: log, faults: faults)
        router = StationRouter(core: core)
        gateway = Gateway(core: core)
    }

    deinit { stop() }

    /// The station's uid (a UUID v4 string, registered as its own follower).
    public var uid: String { core.uid }

    /// The station's ML-KEM-768 encapsulation key, hex (what `/profile` gives).
    public var mlkemPublicKeyHex: String { core.identity.mlkemPublicHex }

    /// The IPFS node's peer id (`12D3KooW…`).
    public var peerID: String { core.identity.node.peerID }

    /// The IPFS node's IPNS name (`k51…`).
    public var ipnsName: String { core.identity.node.ipnsName }

    /// An in-process `HTTPTransport` into this emulator (no sockets).
    public var transport: InProcessTransport { InProcessTransport(emulator: self) }

    /// Handles one request: station routes, or the gateway for `/ipfs/…` and `/ipns/…`. Applies
    /// injected faults and latency.
    public func handle(_ request: StationRequest) async -> StationResponse {
        if Self.isGatewayPath(request.path) { return await handleGateway(request) }
        return await handleStation(request)
    }

    /// Whether `path` is the gateway's (`/ipfs/…`, `/ipns/…`) on a host that serves both.
    static func isGatewayPath(_ path: String) -> Bool { path.hasPrefix("/ipfs/") || path.hasPrefix("/ipns/") }

    /// Handles one request as the gateway alone does (every path, station ones answer 404), with
    /// the gateway's faults.
    func handleGateway(_ request: StationRequest) async -> StationResponse {
        let gateway = self.gateway
        var response: StationResponse
        if case let .injected(fault) = faults.nextAction(method: request.method, path: request.path, server: .gateway) {
            response = await Self.apply(fault) { gateway.route(request) }
        } else {
            response = gateway.route(request)
        }
        response.bytesPerSecond = faults.throttleRate(method: request.method, path: request.path, server: .gateway)
        requests.record(.gateway, request, response)
        return response
    }

    func handleStation(_ request: StationRequest) async -> StationResponse {
        let latency = faults.latency
        if latency > 0 { try? await Task.sleep(nanoseconds: UInt64(latency * 1_000_000_000)) }
        let router = self.router
        var response: StationResponse
        switch faults.nextAction(method: request.method, path: request.path) {
        case let .fail(status, body, headers):
            let extra = headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            response = StationResponse(status: status, headers: [("content-type", "application/json")] + extra, body: Data(body.utf8))
        case let .closeMidBody(afterBytes):
            var routed = await router.route(request)
            routed.closeMidBody = true
            routed.bytesBeforeClose = afterBytes
            response = routed
        case let .injected(fault):
            response = await Self.apply(fault) { await router.route(request) }
        case nil:
            response = await router.route(request)
        }
        response.bytesPerSecond = faults.throttleRate(method: request.method, path: request.path, server: .station)
        requests.record(.station, request, response)
        return response
    }

    /// The answer `route` gives, changed by `fault`.
    private static func apply(_ fault: RequestFault, route: () async -> StationResponse) async -> StationResponse {
        switch fault {
        case let .status(status, body):
            let isJSON = (try? WireJSON.parse([UInt8](body))) != nil
            return StationResponse(status: status, headers: [("content-type", isJSON ? "application/json" : "text/plain; charset=utf-8")],
                                   body: body)
        case let .replaceBody(byteCount):
            var routed = await route()
            routed.headers.removeAll { ["content-length", "content-range"].contains($0.name.lowercased()) }
            routed.body = PatternBytes(seed: 14).data(offset: 0, count: max(0, byteCount))
            return routed
        case .endlessBody:
            var routed = await route()
            routed.headers.removeAll { ["content-length", "content-range"].contains($0.name.lowercased()) }
            routed.body = Data()
            routed.endlessBody = true
            return routed
        case let .delay(seconds):
            if seconds > 0 { try? await Task.sleep(nanoseconds: UInt64(min(seconds, 86_400) * 1_000_000_000)) }
            return await route()
        case let .closeMidBody(afterBytes):
            var routed = await route()
            routed.closeMidBody = true
            routed.bytesBeforeClose = afterBytes.map { max(0, $0) }
            return routed
        }
    }

    // MARK: Serving over HTTP

    /// Serves the station on `127.0.0.1:port` and the gateway on `127.0.0.1:gatewayPort` (0 picks
    /// free ports) and returns the station URL. Stops any earlier servers first.
    ///
    /// - Throws: ``StationEmulatorError/cannotListen(_:)`` when a port cannot be bound.
    @discardableResult
    public func start(port: UInt16 = 0, gatewayPort: UInt16 = 0) throws -> URL {
        stop()
        let station = try makeStationServer(port: port)
        let gatewayServer: StationHTTPServer
        do {
            gatewayServer = try StationHTTPServer(port: gatewayPort, limits: core.configuration.serverLimits,
                                                  handler: loopbackHandler(.gateway))
        } catch {
            station.stop()
            throw error
        }
        servers.withLock { $0 = Servers(station: station, gateway: gatewayServer) }
        let url = Self.url(port: station.port)
        advertise(url)
        return url
    }

    /// Moves the station to another port (0 picks a free one), as when a station's tunnel or
    /// address changes: the old port stops answering, `public.json` is republished with the new
    /// endpoint (reachable through `/ipns/<name>` on the gateway). Returns the new URL.
    ///
    /// - Throws: ``StationEmulatorError/notServing`` before ``start(port:gatewayPort:)``;
    ///   ``StationEmulatorError/cannotListen(_:)`` when the port cannot be bound.
    @discardableResult
    public func moveStation(toPort port: UInt16 = 0) throws -> URL {
        guard servers.withLock({ $0.station }) != nil else { throw StationEmulatorError.notServing }
        let replacement = try makeStationServer(port: port)
        let old = servers.withLock { servers -> StationHTTPServer? in
            let old = servers.station
            servers.station = replacement
            return old
        }
        old?.stop()
        let url = Self.url(port: replacement.port)
        setEndpoint(url.absoluteString)
        log.info("Station moved to \(url.absoluteString)")
        return url
    }

    /// Stops serving over HTTP (the in-process transport keeps working). Safe to call twice.
    public func stop() {
        let stopped = servers.withLock { servers -> Servers in
            let old = servers
            servers = Servers()
            return old
        }
        stopped.station?.stop()
        stopped.gateway?.stop()
    }

    /// `http://127.0.0.1:<port>` of the station while serving.
    public var stationURL: URL? { servers.withLock { $0.station }.map { Self.url(port: $0.port) } }

    /// `http://127.0.0.1:<port>` of the gateway while serving.
    public var gatewayURL: URL? { servers.withLock { $0.gateway }.map { Self.url(port: $0.port) } }

    private func makeStationServer(port: UInt16) throws -> StationHTTPServer {
        try StationHTTPServer(port: port, limits: core.configuration.serverLimits, handler: loopbackHandler(.station))
    }

    private func advertise(_ url: URL) {
        guard core.configuration.publishesEndpoint else { return }
        setEndpoint(url.absoluteString)
    }

    /// Sets `public.json`'s `endpoint` (`nil` clears it) and republishes it.
    public func setEndpoint(_ endpoint: String?) {
        core.state.withLock { state in
            state.publicDocument.endpoint = endpoint
            core.publishPublicDocument(&state)
        }
    }

    /// Makes the gateway serve a hostile or stale IPNS record at `/ipns/<name>?format=ipns-record`
    /// in place of the station's latest, until `faults.reset()`: `document` (a `public.json`,
    /// added to the repository) is what it points to.
    ///
    /// - Parameters:
    ///   - document: the bytes the record's `/ipfs/<cid>` names (an attacker's endpoint, no keys, other keys…).
    ///   - sequence: its sequence number; `nil` for one above the last published (lower: a rollback).
    ///   - validity: the end of its validity; `nil` for 48 hours from the emulator's clock (past: expired).
    ///   - forged: signed by a fresh key instead of the node's (a forgery).
    /// - Returns: the record bytes served.
    @discardableResult
    public func serveIPNSRecord(pointingAt document: Data, sequence: UInt64? = nil, validity: Date? = nil,
                                forged: Bool = false) -> Data {
        let cid = core.blocks.add([UInt8](document))
        let next = core.state.withLock { $0.ipnsSequence } + 1
        let record = IPNSRecord.make(
            value: "/ipfs/\(cid)", sequence: sequence ?? next,
            validity: validity ?? Date(timeIntervalSince1970: core.clock.now() + StationCore.ipnsRecordLifetime),
            signingKey: forged ? Ed25519.PrivateKey() : core.identity.node.key)
        faults.setIPNSRecord(record, pointingAt: cid)
        return Data(record)
    }

    /// The sequence number of the station's last IPNS record (0 before its first publish).
    public var ipnsSequence: UInt64 { core.state.withLock { $0.ipnsSequence } }

    /// The station's IPNS records as published, oldest first (the last 32): each is what
    /// `/ipns/<name>?format=ipns-record` served at its time (replay one with ``serveIPNSRecord(_:)``).
    public var publishedIPNSRecords: [Data] { core.state.withLock { $0.ipnsRecords.map { Data($0) } } }

    /// Makes the gateway serve `record` (an earlier one, say: a rollback) in place of the latest,
    /// until `faults.reset()`.
    public func serveIPNSRecord(_ record: Data) {
        let name = (try? PeerID(core.identity.node.peerID))
        let cid = name.flatMap { try? IPNSRecord.signed(record, name: $0) }?.ipfsCID?.description
        faults.setIPNSRecord([UInt8](record), pointingAt: cid)
    }

    private static func url(port: UInt16) -> URL {
        URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/")
    }

    // MARK: Inspection

    /// The current manifest (what `GET /ipfs/<manifest_cid>` serves, parsed).
    public var manifest: Manifest { core.state.withLock { $0.manifest } }

    /// The bytes of the last published `public.json` (indent=2), or `nil` before the first publish.
    public var publishedPublicDocument: Data? {
        guard let cid = core.state.withLock({ $0.publishedPublicCID }), let bytes = core.blocks.read(cid) else { return nil }
        return Data(bytes)
    }

    /// The device uids paired as owner devices through `/delegate/confirm`, in the station's order
    /// (byte order); the station's own row is not one of them.
    public var pairedDeviceUIDs: [String] {
        core.state.withLock { state in
            state.sortedFollowers.filter { $0.uid == state.uid && $0.deviceUID != state.uid && $0.allowed == "Allowed" }.map(\.deviceUID)
        }
    }

    /// The file stored under `cid` in the emulated IPFS repository, or `nil` when it is not there.
    public func block(_ cid: String) -> Data? { core.blocks.read(cid).map { Data($0) } }
}
