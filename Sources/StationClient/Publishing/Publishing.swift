import Envelope
import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import SHA2
import Transport
import OrderedJSON
import ContentAddressing

/// Who may read an encrypted post. (Public posts have their own, explicitly named call:
/// ``StationClient/publishPermanentlyPublic(data:metadata:namespace:)``.)
///
/// A listing reports a post's audience as an `AudienceMode` (``ListedPost/audienceMode``, the
/// manifest's `audience_mode`): ``mode`` and ``init(mode:uids:)`` convert between the two without
/// loss, so an app keeps one vocabulary (an audience picker that shows what a listed post was
/// published to, say):
///
/// | `Audience` (publishing) | `AudienceMode` (listing) |
/// | --- | --- |
/// | ``selfOnly`` | `.selfOnly` |
/// | ``specific(_:)`` | `.specific` (the uids are the manifest entry's `audience_uids`) |
/// | ``allFollowers`` | `.all` |
/// | — (``StationClient/publishPermanentlyPublic(data:metadata:namespace:)``) | `.public` |
public enum Audience: Sendable, Hashable {
    /// Only the owner and the owner's devices (the default).
    case selfOnly
    /// The owner and these approved followers (by uid).
    case specific([String])
    /// The owner and every approved follower.
    case allFollowers

    var wireValue: String {
        switch self {
        case .selfOnly: "self"
        case .specific: "specific"
        case .allFollowers: "all"
        }
    }
}

/// A published post.
public struct PublishedPost: Sendable, Hashable {
    /// The CID of the post's bytes (computed locally before sending and confirmed by the station).
    public var postCID: String
    /// The CID of its envelope set (`nil` for public posts, and when the post was found in the
    /// manifest after a lost answer without it).
    public var envelopesCID: String?
    /// The audience mode the station recorded.
    public var audienceMode: AudienceMode
    /// `true` when the station's answer was lost and the post was found in the manifest instead.
    public var wasRecovered: Bool
}

/// A post encrypted and laid out for sending, ready to be submitted (and resubmitted) with
/// ``StationClient/submit(_:progress:)``. Its ciphertext CID is fixed, which is what makes
/// submission exactly-once: a retry first looks for that CID in the manifest.
///
/// A prepared post of bytes holds its ciphertext in memory. A file's post
/// (``StationClient/publish(fileAt:metadata:namespace:audience:progress:)``,
/// ``StationClient/publish(contentsOf:metadata:namespace:audience:progress:)``) holds the file
/// open and encrypts it again each time its body is read: the client writes no copy of the
/// ciphertext anywhere, and a transport can send the body again from its first byte.
public final class PreparedPost: Sendable {
    /// The CID the station will give the ciphertext.
    public let postCID: String
    /// The namespace the post goes to.
    public let namespace: String
    /// The exact request body length (checked against the station's limit).
    public let requestByteCount: Int64
    /// The file's own bytes (before encryption): what upload progress counts.
    let contentByteCount: Int64
    let form: MultipartForm
    let bodySHA256: [UInt8]
    let isPublic: Bool
    /// The post key (for an encrypted post): handed to the post-key cache once the station has
    /// confirmed the post (or it was found in the manifest), so this client's own listing needs
    /// no `/rewrap` for it. A secret: kept in the zeroing ``SymmetricKey``, never logged.
    let postKey: SymmetricKey?

    init(postCID: String, namespace: String, form: MultipartForm, bodySHA256: [UInt8], isPublic: Bool, contentByteCount: Int64,
         postKey: SymmetricKey? = nil) {
        self.postKey = postKey
        self.contentByteCount = contentByteCount
        self.postCID = postCID
        self.namespace = namespace
        self.form = form
        self.requestByteCount = form.contentLength
        self.bodySHA256 = bodySHA256
        self.isPublic = isPublic
    }
}

extension StationClient {
    /// The station's request-size limit (`MAX_UPLOAD_SIZE`): a declared `Content-Length` above it gets 413.
    public static let maximumRequestByteCount: Int64 = 104_857_600

