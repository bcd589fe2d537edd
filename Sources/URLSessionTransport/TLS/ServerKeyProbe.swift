import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport

/// One reading of the key a server presents (`URLSessionTransport.presentedPublicKey(at:)`), as the
/// delegate of a one-shot session: the server-trust challenge hands it the certificate chain, it
/// records the leaf's key and cancels the challenge, so the handshake stops before a request is
/// written; the task's end then resolves the reading.
///
/// Platform-neutral but for the challenge delegate method, which only Apple platforms compile
/// (FoundationNetworking delivers no server-trust challenge, so the transport starts no reading on
/// Linux). What a challenge is answered, what the task's end means and the wait itself are tested
/// on Linux.
final class ServerKeyProbe: NSObject, URLSessionTaskDelegate, Sendable {
    /// What the server-trust challenge showed.
    enum Reading: Equatable, Sendable {
        /// No server-trust challenge came.
        case none
        /// The leaf certificate's key.
        case key(PublicKeyFingerprint)
        /// A challenge came without a certificate whose key can be read.
        case unreadable
    }

    /// The URL whose server is read; every error names it, with method `GET`.
    let url: URL
    private let reading = Locked(Reading.none)
    private let pending = PendingResult<PublicKeyFingerprint>()

    init(url: URL) {
        self.url = url
    }

    /// Reads the key: starts a task for `url` on a one-shot session of `sessions` whose delegate
    /// is this probe, and waits for the task's end.
    ///
    /// - Parameter idleTimeout: how long the connection and handshake may stall (seconds).
    /// - Throws: `TransportError`, as ``outcome(completedWith:)`` says; `.cancelled` when the
    ///   calling task is cancelled before the key is read.
    func run(sessions: SessionPool, idleTimeout: TimeInterval) async throws -> PublicKeyFingerprint {
        guard !Task.isCancelled else {
            throw TransportError(.cancelled, method: .get, url: url, message: "the calling task was cancelled")
        }
        let session = sessions.oneShotSession(delegate: self, idleTimeout: idleTimeout)
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData,
                                 timeoutInterval: URLRequestBuilder.idleInterval(idleTimeout))
        request.httpShouldHandleCookies = false
        let task = session.dataTask(with: request)
        return try await pending.wait(start: {
            task.resume()
            // The session lets its one task end, then lets go of this delegate.
            session.finishTasksAndInvalidate()
            if pending.isCancelled { task.cancel() }
        }, onCancel: { task.cancel() })
    }

    /// Answers a challenge: a server-trust challenge (`isServerTrust`) has its certificate `chain`
    /// read (DER, leaf first; `nil` when it carries no trust object) and is cancelled, so nothing
    /// is sent over a connection nobody trusted; any other challenge (a proxy's) gets the system's
    /// default handling.
    func answer(serverTrust isServerTrust: Bool, chain: () -> [[UInt8]]?) -> URLSession.AuthChallengeDisposition {
        guard isServerTrust else { return .performDefaultHandling }
        let key = chain().flatMap(PinDecision.leafKey(of:))
        reading.withLock { reading in
            if reading == .none { reading = key.map(Reading.key) ?? .unreadable }
        }
        return .cancelAuthenticationChallenge
    }

    /// What the reading comes to once the task ended with `error`: the key, when the challenge
    /// showed one (the error of the cancelled challenge is expected then); `.protocolError` when
    /// it showed no readable certificate; otherwise the task's failure as `URLErrorMapping` maps it
    /// (`.dnsFailure`, `.cannotConnect`, `.timedOut`, `.tlsFailure`, `.cancelled`), or
    /// `.tlsFailure` for a task that ended without any challenge.
    func outcome(completedWith error: (any Error)?) -> Result<PublicKeyFingerprint, TransportError> {
        switch reading.value {
        case .key(let key):
            return .success(key)
        case .unreadable:
            return .failure(TransportError(.protocolError, method: .get, url: url,
                                           message: "the server presented no certificate whose public key can be read"))
        case .none:
            if let error { return .failure(URLErrorMapping.error(error, method: .get, url: url)) }
            return .failure(TransportError(.tlsFailure, method: .get, url: url,
                                           message: "the exchange ended without a server-trust challenge, so no key was read"))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        pending.resume(outcome(completedWith: error))
    }

    #if canImport(Security) && !canImport(FoundationNetworking)
    /// Reads the key on the server-trust challenge and cancels it (Darwin only); see
    /// ``answer(serverTrust:chain:)``.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let space = challenge.protectionSpace
        completionHandler(answer(serverTrust: space.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                                 chain: { space.serverTrust.map(ServerTrustCertificates.chainDER(of:)) }), nil)
    }
    #endif
}
