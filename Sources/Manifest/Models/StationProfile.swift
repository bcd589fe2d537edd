import OrderedJSON

/// `GET /profile` (no auth): the station's identity, current manifest pointer and counts.
///
/// This is *not* `public.json`: it has `manifest_cid` (the docs' `manifest_pointer`, read as a
/// fallback), no alias or graph CIDs, and adds the count fields. `manifest_cid`, `ipfs_peer_id`
/// and `ipns_name` are `null` on a fresh station. Written in the station's exact key order.
public struct StationProfile: Sendable, Hashable, Codable {
    /// The station uid (use it as `x-cipher-uid`).
    public var uid: String
    /// ML-KEM-768 encapsulation key, hex (2368 characters).
    public var mlkemPublicKey: String?
    /// ML-DSA-65 public key, hex (3904 characters).
    public var mldsaPublicKey: String?
    /// The station's advertised HTTPS endpoint.
    public var endpoint: String?
    /// The base58 libp2p peer id (`12D3KooW…`), after the first IPNS publish.
    public var ipfsPeerID: String?
    /// The base36 IPNS name (`k51…`), after the first IPNS publish.
    public var ipnsName: String?
    /// The current manifest's CID.
    public var manifestCID: String?
    /// Approved followers (distinct uids, the station excluded).
    public var followersCount: Int
    /// Stations this one follows.
    public var followingCount: Int
    /// Posts in all namespaces.
    public var manifestPosts: Int
    /// The same total (the station sends both).
    public var manifestPostsTotal: Int
    /// Posts per namespace, in manifest order.
    public var manifestPostsByClient: OrderedMap<Int>

    /// Creates a profile.
    public init(
        uid: String, mlkemPublicKey: String?, mldsaPublicKey: String?, endpoint: String? = nil,
        ipfsPeerID: String? = nil, ipnsName: String? = nil, manifestCID: String? = nil,
        followersCount: Int = 0, followingCount: Int = 0, manifestPostsByClient: OrderedMap<Int> = [:]
    ) {
        self.uid = uid
        self.mlkemPublicKey = mlkemPublicKey
        self.mldsaPublicKey = mldsaPublicKey
        self.endpoint = endpoint
        self.ipfsPeerID = ipfsPeerID
        self.ipnsName = ipnsName
        self.manifestCID = manifestCID
        self.followersCount = followersCount
        self.followingCount = followingCount
        let total = manifestPostsByClient.values.reduce(0, +)
        manifestPosts = total
        manifestPostsTotal = total
        self.manifestPostsByClient = manifestPostsByClient
    }

    private enum CodingKeys: String, CodingKey {
        case uid
        case mlkemPublicKey = "mlkem_public_key"
        case mldsaPublicKey = "mldsa_public_key"
        case endpoint
        case ipfsPeerID = "ipfs_peer_id"
        case ipnsName = "ipns_name"
        case manifestCID = "manifest_cid"
        case manifestPointer = "manifest_pointer"
        case followersCount = "followers_count"
        case followingCount = "following_count"
        case manifestPosts = "manifest_posts"
        case manifestPostsTotal = "manifest_posts_total"
        case manifestPostsByClient = "manifest_posts_by_client"
    }

    /// Reads a profile; everything but `uid` is optional (missing counts read as 0, a missing
    /// `manifest_cid` falls back to `manifest_pointer`).
    ///
    /// - Throws: `DecodingError` when the body is not an object or has no string `uid`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uid = try container.decode(String.self, forKey: .uid)
        mlkemPublicKey = container.lenient(String.self, .mlkemPublicKey)
        mldsaPublicKey = container.lenient(String.self, .mldsaPublicKey)
        endpoint = container.lenient(String.self, .endpoint)
        ipfsPeerID = container.lenient(String.self, .ipfsPeerID)
        ipnsName = container.lenient(String.self, .ipnsName)
        manifestCID = container.lenient(String.self, .manifestCID) ?? container.lenient(String.self, .manifestPointer)
        followersCount = container.lenient(Int.self, .followersCount) ?? 0
        followingCount = container.lenient(Int.self, .followingCount) ?? 0
        manifestPostsByClient = container.lenient(OrderedMap<JSONValue>.self, .manifestPostsByClient)?
            .reduce(into: OrderedMap<Int>()) { counts, member in
                if let count = member.value.intValue { counts[member.key] = count }
            } ?? [:]
        let total = container.lenient(Int.self, .manifestPosts)
        manifestPosts = total ?? manifestPostsByClient.values.reduce(0, +)
        manifestPostsTotal = container.lenient(Int.self, .manifestPostsTotal) ?? manifestPosts
    }

    /// Writes every key in the station's order, `null` for absent strings.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uid, forKey: .uid)
        try container.encode(mlkemPublicKey, forKey: .mlkemPublicKey)
        try container.encode(mldsaPublicKey, forKey: .mldsaPublicKey)
        try container.encode(endpoint, forKey: .endpoint)
        try container.encode(ipfsPeerID, forKey: .ipfsPeerID)
        try container.encode(ipnsName, forKey: .ipnsName)
        try container.encode(manifestCID, forKey: .manifestCID)
        try container.encode(followersCount, forKey: .followersCount)
        try container.encode(followingCount, forKey: .followingCount)
        try container.encode(manifestPosts, forKey: .manifestPosts)
        try container.encode(manifestPostsTotal, forKey: .manifestPostsTotal)
        try container.encode(manifestPostsByClient, forKey: .manifestPostsByClient)
    }
}
