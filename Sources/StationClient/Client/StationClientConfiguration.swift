// `SystemLibraries` is the package trait that links libcurl on Linux (see Package.swift).
#if SystemLibraries && os(Linux)
import CurlTransport
#endif
import URLSessionTransport
import Foundation
import Manifest
import Transport
import OrderedJSON

/// How a ``StationClient`` talks to its station and where it keeps its secrets.
public struct StationClientConfiguration: Sendable {
    /// The manifest namespace this app reads and writes (`drive` for a file app). Pick a stable,
    /// unique name and never change it.
    public var namespace: String
    /// The transport for station calls. Default: `CurlTransport` on Linux, `URLSessionTransport`
    /// on Apple platforms (where it enforces public-key pins and reads a server's key in the
    /// server-trust challenge).
    public var transport: any HTTPTransport
    /// The IPFS gateway for manifest and content fallback and IPNS resolution, or `nil` for none.
    public var gateway: IPFSGateway?
    /// Where credentials and other secrets are kept (never caches: see ``cacheStore``).
    public var keyStore: any KeyStore
    /// Where the post-key cache (see ``persistsPostKeys``) and the decrypted offline listing are kept. Default
    /// (``defaultCacheStore(for:)``): on disk only when the app chose a file-backed key store —
    /// an ``EncryptedFileCacheStore`` in a `cache` folder beside a ``FileKeyStore``'s files — and
    /// in memory (``InMemoryCacheStore``) for any other key store, so a Keychain or a test's store
    /// writes nothing to disk. To keep caches across launches with another store, pass an
    /// ``EncryptedFileCacheStore`` in a directory of the app's choosing
    /// (``EncryptedFileCacheStore/defaultDirectory``, say). DriveSync keeps a folder's sync state
    /// here too, and refuses a store that does not survive a relaunch
    /// (``CacheStore/persistsAcrossLaunches``).
    public var cacheStore: any CacheStore
    /// An override of the TLS key pin kept in the credentials: when not empty, every request to
    /// an `https` station endpoint carries these pins (`TransferOptions.pinnedPublicKeys`) instead
    /// of ``DeviceCredentials/stationPublicKeyPin``, and pairing uses them without asking or
    /// keeping a pin of its own. Empty (the default, and what apps normally want): pairing learns
    /// the pin (see ``StationKeyTrust``) and the credentials carry it from then on, so nothing
    /// needs re-applying on launch. A transport that cannot enforce pins refuses pinned requests
    /// (`.pinningUnsupported`); a request is never sent unpinned.
    public var stationPublicKeyPins: [PublicKeyFingerprint]
    /// How many `/rewrap` calls a listing runs at once (at least 1). Over HTTP/2 they are streams
    /// of one connection; over HTTP/1.1, one connection each, reused across calls. A listing runs
    /// at most 62 whatever this says: each answer may take about 16 KB in memory (an envelope is
    /// 2,324 hex characters), and a listing holds at most 1 MiB of them at once.
    public var rewrapConcurrency: Int
    /// The most posts (in all namespaces together) a manifest read by this client may hold,
    /// counted while it is read: at the first post past it the reader stops, before any
    /// `/rewrap`, and the listing fails with `StationClientError.Kind.tooLarge` whose
    /// ``StationClientError/limit`` is this number; the offline view stays as it was. The
    /// manifest's bytes are bounded too, at 4 KiB per post plus 64 KiB (a longer answer fails
    /// with `.invalidResponse`). A listing makes at most one `/rewrap` call per post, so at most
    /// this many. Also the limit of followed stations' manifests read with this configuration.
    /// Default: ``defaultMaximumManifestPosts``.
    public var maximumManifestPosts: Int
    /// The default of ``maximumManifestPosts``, also used when reading a followed station's
    /// manifest: 10,000 posts (a manifest of at most about 41 MiB).
    public static let defaultMaximumManifestPosts = 10_000
    /// The most bytes of JSON text one post's `metadata` may take in a manifest (sealed hex with
    /// its quotes, or a public post's object). A post past it is skipped, reported in
    /// ``PostListing/skipped``, and left out of the offline view; the rest of the listing is read.
    /// It is measured without building the value. Default 64 KiB
    /// (`ManifestLimits.defaultMaximumMetadataBytes`).
    public var maximumPostMetadataBytes: Int = ManifestLimits.defaultMaximumMetadataBytes
    /// How deep one post's `metadata` may nest in a manifest (`{"a":1}` is 1, a string 0). A
    /// post past it is skipped and reported as for ``maximumPostMetadataBytes``. Default 32
    /// (`ManifestLimits.defaultMaximumMetadataDepth`).
    public var maximumPostMetadataDepth: Int = ManifestLimits.defaultMaximumMetadataDepth
    /// The most memory, in bytes, reading one manifest may take (its entries, the text they keep
    /// and any JSON values built), charged as it is read: past it the reader stops and the
    /// listing fails with `StationClientError.Kind.tooLarge` whose ``StationClientError/limit``
    /// is this number; the offline view stays as it was. A public post's metadata is kept as its
    /// JSON text, not built into a tree. Default 128 MiB (`ManifestLimits.defaultMaximumMemory`).
    public var maximumManifestMemory: Int = ManifestLimits.defaultMaximumMemory
    /// The most memory, in bytes, the JSON trees of one listing's metadata may take together
    /// when the listing parses them for its type (JSON, or an app's `Decodable` type; drive
    /// metadata is read from the text without a tree), charged value by value: a post whose
    /// metadata would pass it is skipped and reported in ``PostListing/skipped`` as
    /// `StationClientError.Kind.tooLarge`; the rest of the listing is read. Default
    /// ``defaultMaximumListingMemory``.
    public var maximumListingMemory: Int = StationClientConfiguration.defaultMaximumListingMemory
    /// The default of ``maximumListingMemory``: 64 MiB.
    public static let defaultMaximumListingMemory = 64 << 20
    /// Whether recovered post keys are also kept in ``cacheStore``, so a relaunched app lists
    /// its posts without asking the station to rewrap each one again (a `/rewrap` costs a real
    /// station tens of milliseconds of CPU per post). Default `true`.
    ///
    /// The keys go where ``cacheStore`` puts them: sealed on disk (SecretBox, in an
    /// ``EncryptedFileCacheStore``, the default beside a ``FileKeyStore``) or in memory only (an
    /// ``InMemoryCacheStore``, the default for any other key store). A listing writes only what
    /// changed (nothing when it learned no key); keys of posts no longer in the manifest are
    /// dropped. ``StationClient/clearPostKeyCache()`` and ``StationClient/forget()`` remove them.
    ///
    /// An app that must not keep post keys at rest sets it to `false`: its client then keeps keys
    /// in memory only, and its first listing removes the keys an earlier run kept in the cache store.
    public var persistsPostKeys: Bool
    /// Whether the last decrypted listing is kept in ``cacheStore`` for the offline view.
    public var persistsOfflineListing: Bool
    /// Whether connection, DNS and tunnel failures trigger an IPNS lookup of the station's new endpoint.
    public var followsEndpointChanges: Bool
    /// Time limits for API calls (the seed guide's ~120 s; writes wait on IPFS).
    public var requestTimeouts: TransferTimeouts
    /// The default of ``requestTimeouts``, also used by calls made without a client (another
    /// station's profile, a follow request): 120 s idle, 300 s in all.
    public static let defaultRequestTimeouts = TransferTimeouts(idle: 120, total: 300)
    /// Time limits for content transfers (idle limit only: large files take long; a download's
    /// overall deadline comes from ``minimumDownloadRate``).
    public var transferTimeouts: TransferTimeouts
    /// The slowest average rate, in bytes per second, at which the station may send a download:
    /// a download of at most `n` bytes (the file's known size, or the station's upload limit)
    /// must end within ``downloadGracePeriod`` + `n` / rate, or fails with `.tooSlow`, so a
    /// station cannot stretch a download by trickling bytes just under the idle limit. Default
    /// 16 KiB/s (100 MiB in about 1 h 47 min); 0 turns the deadline off. A `total` in
    /// ``transferTimeouts`` still applies when it is shorter.
    public var minimumDownloadRate: Int = 16 * 1024
    /// Added to every download's deadline (see ``minimumDownloadRate``). Default 60 s.
    public var downloadGracePeriod: TimeInterval = 60
    /// The largest file the station stores: its upload limit (`MAX_UPLOAD_SIZE`, 100 MiB unless
    /// its operator raised it; set this to match a station that accepts more). A size a post's
    /// metadata states is the station's word and is not believed past it: a download of this
    /// station's post never writes more, and its deadline (``minimumDownloadRate``) is computed
    /// from at most this size, so a post stating 10¹² bytes cannot hold a download for a year.
    public var maximumFileByteCount: Int64 = StationClient.maximumRequestByteCount
    /// Receives the SDK's log lines; the SDK itself never prints. Lines never contain secrets.
    public var log: LogHandler?
    /// Where a download into a file the app opened stages its bytes, and a reshare its plaintext,
    /// while they are made (removed afterwards). A publish writes nothing here: it encrypts the
    /// file as it is sent.
    public var temporaryDirectory: URL
    /// How `Date` members of the app's metadata are written when publishing. Default:
    /// integer Unix seconds (`"created_at": 1704067200`), the station's convention, which other
    /// clients read.
    public var metadataDateEncoding: JSONDateEncoding
    /// How `Date` members of metadata are read when listing. Default: integer or fractional Unix
    /// seconds, or ISO-8601 strings, whichever a post carries.
    public var metadataDateDecoding: JSONDateDecoding
    /// Turns keys the app keeps itself back into keys when the client loads credentials or the
    /// follower identity that hold them by reference (``StationClient/load(configuration:)``,
    /// following). `nil` (the default) suffices for pure-Swift keys; loading a reference without
    /// it throws `StationClientError.Kind.keyStore`. Set it after creating the configuration;
    /// see <doc:KeepingDeviceKeys>.
    public var keyReferenceResolver: KeyReferenceResolver? = nil
    /// Where new device keys come from when pairing, following or
    /// ``StationClient/followerIdentity(name:)`` needs keys the app did not pass: fresh pure-Swift
    /// keys (``KeyPolicy/generatePureSwiftKeys``, the default), the app's factory
    /// (``KeyPolicy/factory(_:)``), or none (``KeyPolicy/refuseToGenerate``: such a call throws
    /// `.refused` naming it). Set it after creating the configuration; see <doc:KeepingDeviceKeys>.
    public var keyPolicy: KeyPolicy = .generatePureSwiftKeys
    /// Hears each stage of a publish as it starts (tests hold or cancel a publish there).
    var publishStageObserver: (@Sendable (PublishStage) -> Void)? = nil

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - namespace: the app's manifest namespace.
    ///   - keyStore: the secret store (``FileKeyStore`` or the app's own).
    ///   - transport: the station transport; `nil` for the platform's default (``defaultTransport()``).
    ///   - gateway: the IPFS gateway for fallbacks and IPNS, or `nil` for none.
    ///   - stationPublicKeyPins: an override of the pin kept in the credentials (empty: use that pin).
    ///   - rewrapConcurrency: how many `/rewrap` calls a listing runs at once (at least 1).
    ///   - persistsPostKeys: whether recovered post keys are also kept in the cache store (default `true`;
    ///     `false` keeps them in memory only).
    ///   - persistsOfflineListing: whether the last listing is kept in the cache store for offline use.
    ///   - followsEndpointChanges: whether unreachable stations are looked up again through IPNS.
    ///   - requestTimeouts: time limits for API calls.
    ///   - transferTimeouts: time limits for content transfers.
    ///   - log: receives the SDK's log lines, or `nil`.
    ///   - temporaryDirectory: where downloads into open files and reshares stage their bytes; `nil`
    ///     for the system's temporary directory.
    ///   - metadataDateEncoding: how metadata `Date`s are written (integer Unix seconds by default).
    ///   - metadataDateDecoding: how metadata `Date`s are read (Unix seconds or ISO-8601 by default).
    ///   - cacheStore: where caches go; `nil` for the default (see ``cacheStore``).
    ///   - maximumManifestPosts: the most posts a manifest read by this client may hold.
    public init(
        namespace: String, keyStore: any KeyStore, transport: (any HTTPTransport)? = nil, gateway: IPFSGateway? = nil,
        stationPublicKeyPins: [PublicKeyFingerprint] = [], rewrapConcurrency: Int = 8, persistsPostKeys: Bool = true, persistsOfflineListing: Bool = true,
        followsEndpointChanges: Bool = true,
        requestTimeouts: TransferTimeouts = defaultRequestTimeouts,
        transferTimeouts: TransferTimeouts = TransferTimeouts(idle: 120, total: nil),
        log: LogHandler? = nil, temporaryDirectory: URL? = nil,
        metadataDateEncoding: JSONDateEncoding = .unixSeconds, metadataDateDecoding: JSONDateDecoding = .flexible,
        cacheStore: (any CacheStore)? = nil, maximumManifestPosts: Int = defaultMaximumManifestPosts
    ) {
        self.maximumManifestPosts = max(1, maximumManifestPosts)
        self.namespace = namespace
        self.keyStore = keyStore
        self.transport = transport ?? Self.defaultTransport()
        self.gateway = gateway
        self.stationPublicKeyPins = stationPublicKeyPins
        self.rewrapConcurrency = max(1, rewrapConcurrency)
        self.persistsPostKeys = persistsPostKeys
        self.persistsOfflineListing = persistsOfflineListing
        self.followsEndpointChanges = followsEndpointChanges
        self.requestTimeouts = requestTimeouts
        self.transferTimeouts = transferTimeouts
        self.log = log
        self.temporaryDirectory = temporaryDirectory ?? FileManager.default.temporaryDirectory
        self.metadataDateEncoding = metadataDateEncoding
        self.metadataDateDecoding = metadataDateDecoding
        self.cacheStore = cacheStore ?? Self.defaultCacheStore(for: keyStore)
    }

