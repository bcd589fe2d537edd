import Foundation

/// How one `send` is carried out: where the response body goes, which time limits apply, and who
/// hears about progress.
public struct TransferOptions: Sendable {
    /// The default cap on a response body collected in memory: 128 MiB, above the station's
    /// 100 MiB upload limit. Larger content belongs in `.file` or `.stream`.
    public static let defaultMemoryLimit = 128 * 1024 * 1024

    /// Where the response body goes. Default: collected in memory up to `defaultMemoryLimit`.
    public var response: ResponseDestination
    /// Time limits for this transfer, or `nil` for the transport's defaults for this kind of
    /// transfer (see `TransferTimeouts`).
    public var timeouts: TransferTimeouts?
    /// Called as bytes move in either direction. It runs on the transport's own thread, so it must
    /// return quickly (hand the numbers to your UI or an actor and return).
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// Public-key pins for the request's origin (scheme, host and port of its URL). Empty: the
    /// server is checked against the trusted certificate authorities as usual.
    ///
    /// When not empty, the server is trusted by its key alone: the TLS handshake succeeds only if
    /// the SHA-256 of the public key it presents (its `SubjectPublicKeyInfo`) equals one of these,
    /// with no CA or host-name check; that is how a self-signed station is reached. Every transport
    /// either enforces the pins or throws `TransportError` with kind `.pinningUnsupported`; it never
    /// sends a pinned request unpinned. A pinned request to a plain `http` URL is refused with
    /// `.invalidRequest`, since there is no key to check.
    public var pinnedPublicKeys: [PublicKeyFingerprint]

    /// Creates options; every argument has the default described on its property.
    public init(
        response: ResponseDestination = .memory(),
        timeouts: TransferTimeouts? = nil,
        progress: (@Sendable (TransferProgress) -> Void)? = nil,
        pinnedPublicKeys: [PublicKeyFingerprint] = []
    ) {
        self.response = response
        self.timeouts = timeouts
        self.progress = progress
        self.pinnedPublicKeys = pinnedPublicKeys
    }
}

/// Where a response body goes.
public enum ResponseDestination: Sendable {
    /// Collect the body in memory; a body longer than `limit` bytes fails the transfer with
    /// `TransportError.Kind.responseTooLarge`. The response carries `.data`.
    case memory(limit: Int = TransferOptions.defaultMemoryLimit)
    /// Write the body to this file, replacing any existing file (created with mode 0600). On
    /// failure the partial file is removed. The response carries `.file` with the byte count.
    case file(URL)
    /// Hand the body out as it arrives: `send` returns as soon as the status and headers are in,
    /// and the response carries `.stream`. The transport buffers a bounded amount ahead of the
    /// reader, so a slow reader slows the transfer instead of growing memory.
    case stream

    /// Whether the body leaves memory (file or stream), which selects the idle-only default timeouts.
    public var isStreaming: Bool {
        if case .memory = self { return false }
        return true
    }
}

/// Time limits of one transfer.
///
/// Transports apply two defaults: ordinary requests get both an idle limit and a total limit, while
/// transfers whose request or response body is a file or a stream get only the idle limit, so that a
/// large upload on a slow link is never cut off while bytes keep moving.
public struct TransferTimeouts: Sendable, Hashable {
    /// Fail when no byte has moved in either direction for this long (seconds), or `nil` for no
    /// idle limit. Transports may round this up to whole seconds.
    public var idle: TimeInterval?
    /// Fail when the whole exchange takes longer than this (seconds), or `nil` for no total limit.
    public var total: TimeInterval?

    /// Creates time limits; `nil` means no limit of that kind.
    public init(idle: TimeInterval?, total: TimeInterval?) {
        self.idle = idle
        self.total = total
    }
}

/// How far a transfer has come.
public struct TransferProgress: Sendable, Hashable {
    /// Request body bytes sent so far.
    public var bytesSent: Int64
    /// The request body length, when known.
    public var expectedBytesToSend: Int64?
    /// Response body bytes received so far.
    public var bytesReceived: Int64
    /// The response body length announced by the server, when known.
    public var expectedBytesToReceive: Int64?

    /// Creates a progress report.
    public init(bytesSent: Int64, expectedBytesToSend: Int64?, bytesReceived: Int64, expectedBytesToReceive: Int64?) {
        self.bytesSent = bytesSent
        self.expectedBytesToSend = expectedBytesToSend
        self.bytesReceived = bytesReceived
        self.expectedBytesToReceive = expectedBytesToReceive
    }
}
