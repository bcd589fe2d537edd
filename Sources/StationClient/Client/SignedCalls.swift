import Foundation
import SHA2
import Signing
import Transport

extension StationClient {
    /// The six `x-cipher-*` headers that sign a request of the app's own (an endpoint the SDK has
    /// no call for) as this device, with the clock offset the client has learned; the device's
    /// private key stays inside the SDK.
    ///
    /// Sign the exact bytes that go on the wire, and the decoded path only (no query string, no
    /// host); see <doc:SigningRequests>.
    ///
    /// - Parameters:
    ///   - method: the HTTP method, e.g. `GET`.
    ///   - path: the request path, e.g. `/followers`.
    ///   - body: the body bytes as sent (empty for a `GET`).
    /// - Throws: ``StationClientError`` (`.refused`) when the method or path cannot be signed (an
    ///   empty method, a path with a line break).
    public func signedHeaders(method: String, path: String, body: some DataProtocol) throws -> SignedRequestHeaders {
        try connection.signingContext().headers(method: method, path: path, bodySHA256: SHA256.hash(data: body),
                                                operation: "signing \(method) \(path)")
    }

    /// Sends a signed owner request through the connection (see ``StationConnection/send(_:budget:)``).
    /// Without `options`, at most `limit` bytes of the answer are collected (see ``ResponseLimit``);
    /// a longer one fails the call.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``StationClientError`` when no answer could be had.
    nonisolated func sendSigned(
        _ method: HTTPMethod, _ path: String, body: StationCall.Body = .empty, options: TransferOptions? = nil,
        limit: Int = ResponseLimit.small, operation: String, budget: CallBudget? = nil
    ) async throws -> HTTPResponse {
        try await connection.send(.signed(method, path, body: body, options: options, limit: limit,
                                          timeouts: configuration.requestTimeouts, operation: operation),
                                  budget: budget)
    }

    /// Sends a signed call and requires a 2xx answer, decoding it as `T`.
    nonisolated func sendSignedAndDecode<T: Decodable>(
        _ method: HTTPMethod, _ path: String, body: StationCall.Body = .empty, as type: T.Type, limit: Int = ResponseLimit.small,
        operation: String
    ) async throws -> T {
        let response = try await sendSigned(method, path, body: body, limit: limit, operation: operation)
        return try StationConnection.decodeAnswer(type, from: response, operation: operation)
    }
}