    /// The default ``cacheStore`` for `keyStore`: an ``EncryptedFileCacheStore`` in `cache`
    /// beside a ``FileKeyStore``'s files (the app chose files), otherwise an
    /// ``InMemoryCacheStore``: nothing goes to disk unless the app chose a file-backed store.
    public static func defaultCacheStore(for keyStore: any KeyStore) -> any CacheStore {
        if let files = keyStore as? FileKeyStore {
            return EncryptedFileCacheStore(directory: files.directory.appendingPathComponent("cache", isDirectory: true),
                                           keyStore: keyStore)
        }
        return InMemoryCacheStore()
    }

    /// The platform's default transport: `CurlTransport` on Linux (it enforces public-key pins
    /// and reads a server's key with libcurl), `URLSessionTransport` elsewhere (Apple platforms,
    /// where it does both in the server-trust challenge, and Linux builds without the
    /// `SystemLibraries` trait, where it can do neither).
    public static func defaultTransport() -> any HTTPTransport {
        #if SystemLibraries && os(Linux)
        CurlTransport()
        #else
        URLSessionTransport()
        #endif
    }
}

extension StationClientConfiguration {
    /// What a manifest read by this client may hold (``maximumManifestPosts``,
    /// ``maximumPostMetadataBytes``, ``maximumPostMetadataDepth``).
    var manifestLimits: ManifestLimits { ListingSettings(self).manifestLimits }