    /// The largest plaintext file that fits the station's limit as an encrypted post with this
    /// metadata and audience: the whole multipart request, SecretBox overhead included, must be at
    /// most ``maximumRequestByteCount`` bytes.
    ///
    /// - Throws: ``StationClientError`` when the metadata cannot be encoded.
    public nonisolated func largestPublishableFileSize<Metadata: Encodable>(
        metadata: Metadata?, namespace: String? = nil, audience: Audience = .selfOnly
    ) throws -> Int64 {
        try Publisher.largestFileSize(metadataJSON: try encodeMetadata(metadata), namespace: try self.namespace(namespace),
                                      audience: audience)
    }

    /// Encrypts `data` with a fresh post key and publishes it to `audience` (only you by default).
    ///
    /// The key seals the data and the compact-JSON metadata (SecretBox), and a `self_envelope`
    /// seals the key to the station's ML-KEM key. Exactly once: if the answer is lost or the
    /// station fails, the client looks for the post's CID in the manifest before retrying once.
    /// The key stays in the post-key cache (see ``submit(_:progress:)``), so listing the post
    /// afterwards asks the station for no `/rewrap`.
    ///
    /// - Throws: ``StationClientError``: `.tooLarge` when the request would exceed the station's
    ///   limit (nothing is sent; ``StationClientError/limit`` is the limit) or the station refuses
    ///   its size, `.unauthorized`, `.throttled`, `.station` for another refusal, `.unreachable`,
    ///   `.cancelled`.
    public func publish<Metadata: Encodable>(
        data: Data, metadata: Metadata?, namespace: String? = nil,
        audience: Audience = .selfOnly, progress: ProgressHandler? = nil
    ) async throws -> PublishedPost {
        let prepared = try await prepare(PostDraft(content: .bytes(data), metadataJSON: try encodeMetadata(metadata),
                                                   namespace: try self.namespace(namespace), audience: audience))
        return try await submit(prepared, progress: progress)
    }

    /// Encrypts the file at `fileURL` and publishes it, in constant memory and writing nothing to
    /// disk (with `CurlTransport` and with `URLSessionTransport` on Apple platforms; on Linux,
    /// FoundationNetworking's URLSession takes a stream body only from a spooled file, which
    /// `URLSessionTransport` writes, unlinked, to the system's temporary directory); see
    /// ``publish(data:metadata:namespace:audience:progress:)``.
    ///
    /// The file is opened once and read three times, encrypted each time with the post's key and
    /// nonce (which gives the same ciphertext every time): to find the SecretBox tag and the post's
    /// CID, to hash the request (the signature covers it), and to upload it. A transport that must
    /// send the body again (URLSession's `needNewBodyStream`, libcurl on a reused connection that
    /// broke) reads it once more from its first byte. A file changed in place meanwhile is refused
    /// with `.localFile` before the request's last bytes are sent: nothing is published.
    ///
    /// - Throws: as the data form, and `.localFile` when the file cannot be read, is not a regular
    ///   file, or changed while it was published.
    public func publish<Metadata: Encodable>(
        fileAt fileURL: URL, metadata: Metadata?, namespace: String? = nil, audience: Audience = .selfOnly,
        progress: ProgressHandler? = nil
    ) async throws -> PublishedPost {
        let metadataJSON = try encodeMetadata(metadata)
        return try await publishFile(.file(fileURL), metadataJSON: metadataJSON, namespace: namespace, audience: audience,
                                       progress: progress)
    }

