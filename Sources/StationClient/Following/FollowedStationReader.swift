import Envelope
import Foundation
import Manifest
import PQCrypto
import ClassicalCrypto
import Transport
import OrderedJSON
import ContentAddressing

/// Where to find a followed station.
public enum FollowedStationAddress: Sendable, Hashable {
    /// Its HTTP endpoint (read `/profile` for the manifest CID; content from the gateway).
    case endpoint(URL)
    /// Its IPNS name, resolved through the gateway to its `public.json`.
    case ipns(String)
}

/// The decrypted social graph of a followed station.
public struct SocialGraph: Sendable {
    /// The `followers` graph (approved followers), decrypted.
    public var followers: JSONValue?
    /// The `following` graph, decrypted.
    public var following: JSONValue?
}

/// Reads a station this identity follows: its manifest through the gateway, the envelope sealed
/// to the follower's uid, the post key, the metadata and content, and its social graph.
///
/// Only posts shared with this follower (or public) are readable; others are left out of
/// listings. Every byte from the gateway is verified against its CID.
public struct FollowedStationReader: Sendable {
    /// The follower identity whose key opens the envelopes.
    public let identity: FollowerIdentity
    /// The gateway content is read from.
    public let gateway: IPFSGateway
    /// The transport for the followed station's public endpoints.
    public let transport: any HTTPTransport
    /// The TLS key pins `/profile` requests to the followed station's endpoint carry (empty for
    /// plain `http` or a certificate a trusted authority signed).
    public let pins: [PublicKeyFingerprint]

    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - identity: the follower identity whose key opens the envelopes.
    ///   - gateway: the gateway content is read from.
    ///   - transport: the transport for the followed station's public endpoints.
    ///   - pins: the TLS key pins for the followed station's endpoint (see ``FollowedStationHandle/publicKeyPin``).
    public init(identity: FollowerIdentity, gateway: IPFSGateway, transport: any HTTPTransport, pins: [PublicKeyFingerprint] = []) {
        self.identity = identity
        self.gateway = gateway
        self.transport = transport
        self.pins = pins
    }

    /// The station's current manifest CID and, through IPNS, its `public.json`.
    ///
    /// - Throws: ``StationClientError`` when the station or gateway cannot be read;
    ///   `.keyChanged` when the endpoint presents another TLS key than ``pins`` (with the pin as
    ///   ``StationClientError/expectedFingerprint`` and, when the transport can read it, the key
    ///   presented as ``StationClientError/presentedFingerprint``).
    public func pointers(of address: FollowedStationAddress) async throws -> (manifestCID: String?, document: PublicDocument?) {
        switch address {
        case .endpoint(let url):
            let profile: StationProfile
            do {
                profile = try await StationClient.profile(at: url, transport: transport, pins: pins)
            } catch var error as StationClientError where error.kind == .keyChanged {
                if error.expectedFingerprint == nil { error.expectedFingerprint = pins.first }
                if error.presentedFingerprint == nil, let probe = transport as? any ServerKeyProbing {
                    error.presentedFingerprint = try? await probe.presentedPublicKey(at: url)
                }
                throw error
            }
            return (profile.manifestCID, nil)
        case .ipns(let name):
            let document = try await gateway.resolve(ipnsName: name)
            return (document.manifestPointer, document)
        }
    }

    /// Lists the posts of `namespace` readable by this follower: those whose envelope set holds
    /// an envelope for its uid, plus public posts. A post whose envelope or metadata does not open
    /// is reported in ``PostListing/skipped``.
    ///
    /// - Throws: ``StationClientError`` when the manifest cannot be read.
    public func listPosts<Metadata: Decodable & Sendable>(
        of address: FollowedStationAddress, namespace: String, as type: Metadata.Type
    ) async throws -> PostListing<Metadata> {
        try await listEntries(of: address, namespace: namespace, as: type).listing
    }

    /// Lists the posts of `namespace` readable by this follower as ``listPosts(of:namespace:as:)``
    /// does, each with the manifest entry ``download(_:)`` needs, so nothing is fetched twice.
    ///
    /// - Throws: ``StationClientError`` when the manifest cannot be read.
    public func listFollowedPosts<Metadata: Decodable & Sendable>(
        of address: FollowedStationAddress, namespace: String, as type: Metadata.Type
    ) async throws -> FollowedPostListing<Metadata> {
        let (listing, entries) = try await listEntries(of: address, namespace: namespace, as: type)
        return FollowedPostListing(posts: zip(listing.posts, entries).map { FollowedPost(post: $0, entry: $1) },
                                   skipped: listing.skipped, manifestCID: listing.manifestCID)
    }

