import Foundation
import Manifest
import Transport
import ContentAddressing

/// A station this one follows, as ``StationClient/follow(stationAt:trust:name:)`` returns it:
/// everything needed to read it later. It is `Codable` (snake_case keys, the pin as its
/// `sha256//…` string), so an app can keep it with its own data; it holds no secret.
public struct FollowedStationHandle: Sendable, Hashable, Codable {
    /// The followed station's uid.
    public var uid: String
    /// Its HTTP endpoint.
    public var endpoint: URL
    /// The TLS key pinned for its endpoint when it presented a certificate no trusted authority
    /// signed and the key was trusted on first use; `nil` for plain `http` or a trusted certificate.
    public var publicKeyPin: PublicKeyFingerprint?
    /// Its ML-KEM-768 public key (hex), as its profile gave it.
    public var mlkemPublicKey: String
    /// Its ML-DSA-65 public key (hex), when its profile gave one.
    public var mldsaPublicKey: String?
    /// Its IPNS name (or IPFS peer id), when its profile gave one.
    public var ipnsID: String?
    /// The uid of the follower identity its envelopes are sealed to.
    public var followerUID: String
    /// What its inbox answered to the follow request (`follow_request_pending_multi_device`
    /// while its owner has not approved it; `sent` when the answer named no status), or `nil`
    /// when the handle records no request (see ``requestWasSent``).
    public var requestStatus: String?
    /// Whether the handle records a follow request sent to the station (``requestStatus`` is
    /// set, as in every handle ``StationClient/follow(stationAt:trust:name:)`` returns): without
    /// an approval seen, its standing is then ``FollowStatus/awaitingApproval`` rather than
    /// ``FollowStatus/nothingKnown``.
    public var requestWasSent: Bool { requestStatus != nil }
    /// The sequence of its IPNS record when it was followed (read through the gateway and
    /// verified against its key), when known: a reader of the station by IPNS refuses an older
    /// record as a rollback. `nil` when there was no gateway or no record; the first record a
    /// reader verifies then sets the floor.
    public var ipnsSequence: UInt64?
    /// The IPFS gateway (its base URL) this station's content and IPNS record are read
    /// through, when it is not the configuration's ``StationClientConfiguration/gateway``;
    /// `nil` (and in a handle saved before this field existed) reads through the configured
    /// gateway. A station's own `/content/<cid>` serves only its owner's devices, so a follower
    /// always reads through a gateway: its owner's public one, say, kept here once per station.
    /// Requests to it go through the configuration's transport, without ``publicKeyPin``.
    public var gateway: URL?
    /// Whether this follower was seen approved by the station (``FollowStatus/approved``, kept
    /// by ``record(_:)``): a later status without it is then ``FollowStatus/removed`` rather than
    /// ``FollowStatus/awaitingApproval``. `false` in a handle saved before this field existed.
    public var wasApproved: Bool

    /// Creates a handle.
    public init(uid: String, endpoint: URL, publicKeyPin: PublicKeyFingerprint?, mlkemPublicKey: String, mldsaPublicKey: String?,
                ipnsID: String?, followerUID: String, requestStatus: String? = nil, ipnsSequence: UInt64? = nil,
                gateway: URL? = nil, wasApproved: Bool = false) {
        self.ipnsSequence = ipnsSequence
        self.gateway = gateway
        self.wasApproved = wasApproved
        self.uid = uid
        self.endpoint = endpoint
        self.publicKeyPin = publicKeyPin
        self.mlkemPublicKey = mlkemPublicKey
        self.mldsaPublicKey = mldsaPublicKey
        self.ipnsID = ipnsID
        self.followerUID = followerUID
        self.requestStatus = requestStatus
    }

    private enum CodingKeys: String, CodingKey {
        case uid, endpoint, publicKeyPin = "tls_public_key_pin", mlkemPublicKey = "mlkem_public_key"
        case mldsaPublicKey = "mldsa_public_key", ipnsID = "ipns_id", followerUID = "follower_uid", requestStatus = "request_status"
        case ipnsSequence = "ipns_sequence", gateway, wasApproved = "was_approved"
    }

