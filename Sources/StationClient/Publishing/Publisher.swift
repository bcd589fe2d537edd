import ClassicalCrypto
import ContentAddressing
import Envelope
import Foundation
import SHA2
import Manifest
import OrderedJSON
import PQCrypto
import Transport

/// A sealed post's bytes: in memory, or a file's SecretBox encrypted again each time it is read.
enum PostBytes: Sendable {
    case bytes(Data)
    /// Nothing the size of the file is written anywhere: each reading of the request body
    /// (hashing, sending, a transport's resend) encrypts the open file again, each chunk checked
    /// against the first pass's before it goes out.
    case sealedFile(SecretBoxFileSealer)
}

/// A post as the app gave it, before anything is encrypted.
struct PostDraft: Sendable {
    /// Where a draft's plaintext is.
    enum Content: Sendable {
        /// In memory.
        case bytes(Data)
        /// In the file at this path, opened when the draft is sealed.
        case file(URL)
        /// In a file the app opened, read from its start through a duplicate of its descriptor
        /// (never reopened by path); the app keeps the handle.
        case openFile(FileHandle)
    }

    /// The plaintext.
    var content: Content
    /// The metadata as compact JSON, if any.
    var metadataJSON: [UInt8]?
    /// The namespace (already resolved).
    var namespace: String
    /// Who may read it; `nil` for a post published permanently in the clear.
    var audience: Audience?
}

/// A draft encrypted with its post key (or, for a public post, taken as it is) and
/// content-addressed: its body and the form fields sent with it are fixed.
struct SealedPost: Sendable {
    /// A plain form field of the request.
    struct Field: Sendable {
        var name: String
        var value: String
    }

    /// The bytes the station stores (ciphertext, or a public post's plaintext).
    let body: PostBytes
    /// The UnixFS CID of ``body``.
    let postCID: String
    /// The fields sent after the file part, in order.
    let fields: [Field]
    /// The plaintext's length: what upload progress counts.
    let contentByteCount: Int64
    let namespace: String
    /// The post key of an encrypted post (`nil` for a public one). A secret: kept in the zeroing
    /// ``SymmetricKey``, never logged.
    let postKey: SymmetricKey?
}

/// What a ``Publisher`` needs from the station.
protocol PostSubmitting: Sendable {
    /// Sends a signed `POST /post` with `body`; returns the answer whatever its status.
    ///
    /// - Throws: ``StationClientError`` when no answer could be had.
    func sendPost(_ body: StationCall.Body, options: TransferOptions, operation: String) async throws -> HTTPResponse

    /// The post `postCID` in the entries of `namespace` in the station's current manifest, if it is there.
    ///
    /// - Throws: ``StationClientError`` when the manifest cannot be read.
    func findPost(_ postCID: String, namespace: String) async throws -> PublishedPost?
}

/// Where a publish is, for a test that cancels it at each stage
/// (``StationClientConfiguration/publishStageObserver`` hears each as it starts).
enum PublishStage: String, Sendable, Hashable, CaseIterable {
    /// A file is being encrypted for its tag and content-addressed (the first pass over it).
    case sealing
    /// The request body's SHA-256 is being computed.
    case hashing
    /// The post is prepared and about to be sent.
    case waitingToSend
}

/// Takes a post from draft to sealed (``seal(_:stationKey:)``), prepared (``prepare(_:)``) and
/// submitted (``submit(_:progress:)``).
///
/// A file is read and encrypted three times and never written anywhere: the first pass finds the
/// SecretBox tag and the CID; the second hashes the request body (the signature covers its
/// SHA-256, sent before the body); the third is the upload itself, and a transport that must send
/// the body again runs it again. The tag comes before the ciphertext it authenticates, so neither
/// the CID's first block nor the body's digest can be had before the whole file is encrypted
/// once. XSalsa20-Poly1305 with the post's key and nonce gives the same bytes every pass, and a
/// later pass hands out only the first pass's bytes (each chunk checked by its SHA-256, the last
/// also by the tag): a file changed meanwhile fails with `.localFile` at the first chunk that
/// differs, never reaches the station whole, and never puts two plaintexts under one keystream.
struct Publisher: Sendable {
    /// The file name every upload's multipart part carries. The real name belongs in the
    /// (encrypted) metadata: a part's file name travels in plaintext, and a fixed one also keeps
    /// the request length, and so ``largestFileSize(metadataJSON:namespace:audience:)``, exact.
    static let uploadFilename = "blob.bin"