    /// The listing of ``listPosts(of:namespace:as:)`` and, for each listed post in the same
    /// order, the manifest entry it was read from.
    func listEntries<Metadata: Decodable & Sendable>(
        of address: FollowedStationAddress, namespace: String, as type: Metadata.Type
    ) async throws -> (listing: PostListing<Metadata>, entries: [PostEntry]) {
        let namespace = try StationClient.normalizedNamespace(namespace)
        let (manifestCID, _) = try await pointers(of: address)
        guard let manifestCID else { return (PostListing(posts: [], skipped: [], isOffline: false, manifestCID: nil), []) }
        let manifest: Manifest
        do {
            let limit = ResponseLimit.manifest(maximumPosts: StationClientConfiguration.defaultMaximumManifestPosts)
            manifest = try WireJSON.decode(Manifest.self, from: try await gateway.fetch(cid: manifestCID, limit: limit))
        } catch let error as StationClientError {
            throw error
        } catch {
            throw StationClientError(.invalidResponse, operation: "reading manifest \(manifestCID)", message: "\(error)", underlying: error)
        }
        var listing = PostListing<Metadata>(posts: [], skipped: [], isOffline: false, manifestCID: manifestCID)
        var entries: [PostEntry] = []
        for entry in manifest.posts(in: namespace) {
            do {
                guard let post = try await read(entry, as: type) else { continue }
                listing.posts.append(post)
                entries.append(entry)
            } catch {
                listing.skipped.append(SkippedPost(postCID: entry.postCID, error: StationClientError.wrap(error, operation: "reading post \(entry.postCID)")))
            }
        }
        return (listing, entries)
    }

    /// Reads one entry, or `nil` when it was not shared with this follower.
    private func read<Metadata: Decodable & Sendable>(_ entry: PostEntry, as type: Metadata.Type) async throws -> ListedPost<Metadata>? {
        var raw = ListedPost<JSONValue>(postCID: entry.postCID, envelopesCID: entry.envelopesCID, audienceMode: entry.audienceMode,
                                        createdAt: entry.createdAt, isPublic: !entry.isEncrypted, metadata: nil, rawMetadata: nil)
        if entry.isEncrypted {
            guard let key = try await postKey(for: entry) else { return nil }
            if let metadata = entry.metadata {
                let plaintext = try SecretBox.open(try metadata.sealedBytes(), using: key)
                raw.rawMetadata = try WireJSON.parse(plaintext)
            }
        } else {
            raw.rawMetadata = entry.metadata?.jsonValue
        }
        return try StationClient.typed(raw, as: type)
    }