    /// Reads a handle written by ``encode(to:)``.
    ///
    /// A field added after the first release decodes as its default when missing (``gateway``
    /// as `nil`, ``wasApproved`` as `false`), so handles saved before it read unchanged.
    ///
    /// - Throws: `DecodingError` for a missing field, an endpoint or gateway that is not a URL,
    ///   or a pin that is not a `sha256//…` fingerprint.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uid = try container.decode(String.self, forKey: .uid)
        let endpointText = try container.decode(String.self, forKey: .endpoint)
        guard let endpoint = URL(string: endpointText), endpoint.host != nil else {
            throw DecodingError.dataCorruptedError(forKey: .endpoint, in: container, debugDescription: "not a URL")
        }
        self.endpoint = endpoint
        if let pin = try container.decodeIfPresent(String.self, forKey: .publicKeyPin) {
            do {
                publicKeyPin = try PublicKeyFingerprint(pin: pin)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .publicKeyPin, in: container, debugDescription: "not a sha256// fingerprint")
            }
        } else {
            publicKeyPin = nil
        }
        mlkemPublicKey = try container.decode(String.self, forKey: .mlkemPublicKey)
        mldsaPublicKey = try container.decodeIfPresent(String.self, forKey: .mldsaPublicKey)
        ipnsID = try container.decodeIfPresent(String.self, forKey: .ipnsID)
        followerUID = try container.decode(String.self, forKey: .followerUID)
        requestStatus = try container.decodeIfPresent(String.self, forKey: .requestStatus)
        ipnsSequence = try container.decodeIfPresent(UInt64.self, forKey: .ipnsSequence)
        if let gatewayText = try container.decodeIfPresent(String.self, forKey: .gateway) {
            guard let gateway = URL(string: gatewayText), gateway.host != nil else {
                throw DecodingError.dataCorruptedError(forKey: .gateway, in: container, debugDescription: "not a URL")
            }
            self.gateway = gateway
        } else {
            gateway = nil
        }
        wasApproved = try container.decodeIfPresent(Bool.self, forKey: .wasApproved) ?? false
    }

    /// Writes every field, the endpoint as its absolute string and the pin as `sha256//…`.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uid, forKey: .uid)
        try container.encode(endpoint.absoluteString, forKey: .endpoint)
        try container.encodeIfPresent(publicKeyPin?.pinString, forKey: .publicKeyPin)
        try container.encode(mlkemPublicKey, forKey: .mlkemPublicKey)
        try container.encodeIfPresent(mldsaPublicKey, forKey: .mldsaPublicKey)
        try container.encodeIfPresent(ipnsID, forKey: .ipnsID)
        try container.encode(followerUID, forKey: .followerUID)
        try container.encodeIfPresent(requestStatus, forKey: .requestStatus)
        try container.encodeIfPresent(ipnsSequence, forKey: .ipnsSequence)
        try container.encodeIfPresent(gateway?.absoluteString, forKey: .gateway)
        if wasApproved { try container.encode(true, forKey: .wasApproved) }
    }

    /// The station as `GET /following` lists it.
    public var followedStation: FollowedStation {
        FollowedStation(uid: uid, mlkemPublicKey: mlkemPublicKey, mldsaPublicKey: mldsaPublicKey, endpoint: endpoint.absoluteString,
                        ipnsID: ipnsID)
    }
}

/// A post of a followed station: since the followed-station listing runs on the engine of one's
/// own, it is a ``ListedPost`` (its manifest entry is no longer needed to download it).
@available(*, deprecated, renamed: "ListedPost", message: "followed-station listings return ListedPost; use post.postCID, post.metadata, and feed.download(post)")
public typealias FollowedPost<Metadata: Sendable> = ListedPost<Metadata>

/// The posts of a followed station readable by this follower: a ``PostListing``.
@available(*, deprecated, renamed: "PostListing", message: "followed-station listings return PostListing, with the offline view")
public typealias FollowedPostListing<Metadata: Sendable> = PostListing<Metadata>

/// Reads one followed station: lists the posts shared with the follower identity and downloads
/// them, to memory or to a file. Built by ``StationClient/reader(for:gateway:)``.
public struct FollowedStationFeed: Sendable {
    /// The station read.
    public let station: FollowedStationHandle
    /// The reader doing the work (envelopes, keys, gateway).
    public let reader: FollowedStationReader

    /// Creates a feed for `station` read through `reader` (whose identity must be that the
    /// station was followed with).
    public init(station: FollowedStationHandle, reader: FollowedStationReader) {
        self.station = station
        self.reader = reader
    }

