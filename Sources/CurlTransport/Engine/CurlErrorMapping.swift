#if canImport(CCurl)
import CCurl
import Foundation
import Transport

/// Turns a libcurl result code into a `TransportError` of the right kind.
enum CurlErrorMapping {
    static func kind(of code: CURLcode) -> TransportError.Kind {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST: .dnsFailure
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: .cannotConnect
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH: .pinMismatch
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            .tlsFailure
        case CURLE_PARTIAL_FILE, CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_SEND_FAIL_REWIND:
            .connectionLost
        // Requests are validated (http/https only) before libcurl sees them, so an unsupported
        // protocol afterwards is the server's: libcurl reports an HTTP/0.9 reply that way.
        case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_HTTP2, CURLE_HTTP2_STREAM,
             CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP3, CURLE_UNRECOVERABLE_POLL:
            .protocolError
        case CURLE_URL_MALFORMAT: .invalidRequest
        default: .other
        }
    }

    static func error(_ code: CURLcode, message: String, method: HTTPMethod, url: URL) -> TransportError {
        TransportError(kind(of: code), method: method, url: url, message: message, code: Int(code.rawValue))
    }
}
#endif
