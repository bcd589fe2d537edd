#if os(Linux)
import CurlTransport
#else
import URLSessionTransport
#endif
import Foundation
import Transport

/// How a ``StationClient`` talks to its station and where it keeps its secrets.
public struct StationClientConfiguration: Sendable {
    /// The manifest namespace this app reads and writes (`drive` for a file app). Pick a stable,
    /// unique name and never change it.
    public var namespace: String
    /// The transport for station calls. Default: `CurlTransport` on Linux, `URLSessionTransport`
    /// on Apple platforms (where it enforces public-key pins in the server-trust challenge).
    public var transport: any HTTPTransport
    /// The IPFS gateway for manifest and content fallback and IPNS resolution, or `nil` for none.
    public var gateway: IPFSGateway?
    /// Where credentials, cached post keys and the offline listing are kept.
    public var keyStore: any KeyStore
    /// An override of the TLS key pin kept in the credentials: when not empty, every request to
    /// an `https` station endpoint carries these pins (`TransferOptions.pinnedPublicKeys`) instead
    /// of ``DeviceCredentials/stationPublicKeyPin``, and pairing uses them without asking or
    /// keeping a pin of its own. Empty (the default, and what apps normally want): pairing learns
    /// the pin (see ``StationKeyTrust``) and the credentials carry it from then on, so nothing
    /// needs re-applying on launch. A transport that cannot enforce pins refuses pinned requests
    /// (`.pinningUnsupported`); a request is never sent unpinned.
    public var stationPublicKeyPins: [PublicKeyFingerprint]
    /// How many `/rewrap` calls a listing runs at once (at least 1). Over HTTP/2 they are streams
    /// of one connection; over HTTP/1.1, one connection each, reused across calls.
    public var rewrapConcurrency: Int
    /// Whether recovered post keys are also kept in ``keyStore`` (encrypted at rest by a
    /// ``FileKeyStore``), so a restarted app skips the rewraps.
    public var persistsPostKeys: Bool
    /// Whether the last decrypted listing is kept in ``keyStore`` for the offline view.
    public var persistsOfflineListing: Bool
    /// Whether connection, DNS and tunnel failures trigger an IPNS lookup of the station's new endpoint.
    public var followsEndpointChanges: Bool
    /// Time limits for API calls (the seed guide's ~120 s; writes wait on IPFS).
    public var requestTimeouts: TransferTimeouts
    /// The default of ``requestTimeouts``, also used by calls made without a client (another
    /// station's profile, a follow request): 120 s idle, 300 s in all.
    public static let defaultRequestTimeouts = TransferTimeouts(idle: 120, total: 300)
    /// Time limits for content transfers (idle limit only: large files take long).
    public var transferTimeouts: TransferTimeouts
    /// Receives the SDK's log lines; the SDK itself never prints. Lines never contain secrets.
    public var log: LogHandler?
    /// Where a file upload's ciphertext is staged while it is sent (removed afterwards).
    public var temporaryDirectory: URL

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - namespace: the app's manifest namespace.
    ///   - keyStore: the secret store (``FileKeyStore`` or the app's own).
    ///   - transport: the station transport; `nil` for the platform's default (``defaultTransport()``).
    ///   - gateway: the IPFS gateway for fallbacks and IPNS, or `nil` for none.
    ///   - stationPublicKeyPins: an override of the pin kept in the credentials (empty: use that pin).
    ///   - rewrapConcurrency: how many `/rewrap` calls a listing runs at once (at least 1).
    ///   - persistsPostKeys: whether recovered post keys are also kept in the key store.
    ///   - persistsOfflineListing: whether the last listing is kept in the key store for offline use.
    ///   - followsEndpointChanges: whether unreachable stations are looked up again through IPNS.
    ///   - requestTimeouts: time limits for API calls.
    ///   - transferTimeouts: time limits for content transfers.
    ///   - log: receives the SDK's log lines, or `nil`.
    ///   - temporaryDirectory: where uploads are staged; `nil` for the system's temporary directory.
    public init(
        namespace: String, keyStore: any KeyStore, transport: (any HTTPTransport)? = nil, gateway: IPFSGateway? = nil,
        stationPublicKeyPins: [PublicKeyFingerprint] = [], rewrapConcurrency: Int = 8, persistsPostKeys: Bool = false, persistsOfflineListing: Bool = true,
        followsEndpointChanges: Bool = true,
        requestTimeouts: TransferTimeouts = defaultRequestTimeouts,
        transferTimeouts: TransferTimeouts = TransferTimeouts(idle: 120, total: nil),
        log: LogHandler? = nil, temporaryDirectory: URL? = nil
    ) {
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
    }

    /// The platform's default transport: `CurlTransport` on Linux (it enforces public-key pins
    /// with libcurl), `URLSessionTransport` elsewhere (Apple platforms, where it enforces them in
    /// the server-trust challenge).
    public static func defaultTransport() -> any HTTPTransport {
        #if os(Linux)
        CurlTransport()
        #else
        URLSessionTransport()
        #endif
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

/// Receives transfer progress. It may be called from any thread; return quickly.
public typealias ProgressHandler = @Sendable (ByteProgress) -> Void
