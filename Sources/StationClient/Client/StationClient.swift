import Foundation
import Manifest
import PQCrypto
import Signing
import Sodium
import Transport

/// A paired device's client for its Cipher Station: signed calls, reading and decrypting its own
/// namespace, publishing with client-side encryption, downloading, managing posts and followers.
///
/// Create one with ``pair(endpoint:deviceName:configuration:pin:)`` the first time and with
/// ``load(configuration:)`` afterwards. Creating one removes the upload staging files
/// (`cipher-upload-<16 hex>` in ``StationClientConfiguration/temporaryDirectory``) that an
/// earlier process left behind when it was killed mid-upload, once they are a day old. The actor keeps the shared state (credentials, clock
/// offset, post-key cache, endpoint changes); the expensive work (signing, ML-KEM, SecretBox)
/// runs outside it, so concurrent calls use every core.
public actor StationClient {
    /// The configuration the client was created with.
    public nonisolated let configuration: StationClientConfiguration
    /// The current credentials (the endpoint changes when the station moves).
    public internal(set) var credentials: DeviceCredentials
    /// Seconds to add to the local clock when signing, learned from a `stale request` answer.
    public internal(set) var clockOffset: Int64 = 0

    var postKeys: [String: SymmetricKey] = [:]
    var postKeysLoaded = false
    var offlineListings: [String: [UInt8]] = [:]
    var endpointResolution: Task<URL, any Error>?
    /// The last manifest read, by CID: content-addressed, so the same CID never needs reading again.
    var manifestCache: (cid: String, manifest: Manifest)?
    /// The manifest CID the stored offline listing of each namespace was made from.
    var offlineListingSources: [String: String] = [:]
    /// Whether the caches earlier versions kept in the key store were removed.
    var legacyCachesRemoved = false

    /// Creates a client from credentials already at hand (they are saved to the key store).
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the credentials cannot be saved.
    public init(credentials: DeviceCredentials, configuration: StationClientConfiguration) async throws {
        self.credentials = credentials
        self.configuration = configuration
        StagedFile.removeStaleUploads(in: configuration.temporaryDirectory)
        try await saveCredentials()
    }

    private init(loaded credentials: DeviceCredentials, configuration: StationClientConfiguration) {
        self.credentials = credentials
        self.configuration = configuration
        StagedFile.removeStaleUploads(in: configuration.temporaryDirectory)
    }

    /// Loads the credentials saved by an earlier pairing from the configuration's key store.
    ///
    /// - Throws: ``StationClientError`` `.notPaired` when the store holds no credentials,
    ///   `.keyStore` when they cannot be read.
    public static func load(configuration: StationClientConfiguration) async throws -> StationClient {
        let operation = "loading credentials"
        let stored: SecretBytes?
        do {
            stored = try await configuration.keyStore.loadSecret(KeyStoreItem.credentials)
        } catch {
            throw StationClientError(.keyStore, operation: operation, message: "\(error)", underlying: error)
        }
        guard let stored else {
            throw StationClientError(.notPaired, operation: operation, message: "no credentials in the key store")
        }
        return StationClient(loaded: try DeviceCredentials(encoded: stored), configuration: configuration)
    }

    /// Removes the credentials from the key store, and the cached post keys and the offline
    /// listing from the cache store.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when a store cannot be written.
    public func forget() async throws {
        postKeys.removeAll()
        offlineListings.removeAll()
        let namespace = (try? Self.normalizedNamespace(configuration.namespace)) ?? configuration.namespace
        do {
            try await configuration.keyStore.delete(KeyStoreItem.credentials)
            try await configuration.cacheStore.delete(CacheItem.postKeys)
            try await configuration.cacheStore.delete(CacheItem.offlineListing(namespace: namespace))
            try await configuration.keyStore.delete(KeyStoreItem.legacyPostKeys)
            try await configuration.keyStore.delete(KeyStoreItem.legacyOfflineListing(namespace: namespace))
        } catch {
            throw StationClientError(.keyStore, operation: "forgetting credentials", message: "\(error)", underlying: error)
        }
    }

    func saveCredentials() async throws {
        do {
            try await configuration.keyStore.saveSecret(credentials.encoded(), as: KeyStoreItem.credentials)
        } catch {
            throw StationClientError(.keyStore, operation: "saving credentials", message: "\(error)", underlying: error)
        }
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
        try await withEndpointMobility(operation: "GET /health") { endpoint in
            try await Self.health(at: endpoint, transport: self.configuration.transport, timeouts: self.configuration.requestTimeouts,
                                  pins: self.configuration.stationPublicKeyPins)
        }
    }

    static func health(
        at endpoint: URL, transport: any HTTPTransport, timeouts: TransferTimeouts, pins: [PublicKeyFingerprint]
    ) async throws -> HealthResponse {
        let operation = "GET /health"
        let response = try await unsignedExchange(
            endpoint: endpoint, method: .get, path: "/health", body: nil, transport: transport, timeouts: timeouts,
            pins: pins, limit: ResponseLimit.small, operation: operation)
        // A tunnel's 5xx means the station is not there (as for signed calls), not that it refused.
        if let failure = StationClientError.tunnel(response, operation: operation) { throw failure }
        guard response.isSuccess || response.status == 503 else { throw StationClientError.station(response, operation: operation) }
        return try decode(HealthResponse.self, from: response, operation: operation)
    }

    /// `GET /profile`: the station's identity, manifest CID and counts. Refreshes the stored IPNS
    /// name and peer id when the station reports them.
    ///
    /// - Throws: ``StationClientError`` when the station cannot be reached or the answer is not a profile.
    public func profile() async throws -> StationProfile {
        let profile = try await withEndpointMobility(operation: "GET /profile") { endpoint in
            try await Self.profile(at: endpoint, transport: self.configuration.transport, timeouts: self.configuration.requestTimeouts,
                                   pins: self.configuration.stationPublicKeyPins)
        }
        var changed = false
        if let name = profile.ipnsName, name != credentials.ipnsName { credentials.ipnsName = name; changed = true }
        if let peer = profile.ipfsPeerID, peer != credentials.ipfsPeerID { credentials.ipfsPeerID = peer; changed = true }
        if changed { try await saveCredentials() }
        return profile
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
        let operation = "GET /profile"
        let response = try await unsignedExchange(
            endpoint: endpoint, method: .get, path: "/profile", body: nil, transport: transport, timeouts: timeouts,
            pins: pins, limit: ResponseLimit.profile, operation: operation)
        if let failure = StationClientError.tunnel(response, operation: operation) { throw failure }
        guard response.isSuccess else { throw StationClientError.station(response, operation: operation) }
        return try decode(StationProfile.self, from: response, operation: operation)
    }

    // MARK: Exchanges

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
