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
        // App Transport Security refused the load (Apple platforms): a TLS matter, with its own message.
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
             .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
             .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
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
        case .badURL: .invalidRequest
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
    ///
    /// - Parameter pinned: whether the request carried public-key pins. A TLS failure of a pinned
    ///   request the pin check did not refuse (that one fails as `.pinMismatch` first) is what App
    ///   Transport Security does to a self-signed station without an exception: its message then
    ///   names the Info.plist key that is missing (``appTransportSecurityHint(for:)``), as does an
    ///   ATS refusal of a plain `http` load.
    static func error(_ error: any Error, method: HTTPMethod, url: URL, pinned: Bool = false) -> TransportError {
        if let transportError = error as? TransportError { return transportError }
        guard let urlError = error as? URLError else {
            return TransportError(.other, method: method, url: url, message: "\(error)", underlying: error)
        }
        var detail = describe(urlError)
        let kind = kind(of: urlError.code, detail: detail)
        if urlError.code == .appTransportSecurityRequiresSecureConnection || (pinned && kind == .tlsFailure) {
            detail += "; " + appTransportSecurityHint(for: url)
        }
        return TransportError(kind, method: method, url: url, message: detail, code: urlError.code.rawValue, underlying: urlError)
    }

    /// What an app's Info.plist needs for App Transport Security to let `url`'s station through
    /// (the guide's "Shipping an App on Apple Platforms" says why, and which keys cancel others): a
    /// local name (`.local`, an unqualified name) needs `NSAllowsLocalNetworking`; an IP address,
    /// from iOS 17 and macOS 14, an `NSExceptionDomains` entry for it or its range; another host
    /// `NSExceptionAllowsInsecureHTTPLoads` in `NSExceptionDomains`. `NSAllowsArbitraryLoads` covers
    /// any of them, but only without `NSAllowsLocalNetworking` (or the web-content and media keys)
    /// beside it, which make the system ignore it. An address or name on the local network needs
    /// `NSLocalNetworkUsageDescription` too.
    static func appTransportSecurityHint(for url: URL) -> String {
        var host = (url.host ?? "").lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let named = host.isEmpty ? "<host>" : host
        let arbitraryLoads = "NSAllowsArbitraryLoads = YES when users type the station's host (ignored when "
            + "NSAllowsLocalNetworking, NSAllowsArbitraryLoadsInWebContent or NSAllowsArbitraryLoadsForMedia is present)"
        // The local-network prompt is for other machines of the network, not this one.
        let loopback = host.hasPrefix("127.") || host == "::1"
        let prompt = isLocalNetwork(host) && !loopback ? "; on the local network, NSLocalNetworkUsageDescription too" : ""
        if isIPAddress(host) {
            return "App Transport Security may have refused it: \(named) is an IP address, which from iOS 17 and macOS 14 "
                + "needs, in the app's Info.plist, NSAppTransportSecurity › NSExceptionDomains › \(named) (or a range "
                + "holding it, such as 192.168.0.0/16) › NSExceptionAllowsInsecureHTTPLoads = YES, or " + arbitraryLoads + prompt
        }
        if isLocalNetwork(host) {
            return "App Transport Security may have refused it: \(host) is a local name, so the app's Info.plist "
                + "needs NSAppTransportSecurity › NSAllowsLocalNetworking = YES (and NSLocalNetworkUsageDescription)"
        }
        return "App Transport Security may have refused it: a self-signed station needs, in the app's Info.plist, "
            + "NSAppTransportSecurity › NSExceptionDomains › \(named) › NSExceptionAllowsInsecureHTTPLoads = YES, or " + arbitraryLoads
    }

    /// Whether `host` (brackets removed) is an IPv4 or IPv6 literal: ATS treats those apart from names.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil }
    }

    /// Whether `host` is on the local network: a local name as ATS counts it (`.local`, an
    /// unqualified name, `localhost`), or an IPv4/IPv6 literal in a private, link-local or loopback
    /// range.
    static func isLocalNetwork(_ host: String) -> Bool {
        let host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if host.hasSuffix(".local") || host == "localhost" { return true }
        if host.contains(":") {
            // IPv6: unique local fc00::/7, link-local fe80::/10, loopback.
            return host == "::1" || host.hasPrefix("fc") || host.hasPrefix("fd") || host.hasPrefix("fe8")
                || host.hasPrefix("fe9") || host.hasPrefix("fea") || host.hasPrefix("feb")
        }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        if octets.count == 4, octets.allSatisfy({ $0 != nil }) {
            let bytes = octets.compactMap { $0 }
            switch (bytes[0], bytes[1]) {
            case (10, _), (127, _), (192, 168), (169, 254): return true
            case (172, 16...31): return true
            default: return false
            }
        }
        return !host.isEmpty && !host.contains(".")
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
