import ClassicalCrypto
import Foundation
import Manifest
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OrderedJSON
import ContentAddressing

/// An IPNS name resolved through its signed record: the verified record and the `public.json`
/// it points to, its bytes matched against the record's CID.
public struct ResolvedIPNSName: Sendable {
    /// The name resolved (its Ed25519 key verified the record).
    public var name: PeerID
    /// The verified record (its sequence, validity and value).
    public var record: IPNSRecord
    /// The CID the record points to.
    public var cid: CID
    /// The document's bytes, as fetched and verified against ``cid``.
    public var documentBytes: [UInt8]
    /// The document, parsed.
    public var document: PublicDocument
    /// The record's sequence number.
    public var sequence: UInt64 { record.sequence }
}

/// Reads content from an IPFS HTTP gateway (`/ipfs/<cid>`, `/ipns/<name>`) over any
/// `HTTPTransport`.
///
/// A gateway is untrusted: every byte fetched by CID is checked against the CID (Kubo's default
/// UnixFS layout) before it is handed out, and an IPNS name is resolved through its signed record
/// (``resolveVerified(ipnsName:at:)``); callers still check what the document says (the station
/// uid and keys) and that the record is not older than one already seen.
public struct IPFSGateway: Sendable {
    /// The gateway's base URL (`https://ipfs.example`); paths are appended to it.
    public let baseURL: URL
    /// The transport used for gateway requests.
    public let transport: any HTTPTransport
    /// Time limits for gateway requests.
    public var timeouts: TransferTimeouts

    /// Creates a gateway reader.
    public init(baseURL: URL, transport: any HTTPTransport, timeouts: TransferTimeouts = TransferTimeouts(idle: 60, total: 300)) {
        self.baseURL = baseURL
        self.transport = transport
        self.timeouts = timeouts
    }

    /// The bytes of the file with this CID, verified.
    ///
    /// - Throws: ``StationClientError``: `.invalidResponse` for a malformed CID, `.refused` for an
    ///   identity-multihash CID (it names no block, so nothing fetched could be verified),
    ///   `.gateway` for an error status or when the gateway cannot be reached (then with
    ///   `transportError`), `.integrity` when the bytes do not match the CID.
    public func fetch(cid: String, limit: Int = TransferOptions.defaultMemoryLimit) async throws -> [UInt8] {
        let operation = "fetching \(cid) from the gateway"
        let parsed = try Self.parseFetchable(cid, operation: operation)
        let response = try await get("/ipfs/\(parsed)", options: TransferOptions(response: .memory(limit: limit), timeouts: timeouts),
                                     operation: operation)
        let bytes = [UInt8](response.body.data ?? Data())
        guard parsed.matches(fileBytes: bytes) else {
            throw StationClientError(.integrity, operation: operation, message: "the gateway's bytes do not match the CID")
        }
        return bytes
    }

    /// Writes the file with this CID to `destination`, verified in constant memory.
    ///
    /// The bytes go to a hidden temporary file beside `destination`, which is renamed onto it only
    /// once they match the CID: `destination` is then the whole verified file, and after any
    /// failure it is exactly what it was before (an existing file is never truncated or removed)
    /// and no temporary file is left.
    ///
    /// At most the file's size is written: the UnixFS `filesize` its root block records (fetched
    /// first with `?format=raw` and verified against the CID), or when the gateway does not serve
    /// blocks, `maximumSize` (`nil`: the station's 100 MiB upload limit, which no stored file
    /// exceeds), whichever is smaller. A gateway that announces or sends more (an endless body,
    /// say) fails the fetch with `.invalidResponse` once it passes the limit.
    ///
    /// - Throws: as ``fetch(cid:limit:)``, and `.localFile` when `destination` cannot be written.
    public func fetch(cid: String, to destination: URL, maximumSize: Int64? = nil, progress: ProgressHandler? = nil) async throws {
        let operation = "fetching \(cid) from the gateway"
        let parsed = try Self.parseFetchable(cid, operation: operation)
        var limit = max(0, maximumSize ?? Int64(ResponseLimit.storedFile))
        if let recorded = await rootFileSize(of: parsed) { limit = min(limit, recorded) }
        let temporary = StagedFile.temporary(beside: destination, suffix: "gateway")
        // Once renamed the temporary is gone and this does nothing.
        defer { try? FileManager.default.removeItem(at: temporary) }
        let response = try await get("/ipfs/\(parsed)", options: TransferOptions(response: .stream, timeouts: timeouts),
                                     operation: operation)
        try await Self.write(response, to: temporary, limit: limit, progress: progress, operation: operation)
        try StagedFile.verify(temporary, is: parsed, source: "the gateway", operation: operation)
        try StagedFile.moveIntoPlace(temporary, at: destination, operation: operation)
    }

    /// The file size the root block of `cid` records, read from the block the gateway serves for
    /// `?format=raw` once it matches the CID; `nil` when the gateway serves no such block (or
    /// anything else fails: the caller then falls back to a size it knows).
    func rootFileSize(of cid: CID) async -> Int64? {
        var request = HTTPRequest(method: .get, url: baseURL.appendingPathComponent("ipfs/\(cid)"))
        request.url = URL(string: request.url.absoluteString + "?format=raw") ?? request.url
        request.headers.add("Accept", value: "application/vnd.ipld.raw")
        // Kubo refuses blocks over 2 MiB; a root block is far smaller.
        let options = TransferOptions(response: .memory(limit: 2 << 20), timeouts: timeouts)
        guard let response = try? await transport.send(request, body: .none, options: options), response.isSuccess,
              let data = response.body.data else { return nil }
        let block = [UInt8](data)
        guard cid.matches(block: block),
              let size = try? UnixFS.fileSize(root: cid, blocks: { $0 == cid ? block : nil }) else { return nil }
        return Int64(clamping: size)
    }