    /// Lists the posts of `namespace` shared with this follower (or public), as
    /// ``FollowedStationReader/listPosts(of:namespace:as:)`` does: with the client's limits, and
    /// the last listing (marked ``PostListing/isOffline``) when the station is unreachable. A
    /// post whose envelope or metadata does not open is reported in ``PostListing/skipped``.
    ///
    /// - Throws: ``StationClientError`` when the station is unreachable and there is no offline
    ///   listing, when the manifest cannot be read, or the namespace is invalid.
    public func listPosts<Metadata: Decodable & Sendable>(
        namespace: String, as type: Metadata.Type
    ) async throws -> PostListing<Metadata> {
        try await reader.listPosts(of: .endpoint(station.endpoint), namespace: namespace, as: type)
    }

    /// Downloads and decrypts a listed post into memory (content from the gateway, verified).
    ///
    /// - Throws: as ``FollowedStationReader/download(_:)-(PostEntry)``.
    public func download<Metadata>(_ post: ListedPost<Metadata>) async throws -> Data {
        try await reader.download(post)
    }

    /// Downloads and decrypts a listed post into `destination`, in constant memory; the file
    /// appears only once it verified. The size the metadata states (``StatesPlaintextSize``, such
    /// as `DriveFileMetadata`'s `size_bytes`) bounds what is fetched.
    ///
    /// - Throws: as ``FollowedStationReader/download(_:to:progress:)``.
    public func download<Metadata>(_ post: ListedPost<Metadata>, to destination: URL, progress: ProgressHandler? = nil) async throws {
        try await reader.download(post, to: destination, progress: progress)
    }

    /// Downloads and decrypts a listed post into `destination`, fetching no more than
    /// `plaintextSize` bytes of plaintext (plus the encryption overhead): a size the app knows
    /// from elsewhere, which wins over the metadata's; `nil` for the metadata's.
    ///
    /// - Throws: as ``FollowedStationReader/download(_:to:progress:)``.
    public func download<Metadata>(
        _ post: ListedPost<Metadata>, to destination: URL, plaintextSize: Int64?, progress: ProgressHandler? = nil
    ) async throws {
        try await reader.download(post, to: destination, plaintextSize: plaintextSize, progress: progress)
    }
}

extension StationClient {
    /// Follows the station at `url` in one call, and returns what is needed to read it.
    ///
    /// 1. Decides how its TLS certificate is trusted, as pairing does (``StationKeyTrust``): a
    ///    certificate the transport trusts needs nothing; a self-signed one must present the
    ///    `expected` key or be confirmed, and that key is then pinned for every request to it and
    ///    kept in the returned handle (``FollowedStationHandle/publicKeyPin``).
    /// 2. Reads its `/profile` (uid, ML-KEM and ML-DSA keys, IPNS id).
    /// 3. Loads the follower identity from the configuration's key store, or creates and saves one
    ///    with keys from ``StationClientConfiguration/keyPolicy``.
    /// 4. Sends it the follow request (`POST /inbox`); its owner still has to approve it.
    /// 5. Makes this station follow it (`POST /follow`).
    ///
    /// - Parameters:
    ///   - url: the followed station's endpoint.
    ///   - trust: how to trust a certificate no trusted authority signed.
    ///   - name: the name a new follower identity's uid is built from (default: `follower`);
    ///     unused when one is already stored.
    /// - Throws: ``StationClientError``: `.untrustedKey` when its TLS key is not trusted,
    ///   `.invalidResponse` when its profile has no ML-KEM key, `.keyStore`, `.unreachable`,
    ///   `.station` when it or this station refuses; `.refused` (its operation names the follow,
    ///   before any request is sent to the station) when there is no follower identity and the
    ///   key policy is ``KeyPolicy/refuseToGenerate``.
    public func follow(stationAt url: URL, trust: StationKeyTrust = .certificateAuthorityOnly, name: String? = nil) async throws -> FollowedStationHandle {
        let transport = configuration.transport
        let timeouts = configuration.requestTimeouts
        let (pins, accepted) = try await Self.trustedPins(endpoint: url, configuration: configuration, trust: trust, honoringOverride: false)
        let profile = try await StationConnection.read(.profile, at: StationOrigin(url: url, pins: pins), transport: transport,
                                                       timeouts: timeouts)
        guard let kemKey = profile.mlkemPublicKey, !kemKey.isEmpty else {
            throw StationClientError(.invalidResponse, operation: "following \(url.absoluteString)",
                                     message: "the station's profile has no ML-KEM key")
        }
        let identity = try await followerIdentity(name: name, operation: "following \(url.absoluteString)")
        let ours = try await self.profile()
        let result = try await identity.sendFollowRequest(to: url, transport: transport, ipnsID: ours.ipnsName ?? ours.ipfsPeerID,
                                                          pins: pins)
        let ipnsID = profile.ipnsName ?? profile.ipfsPeerID
        var floor: UInt64?
        if let anchor = ipnsID.flatMap({ try? PeerID($0) }) {
            floor = await Self.ipnsFloor(of: anchor, gateway: configuration.gateway, log: configuration.log)
        }
        let handle = FollowedStationHandle(
            uid: profile.uid, endpoint: url, publicKeyPin: accepted, mlkemPublicKey: kemKey, mldsaPublicKey: profile.mldsaPublicKey,
            ipnsID: ipnsID, followerUID: identity.uid, requestStatus: result.status ?? "sent", ipnsSequence: floor)
        _ = try await follow(handle.followedStation)
        return handle
    }

