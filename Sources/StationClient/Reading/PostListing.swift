import Foundation
import Manifest
import OrderedJSON
import ContentAddressing

/// One post of a namespace, decrypted.
public struct ListedPost<Metadata: Sendable>: Sendable {
    /// The CID of the post's bytes.
    public var postCID: String
    /// The CID of its envelope set (`nil` for public posts).
    public var envelopesCID: String?
    /// Who may read it.
    public var audienceMode: AudienceMode
    /// The followers of a `.specific` post (the manifest entry's `audience_uids`), or `nil`: for
    /// the other modes, and in the offline view (``PostListing/isOffline``), which does not keep them.
    public var audienceUIDs: [String]?
    /// The audience in publishing's terms (``Audience``): ``Audience/allFollowers`` for `.all`,
    /// ``Audience/specific(_:)`` with ``audienceUIDs``; `nil` for a public post or a mode this SDK
    /// does not know. Publish to it again with `reshare(postCID:audience:)`.
    public var audience: Audience? { Audience(mode: audienceMode, uids: audienceUIDs) }
    /// When the station added it (Unix seconds), if recorded.
    public var createdAt: Int?
    /// Whether the post is public (plaintext, world-readable).
    public var isPublic: Bool
    /// The metadata decoded as the app's type, or `nil` when the post has none.
    public var metadata: Metadata?
    /// The metadata as raw JSON, or `nil` when the post has none.
    ///
    /// A listing read as a type of its own (`DriveFileMetadata`, say) keeps the decrypted text
    /// and parses it here, on each read of this property: most apps never look at it, and
    /// building every post's JSON tree took most of a large listing's time.
    public var rawMetadata: JSONValue? {
        get {
            switch rawMetadataSource {
            case .value(let value)?: value
            case .text(let text)?: try? WireJSON.parse(text)
            case nil: nil
            }
        }
        set { rawMetadataSource = newValue.map { .value($0) } }
    }

    /// Where ``rawMetadata`` comes from.
    var rawMetadataSource: RawPostMetadata?

    init(
        postCID: String, envelopesCID: String?, audienceMode: AudienceMode, createdAt: Int?, isPublic: Bool,
        metadata: Metadata?, rawMetadata: JSONValue?
    ) {
        self.init(postCID: postCID, envelopesCID: envelopesCID, audienceMode: audienceMode, createdAt: createdAt,
                  isPublic: isPublic, metadata: metadata, rawMetadataSource: rawMetadata.map { .value($0) })
    }

    init(
        postCID: String, envelopesCID: String?, audienceMode: AudienceMode, createdAt: Int?, isPublic: Bool,
        metadata: Metadata?, rawMetadataSource: RawPostMetadata?
    ) {
        self.postCID = postCID
        self.envelopesCID = envelopesCID
        self.audienceMode = audienceMode
        self.createdAt = createdAt
        self.isPublic = isPublic
        self.metadata = metadata
        self.rawMetadataSource = rawMetadataSource
    }

    /// This post with its metadata typed as `Other`, from `source`: every other field as it is
    /// (a field added to ``ListedPost`` is carried here, once).
    func typed<Other: Sendable>(_ metadata: Other?, source: RawPostMetadata?) -> ListedPost<Other> {
        var typed = ListedPost<Other>(postCID: postCID, envelopesCID: envelopesCID, audienceMode: audienceMode,
                                      createdAt: createdAt, isPublic: isPublic, metadata: metadata, rawMetadataSource: source)
        typed.audienceUIDs = audienceUIDs
        return typed
    }
}

/// A listed post's raw metadata, parsed or as the decrypted JSON text.
enum RawPostMetadata: Sendable {
    case value(JSONValue)
    case text([UInt8])
}

/// A post that could not be read, and why; the rest of the listing is unaffected.
public struct SkippedPost: Error, Sendable, CustomStringConvertible {
    /// The post's CID (or the entry index when it has none).
    public var postCID: String
    /// Why it was skipped.
    public var error: StationClientError

    /// `"<cid>: <error>"`.
    public var description: String { "\(postCID): \(error)" }
}

/// A namespace's posts as one listing read them.
public struct PostListing<Metadata: Sendable>: Sendable {
    /// The readable posts, in manifest order (oldest first).
    public var posts: [ListedPost<Metadata>]
    /// Posts that could not be read.
    public var skipped: [SkippedPost]
    /// `true` when the station could not be reached and this is the last listing read online.
    public var isOffline: Bool
    /// The manifest CID the listing was read from (`nil` for an empty station).
    public var manifestCID: String?

    /// The readable posts newest first: ``posts`` reversed (the station appends each post it
    /// publishes to its manifest), a timeline's order.
    public var newestFirst: [ListedPost<Metadata>] { posts.reversed() }
}
