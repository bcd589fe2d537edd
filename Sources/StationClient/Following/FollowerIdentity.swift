import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
import OrderedJSON

/// An identity for following other stations: a uid (which is also its device uid) and its own
/// ML-KEM-768 and ML-DSA-65 key pairs.
///
/// A followed station seals `envelopes[uid]` to the follower's root ML-KEM key, not to a paired
/// device's key, so reading a followed station needs this identity. Keep it in a ``KeyStore``
/// (``save(to:)`` / ``load(from:)``).
public struct FollowerIdentity: Sendable {
    /// The follower uid (also sent as its single device uid).
    public let uid: String
    /// The ML-KEM-768 key envelopes are sealed to.
    package let kemPrivateKey: MLKEM768.PrivateKey
    /// The ML-DSA-65 key (sent in follow requests so an approved follower's device can authenticate).
    package let signingPrivateKey: MLDSA65.PrivateKey

    /// Creates an identity from existing keys.
    package init(uid: String, kemPrivateKey: MLKEM768.PrivateKey, signingPrivateKey: MLDSA65.PrivateKey) {
        self.uid = uid
        self.kemPrivateKey = kemPrivateKey
        self.signingPrivateKey = signingPrivateKey
    }

    /// A fresh identity with a uid built like a device uid (see ``DeviceUID``).
    public static func generate(name: String) -> FollowerIdentity {
        FollowerIdentity(uid: DeviceUID.make(name: name), kemPrivateKey: .generate(), signingPrivateKey: .generate())
    }

    /// Saves the identity under ``KeyStoreItem/followerIdentity``.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the store fails.
    public func save(to store: any KeyStore) async throws {
        let secret = PrivateKeyJSON.encode(kem: kemPrivateKey, signing: signingPrivateKey, others: ["uid": .string(uid)])
        try await store.saveSecret(secret, as: KeyStoreItem.followerIdentity, operation: "saving the follower identity")
    }

    /// Loads the identity saved by ``save(to:)``, or `nil` when there is none.
    ///
    /// - Throws: ``StationClientError`` (`.keyStore`) when the store fails or the item is damaged.
    public static func load(from store: any KeyStore) async throws -> FollowerIdentity? {
        let operation = "loading the follower identity"
        guard let loaded = try await store.loadSecret(KeyStoreItem.followerIdentity, operation: operation) else { return nil }
        guard let decoded = try? PrivateKeyJSON.decode(loaded), let uid = decoded.others["uid"]?.stringValue else {
            throw StationClientError(.keyStore, operation: operation, message: "the stored identity is damaged")
        }
        return FollowerIdentity(uid: uid, kemPrivateKey: decoded.kem, signingPrivateKey: decoded.signing)
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
        let response = try await StationClient.unsignedExchange(
            endpoint: endpoint, method: .post, path: "/inbox", body: WireJSON.serialize(.object(body)), transport: transport,
            timeouts: StationClientConfiguration.defaultRequestTimeouts, pins: pins, limit: ResponseLimit.small, operation: operation)
        guard response.isSuccess else { throw StationClientError.station(response, operation: operation) }
        let inbox = try StationClient.decode(InboxResponse.self, from: response, operation: operation)
        if let error = inbox.result.error {
            throw StationClientError(.station, operation: operation, message: "the station refused the follow request",
                                     status: response.status, stationMessage: error)
        }
        return inbox.result
    }
}
