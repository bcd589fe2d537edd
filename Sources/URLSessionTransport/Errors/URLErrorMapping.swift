import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport

/// Turns a `URLError` into the `TransportError.Kind` CurlTransport reports for the same failure.
///
/// Platform-neutral on purpose, so one unit test covers both platforms. Darwin's Foundation reports
/// specific codes; FoundationNetworking (libcurl underneath) reports many libcurl failures as
/// `URLError.unknown` with libcurl's own text, so for those `detail` (the error's description) is
/// read for libcurl's wording.
enum URLErrorMapping {
    static func kind(of code: URLError.Code, detail: String) -> TransportError.Kind {
        switch code {
        case .cancelled: .cancelled
        case .cannotFindHost, .dnsLookupFailed: .dnsFailure
        case .cannotConnectToHost, .notConnectedToInternet, .internationalRoamingOff, .callIsActive, .dataNotAllowed,
             .cannotLoadFromNetwork:
            .cannotConnect
        case .timedOut: .timedOut
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
             .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
             .clientCertificateRequired:
            .tlsFailure
        case .networkConnectionLost: .connectionLost
        // FoundationNetworking's name for libcurl's CURLE_GOT_NOTHING (the server closed without a
        // reply), which CurlTransport calls a lost connection; elsewhere a reply that is not HTTP.
        case .badServerResponse: isEmptyReply(detail) ? .connectionLost : .protocolError
        // Requests are validated (http/https only) before URLSession sees them, so an unsupported
        // URL afterwards is the server's: FoundationNetworking reports an HTTP/0.9 reply that way.
        case .unsupportedURL, .cannotParseResponse, .cannotDecodeRawData, .cannotDecodeContentData,
             .zeroByteResource, .httpTooManyRedirects, .redirectToNonExistentLocation:
            .protocolError
        case .badURL, .appTransportSecurityRequiresSecureConnection: .invalidRequest
        case .fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile, .requestBodyStreamExhausted: .requestBodyFailed
        case .cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotWriteToFile, .cannotRemoveFile,
             .cannotMoveFile:
            .responseBodyFailed
        case .unknown: kind(ofLibcurlText: detail)
        default: .other
        }
    }

    /// The kind for libcurl's error text, as FoundationNetworking passes it on for the libcurl codes it
    /// has no `URLError` code for (TLS failures, a body cut short, a broken send or receive).
    static func kind(ofLibcurlText text: String) -> TransportError.Kind {
        let lower = text.lowercased()
        func has(_ words: String...) -> Bool { words.contains { lower.contains($0) } }
        if has("resolve") { return .dnsFailure }
        if has("timed out", "timeout") { return .timedOut }
        if has("ssl", "tls", "certificate", "handshake") { return .tlsFailure }
        if isEmptyReply(lower) || has("transfer closed", "partial file", "recv failure", "send failure",
                                      "connection reset", "connection died", "failure when receiving",
                                      "failed sending", "closed the connection", "connection was reset") {
            return .connectionLost
        }
        if has("failed to connect", "couldn't connect", "could not connect", "connection refused") { return .cannotConnect }
        if has("weird server reply", "http/0.9", "unsupported http", "nonsupported http", "invalid status line",
               "header without colon", "invalid response header", "malformed") {
            return .protocolError
        }
        return .other
    }

    private static func isEmptyReply(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.contains("empty reply") || lower.contains("returned nothing")
    }

    /// A `TransportError` for `error`, which URLSession reported for the request.
    static func error(_ error: any Error, method: HTTPMethod, url: URL) -> TransportError {
        if let transportError = error as? TransportError { return transportError }
        guard let urlError = error as? URLError else {
            return TransportError(.other, method: method, url: url, message: "\(error)", underlying: error)
        }
        let detail = describe(urlError)
        return TransportError(kind(of: urlError.code, detail: detail), method: method, url: url, message: detail,
                              code: urlError.code.rawValue, underlying: urlError)
    }

    /// The error's text and its underlying error's (FoundationNetworking keeps libcurl's text there).
    private static func describe(_ error: URLError) -> String {
        let nsError = error as NSError
        var parts = [nsError.localizedDescription]
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError {
            parts.append(underlying.localizedDescription)
        }
        return parts.filter { !$0.isEmpty }.joined(separator: ": ")
    }
}
