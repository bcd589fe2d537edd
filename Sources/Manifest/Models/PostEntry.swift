import ClassicalCrypto
import PQCrypto
import OrderedJSON
import ContentAddressing

/// A post's `metadata` as the manifest carries it.
public enum PostMetadata: Sendable, Hashable, Codable {
    /// Encrypted posts: the hex of SecretBox(post key, metadata JSON), exactly as the client sent
    /// it (the station does not validate it).
    case sealed(hex: String)
    /// Public posts: the plaintext JSON object, in the order the client wrote it.
    case plaintext(JSONObject)
    /// Any other JSON value (not written by current stations), kept so nothing is lost.
    case other(JSONValue)

    /// The metadata as JSON.
    public var jsonValue: JSONValue {
        switch self {
        case let .sealed(hex): .string(hex)
        case let .plaintext(object): .object(object)
        case let .other(value): value
        }
    }

    /// Reads a JSON value: a string is ``sealed(hex:)``, an object ``plaintext(_:)``.
    public init(jsonValue: JSONValue) {
        switch jsonValue {
        case let .string(hex): self = .sealed(hex: hex)
        case let .object(object): self = .plaintext(object)
        default: self = .other(jsonValue)
        }
    }

    /// The sealed bytes of encrypted metadata (to open with the post key).
    ///
    /// - Throws: `WireFormatError.invalidValue(path:reason:)` when the hex does not decode, or
    ///   when the metadata is plaintext rather than sealed.
    public func sealedBytes() throws(WireFormatError) -> [UInt8] {
        guard case let .sealed(hex) = self else {
            throw .invalidValue(path: "metadata", reason: "metadata is plaintext, not sealed hex")
        }
        do {
            return try Hex.decode(hex)
        } catch {
            throw .invalidValue(path: "metadata", reason: error.description)
        }
    }

    /// Decodes plaintext (public-post) metadata as an app's own type, e.g. ``DriveFileMetadata``.
    ///
    /// - Throws: `WireFormatError` when the metadata is sealed or does not fit `type`.
    public func decodePlaintext<T: Decodable>(as type: T.Type) throws(WireFormatError) -> T {
        guard case let .plaintext(object) = self else {
            throw .invalidValue(path: "metadata", reason: "metadata is sealed; open it with the post key first")
        }
        return try WireJSON.decode(type, from: .object(object))
    }

    /// Decodes any JSON value.
    ///
    /// - Throws: `DecodingError` when the decoder holds no JSON value.
    public init(from decoder: any Decoder) throws {
        self.init(jsonValue: try JSONValue(from: decoder))
    }

    /// Encodes the JSON value.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}

/// One post in a client namespace of the manifest (`clients.<client>.posts[]`).
///
/// Entries are read with their manifest (``Manifest/read(_:limits:)-([UInt8],_)``), tolerantly: the legacy `cid` reads as `post_cid`; `all_followers` as ``AudienceMode/all``;
/// a missing `audience_mode` as `all` (the station's default); a missing `encrypted` key means
/// encrypted, except on a `public` entry; optional fields of the wrong type read as absent.
/// Writing follows the station: encrypted entries have no `encrypted` key; see ``encode(to:)``.
public struct PostEntry: Sendable, Hashable, Encodable {
    /// The CID of the post's bytes (SecretBox ciphertext, or plaintext for public posts).
    public var postCID: String
    /// Who may read it.
    public var audienceMode: AudienceMode
    /// Whether the bytes are encrypted (`false` only for public posts).
    public var isEncrypted: Bool
    /// The CID of the post's `EnvelopeSet` (`null` for public posts).
    public var envelopesCID: String?
    /// How many envelopes the set holds (informational; `0` for public posts).
    public var envelopesCount: Int?
    /// When the station added the entry (Unix seconds). Older entries may lack it.
    public var createdAt: Int?
    /// The readers of a `specific` post (sorted, deduplicated by the station).
    public var audienceUIDs: [String]?
    /// The metadata, sealed or plaintext.
    public var metadata: PostMetadata?

    /// Creates an entry with every field given.
    public init(
        postCID: String, audienceMode: AudienceMode, isEncrypted: Bool, envelopesCID: String?,
        envelopesCount: Int?, createdAt: Int?, audienceUIDs: [String]? = nil, metadata: PostMetadata? = nil
    ) {
        self.postCID = postCID
        self.audienceMode = audienceMode
        self.isEncrypted = isEncrypted
        self.envelopesCID = envelopesCID
        self.envelopesCount = envelopesCount
        self.createdAt = createdAt
        self.audienceUIDs = audienceUIDs
        self.metadata = metadata
    }

    /// An encrypted entry as the station writes it for `POST /post`.
    package static func encrypted(
        postCID: String, audienceMode: AudienceMode, envelopesCID: String, envelopesCount: Int, createdAt: Int,
        audienceUIDs: [String]? = nil, sealedMetadataHex: String? = nil
    ) -> PostEntry {
        PostEntry(postCID: postCID, audienceMode: audienceMode, isEncrypted: true, envelopesCID: envelopesCID,
                  envelopesCount: envelopesCount, createdAt: createdAt, audienceUIDs: audienceUIDs,
                  metadata: sealedMetadataHex.map { .sealed(hex: $0) })
    }

    /// A public (plaintext, world-readable) entry as the station writes it.
    package static func publicPost(postCID: String, createdAt: Int, metadata: JSONObject? = nil) -> PostEntry {
        PostEntry(postCID: postCID, audienceMode: .public, isEncrypted: false, envelopesCID: nil,
                  envelopesCount: 0, createdAt: createdAt, metadata: metadata.map { .plaintext($0) })
    }

    enum CodingKeys: String, CodingKey {
        case postCID = "post_cid"
        case legacyCID = "cid"
        case audienceMode = "audience_mode"
        case encrypted
        case envelopesCID = "envelopes_cid"
        case envelopesCount = "envelopes_count"
        case createdAt = "created_at"
        case audienceUIDs = "audience_uids"
        case metadata
    }

    /// Writes the entry in the station's key order. Encrypted: `post_cid, audience_mode,
    /// envelopes_cid, envelopes_count, created_at, [audience_uids], [metadata]` (no `encrypted`
    /// key). Public: `post_cid, audience_mode, encrypted:false, envelopes_cid, envelopes_count,
    /// created_at, [audience_uids], [metadata]`. `envelopes_cid` is always written (`null` when
    /// absent); absent counts and times are left out.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(postCID, forKey: .postCID)
        try container.encode(audienceMode, forKey: .audienceMode)
        // The station writes `encrypted:false` on public entries and no key on encrypted ones;
        // an (irregular) encrypted entry marked public keeps an explicit `true` so it reads back.
        if !isEncrypted || audienceMode == .public { try container.encode(isEncrypted, forKey: .encrypted) }
        try container.encode(envelopesCID, forKey: .envelopesCID)
        try container.encodeIfPresent(envelopesCount, forKey: .envelopesCount)
        try container.encodeIfPresent(createdAt, forKey: .createdAt)
        try container.encodeIfPresent(audienceUIDs, forKey: .audienceUIDs)
        try container.encodeIfPresent(metadata, forKey: .metadata)
    }

    /// ``postCID`` parsed as a CID.
    ///
    /// - Throws: `CIDError` when the station stored something that is not a CID.
    public func postContentID() throws(CIDError) -> CID { try CID(postCID) }
}