    /// Encrypts the file `file` is open on and publishes it, reading it only through that open
    /// descriptor; otherwise as ``publish(fileAt:metadata:namespace:audience:progress:)`` (constant
    /// memory, nothing written to disk, exactly once).
    ///
    /// For an app that must not name the file by a path (one a symbolic link could redirect
    /// between its checks and the read): it opens the file itself (with `openat` and `O_NOFOLLOW`,
    /// say), checks with `fstat` that it is the file it means, and hands over the handle. The
    /// client never reopens the file: it reads through a duplicate of the descriptor, closed
    /// once the call has returned or thrown and the transport has let go of the request's body
    /// (which it may hold a moment after the answer). The handle stays the caller's, open.
    ///
    /// The whole file is read, from its first byte to its last, whatever the handle's offset; the
    /// reads are positional (`pread`), so the offset is left where it was. The size checked
    /// against the station's limit is the file's (`fstat`) when the call starts, and the file
    /// must not change until it is sent: a new size, inode, modification or change time, or other
    /// bytes, fails the publish with `.localFile` before the request's last bytes go out.
    ///
    /// - Parameters:
    ///   - file: a handle open for reading on a regular file.
    ///   - metadata: the post's metadata, encrypted with it (`nil` for none).
    ///   - namespace: the namespace to publish to; `nil` for the configuration's.
    ///   - audience: who may read the post (only you by default).
    ///   - progress: told the file's bytes sent so far.
    /// - Returns: the published post.
    /// - Throws: as ``publish(data:metadata:namespace:audience:progress:)``, and `.localFile` when
    ///   the handle cannot be read, is not on a regular file, or the file changed while it was
    ///   published.
    public func publish<Metadata: Encodable>(
        contentsOf file: FileHandle, metadata: Metadata?, namespace: String? = nil, audience: Audience = .selfOnly,
        progress: ProgressHandler? = nil
    ) async throws -> PublishedPost {
        let metadataJSON = try encodeMetadata(metadata)
        return try await publishFile(.openFile(file), metadataJSON: metadataJSON, namespace: namespace, audience: audience,
                                       progress: progress)
    }

    /// Encrypts a file (`content`: by path or open) and publishes it.
    func publishFile(
        _ content: PostDraft.Content, metadataJSON: [UInt8]?, namespace: String?, audience: Audience, progress: ProgressHandler?
    ) async throws -> PublishedPost {
        let draft = PostDraft(content: content, metadataJSON: metadataJSON, namespace: try self.namespace(namespace),
                              audience: audience)
        return try await submit(try await prepare(draft), progress: progress)
    }

    /// Publishes `data` **unencrypted, permanently and readable by anyone**: the bytes and the
    /// metadata go to IPFS as plaintext and can never be deleted (anyone who learns the CID can
    /// fetch them, and the public manifest lists it). Use only for content meant for the world.
    ///
    /// - Throws: as ``publish(data:metadata:namespace:audience:progress:)``.
    public func publishPermanentlyPublic<Metadata: Encodable>(
        data: Data, metadata: Metadata?, namespace: String? = nil
    ) async throws -> PublishedPost {
        let draft = PostDraft(content: .bytes(data), metadataJSON: try encodeMetadata(metadata), namespace: try self.namespace(namespace),
                              audience: nil)
        return try await submit(try await prepare(draft), progress: nil)
    }

