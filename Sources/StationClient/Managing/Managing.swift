import Foundation
import Manifest
import Transport

/// The outcome of a reshare.
public struct ReshareResult: Sendable {
    /// The station's answer.
    public var response: ShareResponse
    /// `true` when `/content/<post_cid>` no longer has the bytes after the reshare: the real
    /// station's upstream bug (see ``StationClient/reshare(postCID:audience:namespace:)``). The
    /// post must then be published again from a local copy.
    public var contentLost: Bool
}

extension StationClient {
    /// Gives an existing post a new audience (`POST /post/share`), then checks whether the
    /// station still has its bytes.
    ///
    /// - Important: On the real station (upstream `209b852`) a reshare **destroys the post's
    ///   bytes**: `/post/share` unpins the post and runs IPFS garbage collection before re-adding
    ///   the manifest entry, so `/content/<post_cid>` answers 404 afterwards and the gateway no
    ///   longer has it. It also resets `created_at`. Prefer publishing again to a new audience, or
    ///   keep a local copy and re-upload when ``ReshareResult/contentLost`` is `true`.
    /// - Throws: ``StationClientError`` `.station` for a refusal (unknown post 404, unknown uid 400).
    public func reshare(postCID: String, audience: Audience, namespace: String? = nil) async throws -> ReshareResult {
        let operation = "POST /post/share (\(postCID))"
        var object: JSONObject = ["post_cid": .string(postCID), "audience_mode": .string(audience.wireValue)]
        object["audience_uids"] = audience.uids.map { .array($0.map { .string($0) }) } ?? .null
        object["client"] = .string(namespace ?? configuration.namespace)
        let response = try await signedJSON(.post, "/post/share", body: .json(WireJSON.serialize(.object(object))),
                                            as: ShareResponse.self, operation: operation)
        let check = try await signed(.get, "/content/\(postCID)", options: TransferOptions(
            response: .memory(limit: 1 << 20), timeouts: configuration.requestTimeouts), operation: "checking \(postCID) after a reshare")
        let lost = check.status == 404
        if lost { log(.warning, "\(operation): the station lost the post's bytes during the reshare (upstream bug)") }
        return ReshareResult(response: response, contentLost: lost)
    }

    /// Removes a post from the manifest (`POST /post/delete`) and forgets its key. Copies already
    /// fetched by others cannot be recalled.
    ///
    /// - Throws: ``StationClientError`` `.station` (404 when the post is not in the manifest).
    public func delete(postCID: String, namespace: String? = nil) async throws -> DeleteResponse {
        let object: JSONObject = ["post_cid": .string(postCID), "client": .string(namespace ?? configuration.namespace)]
        let response = try await signedJSON(.post, "/post/delete", body: .json(WireJSON.serialize(.object(object))),
                                            as: DeleteResponse.self, operation: "POST /post/delete (\(postCID))")
        forgetPostKey(postCID)
        return response
    }

    /// `GET /followers`: the approved followers.
    ///
    /// - Throws: ``StationClientError``.
    public func followers() async throws -> [FollowerSummary] {
        try await signedJSON(.get, "/followers", as: FollowersResponse.self, limit: ResponseLimit.followers, operation: "GET /followers").followers
    }

    /// `GET /followers/pending`: follow requests waiting for approval.
    ///
    /// - Throws: ``StationClientError``.
    public func pendingFollowers() async throws -> [FollowerDevice] {
        try await signedJSON(.get, "/followers/pending", as: PendingFollowersResponse.self, limit: ResponseLimit.followers, operation: "GET /followers/pending").pending
    }

    /// `POST /followers/approve`: approves a pending follower (all its devices when `deviceUID` is `nil`).
    ///
    /// - Throws: ``StationClientError`` (`.station` 404 when there is no such pending follower).
    public func approveFollower(uid: String, deviceUID: String? = nil) async throws -> FollowerChangeResponse {
        var object: JSONObject = ["uid": .string(uid)]
        object["device_uid"] = deviceUID.map { .string($0) } ?? .null
        return try await signedJSON(.post, "/followers/approve", body: .json(WireJSON.serialize(.object(object))),
                                    as: FollowerChangeResponse.self, operation: "POST /followers/approve")
    }

    /// `POST /followers/remove`: rejects a pending request or revokes a follower.
    ///
    /// - Throws: ``StationClientError`` (`.station` 404 when there is no such follower).
    public func removeFollower(uid: String, deviceUID: String? = nil) async throws -> FollowerChangeResponse {
        var object: JSONObject = ["uid": .string(uid)]
        object["device_uid"] = deviceUID.map { .string($0) } ?? .null
        return try await signedJSON(.post, "/followers/remove", body: .json(WireJSON.serialize(.object(object))),
                                    as: FollowerChangeResponse.self, operation: "POST /followers/remove")
    }

    /// `POST /follow`: makes this station follow another one.
    ///
    /// - Throws: ``StationClientError``.
    public func follow(_ target: FollowTarget) async throws -> FollowResponse {
        var object: JSONObject = ["uid": .string(target.uid), "endpoint": .string(target.endpoint ?? "")]
        object["mlkem_public_key"] = .string(target.mlkemPublicKey ?? "")
        if let key = target.mldsaPublicKey { object["mldsa_public_key"] = .string(key) }
        if let ipns = target.ipnsID { object["ipns_id"] = .string(ipns) }
        return try await signedJSON(.post, "/follow", body: .json(WireJSON.serialize(.object(object))),
                                    as: FollowResponse.self, operation: "POST /follow")
    }

    /// `POST /unfollow`: stops following a station (succeeds for unknown uids too).
    ///
    /// - Throws: ``StationClientError``.
    public func unfollow(uid: String) async throws -> FollowResponse {
        try await signedJSON(.post, "/unfollow", body: .json(WireJSON.serialize(.object(["uid": .string(uid)]))),
                             as: FollowResponse.self, operation: "POST /unfollow")
    }

    /// `GET /following`: the stations this one follows.
    ///
    /// - Throws: ``StationClientError``.
    public func following() async throws -> [FollowedStation] {
        try await signedJSON(.get, "/following", as: FollowingResponse.self, limit: ResponseLimit.followers, operation: "GET /following").following
    }
}
