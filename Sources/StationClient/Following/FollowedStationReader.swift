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
/// listings. Every byte from the gateway is verified against its CID. Listings run on the same
/// engine as ``StationClient/listPosts(as:)``, with the same limits and the same offline view.
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
    /// The limits listings keep to.
    let settings: ListingSettings
    /// The offline view of the listings read.
    let offline: OfflineListings
    /// The highest IPNS record sequence seen per name, below which a record is a rollback.
    let ipnsFloors = IPNSFloors()
}

/// The rollback floor of each IPNS name a reader resolves: the highest record sequence it has
/// verified (or was given), shared by copies of the reader.
final class IPNSFloors: Sendable {
    private let floors = Locked<[String: UInt64]>([:])

    /// Records `sequence` for `name` (raising its floor), or throws `.integrity` when it is below
    /// the floor: an older record a gateway replays.
    func admit(_ sequence: UInt64, for name: String, operation: String) throws {
        let key = Self.key(name)
        let floor = floors.withLock { floors -> UInt64? in
            if let floor = floors[key], sequence < floor { return floor }
            floors[key] = max(sequence, floors[key] ?? 0)
            return nil
        }
        try Self.refuseRollback(sequence, floor: floor, operation: operation)
    }

    /// The one rollback check of IPNS records (endpoint moves and followed readers): throws
    /// `.integrity` when `sequence` is below `floor`.
    static func refuseRollback(_ sequence: UInt64, floor: UInt64?, operation: String) throws {
        guard let floor, sequence < floor else { return }
        throw StationClientError(.integrity, operation: operation,
                                 message: "the IPNS record has sequence \(sequence), older than \(floor) already seen (a rollback)")
    }

    /// Raises the floor of `name` to `sequence` (a sequence known from elsewhere: a handle).
    func admit(_ sequence: UInt64, for name: String) {
        floors.withLock { $0[Self.key(name), default: 0] = max($0[Self.key(name)] ?? 0, sequence) }
    }

    /// One key per IPNS key, whichever form (`k51…` name or `12D3…` peer id) names it.
    private static func key(_ name: String) -> String {
        (try? PeerID(name))?.ipnsName ?? name
    }
}

