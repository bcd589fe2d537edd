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
/// `.cipher-upload-<16 hex>.<16 hex>.partial` of one still being encrypted) that a process of an
/// earlier version left behind when it was killed mid-upload (this version stages no upload).
///
/// The client is a front over its parts: the connection to the station (credentials, clock
/// offset, endpoint changes, every call), the post-key store, the manifest source and the offline
/// view. The expensive work (signing, ML-KEM, SecretBox) runs outside the actor, so concurrent
/// calls use every core.
public actor StationClient {
    /// The configuration the client was created with.
    public nonisolated let configuration: StationClientConfiguration
    /// The connection to the station: credentials, clock offset, endpoint changes, every call.
    nonisolated let connection: StationConnection
    /// The post keys this device has learned.
    nonisolated let postKeys: PostKeyStore
    /// The offline view of this device's namespace and of the stations it follows.
    nonisolated let offline: OfflineListings
    /// This station's manifests, and the last one read.
    nonisolated let manifests: ManifestSource
    /// Whether the caches earlier versions kept in the key store were removed.
    var legacyCachesRemoved = false

    /// The current credentials (the endpoint changes when the station moves).
    public var credentials: DeviceCredentials { connection.credentials }
    /// Seconds to add to the local clock when signing, learned from a `stale request` answer.
    package var clockOffset: Int64 { connection.clockOffset }

    /// Creates a client from credentials already at hand (they are saved to the key store).
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the credentials cannot be saved.
    public init(credentials: DeviceCredentials, configuration: StationClientConfiguration) async throws {
        self.configuration = configuration
        (connection, postKeys, offline, manifests) = Self.parts(credentials, configuration)
        try await connection.saveCredentials()
    }

    private init(loaded credentials: DeviceCredentials, configuration: StationClientConfiguration) {
        self.configuration = configuration
        (connection, postKeys, offline, manifests) = Self.parts(credentials, configuration)
    }

    /// The parts a client is a front over; removes the stale upload staging files on the way.
    private static func parts(
        _ credentials: DeviceCredentials, _ configuration: StationClientConfiguration
    ) -> (StationConnection, PostKeyStore, OfflineListings, ManifestSource) {
        StagedFile.removeStaleUploads(in: configuration.temporaryDirectory)
        let connection = StationConnection(credentials: credentials, configuration: configuration)
        return (connection,
                PostKeyStore(cacheStore: configuration.cacheStore, station: credentials.stationUID,
                             persists: configuration.persistsPostKeys, log: configuration.log),
                OfflineListings(cacheStore: configuration.cacheStore, persists: configuration.persistsOfflineListing,
                                log: configuration.log),
                ManifestSource(connection: connection))
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
        let namespace = (try? Self.normalizedNamespace(configuration.namespace)) ?? configuration.namespace
        let postKeysError = await postKeys.forget()
        do {
            try await connection.forget()
            if let postKeysError { throw postKeysError }
            try await offline.forget(item: CacheItem.offlineListing(station: credentials.stationUID, namespace: namespace))
            try await forgetLegacyCaches(namespace: namespace)
        } catch {
            throw StationClientError(.keyStore, operation: "forgetting credentials", message: "\(error)", underlying: error)
        }
    }

    // MARK: Public endpoints

    /// `GET /health`: whether the station and its IPFS node are up.
    ///
    /// A station whose IPFS node is down answers 503 `degraded` after about 3 s; that is returned
    /// as a response whose `isHealthy` is `false`, not thrown.
    /// - Throws: ``StationClientError`` when the station cannot be reached or answers otherwise.
    public func health() async throws -> HealthResponse {
        try await connection.read(.health)
    }

    /// `GET /profile`: the station's identity, manifest CID and counts.
    ///
    /// Reading the profile changes nothing: it is checked against the stored identity, and a
    /// profile naming another uid, other station keys or another IPNS key than the stored ones
    /// is refused. Fixing the IPNS key a fresh station names after its first publish is a step
    /// of its own, ``adoptIPNSKey()``.
    ///
    /// - Throws: ``StationClientError`` when the station cannot be reached or the answer is not a
    ///   profile; `.integrity` when it names another IPNS key or other station keys than the stored ones.
    public func profile() async throws -> StationProfile {
        let operation = "GET /profile"
        let profile = try await connection.read(.profile)
        try connection.check(profile, operation: operation)
        return profile
    }

    /// Fixes the station's IPNS key in the credentials: the trust anchor of endpoint moves (see
    /// <doc:Trust>), read from `GET /profile` over the pinned or CA-valid channel.
    ///
    /// A station names no IPNS key until its first publish; pairing fixes it when it does. A
    /// device paired with a fresh station calls this once the station has published, so that it
    /// can find the station again when it moves. The station's ML-DSA key, when the credentials
    /// do not hold it yet, is fixed as well. The credentials are saved only when something new
    /// was fixed; a key already fixed is never replaced.
    ///
    /// - Returns: the IPNS name the credentials hold now, or `nil` when the station names none yet.
    /// - Throws: ``StationClientError``: `.integrity` when the profile names another IPNS key or
    ///   other station keys than the stored ones; `.refused` when the station names an IPNS key
    ///   for the first time over plain `http` (anyone on the path could name theirs);
    ///   `.keyStore` when the credentials cannot be saved; as ``profile()`` when it cannot be read.
    @discardableResult
    public func adoptIPNSKey() async throws -> String? {
        let profile = try await connection.read(.profile)
        return try await connection.adoptAnchor(from: profile, operation: "adopting the station's IPNS key")
    }
}

extension StationClientError {
    init(_ kind: Kind, operation: String, status: Int?, message: String, underlying: (any Error)? = nil) {
        self.init(kind, operation: operation, message: message, status: status, underlying: underlying)
    }
}