    /// Hands a line to ``log``, building the message only when there is a handler.
    func log(_ level: LogEvent.Level, _ message: @autoclosure () -> String) {
        log?(LogEvent(level: level, message: message()))
    }
}

/// One line of the SDK's log.
public struct LogEvent: Sendable {
    /// How important the line is.
    public enum Level: Int, Sendable, Comparable {
        /// Step-by-step detail.
        case debug
        /// Notable events (endpoint changed, post skipped).
        case info
        /// Something failed and was handled.
        case warning
        /// Something failed and the operation failed.
        case error

        /// Orders levels by severity.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The level.
    public var level: Level
    /// The text (never secrets).
    public var message: String
}

/// Receives the SDK's log lines. It may be called from any task; return quickly.
public typealias LogHandler = @Sendable (LogEvent) -> Void

/// How far a transfer has got.
public struct ByteProgress: Sendable, Hashable {
    /// Bytes done so far.
    public var completed: Int64
    /// The total, when known.
    public var total: Int64?
}

/// Receives transfer progress, counted in the file's own bytes: an upload of a 15-byte file
/// reports 0…15 (not the multipart request around its ciphertext), a download 0…the plaintext size
/// (not the SecretBox overhead); the last report of a completed transfer has `completed == total`.
/// It may be called from any thread; return quickly.
public typealias ProgressHandler = @Sendable (ByteProgress) -> Void

/// A call that reports progress, started at once, with its progress as an asynchronous sequence
/// beside its result: the `AsyncSequence` form of a ``ProgressHandler`` argument.
///
/// ```swift
/// import Foundation
/// import Manifest
/// import StationClient
///
/// func upload(_ fileURL: URL, metadata: DriveFileMetadata, with client: StationClient) async throws -> PublishedPost {
///     let upload = ProgressTask { progress in
///         try await client.publish(fileAt: fileURL, metadata: metadata, progress: progress)
///     }
///     for await step in upload.updates {
///         print("\(step.completed) of \(step.total ?? 0) bytes")
///     }
///     return try await upload.value
/// }
/// ```
///
/// ``updates`` keeps only the newest figure when the reader falls behind, and ends when the
/// call ends (with its result or its error). Not reading it at all is fine.
public final class ProgressTask<Value: Sendable>: Sendable {
    /// The call's progress, newest figure first when the reader is slow; ends with the call.
    public let updates: AsyncStream<ByteProgress>
    private let task: Task<Value, any Error>