    let station: any PostSubmitting
    let configuration: StationClientConfiguration

    // MARK: Draft to sealed

    /// The largest plaintext that fits the station's limit as an encrypted post with this metadata,
    /// namespace and audience, from the request's framing.
    ///
    /// - Throws: ``StationClientError`` `.refused` when a field cannot be framed.
    static func largestFileSize(metadataJSON: [UInt8]?, namespace: String, audience: Audience) throws -> Int64 {
        let sealedMetadataHex = metadataJSON.map { String(repeating: "0", count: 2 * ($0.count + SecretBox.overheadByteCount)) }
        let fields = encryptedFields(sealedMetadataHex: sealedMetadataHex, namespace: namespace, audience: audience,
                                     selfEnvelope: String(repeating: "0", count: Envelope.hexCount))
        let framing: Int64
        do {
            framing = try MultipartForm.contentLength(
                parts: [.file("file", filename: uploadFilename, byteCount: 0)] + fields.map { .field($0.name, value: $0.value) })
        } catch {
            throw StationClientError(.refused, operation: "building the post request", message: "\(error)", underlying: error)
        }
        return StationClient.maximumRequestByteCount - framing - Int64(SecretBox.overheadByteCount)
    }

    /// Encrypts a draft with a fresh post key, sealed to the station's ML-KEM key in the self
    /// envelope: bytes in memory; a file in a first pass that finds its tag and CID (and keeps it
    /// open for the passes that hash and send it). A draft without an audience is taken in the clear.
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` when the file is over the station's limit,
    ///   `.localFile` when it cannot be read, `.refused` when it cannot be encrypted, `.cancelled`.
    func seal(_ draft: PostDraft, stationKey: MLKEM768.PublicKey) throws -> SealedPost {
        guard let audience = draft.audience else { return try sealInTheClear(draft) }
        let operation = "preparing a post for \(draft.namespace)"
        let limit = try Self.largestFileSize(metadataJSON: draft.metadataJSON, namespace: draft.namespace, audience: audience)
        // A file is opened once, here: its size is checked and its bytes sealed through the same
        // descriptor, and the seal fails if the file is no longer what was measured.
        let plaintext = try Self.open(draft.content, operation: operation)
        let plaintextSize = plaintext.byteCount
        guard plaintextSize <= limit else {
            throw StationClientError.tooLarge("the file is \(plaintextSize) bytes; the station accepts at most \(limit) for this post",
                                              limit: limit, operation: operation)
        }
        let key = SymmetricKey(randomByteCount: 32)
        let sealedMetadataHex: String?
        let selfEnvelope: String
        do {
            sealedMetadataHex = try draft.metadataJSON.map { Hex.encode(try SecretBox.seal($0, using: key)) }
            selfEnvelope = try Envelope.seal(key, to: stationKey)
        } catch {
            throw StationClientError(.refused, operation: operation, message: "cannot seal the metadata or the self envelope",
                                     underlying: error)
        }
        let body: PostBytes
        let postCID: CID
        do {
            switch plaintext {
            case .bytes(let data):
                let sealed = try SecretBox.seal(data, using: key)
                postCID = UnixFS.cid(of: sealed)
                body = .bytes(sealed)
            case .file(let source, let identity):
                try Self.checkCancellation(operation)
                enter(.sealing)
                // The CID builder is given zeros in place of the tag, which the pass finds last.
                var cid = CIDBuilder(headByteCount: SecretBox.overheadByteCount)
                let sealer = try SecretBoxFileSealer(reading: source, identity: identity, using: key) { cid.update($0) }
                try Self.checkCancellation(operation)
                cid.resolveHead(sealer.prefix)
                postCID = cid.finish()
                body = .sealedFile(sealer)
            }
        } catch let error as StationClientError {
            throw error
        } catch let error as ClassicalCryptoError where error.kind == .fileSystem || error.kind == .fileChanged {
            throw StationClientError.localFile("cannot encrypt the file: \(error)", operation: operation, underlying: error)
        } catch {
            throw StationClientError(.refused, operation: operation, message: "cannot encrypt the content: \(error)", underlying: error)
        }
        return SealedPost(body: body, postCID: postCID.description,
                          fields: Self.encryptedFields(sealedMetadataHex: sealedMetadataHex, namespace: draft.namespace,
                                                       audience: audience, selfEnvelope: selfEnvelope),
                          contentByteCount: plaintextSize, namespace: draft.namespace, postKey: key)
    }

    /// A public post: the plaintext and the metadata JSON as they are.
    private func sealInTheClear(_ draft: PostDraft) throws -> SealedPost {
        guard case .bytes(let data) = draft.content else {
            throw StationClientError(.refused, operation: "preparing a public post", message: "a public post is published from memory")
        }
        var fields = draft.metadataJSON.map { [SealedPost.Field(name: "metadata", value: String(decoding: $0, as: UTF8.self))] } ?? []
        fields += [SealedPost.Field(name: "client", value: draft.namespace), SealedPost.Field(name: "audience_mode", value: "public")]
        return SealedPost(body: .bytes(data), postCID: UnixFS.cid(of: data).description, fields: fields,
                          contentByteCount: Int64(data.count), namespace: draft.namespace, postKey: nil)
    }

    /// The fields of an encrypted post, in the order they are sent.
    private static func encryptedFields(
        sealedMetadataHex: String?, namespace: String, audience: Audience, selfEnvelope: String
    ) -> [SealedPost.Field] {
        var fields: [SealedPost.Field] = []
        if let sealedMetadataHex { fields.append(.init(name: "metadata", value: sealedMetadataHex)) }
        fields.append(.init(name: "client", value: namespace))
        fields.append(.init(name: "audience_mode", value: audience.wireValue))
        if let uids = audience.uids {
            fields.append(.init(name: "audience_uids", value: String(decoding: WireJSON.serialize(.array(uids.map { .string($0) })), as: UTF8.self)))
        }
        fields.append(.init(name: "self_envelope", value: selfEnvelope))
        return fields
    }

    /// A draft's plaintext, ready to seal: in memory, or a regular file open for reading with its
    /// identity when it was measured.
    private enum Plaintext {
        case bytes(Data)
        case file(FileDescriptor, FileIdentity)

        var byteCount: Int64 {
            switch self {
            case .bytes(let data): Int64(data.count)
            case .file(_, let identity): identity.size
            }
        }
    }

    /// Opens a draft's file (by its path, or by duplicating the app's descriptor, which the app
    /// keeps) and takes its identity; the descriptor is closed when the returned value is gone.
    ///
    /// - Throws: ``StationClientError`` `.localFile` when the file cannot be opened or is not a
    ///   regular file.
    private static func open(_ content: PostDraft.Content, operation: String) throws -> Plaintext {
        let file: FileDescriptor
        let identity: FileIdentity
        do {
            switch content {
            case .bytes(let data): return .bytes(data)
            case .file(let url): file = try FileDescriptor.openForReading(url.path)
            case .openFile(let handle): file = try FileDescriptor.duplicating(handle)
            }
            identity = try file.identity()
        } catch {
            throw StationClientError.localFile("cannot read the file: \(error)", operation: operation, underlying: error)
        }
        guard identity.isRegularFile else {
            throw StationClientError.localFile("\(file.path) is not a regular file", operation: operation)
        }
        return .file(file, identity)
    }

    // MARK: Sealed to prepared

    /// Lays out the request (the file part, then the fields) and hashes its exact bytes.
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` when the request is over the station's limit,
    ///   `.localFile` when the file cannot be read or changed since it was sealed, `.refused` when
    ///   the form cannot be built, `.cancelled`.
    func prepare(_ sealed: SealedPost) throws -> PreparedPost {
        let operation = "preparing a post for \(sealed.namespace)"
        var form = MultipartForm()
        do {
            switch sealed.body {
            case .bytes(let data):
                try form.addFile("file", filename: Self.uploadFilename, data: data)
            case .sealedFile(let sealer):
                try form.addFile("file", filename: Self.uploadFilename, byteCount: Int64(sealer.sealedByteCount)) {
                    let reader = sealer.makeReader()
                    return { try Self.next(from: reader, operation: operation) }
                }
            }
            for field in sealed.fields { try form.addField(field.name, value: field.value) }
        } catch {
            throw StationClientError(.refused, operation: "building the post request", message: "\(error)", underlying: error)
        }
        enter(.hashing)
        let digest = try Self.digest(of: form, operation: operation)
        try Self.checkCancellation(operation)
        return PreparedPost(postCID: sealed.postCID, namespace: sealed.namespace, form: form, bodySHA256: digest,
                            isPublic: sealed.postKey == nil, contentByteCount: sealed.contentByteCount, postKey: sealed.postKey)
    }