    /// Encrypts and lays out a post without sending it (see ``PreparedPost``).
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` when the request would exceed the station's
    ///   limit, `.localFile` when the file cannot be read.
    public nonisolated func preparePost<Metadata: Encodable>(
        data: Data, metadata: Metadata?, namespace: String? = nil, audience: Audience = .selfOnly
    ) async throws -> PreparedPost {
        try await prepare(PostDraft(content: .bytes(data), metadataJSON: try encodeMetadata(metadata),
                                    namespace: try self.namespace(namespace), audience: audience))
    }

    /// The metadata as compact JSON (the station and other clients read it back with any JSON parser).
    nonisolated func encodeMetadata<Metadata: Encodable>(_ metadata: Metadata?) throws -> [UInt8]? {
        try Self.encodeMetadata(metadata, dates: configuration.metadataDateEncoding)
    }

    static func encodeMetadata<Metadata: Encodable>(
        _ metadata: Metadata?, dates: WireJSON.DateEncoding = .unixSeconds
    ) throws -> [UInt8]? {
        guard let metadata else { return nil }
        do {
            return try WireJSON.encode(metadata, dates: dates)
        } catch {
            throw StationClientError(.refused, operation: "encoding metadata", message: "\(error)", underlying: error)
        }
    }

    /// This client's publisher (the station's side is this client's signed calls).
    nonisolated var publisher: Publisher { Publisher(station: self, configuration: configuration) }

    /// Seals and prepares a draft off the actor: encrypting a large file takes a while and must
    /// not hold up other calls.
    nonisolated func prepare(_ draft: PostDraft) async throws -> PreparedPost {
        let stationKey = try await credentials.stationKEMPublicKey()
        return try publisher.prepare(try publisher.seal(draft, stationKey: stationKey))
    }

    /// Sends a prepared post exactly once: on a lost answer, a station failure or a broken
    /// connection it looks for the post's CID in the manifest, and resends once only if the post
    /// is not there.
    ///
    /// Once the station has confirmed the post (or it was found in the manifest), its key goes to
    /// the post-key cache (and, with ``StationClientConfiguration/persistsPostKeys``, to the cache
    /// store): this client lists and downloads its own posts without a `/rewrap`. A prepared post
    /// submitted again caches nothing new.
    ///
    /// - Throws: ``StationClientError``: `.station` for a refusal (4xx), the last failure when
    ///   the post could not be published, `.cancelled`.
    public func submit(_ prepared: PreparedPost, progress: ProgressHandler? = nil) async throws -> PublishedPost {
        let published = try await publisher.submit(prepared, progress: progress)
        await keepPostKey(of: prepared, as: published)
        return published
    }

    /// Hands the key of a post the station confirmed (or the manifest lists) to the post-key
    /// cache, so this client's listings open it without a `/rewrap`; with
    /// ``StationClientConfiguration/persistsPostKeys`` the key is written to the cache store too.
    /// A store that cannot be written is only logged: the next listing writes again.
    func keepPostKey(of prepared: PreparedPost, as published: PublishedPost) async {
        guard let key = prepared.postKey, published.postCID == prepared.postCID else { return }
        await postKeys.cache(key, for: published.postCID)
        guard configuration.persistsPostKeys else { return }
        await postKeys.write()
    }
}

extension StationClient: PostSubmitting {
    nonisolated func sendPost(_ body: StationCall.Body, options: TransferOptions, operation: String) async throws -> HTTPResponse {
        try await sendSigned(.post, "/post", body: body, options: options, operation: operation)
    }

    func findPost(_ postCID: String, namespace: String) async throws -> PublishedPost? {
        let profile = try await profile()
        guard let manifestCID = profile.manifestCID else { return nil }
        let manifest = try await fetchManifest(cid: manifestCID)
        guard let entry = manifest.posts(in: Manifest.namespaceName(for: namespace)).first(where: { $0.postCID == postCID }) else {
            return nil
        }
        return PublishedPost(postCID: entry.postCID, envelopesCID: entry.envelopesCID, audienceMode: entry.audienceMode,
                             wasRecovered: true)
    }
}

extension Audience {
    /// The followers of ``specific(_:)``, or `nil` for the other audiences.
    public var uids: [String]? {
        if case .specific(let uids) = self { return uids }
        return nil
    }

    /// The audience mode a listing reports for a post published to this audience
    /// (``allFollowers`` is `.all`; the uids of ``specific(_:)`` are in ``uids``).
    public var mode: AudienceMode {
        switch self {
        case .selfOnly: .selfOnly
        case .specific: .specific
        case .allFollowers: .all
        }
    }

    /// The audience of a listed mode: `.selfOnly`, `.specific` (with `uids`, by default none) and
    /// `.all` (``allFollowers``); `nil` for `.public` (not an audience of an encrypted post) and a
    /// mode this SDK does not know. `Audience(mode: audience.mode, uids: audience.uids)` is
    /// `audience` again.
    public init?(mode: AudienceMode, uids: [String]? = nil) {
        switch mode {
        case .selfOnly: self = .selfOnly
        case .specific: self = .specific(uids ?? [])
        case .all: self = .allFollowers
        case .public, .unknown: return nil
        }
    }
}
