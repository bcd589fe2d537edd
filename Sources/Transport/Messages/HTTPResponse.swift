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

    /// Creates a response.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: HTTPResponseBody = .data(Data())) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The `Content-Range` header parsed, present on `206 Partial Content` and `416` responses.
    public var contentRange: ContentRange? {
        headers["Content-Range"].flatMap(ContentRange.init(headerValue:))
    }
}
