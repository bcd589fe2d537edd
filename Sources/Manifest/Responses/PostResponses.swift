import OrderedJSON

/// `POST /post`: the new post's CIDs and counts.
///
/// Encrypted: `{"status":"post_ok","cid","envelopes_cid","audience_mode","audience_uids",
/// "followers_raw","followers_used","manifest_posts"}` (no `encrypted` key). Public: the same
/// with `"envelopes_cid":null` and `"encrypted":false` after `audience_mode`.
package struct PostResponse: Sendable, Hashable, Decodable {
    /// `post_ok`.
    var status: String
    /// The post's CID (`cid` on the wire; `post_cid` in the manifest).
    package var postCID: String
    /// The envelope set's CID (`null` for public posts).
    package var envelopesCID: String?
    /// The audience the station applied.
    package var audienceMode: AudienceMode
    /// `false` for public posts; a missing key means encrypted.
    var isEncrypted: Bool
    /// The `specific` audience, else `null`.
    var audienceUIDs: [String]?
    /// Follower device rows the station saw (the station and paired devices included).
    var followersRaw: Int
    /// Envelopes written (the station's own included).
    var followersUsed: Int
    /// Posts in the manifest afterwards.
    var manifestPosts: Int

    private enum CodingKeys: String, CodingKey {
        case status, postCID = "cid", envelopesCID = "envelopes_cid", audienceMode = "audience_mode", encrypted
        case audienceUIDs = "audience_uids", followersRaw = "followers_raw", followersUsed = "followers_used"
        case manifestPosts = "manifest_posts"
    }

    /// Reads the body (counts default to 0; a missing `encrypted` means encrypted unless public).
    ///
    /// - Throws: `DecodingError` when `status` or `cid` is missing or not a string.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(String.self, forKey: .status)
        postCID = try container.decode(String.self, forKey: .postCID)
        envelopesCID = container.lenient(String.self, .envelopesCID)
        audienceMode = container.lenient(AudienceMode.self, .audienceMode) ?? .all
        isEncrypted = container.lenient(Bool.self, .encrypted) ?? (audienceMode != .public)
        audienceUIDs = container.lenientStrings(.audienceUIDs)
        followersRaw = container.lenient(Int.self, .followersRaw) ?? 0
        followersUsed = container.lenient(Int.self, .followersUsed) ?? 0
        manifestPosts = container.lenient(Int.self, .manifestPosts) ?? 0
    }
}

/// `POST /rewrap`: always HTTP 200 with `{"status":"ok","result":{…}}`; the result is either the
/// envelope sealed to the calling device or `{"error": "…"}` (for example
/// `post_cid <cid> not found`).
package struct RewrapResponse: Sendable, Hashable {
    /// The outcome.
    package enum Result: Sendable, Hashable {
        /// `{"status":"rewrap_ok","uid","device_uid","post_cid","envelope"}`.
        case rewrapped(uid: String, deviceUID: String, postCID: String, envelopeHex: String)
        /// `{"error": "…"}`.
        case failed(String)
    }

    /// `ok`.
    var status: String
    /// The outcome.
    package var result: Result

    /// Creates a response.
    init(status: String = "ok", result: Result) {
        self.status = status
        self.result = result
    }

    /// Reads the body of a `/rewrap` answer: a `result.error` string gives
    /// ``Result/failed(_:)``; otherwise the four envelope strings are required (a missing
    /// `status` reads as `ok`).
    ///
    /// - Throws: `WireFormatError` when the bytes are not JSON, `result` is not an object, or
    ///   neither an `error` string nor all four envelope strings are there.
    package static func read(_ bytes: [UInt8]) throws(WireFormatError) -> RewrapResponse {
        let document = try WireJSON.parse(bytes)
        guard let object = document.objectValue else {
            throw .typeMismatch(path: "", expected: "an object", found: document.kindName)
        }
        guard let resultValue = object["result"] else { throw .missingField(path: "result") }
        guard let inner = resultValue.objectValue else {
            throw .typeMismatch(path: "result", expected: "an object", found: resultValue.kindName)
        }
        let status = object["status"]?.stringValue ?? "ok"
        if let error = inner["error"]?.stringValue {
            return RewrapResponse(status: status, result: .failed(error))
        }
        func required(_ key: String) throws(WireFormatError) -> String {
            guard let value = inner[key] else { throw .missingField(path: "result.\(key)") }
            guard let text = value.stringValue else {
                throw .typeMismatch(path: "result.\(key)", expected: "a string", found: value.kindName)
            }
            return text
        }
        return RewrapResponse(status: status, result: .rewrapped(
            uid: try required("uid"), deviceUID: try required("device_uid"),
            postCID: try required("post_cid"), envelopeHex: try required("envelope")))
    }
}

/// `POST /post/share`:
/// `{"status":"shared","post_cid","audience_mode","audience_uids","envelopes_count"}`.
public struct ShareResponse: Sendable, Hashable, Decodable {
    /// `shared`.
    public var status: String
    /// The post.
    public var postCID: String
    /// The new audience.
    public var audienceMode: AudienceMode
    /// The `specific` audience, else `null`.
    public var audienceUIDs: [String]?
    /// Envelopes in the new set.
    public var envelopesCount: Int

    /// Creates a response.
    public init(status: String = "shared", postCID: String, audienceMode: AudienceMode, audienceUIDs: [String]?, envelopesCount: Int) {
        self.status = status
        self.postCID = postCID
        self.audienceMode = audienceMode
        self.audienceUIDs = audienceUIDs
        self.envelopesCount = envelopesCount
    }

    private enum CodingKeys: String, CodingKey {
        case status, postCID = "post_cid", audienceMode = "audience_mode", audienceUIDs = "audience_uids"
        case envelopesCount = "envelopes_count"
    }
}

/// `POST /post/delete`: `{"status":"deleted","post_cid","client","manifest_posts","unpinned":[…],
/// "gc_objects_removed"}`.
public struct DeleteResponse: Sendable, Hashable, Decodable {
    /// `deleted`.
    public var status: String
    /// The removed post.
    public var postCID: String
    /// The namespace it was removed from.
    public var client: String?
    /// Posts left in the manifest.
    public var manifestPosts: Int
    /// CIDs unpinned (the post and its envelope set).
    public var unpinned: [String]
    /// Blocks the garbage collection removed.
    public var gcObjectsRemoved: Int

    /// Creates a response.
    public init(status: String = "deleted", postCID: String, client: String?, manifestPosts: Int, unpinned: [String], gcObjectsRemoved: Int) {
        self.status = status
        self.postCID = postCID
        self.client = client
        self.manifestPosts = manifestPosts
        self.unpinned = unpinned
        self.gcObjectsRemoved = gcObjectsRemoved
    }

    private enum CodingKeys: String, CodingKey {
        case status, postCID = "post_cid", client, manifestPosts = "manifest_posts", unpinned
        case gcObjectsRemoved = "gc_objects_removed"
    }
}

/// `POST /profile/update`: `{"status":"profile_updated","profile":{…}}`.
package struct ProfileUpdateResponse: Sendable, Hashable, Decodable {
    /// `profile_updated`.
    var status: String
    /// The namespace profile after the update.
    package var profile: ClientProfile
}

/// `POST /profile/avatar`: `{"status":"avatar_updated","avatar_cid":"…"}`.
package struct AvatarUpdateResponse: Sendable, Hashable, Decodable {
    /// `avatar_updated`.
    var status: String
    /// The CID of the (public, plaintext) avatar image.
    package var avatarCID: String

    private enum CodingKeys: String, CodingKey { case status, avatarCID = "avatar_cid" }
}
