import PQCrypto
import OrderedJSON
import ContentAddressing

/// A post's `metadata` as the manifest carries it: sealed hex for encrypted posts, JSON text for
/// public ones.
///
/// Public metadata is kept as the JSON text the manifest holds (without insignificant blanks),
/// not as a tree: the manifest reader measures it without building it, a listing keeps the text,
/// and it is parsed only when asked for (``jsonValue``, ``decodePlaintext(as:)``), within a memory
/// budget. A struct with static members rather than an enum, so that a new form never breaks an
/// app's `switch`.
public struct PostMetadata: Sendable, Hashable, Codable {
    private enum Storage: Sendable, Hashable {
        case sealed(String)
        case json([UInt8])
    }

    private let storage: Storage

    private init(_ storage: Storage) { self.storage = storage }

    /// Encrypted posts: the hex of SecretBox(post key, metadata JSON), exactly as the client sent
    /// it (the station does not validate it).
    public static func sealed(hex: String) -> PostMetadata { PostMetadata(.sealed(hex)) }

    /// Public posts: the plaintext JSON object, in the order the client wrote it.
    public static func plaintext(_ object: JSONObject) -> PostMetadata { PostMetadata(.json(WireJSON.serialize(.object(object)))) }

    /// Reads a JSON value: a string is ``sealed(hex:)``, anything else plaintext JSON (an
    /// object for every public post a station writes).
    public init(jsonValue: JSONValue) {
        if case let .string(hex) = jsonValue {
            storage = .sealed(hex)
        } else {
            storage = .json(WireJSON.serialize(jsonValue))
        }
    }

    /// Plaintext metadata from its JSON text, already checked as JSON (a value, not a string)
    /// by the reader that measured it; kept without insignificant blanks.
    init(checkedJSONText text: UnsafeBufferPointer<UInt8>) {
        storage = .json(JSONParser.compacted(text))
    }

    /// The hex of sealed (encrypted-post) metadata, or `nil` for plaintext metadata.
    public var sealedHex: String? {
        if case let .sealed(hex) = storage { return hex }
        return nil
    }

    /// The JSON text of plaintext (public-post) metadata, compact, or `nil` for sealed metadata.
    public var plaintextJSON: [UInt8]? {
        if case let .json(text) = storage { return text }
        return nil
    }

    /// The metadata as JSON: sealed metadata as its hex string, plaintext metadata parsed
    /// (within `WireJSON`'s per-document memory limit).
    ///
    /// - Throws: `WireFormatError.memoryLimitExceeded(limit:)` when the plaintext would take more
    ///   memory than that limit as a tree.
    public var jsonValue: JSONValue {
        get throws(WireFormatError) {
            switch storage {
            case let .sealed(hex): .string(hex)
            case let .json(text): try WireJSON.parse(text)
            }
        }
    }

    /// The sealed bytes of encrypted metadata (to open with the post key).
    ///
    /// - Throws: `WireFormatError.invalidValue(path:reason:)` when the hex does not decode, or
    ///   when the metadata is plaintext rather than sealed.
    public func sealedBytes() throws(WireFormatError) -> [UInt8] {
        guard case let .sealed(hex) = storage else {
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
    /// - Throws: `WireFormatError` when the metadata is sealed, does not fit `type`, or would
    ///   take more memory than `WireJSON`'s per-document limit as a tree.
    public func decodePlaintext<T: Decodable>(as type: T.Type) throws(WireFormatError) -> T {
        guard case let .json(text) = storage else {
            throw .invalidValue(path: "metadata", reason: "metadata is sealed; open it with the post key first")
        }
        if T.self == DriveFileMetadata.self, let drive = try DriveFileMetadata.read(jsonBytes: text) as? T { return drive }
        return try WireJSON.decode(type, from: text)
    }

    /// Decodes any JSON value.
    ///
    /// - Throws: `DecodingError` when the decoder holds no JSON value.
    public init(from decoder: any Decoder) throws {
        self.init(jsonValue: try JSONValue(from: decoder))
    }

    /// Encodes the JSON value.
    ///
    /// - Throws: whatever the encoder throws, or `WireFormatError` as ``jsonValue``.
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
