import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport

/// A URLSession with its delegate.
struct ManagedSession: Sendable {
    let session: URLSession
    let delegate: SessionDelegate
}

/// The URLSessions of one transport.
///
/// - One shared session carries ordinary requests, so connections are reused.
/// - Darwin: requests with pins get a session per pin set, so that a connection trusted under one
///   set (or by the CAs) is never reused for a request under another: URLSession asks for server
///   trust only when it opens a connection.
final class SessionPool: Sendable {
    private let makeConfiguration: @Sendable () -> URLSessionConfiguration
    private let shared: ManagedSession
    private let pinned = Locked<[Set<PublicKeyFingerprint>: ManagedSession]>([:])
    /// Why the configuration cannot carry the transport's requests (``refusal(of:)``); `nil` when it can.
    let refusal: String?

    init(makeConfiguration: @escaping @Sendable () -> URLSessionConfiguration) {
        self.makeConfiguration = makeConfiguration
        let base = makeConfiguration()
        refusal = Self.refusal(of: base)
        // A refused configuration never makes a session: every request fails before one is needed.
        shared = Self.makeSession(refusal == nil ? base : .ephemeral, delegateQueue: Self.serialQueue())
    }

    /// Why `configuration` cannot carry signed requests, or `nil`: a background configuration (one
    /// with an `identifier`) runs no data tasks and sends when the system chooses, while a station
    /// refuses a signature more than 60 s old.
    static func refusal(of configuration: URLSessionConfiguration) -> String? {
        guard let identifier = configuration.identifier else { return nil }
        return "the session configuration is a background one (identifier \"\(identifier)\"): background sessions run no "
            + "data tasks and send when the system chooses, and a station refuses a signed request more than 60 s old; "
            + "use .ephemeral or .default, and beginBackgroundTask to finish a transfer when the app leaves the foreground"
    }

    deinit {
        shared.session.finishTasksAndInvalidate()
        for session in pinned.withLock({ Array($0.values) }) { session.session.finishTasksAndInvalidate() }
    }

    /// The session for an ordinary request with these pins (none: the shared one).
    func session(pinnedTo pins: [PublicKeyFingerprint]) -> ManagedSession {
        guard !pins.isEmpty else { return shared }
        return pinned.withLock { sessions in
            if let existing = sessions[Set(pins)] { return existing }
            let created = Self.makeSession(makeConfiguration(), delegateQueue: Self.serialQueue())
            sessions[Set(pins)] = created
            return created
        }
    }

    private static func serialQueue() -> OperationQueue {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "URLSessionTransport delegate"
        return queue
    }

    /// A session of its own for one reading of a server's key, with `delegate` (a ``ServerKeyProbe``)
    /// and the idle limit `idleTimeout` (seconds): its one connection is fresh, so the server-trust
    /// challenge comes, and is never reused. Invalidate it once its task is resumed.
    func oneShotSession(delegate: any URLSessionDelegate, idleTimeout: TimeInterval) -> URLSession {
        let configuration = Self.hardened(makeConfiguration())
        configuration.timeoutIntervalForRequest = URLRequestBuilder.idleInterval(idleTimeout)
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: Self.serialQueue())
    }

    private static func makeSession(_ configuration: URLSessionConfiguration, delegateQueue: OperationQueue) -> ManagedSession {
        let delegate = SessionDelegate()
        let session = URLSession(configuration: hardened(configuration), delegate: delegate, delegateQueue: delegateQueue)
        return ManagedSession(session: session, delegate: delegate)
    }

    /// What a signing, hashing client needs whatever the base configuration says: no cookies, no
    /// cache, no credential store, no resource limit of URLSession's own (the transport applies
    /// the total limit per request).
    private static func hardened(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForResource = URLRequestBuilder.noIdleLimit
        return configuration
    }
}