    /// Starts `operation`, handing it the ``ProgressHandler`` that feeds ``updates``.
    ///
    /// - Parameter operation: the call, given the handler to pass as its `progress` argument.
    public convenience init(_ operation: @escaping @Sendable (_ progress: @escaping ProgressHandler) async throws -> Value) {
        self.init(cancellingWhen: nil, operation)
    }

    /// Starts `operation` as ``init(_:)`` does, and cancels it from its progress handler, at once,
    /// with the first report that satisfies `condition`: the transfer stops there, however busy
    /// the tasks that read ``updates`` are. What makes "cancel a download halfway" a test with no
    /// race:
    ///
    ///     let download = ProgressTask(cancellingWhen: { $0.completed * 2 >= $0.total ?? .max }) {
    ///         try await client.download(postCID: cid, to: file, progress: $0)
    ///     }
    ///     await #expect(throws: StationClientError.self) { try await download.value }   // .cancelled
    ///
    /// - Parameters:
    ///   - condition: called with each report, on the transfer's thread; return quickly.
    ///   - operation: the call, given the handler to pass as its `progress` argument.
    public convenience init(
        cancellingWhen condition: @escaping @Sendable (ByteProgress) -> Bool,
        _ operation: @escaping @Sendable (_ progress: @escaping ProgressHandler) async throws -> Value
    ) {
        self.init(cancellingWhen: Optional(condition), operation)
    }