    /// The post key from `envelopes[uid]`, or `nil` when the post has no envelope for this follower.
    ///
    /// - Throws: ``StationClientError`` when the envelope set cannot be read or the envelope does not open.
    public func postKey(for entry: PostEntry) async throws -> SymmetricKey? {
        let operation = "opening the envelope of \(entry.postCID)"
        guard let envelopesCID = entry.envelopesCID else { return nil }
        let set: EnvelopeSet
        do {
            set = try WireJSON.decode(EnvelopeSet.self, from: try await gateway.fetch(cid: envelopesCID, limit: ResponseLimit.envelopeSet))
        } catch let error as StationClientError {
            throw error
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, message: "not an envelope set", underlying: error)
        }
        guard let envelope = set.envelope(for: identity.uid) else { return nil }
        do {
            return try Envelope.open(envelope, with: identity.kemPrivateKey)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the envelope does not open", underlying: error)
        }
    }

    /// Downloads and decrypts a post shared with this follower (content from the gateway, verified).
    ///
    /// - Throws: ``StationClientError`` `.notShared` when the post was not shared with this follower,
    ///   `.integrity` when it does not open, `.contentLost` when the gateway has no bytes for the
    ///   listed post (404 or 410), `.gateway` when it fails otherwise.
    public func download(_ entry: PostEntry) async throws -> Data {
        let operation = "downloading \(entry.postCID)"
        let bytes: [UInt8]
        do {
            bytes = try await gateway.fetch(cid: entry.postCID, limit: ResponseLimit.storedFile)
        } catch var error as StationClientError where error.kind == .gateway && (error.status == 404 || error.status == 410) {
            // The manifest lists the post, and the gateway (the follower's only source) has not its bytes.
            error.kind = .contentLost
            error.message = "the gateway has no bytes for this listed post"
            throw error
        }
        guard entry.isEncrypted else { return Data(bytes) }
        guard let key = try await postKey(for: entry) else {
            throw StationClientError(.notShared, operation: operation, message: "the post was not shared with \(identity.uid)")
        }
        do {
            return try SecretBox.open(bytes, using: key)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the content does not open", underlying: error)
        }
    }

    /// Downloads a post shared with this follower into `destination`, in constant memory: the
    /// gateway's bytes go to a hidden file beside it (checked against the CID), are opened with
    /// the post key (the tag verified before any plaintext is written), and `destination` appears
    /// only once the whole file verified. Any failure leaves no partial file behind.
    ///
    /// - Parameters:
    ///   - entry: the manifest entry of the post.
    ///   - destination: the file to write (replaced atomically).
    ///   - plaintextSize: the metadata's `size_bytes` when known: no more is fetched than the file can have.
    ///   - progress: told the bytes fetched so far.
    /// - Throws: as ``download(_:)``, and `.localFile` when `destination` cannot be written.
    public func download(_ entry: PostEntry, to destination: URL, plaintextSize: Int64? = nil, progress: ProgressHandler? = nil) async throws {
        let operation = "downloading \(entry.postCID) to a file"
        var key: SymmetricKey?
        if entry.isEncrypted {
            key = try await postKey(for: entry)
            guard key != nil else {
                throw StationClientError(.notShared, operation: operation, message: "the post was not shared with \(identity.uid)")
            }
        }
        let overhead = entry.isEncrypted ? Int64(SecretBox.overheadByteCount) : 0
        let limit = StationClient.downloadLimit(plaintextSize.map { $0.addingReportingOverflow(overhead) })
        StagedFile.removeStalePartials(beside: destination, suffixes: ["sealed", "part", "gateway"])
        let temporary = StagedFile.temporary(beside: destination, suffix: key == nil ? "part" : "sealed")
        defer { try? FileManager.default.removeItem(at: temporary) }
        try await gateway.fetch(cid: entry.postCID, to: temporary, maximumSize: limit, progress: progress)
        try Task.checkCancellation()
        guard let key else {
            try StagedFile.moveIntoPlace(temporary, at: destination, operation: operation)
            return
        }
        do {
            try SecretBox.openFile(at: temporary, to: destination, using: key)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the content does not open", underlying: error)
        }
    }

    /// Decrypts the station's social graph (`followers_cid`, `following_cid`) with the decoder
    /// envelope sealed to this follower (`follow_decoder_envelopes_cid`).
    ///
    /// - Returns: `nil` when the station holds no decoder envelope for this follower.
    /// - Throws: ``StationClientError`` when a document cannot be read or does not open.
    public func socialGraph(of document: PublicDocument) async throws -> SocialGraph? {
        let operation = "decrypting the social graph of \(document.uid)"
        guard let decodersCID = document.followDecoderEnvelopesCID else { return nil }
        let decoders = try WireJSON.parse(try await gateway.fetch(cid: decodersCID, limit: ResponseLimit.envelopeSet))
        guard let mine = decoders["envelopes"]?[identity.uid]?.arrayValue else { return nil }
        let hex = mine.first(where: { $0["device_uid"]?.stringValue == identity.uid })?["envelope"]?.stringValue
            ?? mine.first?["envelope"]?.stringValue
        guard let hex else { return nil }
        let key: SymmetricKey
        do {
            key = try Envelope.open(hex, with: identity.kemPrivateKey)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "the decoder envelope does not open", underlying: error)
        }
        func open(_ cid: String?) async throws -> JSONValue? {
            guard let cid else { return nil }
            do {
                return try WireJSON.parse(try SecretBox.open(try await gateway.fetch(cid: cid, limit: ResponseLimit.followers), using: key))
            } catch let error as StationClientError {
                throw error
            } catch {
                throw StationClientError(.integrity, operation: operation, message: "\(cid) does not open", underlying: error)
            }
        }
        return SocialGraph(followers: try await open(document.followersCID), following: try await open(document.followingCID))
    }
}