    /// The follower identity in the configuration's key store, created and saved when there is
    /// none, with keys from ``StationClientConfiguration/keyPolicy`` (by default fresh pure-Swift
    /// keys). To use the app's keys without a policy, save ``FollowerIdentity/init(name:keys:)``
    /// to the key store first.
    ///
    /// - Parameter name: the name a new identity's uid is built from (default: `follower`).
    /// - Throws: ``StationClientError``: `.keyStore` when the store fails or the policy's factory
    ///   fails; `.refused` (operation `creating a follower identity`) when there is none and the
    ///   policy is ``KeyPolicy/refuseToGenerate``.
    public func followerIdentity(name: String? = nil) async throws -> FollowerIdentity {
        try await followerIdentity(name: name, operation: "creating a follower identity")
    }

    /// ``followerIdentity(name:)``, a refusal naming `operation`.
    func followerIdentity(name: String?, operation: String) async throws -> FollowerIdentity {
        let store = configuration.keyStore
        if let existing = try await FollowerIdentity.load(from: store, keyResolver: configuration.keyReferenceResolver) {
            return existing
        }
        let identity = FollowerIdentity(name: name ?? "follower",
                                        keys: try configuration.keyPolicy.makeKeys(for: operation))
        try await identity.save(to: store)
        return identity
    }

    /// A reader for a followed station, with the follower identity from the key store and the
    /// handle's TLS pin.
    ///
    /// - Parameters:
    ///   - station: the station, as ``follow(stationAt:trust:name:)`` returned it.
    ///   - gateway: the IPFS gateway its content is read through (default: the handle's
    ///     ``FollowedStationHandle/gateway``, through the configuration's transport, or else the
    ///     configuration's).
    /// - Throws: ``StationClientError`` (`.keyStore`) when there is no follower identity, or not
    ///   the gateway `station` was followed with; `.refused` when there is no gateway.
    public func reader(for station: FollowedStationHandle, gateway: IPFSGateway? = nil) async throws -> FollowedStationFeed {
        let operation = "reading \(station.endpoint.absoluteString)"
        guard let gateway = gateway ?? defaultGateway(for: station) else {
            throw StationClientError(.refused, operation: operation, message: "reading a followed station needs an IPFS gateway")
        }
        guard let identity = try await FollowerIdentity.load(from: configuration.keyStore, keyResolver: configuration.keyReferenceResolver),
              identity.uid == station.followerUID else {
            throw StationClientError(.keyStore, operation: operation,
                                     message: "the key store holds no follower identity \(station.followerUID)")
        }
        let reader = FollowedStationReader(identity: identity, gateway: gateway, transport: configuration.transport,
                                           pins: station.publicKeyPin.map { [$0] } ?? [], settings: ListingSettings(configuration),
                                           offline: offline)
        if let name = station.ipnsID, let floor = station.ipnsSequence { reader.ipnsFloors.admit(floor, for: name) }
        return FollowedStationFeed(station: station, reader: reader)
    }

    /// The gateway `station` is read through by default: its handle's, with the configuration's
    /// transport and the configured gateway's time limits, or the configured gateway.
    func defaultGateway(for station: FollowedStationHandle) -> IPFSGateway? {
        guard let url = station.gateway else { return configuration.gateway }
        guard let configured = configuration.gateway else { return IPFSGateway(baseURL: url, transport: configuration.transport) }
        return IPFSGateway(baseURL: url, transport: configuration.transport, timeouts: configured.timeouts)
    }
}
