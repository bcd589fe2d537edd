import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import Transport
import OrderedJSON
import ContentAddressing

/// A paired device's client for its Cipher Station: signed calls, reading and decrypting its own
/// namespace, publishing with client-side encryption, downloading, managing posts and followers.
///
/// Create one with ``pair(endpoint:deviceName:configuration:pin:)`` the first time and with
/// ``load(configuration:)`` afterwards. Creating one removes the upload staging files
/// (`cipher-upload-<16 hex>` in ``StationClientConfiguration/temporaryDirectory``, and the
/// `.cipher-upload-<16 hex>.<16 hex>.partial` of one still being encrypted) that an earlier
/// process left behind when it was killed mid-upload, once they are a day old. The actor keeps the shared state (credentials, clock
/// offset, post-key cache, endpoint changes); the expensive work (signing, ML-KEM, SecretBox)
/// runs outside it, so concurrent calls use every core.
public actor StationClient {
    /// The configuration the client was created with.
    public nonisolated let configuration: StationClientConfiguration
    /// The current credentials (the endpoint changes when the station moves).
    public internal(set) var credentials: DeviceCredentials
    /// Seconds to add to the local clock when signing, learned from a `stale request` answer.
    package internal(set) var clockOffset: Int64 = 0

    var postKeys: [String: SymmetricKey] = [:]
    var postKeysLoaded = false
    /// What the cache store's copy of ``postKeys`` still lacks, and the writes under way.
    var postKeyJournal = PostKeyJournal()
    /// The offline view of this device's namespace and of the stations it follows.
    let offline: OfflineListings
    var endpointResolution: Task<StationOrigin, any Error>?
    /// The last manifest read, by CID: content-addressed, so the same CID never needs reading again.
    var manifestCache: (cid: String, manifest: Manifest)?
    /// Whether the caches earlier versions kept in the key store were removed.
    var legacyCachesRemoved = false

    /// Creates a client from credentials already at hand (they are saved to the key store).
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the credentials cannot be saved.
    public init(credentials: DeviceCredentials, configuration: StationClientConfiguration) async throws {
        self.credentials = credentials
        self.configuration = configuration
        offline = OfflineListings(cacheStore: configuration.cacheStore, persists: configuration.persistsOfflineListing,
                                  log: configuration.log)
        StagedFile.removeStaleUploads(in: configuration.temporaryDirectory)
        try await saveCredentials()
    }

    private init(loaded credentials: DeviceCredentials, configuration: StationClientConfiguration) {
        self.credentials = credentials
        self.configuration = configuration
        offline = OfflineListings(cacheStore: configuration.cacheStore, persists: configuration.persistsOfflineListing,
                                  log: configuration.log)
        StagedFile.removeStaleUploads(in: configuration.temporaryDirectory)
    }

    /// Loads the credentials saved by an earlier pairing from the configuration's key store.
    ///
    /// Keys the app keeps itself are resolved by the configuration's
    /// ``StationClientConfiguration/keyReferenceResolver``.
    ///
    /// - Throws: ``StationClientError`` `.notPaired` when the store holds no credentials,
    ///   `.keyStore` when they cannot be read (or hold a key by reference and there is no resolver).
    public static func load(configuration: StationClientConfiguration) async throws -> StationClient {
        let operation = "loading credentials"
        guard let stored = try await configuration.keyStore.loadSecret(KeyStoreItem.credentials, operation: operation) else {
            throw StationClientError(.notPaired, operation: operation, message: "no credentials in the key store")
        }
        return StationClient(loaded: try DeviceCredentials(encoded: stored, keyResolver: configuration.keyReferenceResolver),
                             configuration: configuration)
    }

    /// Removes the credentials from the key store, and the cached post keys and the offline
    /// listing from the cache store.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when a store cannot be written.
    public func forget() async throws {
        postKeys.removeAll()
        postKeysLoaded = true
        offline.clearMemory()
        let namespace = (try? Self.normalizedNamespace(configuration.namespace)) ?? configuration.namespace
        do {
            try await configuration.keyStore.delete(KeyStoreItem.credentials)
            if let error = await removePersistedPostKeys() { throw error }
            try await configuration.cacheStore.delete(CacheItem.offlineListing(station: credentials.stationUID, namespace: namespace))
            if let error = await removeLegacyCacheItems() { throw error }
            try await configuration.keyStore.delete(KeyStoreItem.legacyPostKeys)
            try await configuration.keyStore.delete(KeyStoreItem.legacyOfflineListing(namespace: namespace))
        } catch {
            throw StationClientError(.keyStore, operation: "forgetting credentials", message: "\(error)", underlying: error)
        }
    }

    func saveCredentials() async throws {
        try await configuration.keyStore.saveSecret(credentials.encoded(), as: KeyStoreItem.credentials, operation: "saving credentials")
    }

    nonisolated func log(_ level: LogEvent.Level, _ message: @autoclosure () -> String) {
        configuration.log?(LogEvent(level: level, message: message()))
    }

    // MARK: Public endpoints

    /// `GET /health`: whether the station and its IPFS node are up.
    ///
    /// A station whose IPFS node is down answers 503 `degraded` after about 3 s; that is returned
    /// as a response whose `isHealthy` is `false`, not thrown.
    /// - Throws: ``StationClientError`` when the station cannot be reached or answers otherwise.
    public func health() async throws -> HealthResponse {
        try await withEndpointMobility(operation: "GET /health") { origin in
            try await Self.health(at: origin.url, transport: self.configuration.transport, timeouts: self.configuration.requestTimeouts,
                                  pins: origin.pins)
        }
    }

    static func health(
        at endpoint: URL, transport: any HTTPTransport, timeouts: TransferTimeouts, pins: [PublicKeyFingerprint]
    ) async throws -> HealthResponse {
        // A degraded station answers 503 with its health: that is an answer, not a refusal.
        try await unsignedGet(HealthResponse.self, "/health", at: endpoint, transport: transport, timeouts: timeouts, pins: pins,
                              limit: ResponseLimit.small, alsoAccepting: 503)
    }

    /// `GET /profile`: the station's identity, manifest CID and counts.
    ///
    /// The first profile that names the station's IPNS key (its peer id and IPNS name, null on a
    /// fresh station until its first publish) fixes it in the credentials as the trust anchor of
    /// endpoint moves, together with the station's ML-DSA key when not yet known. A later profile
    /// naming another key, or other station keys, is refused, never adopted.
    ///
    /// - Throws: ``StationClientError`` when the station cannot be reached or the answer is not a
    ///   profile; `.integrity` when it names another IPNS key or other station keys than the stored ones.
    public func profile() async throws -> StationProfile {
        let profile = try await withEndpointMobility(operation: "GET /profile") { origin in
            try await Self.profile(at: origin.url, transport: self.configuration.transport, timeouts: self.configuration.requestTimeouts,
                                   pins: origin.pins)
        }
        if try adoptAnchor(from: profile) { try await saveCredentials() }
        return profile
    }

    /// Checks `profile` against the stored identity and records what it names for the first time.
    ///
    /// - Returns: whether the credentials changed.
    func adoptAnchor(from profile: StationProfile) throws -> Bool {
        let operation = "GET /profile"
        guard profile.uid == credentials.stationUID else {
            throw StationClientError(.integrity, operation: operation, message: "the station reports another uid")
        }
        if let key = profile.mlkemPublicKey, key.lowercased() != credentials.stationKEMPublicKeyHex.lowercased() {
            throw StationClientError(.integrity, operation: operation, message: "the station reports another ML-KEM key; not adopted")
        }
        var changed = false
        if let key = profile.mldsaPublicKey {
            if let stored = credentials.stationMLDSAPublicKeyHex {
                guard stored.lowercased() == key.lowercased() else {
                    throw StationClientError(.integrity, operation: operation, message: "the station reports another ML-DSA key; not adopted")
                }
            } else {
                credentials.stationMLDSAPublicKeyHex = key.lowercased()
                changed = true
            }
        }
        guard profile.ipnsName != nil || profile.ipfsPeerID != nil else { return changed }
        // A key named for the first time after pairing is adopted only over TLS (pinned or
        // CA-valid): over plain http anyone on the path could name their own key and later move
        // the client with records they sign.
        if credentials.ipnsName == nil, credentials.ipfsPeerID == nil, credentials.endpoint.scheme?.lowercased() != "https" {
            log(.warning, "\(operation): the station names an IPNS key only now, over plain http; not adopted")
            return changed
        }
        let presented = try Self.anchor(ipnsName: profile.ipnsName, peerID: profile.ipfsPeerID, operation: operation,
                                        source: "the station's profile")
        if credentials.ipnsName != nil || credentials.ipfsPeerID != nil {
            let stored = try Self.anchor(ipnsName: credentials.ipnsName, peerID: credentials.ipfsPeerID, operation: operation,
                                         source: "the stored credentials")
            guard stored == presented else {
                log(.error, "\(operation): the station names another IPNS key (\(presented.ipnsName), stored \(stored.ipnsName)); not adopted")
                throw StationClientError(
                    .integrity, operation: operation,
                    message: "the station names another IPNS key (\(presented.ipnsName)) than the key fixed after pairing (\(stored.ipnsName)); not adopted")
            }
        }
        let name = presented.ipnsName, peer = presented.description
        if credentials.ipnsName != name { credentials.ipnsName = name; changed = true }
        if credentials.ipfsPeerID != peer { credentials.ipfsPeerID = peer; changed = true }
        return changed
    }

    /// The Ed25519 peer id both forms name (they must agree).
    static func anchor(ipnsName: String?, peerID: String?, operation: String, source: String) throws -> PeerID {
        func parse(_ text: String) throws -> PeerID {
            guard let id = try? PeerID(text), id.ed25519PublicKey != nil else {
                throw StationClientError(.integrity, operation: operation,
                                         message: "\(source) names \(text.debugDescription), not an Ed25519 IPNS key")
            }
            return id
        }
        let fromName = try ipnsName.map(parse)
        let fromPeer = try peerID.map(parse)
        if let fromName, let fromPeer, fromName != fromPeer {
            throw StationClientError(.integrity, operation: operation, message: "\(source) names two different IPNS keys")
        }
        guard let id = fromName ?? fromPeer else {
            throw StationClientError(.integrity, operation: operation, message: "\(source) names no IPNS key")
        }
        return id
    }

    /// The current endpoint and the pins its requests carry.
    func currentOrigin() -> StationOrigin {
        StationOrigin(url: credentials.endpoint, pins: requestPins(for: credentials.endpointTrust))
    }

    /// The pins for an endpoint trusted as `trust`: ``StationClientConfiguration/stationPublicKeyPins``
    /// when the app set them (an override of the stored pin), else the stored pin for a pinned
    /// endpoint, else none.
    func requestPins(for trust: EndpointTrust) -> [PublicKeyFingerprint] {
        if !configuration.stationPublicKeyPins.isEmpty { return configuration.stationPublicKeyPins }
        guard trust == .pinnedKey, let pin = credentials.stationPublicKeyPin else { return [] }
        return [pin]
    }

    /// `GET /profile` of any station, without pairing: what a device needs to follow it (its uid,
    /// ML-KEM and ML-DSA public keys, IPNS name).
    ///
    /// - Parameters:
    ///   - endpoint: the station's base URL.
    ///   - transport: the HTTP transport to use.
    ///   - timeouts: time limits for the call.
    ///   - pins: public-key pins of the station's TLS certificate, for a self-signed `https`
    ///     station (see ``StationClientConfiguration/stationPublicKeyPins``); empty: trust the
    ///     certificate authorities.
    /// - Throws: ``StationClientError``: `.unreachable` when the station cannot be reached (a
    ///   tunnel's 502, 504, 52x, or non-JSON 503 included), `.station` for another non-2xx answer,
    ///   `.invalidResponse` when the answer is not a profile.
    public static func profile(
        at endpoint: URL, transport: any HTTPTransport, timeouts: TransferTimeouts = StationClientConfiguration.defaultRequestTimeouts,
        pins: [PublicKeyFingerprint] = []
    ) async throws -> StationProfile {
        try await unsignedGet(StationProfile.self, "/profile", at: endpoint, transport: transport, timeouts: timeouts, pins: pins,
                              limit: ResponseLimit.profile)
    }

    // MARK: Exchanges

    /// An unsigned `GET path`, its answer decoded as `T`. A tunnel's 5xx throws `.unreachable` (the
    /// station is not there, as for signed calls, rather than refusing); a status other than 2xx
    /// or `alsoAccepting` throws `.station`.
    static func unsignedGet<T: Decodable>(
        _ type: T.Type, _ path: String, at endpoint: URL, transport: any HTTPTransport, timeouts: TransferTimeouts,
        pins: [PublicKeyFingerprint], limit: Int, alsoAccepting acceptedStatus: Int? = nil
    ) async throws -> T {
        let operation = "GET \(path)"
        let response = try await unsignedExchange(
            endpoint: endpoint, method: .get, path: path, body: nil, transport: transport, timeouts: timeouts,
            pins: pins, limit: limit, operation: operation)
        if let failure = StationClientError.tunnel(response, operation: operation) { throw failure }
        guard response.isSuccess || response.status == acceptedStatus else {
            throw StationClientError.station(response, operation: operation)
        }
        return try decode(T.self, from: response, operation: operation)
    }

    /// An unsigned call; at most `limit` bytes of the answer are collected (see ``ResponseLimit``).
    static func unsignedExchange(
        endpoint: URL, method: HTTPMethod, path: String, body: [UInt8]?, transport: any HTTPTransport,
        timeouts: TransferTimeouts, pins: [PublicKeyFingerprint], limit: Int, operation: String
    ) async throws -> HTTPResponse {
        var request = HTTPRequest(method: method, url: url(endpoint, path))
        if body != nil { request.headers.add("Content-Type", value: "application/json") }
        do {
            return try await transport.send(
                request, body: body.map { .bytes(Data($0)) } ?? .none,
                options: stationOptions(ResponseLimit.options(limit, timeouts: timeouts), endpoint: endpoint, pins: pins))
        } catch {
            throw StationClientError.wrap(error, operation: operation)
        }
    }

    /// `options` for a request to the station at `endpoint`: over `https`, carrying the station's
    /// public-key pins (plain `http` has no key to pin).
    static func stationOptions(_ options: TransferOptions, endpoint: URL, pins: [PublicKeyFingerprint]) -> TransferOptions {
        guard !pins.isEmpty, endpoint.scheme?.lowercased() == "https" else { return options }
        var pinned = options
        pinned.pinnedPublicKeys = pins
        return pinned
    }

    static func url(_ endpoint: URL, _ path: String) -> URL {
        var text = endpoint.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + path) ?? endpoint.appendingPathComponent(path)
    }

    static func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse, operation: String) throws -> T {
        do {
            return try WireJSON.decode(type, from: [UInt8](response.body.data ?? Data()))
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, status: response.status,
                                     message: "unexpected answer: \(error)", underlying: error)
        }
    }
}

extension StationClientError {
    init(_ kind: Kind, operation: String, status: Int?, message: String, underlying: (any Error)? = nil) {
        self.init(kind, operation: operation, message: message, status: status, underlying: underlying)
    }
}
