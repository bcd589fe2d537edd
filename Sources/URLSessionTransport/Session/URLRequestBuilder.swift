import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Transport

/// Builds the `URLRequest` for an `HTTPRequest`, keeping Foundation's own additions off the wire.
enum URLRequestBuilder {
    /// The longest idle limit given to URLSession when a transfer has none (a year, in seconds):
    /// FoundationNetworking multiplies it into integer milliseconds, so infinity would trap.
    static let noIdleLimit: TimeInterval = 365 * 24 * 3600

    /// The `Accept-Language` sent unless a request sets its own: any language, revealing no locale.
    static let acceptLanguage = "*"

    /// An idle limit as URLSession takes it: whole seconds (URLSession counts idle time in whole
    /// seconds on Linux; rounded up so 0.5 s is not 0), at least 1, at most ``noIdleLimit``.
    static func idleInterval(_ seconds: TimeInterval) -> TimeInterval {
        min(noIdleLimit, max(1, seconds.rounded(.up)))
    }

    /// - Parameters:
    ///   - bodyLength: the request body's length when the body is streamed (file or stream) and
    ///     sized; it goes out as `Content-Length`.
    ///   - streamsBody: whether the body is streamed through `needNewBodyStream`.
    static func make(_ request: HTTPRequest, body: HTTPRequestBody, bodyLength: Int64?, streamsBody: Bool,
                     idleTimeout: TimeInterval?, userAgent: String?) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.httpShouldHandleCookies = false
        urlRequest.timeoutInterval = idleTimeout.map(idleInterval) ?? noIdleLimit

        // URLRequest keeps fields in a dictionary, so their order is Foundation's and repeated
        // names are joined into one comma-separated field (RFC 9110 §5.3 makes that equivalent).
        for field in request.headers where !isFramingField(field.name) {
            if urlRequest.value(forHTTPHeaderField: field.name) == nil {
                urlRequest.setValue(field.value, forHTTPHeaderField: field.name)
            } else {
                urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
            }
        }
        if request.headers["User-Agent"] == nil {
            if let userAgent { urlRequest.setValue(userAgent, forHTTPHeaderField: "User-Agent") } else { suppress("User-Agent", in: &urlRequest) }
        }
        // No content coding: bodies must arrive exactly as the server stored them (hashes, CIDs).
        // URLSession otherwise asks for gzip/deflate/br and decodes silently.
        if request.headers["Accept-Encoding"] == nil {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        // CFNetwork adds the user's preferred languages to a request without `Accept-Language` (and
        // FoundationNetworking its own): the user's locale, sent to every station and gateway. An
        // explicit value that says nothing about the user keeps it off on every platform.
        if request.headers["Accept-Language"] == nil {
            urlRequest.setValue(acceptLanguage, forHTTPHeaderField: "Accept-Language")
        }

        if let bodyLength {
            urlRequest.setValue(String(bodyLength), forHTTPHeaderField: "Content-Length")
            // FoundationNetworking gives libcurl no length for a body stream, so libcurl would
            // frame it chunked as well; a blank Transfer-Encoding keeps it to Content-Length.
            suppress("Transfer-Encoding", in: &urlRequest)
        }
        if streamsBody {
            suppress("Expect", in: &urlRequest)
            if request.headers["Content-Type"] == nil { suppress("Content-Type", in: &urlRequest) }
        }
        if case .none = body {
            if [.post, .put, .patch].contains(request.method) {
                // POST, PUT and PATCH without a body still say Content-Length: 0.
                urlRequest.httpBody = Data()
            } else if request.method != .get {
                // FoundationNetworking announces an empty body for every method but GET.
                suppress("Content-Length", in: &urlRequest)
            }
        }
        return urlRequest
    }

    /// Keeps a field that FoundationNetworking adds by itself off the wire.
    ///
    /// FoundationNetworking hands header fields to libcurl as `Name: value`; libcurl sends no field
    /// for a name whose value is blank and then adds none of its own. A value of one space is that
    /// blank. Darwin's URLSession adds none of these fields, so nothing is needed there.
    private static func suppress(_ name: String, in request: inout URLRequest) {
        #if canImport(FoundationNetworking)
        request.setValue(" ", forHTTPHeaderField: name)
        #endif
    }

    /// `Content-Length` and `Transfer-Encoding` belong to the transport, not the caller.
    static func isFramingField(_ name: String) -> Bool {
        let lower = name.lowercased()
        return lower == "content-length" || lower == "transfer-encoding"
    }
}
