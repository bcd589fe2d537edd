import Foundation
import Transport

/// Several emulated stations (and their gateways) in one process, reached by the host of the
/// request URL, each of which can be taken off the network: the setting for tests of following,
/// endpoint moves and outages, with no sockets.
///
///     let network = StationNetwork()
///     let alice = try StationEmulator()
///     let bob = try StationEmulator()
///     network.attach(alice, host: "alice.test", gatewayHost: "gateway.test")
///     network.attach(bob, host: "bob.test")
///     let transport = network.transport          // routes http://alice.test/… to alice
///     network.setDown(true, host: "alice.test")  // → TransportError .cannotConnect
///
/// A station host answers the station's routes and, like ``InProcessTransport``, the gateway's
/// `/ipfs/…` and `/ipns/…`; a gateway host answers only the gateway's paths. A host nobody is
/// attached to fails with `.dnsFailure`, a host that is down with `.cannotConnect`, before the
/// request reaches an emulator (nothing is logged in its ``StationEmulator/requests``). Hosts are
/// matched without their port, case-insensitively.
///
/// An `https` request goes through the simulated TLS handshake of ``InProcessTransport``: a
/// station host presents its emulator's key (``StationEmulator/serverKeyFingerprint``; each
/// emulator has its own, and ``StationEmulator/changeServerKey()`` changes it for every request
/// after), a gateway host a CA-trusted key of its own, as a public gateway does.
public final class StationNetwork: Sendable {
    private struct Host {
        let emulator: StationEmulator
        let role: InProcessTransport.Role
        var isDown = false
    }

    private let hosts = Locked<[String: Host]>([:])

    /// An empty network.
    public init() {}

    /// Makes `emulator` answer at `host` (its station, and the gateway paths), and its gateway
    /// alone at `gatewayHost` when given. Replaces whatever was attached to those hosts; the
    /// hosts start up.
    public func attach(_ emulator: StationEmulator, host: String, gatewayHost: String? = nil) {
        hosts.withLock { hosts in
            hosts[Self.key(host)] = Host(emulator: emulator, role: .stationAndGateway)
            if let gatewayHost { hosts[Self.key(gatewayHost)] = Host(emulator: emulator, role: .gateway) }
        }
    }

    /// Removes `host` from the network: requests to it fail as an unknown name (`.dnsFailure`).
    public func detach(host: String) {
        _ = hosts.withLock { $0.removeValue(forKey: Self.key(host)) }
    }

    /// Takes `host` off the network (`true`) or brings it back: while down, every request to it
    /// fails with `TransportError` kind `.cannotConnect`, as a stopped station or a dead tunnel
    /// does. The emulator keeps its state, and its other hosts stay up.
    public func setDown(_ down: Bool, host: String) {
        hosts.withLock { hosts in hosts[Self.key(host)]?.isDown = down }
    }

