import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ContentAddressing

extension StationClient {
    /// Downloads a listed post of this station into memory: decrypted with its key (from the
    /// cache or `/rewrap`), or as stored for a public post. The same call as
    /// ``FollowedStationFeed/download(_:)`` for a followed station's post.
    ///
    /// - Throws: as ``download(postCID:envelopesCID:)`` and ``downloadPublic(postCID:)``.
    public func download<Metadata>(_ post: ListedPost<Metadata>) async throws -> Data {
        if post.isPublic { return try await downloadPublic(postCID: post.postCID) }
        return try await download(postCID: post.postCID, envelopesCID: post.envelopesCID)
    }

    /// Downloads a listed post of this station into `destination`, in constant memory; the file
    /// appears only once it verified. The size the metadata states (``StatesPlaintextSize``, such
    /// as `DriveFileMetadata`'s `size_bytes`) bounds what is fetched. The same call as
    /// ``FollowedStationFeed/download(_:to:progress:)`` for a followed station's post.
    ///
    /// - Throws: as ``download(postCID:envelopesCID:to:plaintextSize:progress:)`` and
    ///   ``downloadPublic(postCID:to:size:progress:)``.
    public func download<Metadata>(_ post: ListedPost<Metadata>, to destination: URL, progress: ProgressHandler? = nil) async throws {
        if post.isPublic {
            return try await downloadPublic(postCID: post.postCID, to: destination, size: post.plaintextSize, progress: progress)
        }
        try await download(postCID: post.postCID, envelopesCID: post.envelopesCID, to: destination, plaintextSize: post.plaintextSize,
                           progress: progress)
    }

    /// Downloads a listed post of this station into `file`, a file the caller opened, in constant
    /// memory; otherwise as ``download(_:to:progress:)`` (the same sources and checks, the same
    /// bound from the size the metadata states).
    ///
    /// For an app that must not write by a path (one a symbolic link could redirect): it opens or
    /// creates the file itself (with `openat` in a directory of its own, say), for reading and
    /// writing, and hands over the handle. The client writes only through a duplicate of the
    /// descriptor, closed before the call returns or throws; the handle stays the caller's, open.
    ///
    /// The content is fetched into a hidden file in the client's
    /// ``StationClientConfiguration/temporaryDirectory`` (`.cipher-download.<16 hex>.sealed`, or
    /// `.part` for a public post), never beside a path of the app's, and removed on every way out,
    /// cancellation included. An encrypted post's tag is verified over the whole ciphertext, and a
    /// public post's bytes against its CID, before anything is written into `file`. Only then is
    /// `file` emptied and the plaintext written from its start, so that it holds exactly the
    /// plaintext, and flushed to stable storage before the call returns. The writes are positional
    /// (`pwrite`): the handle's offset is left where it was.
    ///
    /// A failure before writing starts (fetching, a tag or CID that does not verify, cancellation)
    /// leaves `file` as it was. A failure while writing (a full disk, say) can leave it emptied or
    /// partly written: the caller owns the file and discards it.
    ///
    /// - Parameters:
    ///   - post: the listed post.
    ///   - file: a handle open for writing (and, as a rule, reading) on a regular file.
    ///   - progress: told the plaintext's bytes fetched so far.
    /// - Throws: as ``download(_:to:progress:)``: `.integrity` when the content does not open or
    ///   match its CID (`file` untouched), and `.localFile` when the handle cannot be written.
    public func download<Metadata>(_ post: ListedPost<Metadata>, into file: FileHandle, progress: ProgressHandler? = nil) async throws {
        let operation = "downloading \(post.postCID) into an open file"
        let output: FileDescriptor
        do {
            output = try FileDescriptor.duplicating(file)
        } catch {
            throw StationClientError.localFile("cannot use the open file: \(error)", operation: operation, underlying: error)
        }
        let staging = StagedFile.openFileDownload(in: configuration.temporaryDirectory)
        guard post.isPublic else {
            return try await downloadSealed(
                postCID: post.postCID, envelopesCID: post.envelopesCID, stagedBeside: staging, plaintextSize: post.plaintextSize,
                progress: progress, operation: operation
            ) { sealed, key throws(ClassicalCryptoError) in
                try SecretBox.openFile(at: sealed, into: output, using: key)
            }
        }
        let temporary = try await fetchBesides(staging, postCID: post.postCID, suffix: "part",
                                               limit: Self.downloadLimit(post.plaintextSize.map { ($0, false) }, maximum: configuration.maximumFileByteCount), progress: progress,
                                               operation: operation)
        defer { try? FileManager.default.removeItem(at: temporary) }
        do {
            try output.overwrite(withContentsOf: try FileDescriptor.openForReading(temporary.path))
        } catch {
            throw StationClientError.localFile("cannot write the open file: \(error)", operation: operation, underlying: error)
        }
    }

