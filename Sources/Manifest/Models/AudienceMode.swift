/// Who may read a post: the station's `audience_mode`.
///
/// Reading never fails on this field: the legacy `all_followers` reads as ``all``, and any other
/// value is kept as ``unknown(_:)`` so the rest of the manifest still reads.
public enum AudienceMode: Sendable, Hashable, Codable, CustomStringConvertible {
    /// `self`: only the owner (the station's own envelope).
    case selfOnly
    /// `specific`: the owner and the followers in `audience_uids`.
    case specific
    /// `all`: the owner and every approved follower (the station's default).
    case all
    /// `public`: plaintext on IPFS, readable by anyone, forever; no envelopes.
    case `public`
    /// A value this SDK does not know, kept verbatim.
    case unknown(String)

    /// Reads a wire value (`all_followers` → ``all``).
    public init(wireValue: String) {
        switch wireValue {
        case "self": self = .selfOnly
        case "specific": self = .specific
        case "all", "all_followers": self = .all
        case "public": self = .public
        default: self = .unknown(wireValue)
        }
    }

    /// The value the station writes (`self`, `specific`, `all`, `public`, or the unknown text).
    public var wireValue: String {
        switch self {
        case .selfOnly: "self"
        case .specific: "specific"
        case .all: "all"
        case .public: "public"
        case let .unknown(text): text
        }
    }

    /// The wire value.
    public var description: String { wireValue }

    /// Decodes a string (`all_followers` → ``all``; other strings → ``unknown(_:)``).
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not a string.
    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes ``wireValue``.
    ///
    /// - Throws: whatever the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireValue)
    }
}
