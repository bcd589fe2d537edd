import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
import OrderedJSON

/// An identity for following other stations: a uid (which is also its device uid) and its own
/// ML-KEM-768 and ML-DSA-65 keys.
///
/// A followed station seals `envelopes[uid]` to the follower's root ML-KEM key, not to a paired
/// device's key, so reading a followed station needs this identity. Keep it in a ``KeyStore``
/// (``save(to:)`` / ``load(from:)``). Its keys are fresh pure-Swift keys (``generate(name:)``) or
/// the app's own (``init(name:keys:)``, loaded back with ``load(from:keyResolver:)``); see
/// <doc:KeepingDeviceKeys>.
public struct FollowerIdentity: Sendable {
    /// The follower uid (also sent as its single device uid).
    public let uid: String
    /// The ML-KEM-768 key envelopes are sealed to.
    package let kemPrivateKey: any MLKEM768DecapsulationKey
    /// The ML-DSA-65 key (sent in follow requests so an approved follower's device can authenticate).
    package let signingPrivateKey: any MLDSA65SigningKey

    /// Creates an identity from existing keys.
    package init(uid: String, kemPrivateKey: any MLKEM768DecapsulationKey, signingPrivateKey: any MLDSA65SigningKey) {
        self.uid = uid
        self.kemPrivateKey = kemPrivateKey
        self.signingPrivateKey = signingPrivateKey
    }

    /// A new identity with the app's keys (such as Secure Enclave keys) and a uid built like a
    /// device uid (see ``DeviceUID``). Save it with ``save(to:)`` before following: the client's
    /// `follow` calls then use it.
    ///
    /// - Parameters:
    ///   - name: the name the uid is built from.
    ///   - keys: the identity's keys; to be saved, each is a pure-Swift key or a ``ReferenceStorableKey``.
    public init(name: String, keys: DeviceKeys) {
        self.init(uid: DeviceUID.make(name: name), kemPrivateKey: keys.kemKey, signingPrivateKey: keys.signingKey)
    }

    /// A fresh identity with pure-Swift keys (``DeviceKeys/generate()``) and a uid built like a
    /// device uid (see ``DeviceUID``).
    public static func generate(name: String) -> FollowerIdentity {
        FollowerIdentity(name: name, keys: .generate())
    }

    /// The ML-KEM-768 public key followed stations seal this identity's envelopes to.
    public var kemPublicKey: MLKEM768.PublicKey { kemPrivateKey.publicKey }

    /// The ML-DSA-65 public key sent in follow requests.
    public var signingPublicKey: MLDSA65.PublicKey { signingPrivateKey.publicKey }

    /// Whether both private keys are kept by reference (the app's ``ReferenceStorableKey`` keys,
    /// such as Secure Enclave keys): the key store then holds only their references and public
    /// keys, never their bytes. `false` when either is a pure-Swift key (its bytes are stored,
    /// sealed by the store), as keys from ``KeyPolicy/generatePureSwiftKeys`` are. What an app
    /// checks to be sure the identity did not get generated keys; see ``StationClientConfiguration/keyPolicy``.
    public var keysAreStoredByReference: Bool {
        PrivateKeyJSON.storesByReference(kem: kemPrivateKey, signing: signingPrivateKey)
    }

    /// Saves the identity under ``KeyStoreItem/followerIdentity``: pure-Swift keys as bytes, the
    /// app's keys by reference (``ReferenceStorableKey``).
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the store fails, or a key is neither a
    ///   pure-Swift key nor ``ReferenceStorableKey`` (or gives no reference).
    public func save(to store: any KeyStore) async throws {
        let operation = "saving the follower identity"
        let secret = try PrivateKeyJSON.encode(kem: kemPrivateKey, signing: signingPrivateKey, others: ["uid": .string(uid)],
                                               operation: operation)
        try await store.saveSecret(secret, as: KeyStoreItem.followerIdentity, operation: operation)
    }

    /// Loads the identity saved by ``save(to:)``, or `nil` when there is none.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the store fails or the item is damaged,
    ///   or holds a key stored by reference (use ``load(from:keyResolver:)``).
    public static func load(from store: any KeyStore) async throws -> FollowerIdentity? {
        try await load(from: store, keyResolver: nil)
    }

    /// Loads the identity saved by ``save(to:)``, or `nil` when there is none, giving keys stored
    /// by reference to `keyResolver` (each must have the public key stored with its reference).
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the store fails or the item is damaged,
    ///   a key is stored by reference and `keyResolver` is `nil`, or the resolver fails or returns
    ///   a key with another public key than the stored one.
    public static func load(from store: any KeyStore, keyResolver: KeyReferenceResolver?) async throws -> FollowerIdentity? {
        let operation = "loading the follower identity"
        guard let loaded = try await store.loadSecret(KeyStoreItem.followerIdentity, operation: operation) else { return nil }
        let decoded = try PrivateKeyJSON.decode(loaded, resolver: keyResolver, operation: operation)
        guard let uid = decoded.others["uid"]?.stringValue else {
            throw StationClientError(.keyStore, operation: operation, message: "the stored identity is damaged (no uid)")
        }
        return FollowerIdentity(uid: uid, kemPrivateKey: decoded.keys.kemKey, signingPrivateKey: decoded.keys.signingKey)
    }

    /// Sends a follow request to the station at `endpoint` (`POST /inbox`, unauthenticated). The
    /// request lands as pending until that station's owner approves it.
    ///
    /// - Parameters:
    ///   - endpoint: the station to follow.
    ///   - transport: the transport to reach it with.
    ///   - ipnsID: the follower's own IPNS id, when it has a station.
    ///   - pins: the TLS key pins for `endpoint` (empty for plain `http` or a certificate a trusted authority signed).
    /// - Returns: the inbox result (`follow_request_pending_multi_device` on a real station).
    /// - Throws: ``StationClientError``: `.station` for an error status or a 200 carrying
    ///   `result.error`, `.unreachable`.
    public func sendFollowRequest(
        to endpoint: URL, transport: any HTTPTransport, ipnsID: String? = nil, pins: [PublicKeyFingerprint] = []
    ) async throws -> InboxResponse.Result {
        let operation = "POST /inbox (follow_request)"
        var body: JSONObject = [
            "type": "follow_request",
            "uid": .string(uid),
            "devices": .array([.object([
                "device_uid": .string(uid),
                "mlkem_public_key": .string(Hex.encode(kemPrivateKey.publicKey.rawRepresentation)),
                "mldsa_public_key": .string(Hex.encode(signingPrivateKey.publicKey.rawRepresentation)),
            ])]),
        ]
        body["ipns_id"] = ipnsID.map { .string($0) } ?? .null
        let response = try await StationConnection.exchange(
            .unsigned(.post, "/inbox", body: .json(WireJSON.serialize(.object(body))), limit: ResponseLimit.small,
                      timeouts: StationClientConfiguration.defaultRequestTimeouts, operation: operation),
            at: StationOrigin(url: endpoint, pins: pins), signing: nil, transport: transport)
        let inbox = try StationConnection.decodeAnswer(InboxResponse.self, from: response, operation: operation)
        if let error = inbox.result.error {
            throw StationClientError(.station, operation: operation, message: "the station refused the follow request",
                                     status: response.status, stationMessage: error)
        }
        return inbox.result
    }
}
