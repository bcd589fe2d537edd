import OrderedJSON

/// The station's `public.json` as it publishes it to IPNS (`GET /ipns/<ipns_name>`): its
/// protocol identity and the pointers to its manifest and social graph.
///
/// The station writes it with `json.dumps(indent=2)`; encode with
/// `JSONStyle/pythonIndented` for the same bytes. Keys the SDK does not know (older builds
/// wrote profile fields here) are ignored on reading.
public struct PublicDocument: Sendable, Hashable, Codable {
    /// Human-readable name, if set.
    public var alias: String?
    /// The station uid.
    public var uid: String
    /// ML-KEM-768 encapsulation key, hex.
    public var mlkemPublicKey: String?
    /// ML-DSA-65 public key, hex.
    public var mldsaPublicKey: String?
    /// The station's HTTPS endpoint: what endpoint recovery reads.
    public var endpoint: String?
    /// The current manifest's CID.
    public var manifestPointer: String?
    /// CID of the encrypted followers graph.
    public var followersCID: String?
    /// CID of the encrypted following graph.
    public var followingCID: String?
    /// CID of the graph decoder envelopes.
    public var followDecoderEnvelopesCID: String?
    /// The base58 libp2p peer id.
    public var ipfsPeerID: String?
    /// The base36 IPNS name.
    public var ipnsName: String?

    /// Creates a document.
    public init(
        uid: String, alias: String? = nil, mlkemPublicKey: String?, mldsaPublicKey: String?, endpoint: String? = nil,
        manifestPointer: String? = nil, followersCID: String? = nil, followingCID: String? = nil,
        followDecoderEnvelopesCID: String? = nil, ipfsPeerID: String? = nil, ipnsName: String? = nil
    ) {
        self.alias = alias
        self.uid = uid
        self.mlkemPublicKey = mlkemPublicKey
        self.mldsaPublicKey = mldsaPublicKey
        self.endpoint = endpoint
        self.manifestPointer = manifestPointer
        self.followersCID = followersCID
        self.followingCID = followingCID
        self.followDecoderEnvelopesCID = followDecoderEnvelopesCID
        self.ipfsPeerID = ipfsPeerID
        self.ipnsName = ipnsName
    }

    private enum CodingKeys: String, CodingKey {
        case alias, uid
        case mlkemPublicKey = "mlkem_public_key"
        case mldsaPublicKey = "mldsa_public_key"
        case endpoint
        case manifestPointer = "manifest_pointer"
        case followersCID = "followers_cid"
        case followingCID = "following_cid"
        case followDecoderEnvelopesCID = "follow_decoder_envelopes_cid"
        case ipfsPeerID = "ipfs_peer_id"
        case ipnsName = "ipns_name"
    }

    /// Reads the document; only `uid` is required.
    ///
    /// - Throws: `DecodingError` when the document is not an object or has no string `uid`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        uid = try container.decode(String.self, forKey: .uid)
        alias = container.lenient(String.self, .alias)
        mlkemPublicKey = container.lenient(String.self, .mlkemPublicKey)
        mldsaPublicKey = container.lenient(String.self, .mldsaPublicKey)
        endpoint = container.lenient(String.self, .endpoint)
        manifestPointer = container.lenient(String.self, .manifestPointer)
        followersCID = container.lenient(String.self, .followersCID)
        followingCID = container.lenient(String.self, .followingCID)
        followDecoderEnvelopesCID = container.lenient(String.self, .followDecoderEnvelopesCID)
        ipfsPeerID = container.lenient(String.self, .ipfsPeerID)
        ipnsName = container.lenient(String.self, .ipnsName)
    }

    /// Writes the station's key order (bootstrap order, then the IPFS identity the first publish
    /// adds), `null` for absent values.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(alias, forKey: .alias)
        try container.encode(uid, forKey: .uid)
        try container.encode(mlkemPublicKey, forKey: .mlkemPublicKey)
        try container.encode(mldsaPublicKey, forKey: .mldsaPublicKey)
        try container.encode(endpoint, forKey: .endpoint)
        try container.encode(manifestPointer, forKey: .manifestPointer)
        try container.encode(followersCID, forKey: .followersCID)
        try container.encode(followingCID, forKey: .followingCID)
        try container.encode(followDecoderEnvelopesCID, forKey: .followDecoderEnvelopesCID)
        try container.encode(ipfsPeerID, forKey: .ipfsPeerID)
        try container.encode(ipnsName, forKey: .ipnsName)
    }
}