    /// The SHA-256 of the exact bytes `form` will stream (the signature covers them), for a form
    /// within the station's request limit.
    ///
    /// - Throws: ``StationClientError`` `.tooLarge` when the form is over the limit, `.localFile`
    ///   when a part cannot be read.
    static func digest(of form: MultipartForm, operation: String) throws -> [UInt8] {
        let limit = StationClient.maximumRequestByteCount
        guard form.contentLength <= limit else {
            throw StationClientError.tooLarge(
                "the request would be \(form.contentLength) bytes; the station accepts at most \(limit)", limit: limit, operation: operation)
        }
        var hasher = SHA256()
        do {
            try form.forEachChunk { hasher.update(data: $0) }
        } catch let error as StationClientError {
            throw error
        } catch {
            throw StationClientError.localFile("cannot read the body: \(error)", operation: operation, underlying: error)
        }
        return hasher.finalize()
    }

    /// The next run of a sealed file's bytes, for the request body: a file that changed since the
    /// first pass is a `.localFile` error, which a transport reading the body passes on as the
    /// underlying error of its `.requestBodyFailed`, before the body's last bytes were sent.
    ///
    /// - Throws: ``StationClientError`` `.localFile`.
    static func next(from reader: SecretBoxFileSealer.Reader, operation: String) throws -> Data? {
        do {
            return try reader.next()
        } catch where error.kind == .fileChanged {
            throw StationClientError.localFile("the file changed while it was being published; nothing was published",
                                               operation: operation, underlying: error)
        } catch {
            throw StationClientError.localFile("cannot read the file: \(error)", operation: operation, underlying: error)
        }
    }

