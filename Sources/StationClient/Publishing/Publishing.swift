import Envelope
import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
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
/// A prepared post holds its ciphertext in memory; a file post's ciphertext is staged in a
/// temporary file only within the call that publishes it
/// (``StationClient/publish(fileAt:metadata:namespace:audience:progress:)``), which removes it on
/// every way out.
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

/// Where a publish is, for a test that cancels it at each stage
/// (``StationClientConfiguration/publishStageObserver`` hears each as it starts).
enum PublishStage: String, Sendable, Hashable, CaseIterable {
    /// The file's ciphertext is being written to its staging file.
    case staging
    /// The ciphertext's CID and the request body's digest are being computed.
    case hashing
    /// The post is prepared and about to be sent.
    case waitingToSend
}

extension StationClient {
    /// The file name every upload's multipart part carries. The real name belongs in the
    /// (encrypted) metadata: a part's file name travels in plaintext, and a fixed one also keeps
    /// the request length, and so ``largestPublishableFileSize(metadata:namespace:audience:)``, exact.
    static let uploadFilename = "blob.bin"

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
        try largestPublishableFileSize(metadataJSON: try encodeMetadata(metadata), namespace: namespace, audience: audience)
    }

    nonisolated func largestPublishableFileSize(metadataJSON: [UInt8]?, namespace: String?, audience: Audience) throws -> Int64 {
        let key = SymmetricKey(randomByteCount: 32)
        let form = try buildForm(
            file: .bytes(Data()), sealedMetadataHex: try sealMetadata(metadataJSON, key: key), namespace: try self.namespace(namespace),
            audience: audience.wireValue, audienceUIDs: audience.uids, selfEnvelope: String(repeating: "0", count: Envelope.hexCount))
        return Self.maximumRequestByteCount - form.contentLength - Int64(SecretBox.overheadByteCount)
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
        let prepared = try await prepare(content: .bytes(data), metadataJSON: try encodeMetadata(metadata),
                                         namespace: namespace, audience: audience)
        return try await submit(prepared, progress: progress)
    }

    /// Encrypts the file at `fileURL` and publishes it, in constant memory (the ciphertext goes to
    /// a temporary file first); see ``publish(data:metadata:namespace:audience:progress:)``.
    ///
    /// The temporary file (`cipher-upload-<16 hex>` in
    /// ``StationClientConfiguration/temporaryDirectory``) is removed before the call returns or
    /// throws, whatever the way out: success, failure, or cancellation at any stage (encrypting,
    /// hashing, waiting to send, sending).
    ///
    /// - Throws: as the data form, and `.localFile` when the file cannot be read or the
    ///   temporary file cannot be created.
    public func publish<Metadata: Encodable>(
        fileAt fileURL: URL, metadata: Metadata?, namespace: String? = nil, audience: Audience = .selfOnly,
        progress: ProgressHandler? = nil
    ) async throws -> PublishedPost {
        let metadataJSON = try encodeMetadata(metadata)
        return try await publishStaged(fileAt: fileURL, metadataJSON: metadataJSON, namespace: namespace, audience: audience,
                                       progress: progress)
    }

    /// Encrypts the file at `source` into an upload staging file and publishes it; the staging
    /// file is owned by ``StagedFile/withUpload(in:registeredIn:operation:isolation:_:)`` and removed on every
    /// way out. `prepared` runs once the post is prepared, before it is sent.
    func publishStaged(
        fileAt source: URL, metadataJSON: [UInt8]?, namespace: String?, audience: Audience, progress: ProgressHandler?,
        prepared whenPrepared: () -> Void = {}
    ) async throws -> PublishedPost {
        try await StagedFile.withUpload(in: configuration.temporaryDirectory, registeredIn: configuration.stagedUploads,
                                        operation: "staging an upload") { staged in
            let prepared = try await prepare(content: .file(source, stagedAt: staged), metadataJSON: metadataJSON,
                                             namespace: namespace, audience: audience)
            whenPrepared()
            return try await submit(prepared, progress: progress)
        }
    }

    /// Publishes `data` **unencrypted, permanently and readable by anyone**: the bytes and the
    /// metadata go to IPFS as plaintext and can never be deleted (anyone who learns the CID can
    /// fetch them, and the public manifest lists it). Use only for content meant for the world.
    ///
    /// - Throws: as ``publish(data:metadata:namespace:audience:progress:)``.
    public func publishPermanentlyPublic<Metadata: Encodable>(
        data: Data, metadata: Metadata?, namespace: String? = nil
    ) async throws -> PublishedPost {
        let namespace = try self.namespace(namespace)
        let operation = "preparing a public post"
        var form = MultipartForm()
        do {
            try form.addFile("file", filename: Self.uploadFilename, data: data)
            if let metadata {
                try form.addField("metadata", value: String(decoding: try WireJSON.encode(metadata, dates: configuration.metadataDateEncoding), as: UTF8.self))
            }
            try form.addField("client", value: namespace)
            try form.addField("audience_mode", value: "public")
        } catch {
            throw StationClientError(.refused, operation: operation, message: "\(error)", underlying: error)
        }
        let prepared = try finish(form, postCID: UnixFS.cid(of: data).description, namespace: namespace, isPublic: true,
                                  contentByteCount: Int64(data.count), operation: operation)
        return try await submit(prepared, progress: nil)
    }

    enum Content {
        case bytes(Data)
        /// The file at the first URL, its ciphertext written to the second: a staging file that
        /// ``StagedFile/withUpload(in:registeredIn:operation:isolation:_:)`` owns.
        case file(URL, stagedAt: URL)
    }

    /// Encrypts and lays out a post without sending it (see ``PreparedPost``).
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` when the request would exceed the station's
    ///   limit, `.localFile` when the file cannot be read.
    public nonisolated func preparePost<Metadata: Encodable>(
        data: Data, metadata: Metadata?, namespace: String? = nil, audience: Audience = .selfOnly
    ) async throws -> PreparedPost {
        try await prepare(content: .bytes(data), metadataJSON: try encodeMetadata(metadata), namespace: namespace,
                          audience: audience)
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

    /// Encrypts off the actor: sealing a large file takes a while and must not hold up other calls.
    nonisolated func prepare(
        content: Content, metadataJSON: [UInt8]?, namespace: String?, audience: Audience
    ) async throws -> PreparedPost {
        let stationKey = try await credentials.stationKEMPublicKey()
        let namespace = try self.namespace(namespace)
        let operation = "preparing a post for \(namespace)"
        let limit = try largestPublishableFileSize(metadataJSON: metadataJSON, namespace: namespace, audience: audience)
        let plaintextSize: Int64
        switch content {
        case .bytes(let data): plaintextSize = Int64(data.count)
        case .file(let url, _):
            guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? NSNumber else {
                throw StationClientError.localFile("cannot read \(url.path)", operation: operation)
            }
            plaintextSize = size.int64Value
        }
        guard plaintextSize <= limit else {
            throw StationClientError.tooLarge("the file is \(plaintextSize) bytes; the station accepts at most \(limit) for this post",
                                              limit: limit, operation: operation)
        }
        let key = SymmetricKey(randomByteCount: 32)
        let sealedMetadata = try sealMetadata(metadataJSON, key: key)
        let selfEnvelope: String
        do {
            selfEnvelope = try Envelope.seal(key, to: stationKey)
        } catch {
            throw StationClientError(.refused, operation: operation, message: "cannot seal the self envelope", underlying: error)
        }
        let postCID: String
        let body: FormFile
        do {
            switch content {
            case .bytes(let data):
                let sealed = try SecretBox.seal(data, using: key)
                enter(.hashing)
                postCID = UnixFS.cid(of: sealed).description
                body = .bytes(sealed)
            case .file(let url, let staged):
                try Self.checkCancellation(operation)
                enter(.staging)
                try SecretBox.sealFile(at: url, to: staged, using: key)
                try Self.checkCancellation(operation)
                enter(.hashing)
                postCID = try UnixFS.cid(ofFileAt: staged).description
                body = .file(staged)
            }
        } catch let error as StationClientError where error.kind == .cancelled {
            throw error
        } catch {
            throw StationClientError(.refused, operation: operation, message: "cannot encrypt the content: \(error)", underlying: error)
        }
        let form = try buildForm(file: body, sealedMetadataHex: sealedMetadata, namespace: namespace,
                                 audience: audience.wireValue, audienceUIDs: audience.uids, selfEnvelope: selfEnvelope)
        let prepared = try finish(form, postCID: postCID, namespace: namespace, isPublic: false, contentByteCount: plaintextSize,
                                  postKey: key, operation: operation)
        try Self.checkCancellation(operation)
        return prepared
    }

    /// Tells ``StationClientConfiguration/publishStageObserver`` that a publish starts `stage`.
    nonisolated func enter(_ stage: PublishStage) {
        configuration.publishStageObserver?(stage)
    }

    /// - Throws: ``StationClientError`` `.cancelled` when the current task is cancelled.
    static func checkCancellation(_ operation: String) throws {
        guard !Task.isCancelled else { throw StationClientError(.cancelled, operation: operation, message: "cancelled") }
    }

    private nonisolated func finish(
        _ form: MultipartForm, postCID: String, namespace: String, isPublic: Bool, contentByteCount: Int64,
        postKey: SymmetricKey? = nil, operation: String
    ) throws -> PreparedPost {
        PreparedPost(postCID: postCID, namespace: namespace, form: form, bodySHA256: try Self.digest(of: form, operation: operation),
                     isPublic: isPublic, contentByteCount: contentByteCount, postKey: postKey)
    }

    /// The SHA-256 of the exact bytes `form` will stream (the signature covers them), for a form
    /// within the station's request limit.
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` when the form is over the limit, `.localFile`
    ///   when a part cannot be read.
    static func digest(of form: MultipartForm, operation: String) throws -> [UInt8] {
        guard form.contentLength <= maximumRequestByteCount else {
            throw StationClientError.tooLarge(
                "the request would be \(form.contentLength) bytes; the station accepts at most \(maximumRequestByteCount)",
                limit: maximumRequestByteCount, operation: operation)
        }
        var hasher = SHA256()
        do {
            try form.forEachChunk { hasher.update(data: $0) }
        } catch {
            throw StationClientError.localFile("cannot read the body: \(error)", operation: operation, underlying: error)
        }
        return hasher.finalize()
    }

    enum FormFile {
        case bytes(Data)
        case file(URL)
    }

    private nonisolated func sealMetadata(_ metadataJSON: [UInt8]?, key: SymmetricKey) throws -> String? {
        guard let metadataJSON else { return nil }
        do {
            return Hex.encode(try SecretBox.seal(metadataJSON, using: key))
        } catch {
            throw StationClientError(.refused, operation: "encrypting metadata", message: "\(error)", underlying: error)
        }
    }

    private nonisolated func buildForm(
        file: FormFile, sealedMetadataHex: String?, namespace: String, audience: String,
        audienceUIDs: [String]?, selfEnvelope: String
    ) throws -> MultipartForm {
        var form = MultipartForm()
        do {
            switch file {
            case .bytes(let data): try form.addFile("file", filename: Self.uploadFilename, data: data)
            case .file(let url): try form.addFile("file", filename: Self.uploadFilename, contentsOf: url)
            }
            if let sealedMetadataHex { try form.addField("metadata", value: sealedMetadataHex) }
            try form.addField("client", value: namespace)
            try form.addField("audience_mode", value: audience)
            if let audienceUIDs {
                try form.addField("audience_uids", value: String(decoding: WireJSON.serialize(.array(audienceUIDs.map { .string($0) })), as: UTF8.self))
            }
            try form.addField("self_envelope", value: selfEnvelope)
        } catch {
            throw StationClientError(.refused, operation: "building the post request", message: "\(error)", underlying: error)
        }
        return form
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
        let published = try await send(prepared, progress: progress)
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

    /// Sends a prepared post exactly once (see ``submit(_:progress:)``).
    private func send(_ prepared: PreparedPost, progress: ProgressHandler?) async throws -> PublishedPost {
        let operation = "POST /post (\(prepared.postCID))"
        // Told in the file's bytes: the form around it is not the user's file.
        let fileProgress = FileProgress.handler(progress, wireOverhead: prepared.requestByteCount - prepared.contentByteCount)
        let options = TransferOptions(response: .memory(limit: ResponseLimit.small), timeouts: configuration.transferTimeouts,
                                      progress: fileProgress.map { handler in
            { @Sendable in handler(ByteProgress(completed: $0.bytesSent, total: $0.expectedBytesToSend ?? prepared.requestByteCount)) }
        })
        enter(.waitingToSend)
        guard !Task.isCancelled else {
            throw StationClientError(.cancelled, operation: operation, message: "cancelled before sending")
        }
        var lastError: StationClientError?
        for attempt in 0..<2 {
            if attempt > 0 {
                guard !Task.isCancelled else { throw lastError ?? StationClientError(.cancelled, operation: operation, message: "cancelled") }
                if let found = try? await findPublished(prepared) { return found }
                log(.info, "\(operation): not in the manifest; sending again")
            }
            do {
                let response = try await signed(
                    .post, "/post", body: .multipart(prepared.form, sha256: prepared.bodySHA256), options: options, operation: operation)
                if response.isSuccess {
                    let posted = try Self.decode(PostResponse.self, from: response, operation: operation)
                    guard posted.postCID == prepared.postCID else {
                        throw StationClientError(.integrity, operation: operation,
                                                 message: "the station stored the post as \(posted.postCID), not \(prepared.postCID)")
                    }
                    return PublishedPost(postCID: posted.postCID, envelopesCID: posted.envelopesCID,
                                         audienceMode: posted.audienceMode, wasRecovered: false)
                }
                let error = StationClientError.station(response, operation: operation)
                // `replay` means this very request already reached the station: the transport
                // resent it after the connection broke (libcurl does so on a reused connection).
                // Like a 5xx, that is ambiguous: look in the manifest before anything else.
                guard response.status >= 500 || error.stationMessage == "replay" else { throw error }
                lastError = error
            } catch let error as StationClientError where error.kind == .unreachable || error.kind == .invalidResponse {
                lastError = error
                log(.warning, "\(operation): \(error.message)")
            }
        }
        if let found = try? await findPublished(prepared) { return found }
        throw lastError ?? StationClientError(.unreachable, operation: operation, message: "the post could not be published")
    }

    /// The post in the current manifest, if it is there.
    func findPublished(_ prepared: PreparedPost) async throws -> PublishedPost? {
        let profile = try await profile()
        guard let manifestCID = profile.manifestCID else { return nil }
        let manifest = try await fetchManifest(cid: manifestCID)
        guard let entry = manifest.posts(in: Manifest.namespaceName(for: prepared.namespace))
            .first(where: { $0.postCID == prepared.postCID }) else { return nil }
        log(.info, "POST /post: the answer was lost but \(prepared.postCID) is in the manifest")
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