    /// Moves the station attached at `oldHost` to `newHost` in one call, as when a station's
    /// tunnel or address changes: `newHost` answers for it (station and gateway paths), `oldHost`
    /// goes down (`.cannotConnect`, as a dead tunnel), and its `public.json` is republished with
    /// `endpoint` (by default `http://<newHost>`), so its IPNS name resolves to the new address
    /// through any of its gateway hosts, which stay as they were. Returns that endpoint.
    ///
    /// A client follows the move on its own (`StationClientConfiguration.followsEndpointChanges`)
    /// only when it holds the station's IPNS key: pinned at pairing from `/profile` — what the
    /// emulator names — or adopted later over TLS only, never from a plain-`http` answer. A
    /// station that named no IPNS key at pairing cannot be followed over `http`; pair over `https`
    /// (the emulator's simulated TLS) for such a test. The client also needs a gateway
    /// (`StationClientConfiguration.gateway`) to resolve the name.
    ///
    ///     let moved = try network.moveStation(from: "station.test", to: "moved.test")
    ///     _ = try await client.listPosts(as: DriveFileMetadata.self)   // read online at `moved`
    ///
    /// - Throws: ``StationEmulatorError/noStationAt(_:)`` when no station is attached at `oldHost`
    ///   (nothing is changed).
    @discardableResult
    public func moveStation(from oldHost: String, to newHost: String, endpoint: URL? = nil) throws(StationEmulatorError) -> URL {
        let (old, new) = (Self.key(oldHost), Self.key(newHost))
        let moved = hosts.withLock { hosts -> StationEmulator? in
            guard let station = hosts[old], station.role == .stationAndGateway else { return nil }
            hosts[new] = Host(emulator: station.emulator, role: .stationAndGateway)
            if old != new { hosts[old]?.isDown = true }
            return station.emulator
        }
        guard let emulator = moved else { throw .noStationAt(oldHost) }
        let url = endpoint ?? url(host: newHost)
        emulator.setEndpoint(url.absoluteString)
        emulator.log.info("Station moved to \(url.absoluteString)")
        return url
    }

    /// Whether `host` is attached and down.
    public func isDown(host: String) -> Bool { hosts.withLock { $0[Self.key(host)]?.isDown ?? false } }

    /// The emulator attached to `host`, if any.
    public func emulator(at host: String) -> StationEmulator? { hosts.withLock { $0[Self.key(host)]?.emulator } }

    /// `http://<host>`: the base URL to give a client for an attached host.
    public func url(host: String) -> URL { URL(string: "http://\(host)") ?? URL(fileURLWithPath: "/") }

    /// An `HTTPTransport` into the network.
    public var transport: StationNetworkTransport { StationNetworkTransport(network: self) }

    /// The transport a request to `url` is handed to, or the error it fails with.
    func route(_ url: URL, method: HTTPMethod) throws -> InProcessTransport {
        guard let name = url.host, !name.isEmpty else {
            throw TransportError(.invalidRequest, method: method, url: url, message: "the URL has no host")
        }
        guard let host = hosts.withLock({ $0[Self.key(name)] }) else {
            throw TransportError(.dnsFailure, method: method, url: url, message: "could not resolve host: \(name)")
        }
        guard !host.isDown else {
            throw TransportError(.cannotConnect, method: method, url: url, message: "could not connect to \(name): the host is down")
        }
        return InProcessTransport(emulator: host.emulator, role: host.role)
    }

    private static func key(_ host: String) -> String {
        var name = host.lowercased()
        // "host:port" → "host" (an IPv6 literal in brackets keeps its colons).
        if !name.hasPrefix("["), let colon = name.lastIndex(of: ":") { name = String(name[..<colon]) }
        return name
    }
}

/// The `HTTPTransport` of a ``StationNetwork``: each request goes to the emulator attached to
/// its URL's host, as ``InProcessTransport`` would send it.
public struct StationNetworkTransport: HTTPTransport {
    let network: StationNetwork

    /// Sends `request` to the emulator attached to its host.
    ///
    /// - Throws: `TransportError`: `.dnsFailure` for a host nobody is attached to,
    ///   `.cannotConnect` for a host that is down, then as ``InProcessTransport/send(_:body:options:)``
    ///   (`.pinMismatch` / `.tlsFailure` when the host's key is not trusted).
    public func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        try await network.route(request.url, method: request.method).send(request, body: body, options: options)
    }

    /// The key the emulator attached to `url`'s host presents (its ``StationEmulator/serverKeyFingerprint``
    /// for a station host), as ``InProcessTransport/presentedPublicKey(at:)``.
    ///
    /// - Throws: `TransportError`: `.dnsFailure` for a host nobody is attached to, `.cannotConnect`
    ///   for a host that is down, then as ``InProcessTransport/presentedPublicKey(at:)``.
    public func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        try await network.route(url, method: .get).presentedPublicKey(at: url)
    }
}