    /// Writes a streamed answer's body into a new file at `url` (mode 0600), refusing more than
    /// `limit` bytes, announced or sent.
    private static func write(
        _ response: HTTPResponse, to url: URL, limit: Int64, progress: ProgressHandler?, operation: String
    ) async throws {
        let total = response.headers["Content-Length"].flatMap { Int64($0) }
        if let total, total > limit { throw StationClient.tooLong(limit: limit, source: "the gateway", operation: operation) }
        guard case .stream(let stream) = response.body else {
            throw StationClientError(.invalidResponse, operation: operation, message: "no body")
        }
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else {
            throw StationClientError.localFile("cannot create \(url.path): errno \(errno)", operation: operation)
        }
        defer { close(descriptor) }
        var written: Int64 = 0
        do {
            try await StationClient.append(stream, to: descriptor, path: url.path, written: &written, limit: limit, total: total,
                                           source: "the gateway", progress: progress, operation: operation)
        } catch {
            throw StationClientError.wrapGateway(error, operation: operation)
        }
        // Renamed into place later (StagedFile.replace), after this flush. Ordering: the bytes are
        // the gateway's to fetch again, so a power cut may lose them, but never the bytes alone.
        _ = DurableWrite.flush(descriptor, need: .ordering)
    }

    /// The `public.json` an IPNS name points to, verified: see ``resolveVerified(ipnsName:at:)``.
    ///
    /// - Throws: as ``resolveVerified(ipnsName:at:)``.
    public func resolve(ipnsName name: String) async throws -> PublicDocument {
        try await resolveVerified(ipnsName: name).document
    }

    /// Resolves an IPNS name through its signed record and returns the `public.json` it points to.
    ///
    /// Asks the gateway for the record itself (`/ipns/<name>?format=ipns-record`, `Accept:
    /// application/vnd.ipfs.ipns-record`, as Kubo serves it), verifies its V2 signature against the
    /// Ed25519 key inside the name and its validity at `now` (`IPNSRecord`), requires its value
    /// to be `/ipfs/<cid>`, and fetches that CID, verifying the bytes against it. A gateway can
    /// therefore withhold or delay a record, or serve an older one (callers compare
    /// ``ResolvedIPNSName/sequence``), but cannot make one up.
    ///
    /// - Throws: ``StationClientError``: `.refused` for a name that is not an Ed25519 IPNS name or
    ///   peer id, `.gateway` for an error status or no answer, `.integrity` for a record that does
    ///   not verify, has expired or points elsewhere than `/ipfs/<cid>`, and for bytes that do not
    ///   match the CID, `.invalidResponse` for a document that is not a `public.json`.
    public func resolveVerified(ipnsName name: String, at now: Date = Date()) async throws -> ResolvedIPNSName {
        let operation = "resolving /ipns/\(name)"
        guard !name.isEmpty, name.utf8.allSatisfy({ $0.isASCIIAlphanumeric }), let peer = try? PeerID(name),
              peer.ed25519PublicKey != nil else {
            throw StationClientError(.refused, operation: operation, message: "not an Ed25519 IPNS name")
        }
        let url = URL(string: Self.joined(baseURL, "/ipns/\(name)") + "?format=ipns-record") ?? baseURL
        var request = HTTPRequest(method: .get, url: url)
        request.headers.add("Accept", value: IPNSRecord.mediaType)
        let response = try await send(request, options: TransferOptions(response: .memory(limit: IPNSRecord.maximumByteCount),
                                                                       timeouts: timeouts), operation: operation)
        let record: IPNSRecord
        do {
            record = try IPNSRecord.verified([UInt8](response.body.data ?? Data()), name: peer, at: now)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "\(error)", underlying: error)
        }
        guard let cid = record.ipfsCID else {
            throw StationClientError(.integrity, operation: operation,
                                     message: "the IPNS record points to \(record.value.debugDescription), not /ipfs/<cid>")
        }
        let bytes = try await fetch(cid: cid.description, limit: 1 << 20)
        let document: PublicDocument
        do {
            document = try WireJSON.decode(PublicDocument.self, from: bytes)
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "not a public.json: \(error)", underlying: error)
        }
        return ResolvedIPNSName(name: peer, record: record, cid: cid, documentBytes: bytes, document: document)
    }

    private func get(_ path: String, options: TransferOptions, operation: String) async throws -> HTTPResponse {
        let url = baseURL.appendingPathComponent(String(path.dropFirst()))
        return try await send(HTTPRequest(method: .get, url: url), options: options, operation: operation)
    }

    /// `baseURL` with `path` appended as text (no escaping of what follows).
    private static func joined(_ base: URL, _ path: String) -> String {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text + path
    }

    private func send(_ request: HTTPRequest, options: TransferOptions, operation: String) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await transport.send(request, body: .none, options: options)
        } catch {
            throw StationClientError.wrapGateway(error, operation: operation)
        }
        guard response.isSuccess else { throw StationClientError.gateway(response, operation: operation) }
        return response
    }

    /// A CID whose block can be fetched and verified: not an identity multihash.
    static func parseFetchable(_ cid: String, operation: String) throws -> CID {
        let parsed = try parse(cid, operation: operation)
        guard !parsed.multihash.isIdentity else {
            throw StationClientError(.refused, operation: operation,
                                     message: "an identity-multihash CID carries its own bytes; there is nothing to fetch and verify")
        }
        return parsed
    }

    static func parse(_ cid: String, operation: String) throws -> CID {
        do {
            return try CID(cid)
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "\(cid.debugDescription) is not a CID",
                                     underlying: error)
        }
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}
