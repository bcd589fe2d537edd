import OrderedJSON

/// Something ``Manifest`` skipped while reading, instead of failing the whole document.
public struct ManifestIssue: Sendable, Hashable, CustomStringConvertible {
    /// The client namespace, or `nil` for the top level.
    public let client: String?
    /// The index in `posts`, when the issue is one entry.
    public let index: Int?
    /// What was wrong.
    public let reason: String
    /// The entry's `post_cid`, when the issue is one entry that has one (an entry skipped for its
    /// metadata, see ``ManifestLimits``).
    public let postCID: String?

    /// Creates an issue.
    public init(client: String?, index: Int?, reason: String, postCID: String? = nil) {
        self.client = client
        self.index = index
        self.reason = reason
        self.postCID = postCID
    }

    /// Where and what: `clients.app.posts[2]: missing field …`.
    public var description: String {
        var place = client.map { "clients.\($0)" } ?? "manifest"
        if let index { place += ".posts[\(index)]" }
        return "\(place): \(reason)"
    }
}

/// What a manifest read from an untrusted source may hold, checked while it is read
/// (``Manifest/read(_:limits:)-([UInt8],_)``), so a hostile station or gateway cannot make the
/// reader build more than these allow.
///
/// - ``maximumPosts``: the entries of every namespace's `posts` together (good or bad); the read
///   stops with `WireFormatError.limitExceeded(path:limit:)` at the first entry past it, before
///   reading the rest.
/// - ``maximumMetadataBytes`` and ``maximumMetadataDepth``: one entry's `metadata` as written in
///   the manifest (its JSON text, quotes included for sealed hex; its nesting, 1 for `{"a":1}`).
///   They are measured without building the value; an entry past either is skipped and listed in
///   ``Manifest/issues`` (with its ``ManifestIssue/postCID``), and the rest of the manifest is read.
///   A namespace's `profile` is held to the same two caps (left out, with an issue).
public struct ManifestLimits: Sendable, Hashable {
    /// The most posts in all namespaces together.
    public var maximumPosts: Int
    /// The most bytes of JSON text one post's `metadata` may take in the manifest.
    public var maximumMetadataBytes: Int
    /// The deepest one post's `metadata` may nest (a string or number is 0, `{"a":1}` 1).
    public var maximumMetadataDepth: Int
    /// The most memory, in bytes, what the reader builds may take: every entry (a fixed cost
    /// and the text it keeps: its CIDs, its metadata as written) and every JSON value it builds
    /// (a profile, an audience list), charged as read. Past it the read stops with
    /// `WireFormatError.memoryLimitExceeded(limit:)`. Public posts' metadata is kept as its
    /// JSON text, never built into a tree while the manifest is read.
    public var maximumMemory: Int
    /// The longest `post_cid` or `envelopes_cid` an entry may have, in bytes: an entry with a
    /// longer one is skipped and listed in ``Manifest/issues`` (a CIDv1 of a SHA-256 digest is 59
    /// characters in base32).
    public var maximumCIDBytes: Int

    /// The default of ``maximumMetadataBytes``: 64 KiB.
    public static let defaultMaximumMetadataBytes = 64 * 1024
    /// The default of ``maximumMetadataDepth``: 32.
    public static let defaultMaximumMetadataDepth = 32
    /// The default of ``maximumMemory``: 128 MiB, three times what a full manifest of 10,000
    /// posts at 4 KiB each needs.
    public static let defaultMaximumMemory = 128 << 20
    /// The default of ``maximumCIDBytes``: 256.
    public static let defaultMaximumCIDBytes = 256

    /// Creates limits (each at least 1, except a depth of 0, which admits only scalar metadata).
    public init(
        maximumPosts: Int, maximumMetadataBytes: Int = defaultMaximumMetadataBytes,
        maximumMetadataDepth: Int = defaultMaximumMetadataDepth, maximumMemory: Int = defaultMaximumMemory,
        maximumCIDBytes: Int = defaultMaximumCIDBytes
    ) {
        self.maximumPosts = max(1, maximumPosts)
        self.maximumMetadataBytes = max(1, maximumMetadataBytes)
        self.maximumMetadataDepth = max(0, maximumMetadataDepth)
        self.maximumMemory = max(1, maximumMemory)
        self.maximumCIDBytes = max(1, maximumCIDBytes)
    }

    /// No limits beyond the JSON parser's own nesting cap (`WireJSON.maximumDepth`): for
    /// manifests one trusts, such as a station's own.
    public static let unlimited = ManifestLimits(unlimited: ())

    private init(unlimited: Void) {
        maximumPosts = .max
        maximumMetadataBytes = .max
        maximumMetadataDepth = .max
        maximumMemory = .max
        maximumCIDBytes = .max
    }

    /// Whether metadata is measured before it is read.
    var measuresMetadata: Bool { maximumMetadataBytes != .max || maximumMetadataDepth != .max }
}

/// The per-client profile the station keeps in the manifest (`clients.<client>.profile`,
/// written by `/profile/update` and `/profile/avatar` under `cipherframe`).
///
/// The fields are kept as an ordered JSON object, so the profile writes back byte for byte; the
/// properties read the known fields tolerantly (a value of another type reads as `nil`).
public struct ClientProfile: Sendable, Hashable, Codable {
    /// All fields, in the station's order.
    public var fields: JSONObject

    /// Creates a profile from its fields.
    public init(fields: JSONObject = [:]) { self.fields = fields }

