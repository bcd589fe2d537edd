import OrderedJSON

/// The summary of re-sealing every `all` post after a follower change (`rewrap` in
/// `/followers/approve` and `/followers/remove`), or `{"error": "…"}` when it failed.
public struct RewrapManifestSummary: Sendable, Hashable, Decodable {
    /// `rewrap_manifest_ok`, or `nil` when the summary is an error.
    public var status: String?
    /// Approved followers with a usable key.
    public var followersAllowed: Int?
    /// Posts looked at.
    public var postsTotal: Int?
    /// Posts given a new envelope set.
    public var postsUpdated: Int?
    /// Posts left as they were.
    public var postsSkipped: Int?
    /// The manifest CID afterwards.
    public var manifestCID: String?
    /// Why posts were skipped, by reason.
    public var skipCounts: OrderedMap<Int>?
    /// The failure text, when the rewrap failed.
    public var error: String?

    /// Creates a summary.
    public init(
        status: String?, followersAllowed: Int?, postsTotal: Int?, postsUpdated: Int?, postsSkipped: Int?,
        manifestCID: String?, skipCounts: OrderedMap<Int>?, error: String? = nil
    ) {
        self.status = status
        self.followersAllowed = followersAllowed
        self.postsTotal = postsTotal
        self.postsUpdated = postsUpdated
        self.postsSkipped = postsSkipped
        self.manifestCID = manifestCID
        self.skipCounts = skipCounts
        self.error = error
    }

    private enum CodingKeys: String, CodingKey {
        case status, followersAllowed = "followers_allowed", postsTotal = "posts_total"
        case postsUpdated = "posts_updated", postsSkipped = "posts_skipped", manifestCID = "manifest_cid"
        case skipCounts = "skip_counts", error
    }

    /// Reads the summary; every field is optional.
    ///
    /// - Throws: `DecodingError.typeMismatch` when it is not an object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = container.lenient(String.self, .status)
        followersAllowed = container.lenient(Int.self, .followersAllowed)
        postsTotal = container.lenient(Int.self, .postsTotal)
        postsUpdated = container.lenient(Int.self, .postsUpdated)
        postsSkipped = container.lenient(Int.self, .postsSkipped)
        manifestCID = container.lenient(String.self, .manifestCID)
        skipCounts = container.lenient(OrderedMap<Int>.self, .skipCounts)
        error = container.lenient(String.self, .error)
    }
}

/// One approved follower in `GET /followers` (one entry per uid).
public struct FollowerSummary: Sendable, Hashable, Decodable {
    /// The follower's uid.
    public var uid: String
    /// Its alias, if any.
    public var alias: String?
    /// Its station endpoint, if known.
    public var endpoint: String?
    /// Its IPFS peer id, if known.
    public var ipnsID: String?

    /// Creates an entry.
    public init(uid: String, alias: String? = nil, endpoint: String? = nil, ipnsID: String? = nil) {
        self.uid = uid
        self.alias = alias
        self.endpoint = endpoint
        self.ipnsID = ipnsID
    }

    private enum CodingKeys: String, CodingKey { case uid, alias, endpoint, ipnsID = "ipns_id" }
}

/// `GET /followers`: `{"status":"ok","followers":[…]}`.
package struct FollowersResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    var status: String
    /// Approved followers, sorted by uid, the station excluded.
    package var followers: [FollowerSummary]
}

/// A follower device row (`GET /followers/pending`).
public struct FollowerDevice: Sendable, Hashable, Decodable {
    /// The follower's uid.
    public var uid: String
    /// The device.
    public var deviceUID: String
    /// The device's ML-KEM-768 key, hex.
    public var mlkemPublicKey: String?
    /// The device's ML-DSA-65 key, hex (absent for read-only followers).
    public var mldsaPublicKey: String?
    /// Alias.
    public var alias: String?
    /// `Pending` or `Allowed`.
    public var allowed: String
    /// The follower's endpoint.
    public var endpoint: String?
    /// The follower's IPFS peer id.
    public var ipnsID: String?

    /// Creates a row.
    public init(
        uid: String, deviceUID: String, mlkemPublicKey: String?, mldsaPublicKey: String?, alias: String? = nil,
        allowed: String, endpoint: String? = nil, ipnsID: String? = nil
    ) {
        self.uid = uid
        self.deviceUID = deviceUID
        self.mlkemPublicKey = mlkemPublicKey
        self.mldsaPublicKey = mldsaPublicKey
        self.alias = alias
        self.allowed = allowed
        self.endpoint = endpoint
        self.ipnsID = ipnsID
    }

    private enum CodingKeys: String, CodingKey {
        case uid, deviceUID = "device_uid", mlkemPublicKey = "mlkem_public_key", mldsaPublicKey = "mldsa_public_key"
        case alias, allowed, endpoint, ipnsID = "ipns_id"
    }
}

