import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
import OrderedJSON
import ContentAddressing

/// The outcome of the station's in-place share,
/// ``StationClient/StationClient/unsafeReshareInPlace(postCID:audience:namespace:)``.
public struct ReshareResult: Sendable {
    /// The station's answer.
    public var response: ShareResponse
    /// The CID of the post's new envelope set, read from the manifest after the share (the
    /// station's answer leaves it out); `nil` when the manifest could not be read.
    public var envelopesCID: String?
    /// `true` when `/content/<post_cid>` no longer has the bytes after the share: the real
    /// station unpins and garbage-collects them. The post must then be published again from a
    /// local copy.
    public var contentLost: Bool
}

/// A post published anew to a new audience by
/// ``StationClient/StationClient/reshare(postCID:audience:namespace:progress:)``.
public struct ResharedPost: Sendable, Hashable {
    /// The new post: a new CID (fresh key), readable by the new audience.
    public var post: PublishedPost
    /// The CID of the post it replaces.
    public var previousPostCID: String
    /// Whether the old entry was removed from the manifest. `false` when that last step failed:
    /// both posts are then listed, and ``StationClient/StationClient/delete(postCID:namespace:)``
    /// with ``previousPostCID`` finishes the job.
    public var previousEntryRemoved: Bool
}

extension StationClient {
    /// Gives a post a new audience **without losing it**: downloads and decrypts it, encrypts it
    /// again under a fresh key, publishes that to `audience` (exactly once, as
    /// ``publish(fileAt:metadata:namespace:audience:progress:)``), and only then removes the old
    /// entry.
    ///
    /// The station's own `/post/share` destroys the post's bytes (it unpins and
    /// garbage-collects them; see ``unsafeReshareInPlace(postCID:audience:namespace:)``); this call
    /// never uses it. The new post has a new CID and `created_at`; the metadata is the old
    /// post's, byte for byte. Followers who were given the old post keep what they fetched.
    ///
    /// The plaintext passes through a file in an owner-only directory under
    /// ``StationClientConfiguration/temporaryDirectory``, removed before the call returns.
    /// If the old entry cannot be removed, the new post is still returned, with
    /// ``ResharedPost/previousEntryRemoved`` `false`.
    ///
    /// - Parameters:
    ///   - postCID: the post to reshare, in `namespace`.
    ///   - audience: the new audience.
    ///   - namespace: the post's namespace; `nil` for the configured one.
    ///   - progress: receives the upload's progress.
    /// - Returns: the new post and what happened to the old one.
    /// - Throws: ``StationClientError``: `.notFound` when the post is not in the namespace,
    ///   `.refused` when it is public (public posts are permanent), `.invalidNamespace`, and whatever downloading and
    ///   publishing throw; the old post is untouched when anything before the publication fails.
    public func reshare(
        postCID: String, audience: Audience, namespace: String? = nil, progress: ProgressHandler? = nil
    ) async throws -> ResharedPost {
        let namespace = try self.namespace(namespace)
        let operation = "resharing \(postCID)"
        guard let manifestCID = try await profile().manifestCID,
              let entry = try await fetchManifest(cid: manifestCID).posts(in: namespace).first(where: { $0.postCID == postCID })
        else {
            throw StationClientError(.notFound, operation: operation, message: "the post is not in namespace \(namespace)")
        }
        guard entry.isEncrypted else {
            throw StationClientError(.refused, operation: operation,
                                     message: "a public post is readable by anyone and permanent; it cannot get a new audience")
        }
        let key = try await postKey(for: postCID, envelopesCID: entry.envelopesCID, context: readContext())
        var metadata: [UInt8]?
        if let sealed = entry.metadata {
            do {
                metadata = [UInt8](try SecretBox.open(try sealed.sealedBytes(), using: key))
            } catch {
                throw StationClientError(.integrity, operation: operation, message: "the metadata does not open with the post key",
                                         underlying: error)
            }
        }
        defer { metadata?.withUnsafeMutableBytes { SecureMemory.zero($0) } }
        let directory = configuration.temporaryDirectory
            .appendingPathComponent("cipher-reshare-\(Hex.encode(SecureRandom.bytes(count: 8)))")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw StationClientError(.localFile, operation: operation, message: "cannot create \(directory.path): \(error)",
                                     underlying: error)
        }
        defer { try? FileManager.default.removeItem(at: directory) }
        let plaintext = directory.appendingPathComponent("content")
        try await download(postCID: postCID, envelopesCID: entry.envelopesCID, to: plaintext)
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: plaintext)
        } catch {
            throw StationClientError(.localFile, operation: operation, message: "cannot open \(plaintext.path): \(error)",
                                     underlying: error)
        }
        defer { try? handle.close() }
        // Off the file system before it is sent (each pass of the publish reads the open handle).
        try? FileManager.default.removeItem(at: plaintext)
        let published = try await publishFile(.openFile(handle), metadataJSON: metadata, namespace: namespace, audience: audience,
                                              progress: progress)
        var removed = true
        do {
            _ = try await delete(postCID: postCID, namespace: namespace)
        } catch let error as StationClientError where error.status == 404 {
            removed = true
        } catch let error as StationClientError where error.kind == .cancelled {
            throw error
        } catch {
            removed = false
            configuration.log(.warning, "\(operation): published as \(published.postCID), but the old entry stays: \(error)")
        }
        return ResharedPost(post: published, previousPostCID: postCID, previousEntryRemoved: removed)
    }

    /// The station's in-place share (`POST /post/share`): the same post gets new envelopes for
    /// `audience`. **On the real station this destroys the post's bytes.**
    ///
    /// - Important: Upstream, `/post/share` removes the entry through the same path as
    ///   `/post/delete`, which unpins the post and runs IPFS garbage collection, then adds the
    ///   entry back: `/content/<post_cid>` answers 404 afterwards and gateways lose it. It also
    ///   resets `created_at`. Use ``reshare(postCID:audience:namespace:progress:)``, which
    ///   publishes the post anew instead. This call checks `/content` afterwards and reports
    ///   ``ReshareResult/contentLost``.
    /// - Throws: ``StationClientError`` `.notFound` for an unknown post (404), `.station` for
    ///   another refusal (unknown uid 400), `.invalidNamespace`.
    public func unsafeReshareInPlace(postCID: String, audience: Audience, namespace: String? = nil) async throws -> ReshareResult {
        let namespace = try self.namespace(namespace)
        let operation = "POST /post/share (\(postCID))"
        var object: JSONObject = ["post_cid": .string(postCID), "audience_mode": .string(audience.wireValue)]
        object["audience_uids"] = audience.uids.map { .array($0.map { .string($0) }) } ?? .null
        object["client"] = .string(namespace)
        let response = try await sendSignedAndDecode(.post, "/post/share", body: .json(WireJSON.serialize(.object(object))),
                                                     as: ShareResponse.self, operation: operation)
        await postKeys.drop(postCID)
        let check = try await sendSigned(.get, "/content/\(postCID)", options: TransferOptions(
            response: .memory(limit: 1 << 20), timeouts: configuration.requestTimeouts), operation: "checking \(postCID) after a reshare")
        let lost = check.status == 404
        if lost { configuration.log(.warning, "\(operation): the station lost the post's bytes during the in-place share") }
        var envelopesCID: String?
        if let manifestCID = try? await profile().manifestCID, let manifest = try? await fetchManifest(cid: manifestCID) {
            envelopesCID = manifest.posts(in: namespace).first { $0.postCID == postCID }?.envelopesCID
        }
        return ReshareResult(response: response, envelopesCID: envelopesCID, contentLost: lost)
    }

    /// Removes a post from the manifest (`POST /post/delete`) and forgets its key. Copies already
    /// fetched by others cannot be recalled.
    ///
    /// - Throws: ``StationClientError`` `.notFound` (404) when the post is not in the manifest.
    public func delete(postCID: String, namespace: String? = nil) async throws -> DeleteResponse {
        let object: JSONObject = ["post_cid": .string(postCID), "client": .string(try self.namespace(namespace))]
        let response = try await sendSignedAndDecode(.post, "/post/delete", body: .json(WireJSON.serialize(.object(object))),
                                                     as: DeleteResponse.self, operation: "POST /post/delete (\(postCID))")
        await postKeys.drop(postCID)
        return response
    }

    /// `GET /followers`: the approved followers.
    ///
    /// - Throws: ``StationClientError``.
    public func followers() async throws -> [FollowerSummary] {
        try await sendSignedAndDecode(.get, "/followers", as: FollowersResponse.self, limit: ResponseLimit.followers, operation: "GET /followers").followers
    }

    /// `GET /followers/pending`: follow requests waiting for approval.
    ///
    /// - Throws: ``StationClientError``.
    public func pendingFollowers() async throws -> [FollowerDevice] {
        try await sendSignedAndDecode(.get, "/followers/pending", as: PendingFollowersResponse.self, limit: ResponseLimit.followers, operation: "GET /followers/pending").pending
    }

    /// `POST /followers/approve`: approves a pending follower (all its devices when `deviceUID` is `nil`).
    ///
    /// - Throws: ``StationClientError`` (`.notFound`, 404, when there is no such pending follower).
    public func approveFollower(uid: String, deviceUID: String? = nil) async throws -> FollowerChangeResponse {
        var object: JSONObject = ["uid": .string(uid)]
        object["device_uid"] = deviceUID.map { .string($0) } ?? .null
        return try await sendSignedAndDecode(.post, "/followers/approve", body: .json(WireJSON.serialize(.object(object))),
                                             as: FollowerChangeResponse.self, operation: "POST /followers/approve")
    }

    /// `POST /followers/remove`: rejects a pending request or revokes a follower.
    ///
    /// - Throws: ``StationClientError`` (`.notFound`, 404, when there is no such follower).
    public func removeFollower(uid: String, deviceUID: String? = nil) async throws -> FollowerChangeResponse {
        var object: JSONObject = ["uid": .string(uid)]
        object["device_uid"] = deviceUID.map { .string($0) } ?? .null
        return try await sendSignedAndDecode(.post, "/followers/remove", body: .json(WireJSON.serialize(.object(object))),
                                             as: FollowerChangeResponse.self, operation: "POST /followers/remove")
    }

    /// `POST /follow`: makes this station follow another one (an entry of ``following()`` or a
    /// handle's ``FollowedStationHandle/followedStation`` will do).
    ///
    /// - Throws: ``StationClientError``.
    public func follow(_ target: FollowedStation) async throws -> FollowResponse {
        var object: JSONObject = ["uid": .string(target.uid), "endpoint": .string(target.endpoint ?? "")]
        object["mlkem_public_key"] = .string(target.mlkemPublicKey ?? "")
        if let key = target.mldsaPublicKey { object["mldsa_public_key"] = .string(key) }
        if let ipns = target.ipnsID { object["ipns_id"] = .string(ipns) }
        return try await sendSignedAndDecode(.post, "/follow", body: .json(WireJSON.serialize(.object(object))),
                                             as: FollowResponse.self, operation: "POST /follow")
    }

    /// `POST /unfollow`: stops following a station (succeeds for unknown uids too).
    ///
    /// - Throws: ``StationClientError``.
    public func unfollow(uid: String) async throws -> FollowResponse {
        try await sendSignedAndDecode(.post, "/unfollow", body: .json(WireJSON.serialize(.object(["uid": .string(uid)]))),
                                      as: FollowResponse.self, operation: "POST /unfollow")
    }

    /// `GET /following`: the stations this one follows.
    ///
    /// - Throws: ``StationClientError``.
    public func following() async throws -> [FollowedStation] {
        try await sendSignedAndDecode(.get, "/following", as: FollowingResponse.self, limit: ResponseLimit.followers, operation: "GET /following").following
    }
}