    /// `display_name`.
    public var displayName: String? { fields["display_name"]?.stringValue }
    /// `username`.
    public var username: String? { fields["username"]?.stringValue }
    /// `bio`.
    public var bio: String? { fields["bio"]?.stringValue }
    /// `link`.
    public var link: String? { fields["link"]?.stringValue }
    /// `avatar_cid`: the CID of the public (plaintext) avatar image.
    public var avatarCID: String? { fields["avatar_cid"]?.stringValue }
    /// `account_privacy`: `public` or `private`.
    public var accountPrivacy: String? { fields["account_privacy"]?.stringValue }
    /// `default_audience_mode`.
    public var defaultAudienceMode: AudienceMode? { fields["default_audience_mode"]?.stringValue.map(AudienceMode.init(wireValue:)) }
    /// `updated_at` (Unix seconds).
    public var updatedAt: Int? { fields["updated_at"]?.intValue }

    /// Merges `update` the way the station does (Python `dict.update`: existing keys keep their
    /// place, new keys go to the end).
    public mutating func merge(_ update: JSONObject) {
        for (key, value) in update { fields[key] = value }
    }

    /// Decodes an object.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not an object.
    public init(from decoder: any Decoder) throws {
        fields = try JSONObject(from: decoder)
    }

    /// Encodes the fields in order.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        try fields.encode(to: encoder)
    }
}

/// One client's namespace in the manifest: its posts and optional profile.
public struct ClientNamespace: Sendable, Hashable, Encodable {
    /// The posts, oldest first (the station appends).
    public var posts: [PostEntry]
    /// The client's profile, if it has one.
    public var profile: ClientProfile?
    /// Entries and fields skipped while reading (never written).
    public internal(set) var issues: [ManifestIssue] = []

    /// Creates a namespace.
    public init(posts: [PostEntry] = [], profile: ClientProfile? = nil) {
        self.posts = posts
        self.profile = profile
    }

    private enum CodingKeys: String, CodingKey {
        case posts, profile
    }

    /// Writes `posts`, then `profile` when present (the station's order).
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(posts, forKey: .posts)
        try container.encodeIfPresent(profile, forKey: .profile)
    }
}

/// The station's manifest (`GET /ipfs/<manifest_cid>`): every client's posts.
///
/// `{"clients": {"<client>": {"posts": [...], "profile": {...}}}}`, compact JSON in insertion
/// order. The legacy flat form `{"client": "...", "posts": [...]}` reads as one namespace
/// (``wasLegacyFlat``). Read with ``read(_:limits:)-([UInt8],_)``, which never fails on one
/// bad entry or namespace: those are skipped and listed in ``issues``. Written with
/// `WireJSON/encode(_:style:dates:)` a manifest read from the station's bytes gives them back
/// exactly, hence its CID.
public struct Manifest: Sendable, Hashable, Encodable {
    /// The client namespaces, in the station's order.
    public var clients: OrderedMap<ClientNamespace>
    /// Whether the document was the legacy flat form.
    public internal(set) var wasLegacyFlat = false
    var topLevelIssues: [ManifestIssue] = []

    /// Creates a manifest.
    public init(clients: OrderedMap<ClientNamespace> = [:]) {
        self.clients = clients
    }

    /// Everything skipped while reading, in document order.
    public var issues: [ManifestIssue] {
        topLevelIssues + clients.values.flatMap(\.issues)
    }

    /// The namespace name the station uses for a `client` form field: trimmed, and `default`
    /// when missing or blank.
    public static func namespaceName(for client: String?) -> String {
        let trimmed = pythonStrip(client ?? "")
        return trimmed.isEmpty ? "default" : trimmed
    }

    /// The posts of one namespace (empty when it does not exist). `client` is normalized with
    /// ``namespaceName(for:)`` as the station normalizes it on write, so `" notes "` reads `notes`.
    public func posts(in client: String) -> [PostEntry] { clients[Self.namespaceName(for: client)]?.posts ?? [] }

    /// Every post with its namespace, in manifest order.
    public var allPosts: [(client: String, entry: PostEntry)] {
        clients.flatMap { client, namespace in namespace.posts.map { (client, $0) } }
    }

    /// The number of posts in all namespaces.
    public var postCount: Int { clients.values.reduce(0) { $0 + $1.posts.count } }

    /// Posts per namespace, as `/profile`'s `manifest_posts_by_client` reports them.
    public var postCountsByClient: OrderedMap<Int> { clients.mapValues(\.posts.count) }

    /// The first entry with `postCID` and its namespace.
    public func entry(forPostCID postCID: String) -> (client: String, entry: PostEntry)? {
        allPosts.first { $0.entry.postCID == postCID }
    }

    private enum LegacyKeys: String, CodingKey {
        case clients, client, posts
    }

    /// Writes `{"clients": {...}}` (always the multi-client form).
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: LegacyKeys.self)
        try container.encode(clients, forKey: .clients)
    }
}

/// Python's `str.strip()`: removes leading and trailing characters for which `isspace()` holds
/// (Unicode white space plus the separators U+001C…U+001F).
func pythonStrip(_ text: String) -> String {
    func isSpace(_ character: Character) -> Bool {
        character.isWhitespace || character.unicodeScalars.allSatisfy { (0x1C...0x1F).contains($0.value) }
    }
    guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else {
        return ""
    }
    return String(text[first...last])
}