    /// Downloads and decrypts a post of this station into memory.
    ///
    /// The ciphertext comes from the station's `/content/<post_cid>` or, when that fails, from the
    /// gateway (verified against the CID); the key from the cache or `/rewrap`. Nothing is returned
    /// unless the SecretBox tag verifies.
    ///
    /// - Throws: ``StationClientError``: `.integrity` when the bytes do not open or match the CID,
    ///   `.contentLost` when neither the station nor the gateway has the content (`.gateway` when the gateway, tried
    ///   next, fails too), `.unreachable`, `.cancelled`.
    public func download(postCID: String, envelopesCID: String? = nil) async throws -> Data {
        let operation = "downloading \(postCID)"
        let key = try await postKey(for: postCID, envelopesCID: envelopesCID, context: readContext())
        let sealed = try await contentBytes(postCID: postCID, operation: operation)
        do {
            return try SecretBox.open(sealed, using: key)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the content does not open with the post key",
                                     underlying: error)
        }
    }

    /// Downloads a post's content and decrypts it into `destination`, in constant memory.
    ///
    /// The ciphertext is fetched into a temporary file (resuming with `Range` after a broken
    /// connection), then opened with two passes: the tag is verified before any plaintext is
    /// written, and `destination` appears only when the whole file verified. Cancellation or any
    /// failure leaves no partial file behind. A file already at `destination` is replaced, in one
    /// step, only once the new one verified; after a failure it is left as it was (check for it
    /// first if it must not be replaced: the `cipher` tool refuses without `--force`).
    ///
    /// No more ciphertext is written than the file can have: `plaintextSize` (the metadata's
    /// `size_bytes`) plus the SecretBox overhead when given, otherwise the station's 100 MiB upload
    /// limit; a station or gateway that sends more fails the download with `.invalidResponse`.
    ///
    /// - Throws: as ``download(postCID:envelopesCID:)``, and `.localFile` when `destination` cannot be written.
    public func download(
        postCID: String, envelopesCID: String? = nil, to destination: URL, plaintextSize: Int64? = nil,
        progress: ProgressHandler? = nil
    ) async throws {
        try await downloadSealed(postCID: postCID, envelopesCID: envelopesCID, stagedBeside: destination, plaintextSize: plaintextSize,
                                 progress: progress, operation: "downloading \(postCID) to a file") { sealed, key throws(ClassicalCryptoError) in
            try SecretBox.openFile(at: sealed, to: destination, using: key)
        }
    }

    /// Fetches a post's ciphertext into a hidden file beside `staging` (at most `plaintextSize`
    /// plus the SecretBox overhead when given) and hands it with the post key to `open`, which
    /// decrypts it in ``SecretBox``'s two passes (the tag verified before any plaintext is
    /// written); the ciphertext is removed on every way out.
    ///
    /// - Throws: as ``download(postCID:envelopesCID:)``: `.integrity` when the content does not
    ///   open with the post key, and `.localFile` when the plaintext cannot be written.
    private func downloadSealed(
        postCID: String, envelopesCID: String?, stagedBeside staging: URL, plaintextSize: Int64?, progress: ProgressHandler?,
        operation: String, open: (_ sealed: URL, _ key: SymmetricKey) throws(ClassicalCryptoError) -> Void
    ) async throws {
        let key = try await postKey(for: postCID, envelopesCID: envelopesCID, context: readContext())
        let limit = Self.downloadLimit(plaintextSize.map { $0.addingReportingOverflow(Int64(SecretBox.overheadByteCount)) },
                                       maximum: configuration.maximumFileByteCount)
        let temporary = try await fetchBesides(staging, postCID: postCID, suffix: "sealed", limit: limit,
                                               progress: FileProgress.handler(progress, wireOverhead: Int64(SecretBox.overheadByteCount)),
                                               operation: operation)
        defer { try? FileManager.default.removeItem(at: temporary) }
        do {
            try open(temporary, key)
        } catch where error.kind == .fileSystem {
            throw StationClientError.localFile("cannot write the plaintext: \(error)", operation: operation, underlying: error)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the content does not open with the post key",
                                     underlying: error)
        }
    }

    /// Downloads a public post (``ListedPost/isPublic``), whose content is stored as plaintext,
    /// into memory: the station's `/content/<post_cid>` first, then the gateway; either way the
    /// bytes must match the CID.
    ///
    /// - Throws: ``StationClientError``: `.integrity` when the bytes do not match the CID,
    ///   `.contentLost` when neither the station nor the gateway has the content (`.gateway` when the gateway, tried
    ///   next, fails too), `.unreachable`, `.cancelled`.
    public func downloadPublic(postCID: String) async throws -> Data {
        Data(try await contentBytes(postCID: postCID, operation: "downloading public post \(postCID)"))
    }

    /// Downloads a public post into `destination`, in constant memory (resuming with `Range`
    /// after a broken connection). `destination` appears only once the bytes matched the CID;
    /// cancellation or any failure leaves no partial file behind. A file already at
    /// `destination` is replaced in one step only then; after a failure it is left as it was.
    ///
    /// No more is written than `size` (the metadata's `size_bytes`) when given, otherwise the
    /// station's 100 MiB upload limit; a source that sends more fails with `.invalidResponse`.
    ///
    /// - Throws: as ``downloadPublic(postCID:)``, and `.localFile` when `destination` cannot be written.
    public func downloadPublic(postCID: String, to destination: URL, size: Int64? = nil, progress: ProgressHandler? = nil) async throws {
        let operation = "downloading public post \(postCID) to a file"
        let temporary = try await fetchBesides(destination, postCID: postCID, suffix: "part", limit: Self.downloadLimit(size.map { ($0, false) }, maximum: configuration.maximumFileByteCount),
                                               progress: progress, operation: operation)
        defer { try? FileManager.default.removeItem(at: temporary) }
        try StagedFile.moveIntoPlace(temporary, at: destination, operation: operation)
    }

    /// Fetches a post's stored bytes into a hidden file next to `destination` (the station first,
    /// then the gateway; checked against the CID) and returns it. The caller removes the file; on
    /// failure or cancellation it is already gone.
    private func fetchBesides(
        _ destination: URL, postCID: String, suffix: String, limit: Int64, progress: ProgressHandler?, operation: String
    ) async throws -> URL {
        // A process killed mid-download (no chance to clean up) left its partial; a day later it is removed.
        StagedFile.removeStalePartials(beside: destination, suffixes: ["sealed", "part", "gateway"])
        let temporary = StagedFile.temporary(beside: destination, suffix: suffix)
        do {
            do {
                try await fetchContent(postCID: postCID, to: temporary, limit: limit, progress: progress, operation: operation)
            } catch let error as StationClientError where error.kind != .cancelled {
                guard let gateway = configuration.gateway else { throw Self.contentLost(error, gateway: nil) }
                configuration.log(.info, "\(operation): falling back to the gateway (\(error))")
                do {
                    try await gateway.fetch(cid: postCID, to: temporary, maximumSize: limit, progress: progress)
                } catch let gatewayError as StationClientError {
                    throw Self.contentLost(error, gateway: gatewayError)
                }
            }
            try Task.checkCancellation()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        return temporary
    }

    /// A post's stored bytes in memory (ciphertext, or plaintext for a public post): station
    /// first, then the gateway, checked against the CID.
    private func contentBytes(postCID: String, operation: String) async throws -> [UInt8] {
        let parsed = try IPFSGateway.parse(postCID, operation: operation)
        do {
            let deadline = DownloadDeadline(limit: Int64(ResponseLimit.storedFile), configuration: configuration)
            let response: HTTPResponse
            do {
                response = try await sendSigned(
                    .get, "/content/\(postCID)",
                    options: ResponseLimit.options(ResponseLimit.storedFile, timeouts: try deadline.timeouts(operation: operation)),
                    operation: operation)
            } catch {
                throw deadline.explain(error, written: nil, operation: operation)
            }
            guard response.isSuccess else { throw StationClientError.station(response, operation: operation) }
            let bytes = [UInt8](response.body.data ?? Data())
            guard parsed.matches(fileBytes: bytes) else {
                throw StationClientError(.integrity, operation: operation, message: "the station's bytes do not match the CID")
            }
            return bytes
        } catch let error as StationClientError where error.kind != .cancelled {
            guard let gateway = configuration.gateway else { throw Self.contentLost(error, gateway: nil) }
            configuration.log(.info, "\(operation): falling back to the gateway (\(error))")
            do {
                return try await gateway.fetch(cid: postCID, limit: ResponseLimit.storedFile)
            } catch let gatewayError as StationClientError {
                throw Self.contentLost(error, gateway: gatewayError)
            }
        }
    }

    /// The error of a download the station failed with `stationError`: `StationClientError.Kind.contentLost`
    /// when the station has no such content (404) and the gateway, if one is configured, has not
    /// either (404 or 410); otherwise the gateway's error when it was tried, else the station's.
    /// The station's status and text are kept.
    static func contentLost(_ stationError: StationClientError, gateway gatewayError: StationClientError?) -> StationClientError {
        let gatewayLacks = gatewayError.map { $0.kind == .gateway && ($0.status == 404 || $0.status == 410) } ?? true
        guard stationError.kind == .notFound, gatewayLacks else { return gatewayError ?? stationError }
        var lost = stationError
        lost.kind = .contentLost
        lost.message = gatewayError == nil
            ? "the station no longer has the post's bytes"
            : "neither the station nor the gateway has the post's bytes"
        lost.underlying = gatewayError
        return lost
    }

    /// The most bytes a download may write: `known` (a size and whether adding the overhead
    /// overflowed) when given, otherwise the station's upload limit; never more than `maximum`
    /// (the largest file the station stores), whatever size a post states.
    static func downloadLimit(_ known: (Int64, Bool)?, maximum: Int64 = .max) -> Int64 {
        guard let (size, overflow) = known else { return min(Int64(ResponseLimit.storedFile), maximum) }
        return overflow ? maximum : min(max(0, size), maximum)
    }

    /// Streams `/content/<cid>` into `file`, resuming with `Range: bytes=<n>-` after a broken
    /// connection (up to three times), then checks the bytes against the CID. More than `limit`
    /// bytes (announced or sent) fail with `.invalidResponse`.
    private func fetchContent(postCID: String, to file: URL, limit: Int64, progress: ProgressHandler?, operation: String) async throws {
        let parsed = try IPFSGateway.parse(postCID, operation: operation)
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else {
            throw StationClientError.localFile("cannot create \(file.path): errno \(errno)", operation: operation)
        }
        defer { close(descriptor) }
        var written: Int64 = 0
        var total: Int64?
        var resumes = 0
        let deadline = DownloadDeadline(limit: limit, configuration: configuration)
        while true {
            try Task.checkCancellation()
            var options = TransferOptions(response: .stream, timeouts: try deadline.timeouts(operation: operation))
            options.progress = nil
            let path = "/content/\(postCID)"
            let response: HTTPResponse
            do {
                if written > 0 {
                    response = try await signedRange(path, from: written, options: options, operation: operation)
                } else {
                    response = try await sendSigned(.get, path, options: options, operation: operation)
                }
            } catch {
                throw deadline.explain(error, written: written, operation: operation)
            }
            guard response.isSuccess else {
                if case .stream(let stream) = response.body { _ = try? await stream.collect(upTo: 64 * 1024) }
                throw StationClientError.station(response, operation: operation)
            }
            if written > 0 {
                guard response.status == 206, response.contentRange?.range?.lowerBound == written else {
                    throw StationClientError(.invalidResponse, operation: operation, message: "the station did not resume at byte \(written)")
                }
                total = response.contentRange?.completeLength ?? total
            } else {
                total = response.headers["Content-Length"].flatMap { Int64($0) }
            }
            guard case .stream(let stream) = response.body else {
                throw StationClientError(.invalidResponse, operation: operation, message: "no body")
            }
            if let total, total > limit { throw Self.tooLong(limit: limit, source: "the station", operation: operation) }
            do {
                try await Self.append(stream, to: descriptor, path: file.path, written: &written, limit: limit, total: total,
                                      source: "the station", progress: progress, operation: operation)
                break
            } catch let error as TransportError where error.kind == .connectionLost && resumes < 3 {
                resumes += 1
                configuration.log(.warning, "\(operation): connection lost at byte \(written); resuming")
            } catch {
                throw deadline.explain(error, written: written, operation: operation)
            }
        }
        // Ordering: a download the station still holds, renamed into place after this flush.
        _ = DurableWrite.flush(descriptor, need: .ordering)
        try StagedFile.verify(file, is: parsed, source: "the station", operation: operation)
    }

    /// The error for a source that announced or sent more than a download's `limit`.
    /// Appends a body stream to an open file, at most `limit` bytes in all: `written` counts the
    /// bytes already there and goes up chunk by chunk, so a caller that resumes after a lost
    /// connection knows where the file ends.
    ///
    /// - Throws: ``tooLong(limit:source:operation:)`` past the limit, `.localFile` for a failed
    ///   write, and whatever the stream throws.
    static func append(
        _ stream: HTTPBodyStream, to descriptor: Int32, path: String, written: inout Int64, limit: Int64, total: Int64?,
        source: String, progress: ProgressHandler?, operation: String
    ) async throws {
        for try await chunk in stream {
            guard Int64(chunk.count) <= limit - written else {
                throw tooLong(limit: limit, source: source, operation: operation)
            }
            try writeAll(chunk, to: descriptor, path: path, operation: operation)
            written += Int64(chunk.count)
            progress?(ByteProgress(completed: written, total: total))
        }
    }

    static func tooLong(limit: Int64, source: String, operation: String) -> StationClientError {
        StationClientError(.invalidResponse, operation: operation,
                           message: "\(source) sent more than the \(limit) bytes this file can have")
    }

    /// Writes every byte of `chunk` (POSIX `write`, straight from the chunk's storage).
    static func writeAll(_ chunk: Data, to descriptor: Int32, path: String, operation: String) throws {
        if let failure = ResponseSink.writeAll(chunk, to: descriptor) {
            throw StationClientError.localFile("cannot write \(path): \(failure)", operation: operation)
        }
    }

    /// A signed GET with a `Range` header (the header is not part of the signature).
    private func signedRange(_ path: String, from offset: Int64, options: TransferOptions, operation: String) async throws -> HTTPResponse {
        var request = StationCall.signed(.get, path, options: options, timeouts: configuration.requestTimeouts, operation: operation)
        request.unsignedHeaders = [("Range", "bytes=\(offset)-")]
        return try await connection.send(request)
    }
}