/// `GET /followers/pending`: `{"status":"ok","pending":[…]}`.
package struct PendingFollowersResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    var status: String
    /// Devices awaiting approval.
    package var pending: [FollowerDevice]
}

/// `POST /followers/approve` and `POST /followers/remove`. Their `updated_graph` (the graph CIDs
/// republished) is not read: `public.json` carries the same CIDs.
public struct FollowerChangeResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    public var status: String
    /// `approve_follower` or `remove_follower`.
    public var action: String
    /// The follower.
    public var uid: String
    /// The one device approved or removed, or `null` for all of them.
    public var deviceUID: String?
    /// Rows approved (`devices_approved`, approve only).
    public var devicesApproved: Int?
    /// Rows removed (`removed`, remove only).
    public var removed: Int?
    /// Whether a removed row was approved (`removed_allowed`, remove only).
    public var removedAllowed: Bool?
    /// The rewrap of `all` posts, when one ran.
    public var rewrap: RewrapManifestSummary?

    private enum CodingKeys: String, CodingKey {
        case status, action, uid, deviceUID = "device_uid", devicesApproved = "devices_approved", removed
        case removedAllowed = "removed_allowed", rewrap
    }

    /// Reads either response; fields of the other action are absent.
    ///
    /// - Throws: `DecodingError` when `status`, `action` or `uid` is missing.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(String.self, forKey: .status)
        action = try container.decode(String.self, forKey: .action)
        uid = try container.decode(String.self, forKey: .uid)
        deviceUID = container.lenient(String.self, .deviceUID)
        devicesApproved = container.lenient(Int.self, .devicesApproved)
        removed = container.lenient(Int.self, .removed)
        removedAllowed = container.lenient(Bool.self, .removedAllowed)
        rewrap = container.lenient(RewrapManifestSummary.self, .rewrap)
    }
}

/// `POST /follow` and `POST /unfollow`: `{"status":"ok","action":"follow"|"unfollow","target",
/// "updated_graph","updated_profile"}` (`updated_profile` has the shape of `GET /profile`;
/// `updated_graph` is not read, `public.json` carries the same CIDs).
public struct FollowResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    public var status: String
    /// `follow` or `unfollow`.
    public var action: String
    /// The station followed or unfollowed.
    public var target: FollowedStation
    /// The station's profile afterwards.
    public var updatedProfile: StationProfile?

    private enum CodingKeys: String, CodingKey {
        case status, action, target, updatedProfile = "updated_profile"
    }
}

/// A station this one follows: a `GET /following` entry, the `target` of a `/follow` or
/// `/unfollow` response, and what `StationClient.follow(_:)` is given.
public struct FollowedStation: Sendable, Hashable, Decodable {
    /// Its uid.
    public var uid: String
    /// Its ML-KEM-768 key, hex, as sent (the station does not check it).
    public var mlkemPublicKey: String?
    /// Its ML-DSA-65 key, hex.
    public var mldsaPublicKey: String?
    /// Its endpoint.
    public var endpoint: String?
    /// Its IPFS peer id.
    public var ipnsID: String?

    /// Creates an entry.
    public init(uid: String, mlkemPublicKey: String? = nil, mldsaPublicKey: String? = nil, endpoint: String? = nil, ipnsID: String? = nil) {
        self.uid = uid
        self.mlkemPublicKey = mlkemPublicKey
        self.mldsaPublicKey = mldsaPublicKey
        self.endpoint = endpoint
        self.ipnsID = ipnsID
    }

    /// Creates an entry, with the arguments in the order this initializer had before
    /// `FollowTarget` and `FollowedStation` became one type.
    @available(*, deprecated, message: "list the arguments as init(uid:mlkemPublicKey:mldsaPublicKey:endpoint:ipnsID:) does")
    public init(uid: String, endpoint: String?, ipnsID: String?, mlkemPublicKey: String?, mldsaPublicKey: String?) {
        self.init(uid: uid, mlkemPublicKey: mlkemPublicKey, mldsaPublicKey: mldsaPublicKey, endpoint: endpoint, ipnsID: ipnsID)
    }

    private enum CodingKeys: String, CodingKey {
        case uid, mlkemPublicKey = "mlkem_public_key", mldsaPublicKey = "mldsa_public_key", endpoint, ipnsID = "ipns_id"
    }
}

/// The station a `/follow` or `/unfollow` response names: the record `GET /following` lists.
@available(*, deprecated, renamed: "FollowedStation")
public typealias FollowTarget = FollowedStation

/// `GET /following`: `{"status":"ok","following":[…]}`.
package struct FollowingResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    var status: String
    /// Followed stations, sorted by uid.
    package var following: [FollowedStation]
}
