#if canImport(CCurl)
import CCurl
import Foundation
import Transport

/// The trust-on-first-use job: a TLS handshake without verification (`CURLOPT_CONNECT_ONLY`) that
/// reads the presented certificate through `CURLINFO_CERTINFO`.
final class CertificateProbe: CurlJob, @unchecked Sendable {
    private let url: URL
    private let connectTimeout: TimeInterval
    private let noProxy: String
    private let lifetime: CurlEngineLifetime
    private let pending = PendingResult<ServerCertificate>()
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(url: URL, connectTimeout: TimeInterval, noProxy: String, lifetime: CurlEngineLifetime) {
        self.url = url
        self.connectTimeout = connectTimeout
        self.noProxy = noProxy
        self.lifetime = lifetime
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    func run() async throws -> ServerCertificate {
        let engine = lifetime.engine
        return try await pending.wait(start: { engine.post(.start(self)) }, onCancel: { [self] in engine.post(.cancel(self)) })
    }

    var isCancelled: Bool { pending.isCancelled }

    func configure(_ handle: OpaquePointer) throws {
        var options = CurlOptions(handle)
        options.set(CURLOPT_URL, string: url.absoluteString, "CURLOPT_URL")
        options.set(CURLOPT_PROTOCOLS_STR, string: "https", "CURLOPT_PROTOCOLS_STR")
        options.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        options.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer), "CURLOPT_ERRORBUFFER")
        options.set(CURLOPT_NOPROXY, string: noProxy, "CURLOPT_NOPROXY")
        options.set(CURLOPT_CONNECT_ONLY, 1, "CURLOPT_CONNECT_ONLY")
        options.set(CURLOPT_CERTINFO, 1, "CURLOPT_CERTINFO")
        options.set(CURLOPT_SSL_VERIFYPEER, 0, "CURLOPT_SSL_VERIFYPEER")
        options.set(CURLOPT_SSL_VERIFYHOST, 0, "CURLOPT_SSL_VERIFYHOST")
        // A connection made without verification must never carry a real request.
        options.set(CURLOPT_FRESH_CONNECT, 1, "CURLOPT_FRESH_CONNECT")
        options.set(CURLOPT_FORBID_REUSE, 1, "CURLOPT_FORBID_REUSE")
        options.set(CURLOPT_CONNECTTIMEOUT_MS, CurlOptions.milliseconds(connectTimeout), "CURLOPT_CONNECTTIMEOUT_MS")
        guard options.failures.isEmpty else {
            throw TransportError(.invalidRequest, method: .get, url: url,
                                 message: "libcurl rejected " + options.failures.joined(separator: "; "))
        }
    }

    func finish(_ code: CURLcode, handle: OpaquePointer) {
        guard code == CURLE_OK else {
            let text = String(cString: errorBuffer)
            resume(.failure(CurlErrorMapping.error(
                code, message: text.isEmpty ? String(cString: curl_easy_strerror(code)) : text, method: .get, url: url
            )))
            return
        }
        var info: UnsafeMutablePointer<curl_certinfo>?
        guard ccurl_easy_getinfo_certinfo(handle, CURLINFO_CERTINFO, &info) == CURLE_OK, let info,
              info.pointee.num_of_certs > 0, let lists = info.pointee.certinfo
        else {
            resume(.failure(TransportError(.protocolError, method: .get, url: url,
                                           message: "the server presented no certificate")))
            return
        }
        var fields: [String] = []
        var node = lists[0]
        while let current = node {
            if let data = current.pointee.data { fields.append(String(cString: data)) }
            node = current.pointee.next
        }
        guard let certificate = ServerCertificate.fromCertInfo(fields, chainLength: Int(info.pointee.num_of_certs)) else {
            resume(.failure(TransportError(.protocolError, method: .get, url: url,
                                           message: "the server's certificate could not be parsed")))
            return
        }
        resume(.success(certificate))
    }

    func abort(_ kind: TransportError.Kind, message: String, handle: OpaquePointer?) {
        resume(.failure(TransportError(kind, method: .get, url: url, message: message)))
    }

    private func resume(_ result: Result<ServerCertificate, TransportError>) {
        pending.resume(result)
    }
}
#endif
