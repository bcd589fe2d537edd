import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport

/// The delegate of one URLSession: routes each callback to the transfer of its task, found in a
/// lock-protected table by task identifier.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Locked<[Int: URLSessionTransfer]>([:])

    /// Registers `transfer` for `task`; call before the task is resumed.
    func register(_ transfer: URLSessionTransfer, for task: URLSessionTask) {
        transfers.withLock { $0[task.taskIdentifier] = transfer }
    }

    private func transfer(for task: URLSessionTask) -> URLSessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        transfer(for: dataTask)?.didReceive(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.didReceive(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        transfer(for: task)?.didSend(totalBytesSent: totalBytesSent, totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask,
                    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        completionHandler(transfer(for: task)?.makeBodyStream())
    }

    /// Redirects are returned, not followed: a signed request must not be replayed elsewhere.
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let finished = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        finished?.didComplete(with: error)
    }

    #if canImport(Security) && !canImport(FoundationNetworking)
    /// Enforces a request's public-key pins on the server-trust challenge (Darwin only); other
    /// challenges, and requests without pins, get the system's default handling.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let transfer = transfer(for: task), !transfer.pins.isEmpty else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        guard let trust = challenge.protectionSpace.serverTrust else {
            transfer.fail(.pinMismatch, "the server presented no certificate to check the pins against")
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        switch PinDecision.evaluate(chain: ServerTrustCertificates.chainDER(of: trust), pins: transfer.pins) {
        case .accept:
            completionHandler(.useCredential, URLCredential(trust: trust))
        case .reject(let presented):
            transfer.fail(.pinMismatch, "the server's public key \(presented.map(\.pinString) ?? "(unreadable)") matches no pin")
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
    #endif
}