// The initializer and methods are declared in an extension, so the struct keeps its memberwise
// `init(identity:gateway:transport:pins:settings:offline:)`, which the public initializer and
// `StationClient.reader(for:gateway:)` build a reader with.
extension FollowedStationReader {
    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - identity: the follower identity whose key opens the envelopes.
    ///   - gateway: the gateway content is read from.
    ///   - transport: the transport for the followed station's public endpoints.
    ///   - pins: the TLS key pins for the followed station's endpoint (see ``FollowedStationHandle/publicKeyPin``).
    ///   - configuration: the limits listings keep to (``StationClientConfiguration/maximumManifestPosts``,
    ///     ``StationClientConfiguration/rewrapConcurrency`` as the posts read at once,
    ///     ``StationClientConfiguration/metadataDateDecoding``) and where the offline view is kept
    ///     (its ``StationClientConfiguration/cacheStore`` when
    ///     ``StationClientConfiguration/persistsOfflineListing``); `nil` for the defaults and an
    ///     offline view kept in memory only.
    public init(
        identity: FollowerIdentity, gateway: IPFSGateway, transport: any HTTPTransport, pins: [PublicKeyFingerprint] = [],
        configuration: StationClientConfiguration? = nil
    ) {
        let offline = configuration.map {
            OfflineListings(cacheStore: $0.cacheStore, persists: $0.persistsOfflineListing, log: $0.log)
        } ?? OfflineListings(cacheStore: InMemoryCacheStore(), persists: false, log: nil)
        self.init(identity: identity, gateway: gateway, transport: transport, pins: pins,
                  settings: configuration.map(ListingSettings.init) ?? ListingSettings(), offline: offline)
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
                profile = try await StationConnection.read(.profile, at: StationOrigin(url: url, pins: pins), transport: transport)
            } catch var error as StationClientError where error.kind == .keyChanged {
                if error.expectedFingerprint == nil { error.expectedFingerprint = pins.first }
                if error.presentedFingerprint == nil { error.presentedFingerprint = await transport.readablePublicKey(at: url) }
                throw error
            }
            return (profile.manifestCID, nil)
        case .ipns(let name):
            let resolved = try await resolvedDocument(ipnsName: name)
            return (resolved.document.manifestPointer, resolved.document)
        }
    }

    /// Lists the posts of `namespace` readable by this follower: those whose envelope set holds
    /// an envelope for its uid, plus public posts. A post whose envelope or metadata does not open
    /// is reported in ``PostListing/skipped``. Each envelope set is fetched once, however many
    /// posts name it.
    ///
    /// When the station is unreachable, returns the last listing this reader (or, for a reader
    /// from ``StationClient/reader(for:gateway:)``, the client) read online, marked
    /// ``PostListing/isOffline``, instead of failing.
    ///
    /// - Throws: ``StationClientError`` when the station is unreachable and there is no offline
    ///   listing, when the manifest cannot be read, or when it holds more than the configured
    ///   ``StationClientConfiguration/maximumManifestPosts`` (`.tooLarge`; the offline view is kept).
    public func listPosts<Metadata: Decodable & Sendable>(
        of address: FollowedStationAddress, namespace: String, as type: Metadata.Type
    ) async throws -> PostListing<Metadata> {
        let namespace = try StationClient.normalizedNamespace(namespace)
        let operation = "listing namespace \(namespace) of a followed station"
        let item = CacheItem.offlineListing(followedStation: address, namespace: namespace)
        let manifestCID: String?
        do {
            manifestCID = try await pointers(of: address).manifestCID
        } catch let error as StationClientError where error.kind == .unreachable {
            if let listing = await offline.listing(item: item, as: type, dates: settings.dates,
                                                   memoryLimit: settings.maximumListingMemory) {
                settings.log?(LogEvent(level: .warning, message: "\(operation): station unreachable, showing the offline listing"))
                return listing
            }
            throw error
        }
        guard let manifestCID else { return PostListing(posts: [], skipped: [], isOffline: false, manifestCID: nil) }
        let manifest = try await ManifestSource.gatewayManifest(cid: manifestCID, from: gateway, limits: settings.manifestLimits)
        let entries = manifest.posts(in: namespace)
        let refused = ListingEngine.skippedEntries(of: manifest, namespace: namespace, operation: operation)
        let width = ResponseLimit.followedListingWidth(concurrency: settings.concurrency, entryCount: entries.count)
        let engine = ListingEngine(keys: .envelopes(EnvelopeKeys(identity: identity, gateway: gateway)))
        let read = try await engine.read(entries, cachedKeys: [SymmetricKey?](repeating: nil, count: entries.count), width: width)
        let typed = ListingEngine.typed(read.posts, as: type, dates: settings.dates, memoryLimit: settings.maximumListingMemory,
                                        operation: operation)
        let skipped = refused + read.skipped + typed.skipped
        await offline.record(read.posts, item: item, complete: skipped.isEmpty, manifestCID: manifestCID)
        return PostListing(posts: typed.posts, skipped: skipped, isOffline: false, manifestCID: manifestCID)
    }

    /// The post key from `envelopes[uid]`, or `nil` when the post has no envelope for this follower.
    ///
    /// - Throws: ``StationClientError`` when the envelope set cannot be read or the envelope does not open.
    public func postKey(for entry: PostEntry) async throws -> SymmetricKey? {
        try await EnvelopeKeys(identity: identity, gateway: gateway).key(for: entry)
    }

    /// Downloads and decrypts a listed post shared with this follower (content from the gateway,
    /// verified), as ``StationClient/download(_:)`` does for one's own posts.
    ///
    /// - Throws: ``StationClientError`` `.notShared` when the post was not shared with this follower,
    ///   `.integrity` when it does not open, `.contentLost` when the gateway has no bytes for the
    ///   listed post (404 or 410), `.gateway` when it fails otherwise.
    public func download<Metadata>(_ post: ListedPost<Metadata>) async throws -> Data {
        try await download(Self.entry(of: post))
    }

    /// Downloads a listed post shared with this follower into `destination`, in constant memory,
    /// as ``download(_:to:plaintextSize:progress:)-(PostEntry,_,_,_)`` does; the size the metadata
    /// states (``StatesPlaintextSize``, such as `DriveFileMetadata`'s `size_bytes`) bounds what
    /// is fetched.
    ///
    /// - Throws: as ``download(_:to:plaintextSize:progress:)-(PostEntry,_,_,_)``.
    public func download<Metadata>(_ post: ListedPost<Metadata>, to destination: URL, progress: ProgressHandler? = nil) async throws {
        try await download(Self.entry(of: post), to: destination, plaintextSize: post.plaintextSize, progress: progress)
    }

    /// Downloads a listed post shared with this follower into `destination`, in constant memory,
    /// fetching no more than `plaintextSize` bytes of plaintext (plus the encryption overhead):
    /// the size the app knows from elsewhere, which wins over any the metadata states; `nil` for
    /// the metadata's (``StatesPlaintextSize``).
    ///
    /// - Throws: as ``download(_:to:plaintextSize:progress:)-(PostEntry,_,_,_)``.
    public func download<Metadata>(
        _ post: ListedPost<Metadata>, to destination: URL, plaintextSize: Int64?, progress: ProgressHandler? = nil
    ) async throws {
        try await download(Self.entry(of: post), to: destination, plaintextSize: plaintextSize ?? post.plaintextSize,
                           progress: progress)
    }

    /// The manifest entry fields a download of `post` needs.
    private static func entry<Metadata>(of post: ListedPost<Metadata>) -> PostEntry {
        PostEntry(postCID: post.postCID, audienceMode: post.audienceMode, isEncrypted: !post.isPublic,
                  envelopesCID: post.envelopesCID, envelopesCount: nil, createdAt: post.createdAt)
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
    /// - Throws: as ``download(_:)-(PostEntry)``, and `.localFile` when `destination` cannot be written.
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
        try await gateway.fetch(cid: entry.postCID, to: temporary, maximumSize: limit,
                                progress: FileProgress.handler(progress, wireOverhead: overhead))
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
        guard let mine = try await decoderEnvelopes(of: document) else { return nil }
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

/// The limits a listing keeps to, from a ``StationClientConfiguration`` or the defaults.
struct ListingSettings: Sendable {
    /// ``StationClientConfiguration/maximumManifestPosts``.
    var maximumManifestPosts = StationClientConfiguration.defaultMaximumManifestPosts
    /// ``StationClientConfiguration/maximumPostMetadataBytes``.
    var maximumPostMetadataBytes = ManifestLimits.defaultMaximumMetadataBytes
    /// ``StationClientConfiguration/maximumPostMetadataDepth``.
    var maximumPostMetadataDepth = ManifestLimits.defaultMaximumMetadataDepth
    /// ``StationClientConfiguration/maximumManifestMemory``.
    var maximumManifestMemory = ManifestLimits.defaultMaximumMemory
    /// ``StationClientConfiguration/maximumListingMemory``.
    var maximumListingMemory = StationClientConfiguration.defaultMaximumListingMemory
    /// ``StationClientConfiguration/rewrapConcurrency``: how many posts are read at once.
    var concurrency = 8
    /// ``StationClientConfiguration/metadataDateDecoding``.
    var dates: WireJSON.DateDecoding = .flexible
    /// ``StationClientConfiguration/log``.
    var log: LogHandler?

    init() {}

    init(_ configuration: StationClientConfiguration) {
        maximumManifestPosts = configuration.maximumManifestPosts
        maximumPostMetadataBytes = configuration.maximumPostMetadataBytes
        maximumPostMetadataDepth = configuration.maximumPostMetadataDepth
        maximumManifestMemory = configuration.maximumManifestMemory
        maximumListingMemory = configuration.maximumListingMemory
        concurrency = configuration.rewrapConcurrency
        dates = configuration.metadataDateDecoding
        log = configuration.log
    }
}

extension ListingSettings {
    /// What a manifest read for a listing may hold.
    var manifestLimits: ManifestLimits {
        ManifestLimits(maximumPosts: maximumManifestPosts, maximumMetadataBytes: maximumPostMetadataBytes,
                       maximumMetadataDepth: maximumPostMetadataDepth, maximumMemory: maximumManifestMemory)
    }
}