    // MARK: Prepared to submitted

    /// Sends a prepared post exactly once: on a lost answer, a station failure or a broken
    /// connection it looks for the post's CID in the manifest, and resends once only if the post
    /// is not there.
    ///
    /// - Throws: ``StationClientError``: `.station` for a refusal (4xx), `.integrity` when the
    ///   station stored other bytes, the last failure when the post could not be published, `.cancelled`.
    func submit(_ prepared: PreparedPost, progress: ProgressHandler?) async throws -> PublishedPost {
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
                if let found = try? await find(prepared) { return found }
                configuration.log(.info, "\(operation): not in the manifest; sending again")
            }
            do {
                let response = try await station.sendPost(.multipart(prepared.form, sha256: prepared.bodySHA256), options: options,
                                                          operation: operation)
                if response.isSuccess {
                    let posted = try StationConnection.decode(PostResponse.self, from: response, operation: operation)
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
                configuration.log(.warning, "\(operation): \(error.message)")
            }
        }
        if let found = try? await find(prepared) { return found }
        throw lastError ?? StationClientError(.unreachable, operation: operation, message: "the post could not be published")
    }

    private func find(_ prepared: PreparedPost) async throws -> PublishedPost? {
        guard let found = try await station.findPost(prepared.postCID, namespace: prepared.namespace) else { return nil }
        configuration.log(.info, "POST /post: the answer was lost but \(prepared.postCID) is in the manifest")
        return found
    }

    // MARK: Support

    /// Tells ``StationClientConfiguration/publishStageObserver`` that a publish starts `stage`.
    private func enter(_ stage: PublishStage) {
        configuration.publishStageObserver?(stage)
    }

    /// - Throws: ``StationClientError`` `.cancelled` when the current task is cancelled.
    private static func checkCancellation(_ operation: String) throws {
        guard !Task.isCancelled else { throw StationClientError(.cancelled, operation: operation, message: "cancelled") }
    }
}
