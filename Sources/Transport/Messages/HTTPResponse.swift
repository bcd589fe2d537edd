import Foundation

/// An HTTP response: status, header fields and body.
///
/// Any status a server sends is a response, including 4xx and 5xx; only failures to exchange a
/// message at all (connection, TLS, timeout, cancellation) are thrown as `TransportError`.
public struct HTTPResponse: Sendable {
    /// The status code, for example 200 or 404.
    public var status: Int
    /// The header fields in the order the server sent them. Look-ups are case-insensitive.
    public var headers: HTTPHeaders
    /// The body, delivered the way `TransferOptions.response` asked for.
    public var body: HTTPResponseBody
    /// The HTTP version the response arrived over, as the status line writes it: `"1.0"`,
    /// `"1.1"`, `"2"` or `"3"`; `nil` when the transport does not report it. `CurlTransport`
    /// reports it, so an app can see whether a TLS front negotiated HTTP/2.
    public var httpVersion: String?

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: HTTPResponseBody = .data(Data()),
                httpVersion: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The `Content-Range` header parsed, present on `206 Partial Content` and `416` responses.
    public var contentRange: ContentRange? {
        headers["Content-Range"].flatMap(ContentRange.init(headerValue:))
    }
}