    private init(
        cancellingWhen condition: (@Sendable (ByteProgress) -> Bool)?,
        _ operation: @escaping @Sendable (_ progress: @escaping ProgressHandler) async throws -> Value
    ) {
        let (updates, continuation) = AsyncStream.makeStream(of: ByteProgress.self, bufferingPolicy: .bufferingNewest(1))
        self.updates = updates
        // The task, once created, and whether the condition was met before that.
        let cancellation = Locked<(task: Task<Value, any Error>?, requested: Bool)>((nil, false))
        let task = Task {
            defer { continuation.finish() }
            return try await operation { progress in
                continuation.yield(progress)
                guard let condition, condition(progress) else { return }
                let task = cancellation.withLock { state -> Task<Value, any Error>? in
                    state.requested = true
                    return state.task
                }
                task?.cancel()
            }
        }
        self.task = task
        if cancellation.withLock({ state -> Bool in
            state.task = task
            return state.requested
        }) {
            task.cancel()
        }
    }

    /// The call's result.
    ///
    /// - Throws: whatever the call throws (``StationClientError`` `.cancelled` after ``cancel()``).
    public var value: Value {
        get async throws { try await task.value }
    }

    /// Cancels the call; its cleanup runs as for any cancelled task.
    public func cancel() { task.cancel() }
}
