import Foundation

/// One request of a batch (see `HTTPTransport.send(batch:options:)`): the request and its
/// in-memory body.
///
/// A batched request must be safe to send more than once (a read, or a call the server treats as
/// idempotent, such as a Cipher Station's `/rewrap`): a transport may pipeline a batch on one
/// connection and send the requests left unanswered again when that connection fails.
public struct HTTPBatchRequest: Sendable, Hashable {
    /// Method, absolute URL and header fields.
    public var request: HTTPRequest
    /// The body bytes, or `nil` for no body.
    public var body: Data?

    /// A request of a batch with `body` (`nil`: no body).
    public init(_ request: HTTPRequest, body: Data? = nil) {
        self.request = request
        self.body = body
    }

    /// The body as `send(_:body:options:)` takes it.
    public var requestBody: HTTPRequestBody { body.map { .bytes($0) } ?? .none }
}
