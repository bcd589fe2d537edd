import Foundation
import Signing

/// One HTTP request as the emulator's router sees it: the head, the whole raw body, and the time
/// it started arriving (the station judges a signed request's freshness by that time).
public struct StationRequest: Sendable {
    /// The method token, for example `POST`.
    public var method: String
    /// The request target, for example `/content/Qm…?x=1`.
    public var target: String
    /// Header fields in order, names as sent.
    public var headers: [(name: String, value: String)]
    /// The exact body bytes.
    public var body: Data
    /// When the request head arrived, in seconds since 1970 (from the emulator's clock).
    public var receivedAt: Double

    /// Creates a request.
    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: Data = Data(),
                receivedAt: Double) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
    }

    /// The percent-decoded path without the query, as Starlette's `request.url.path` gives it.
    public var path: String { CanonicalRequest.stationPath(requestTarget: target) }

    /// The first value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}

/// The emulator's answer to one request.
public struct StationResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields in order (the HTTP layer adds `Date`, `Server` and `Content-Length`).
    public var headers: [(name: String, value: String)]
    /// The body bytes.
    public var body: Data
    /// Set by fault injection: send the head and part of the body, then drop the connection.
    public var closeMidBody = false
    /// With ``closeMidBody``, how many body bytes go out before the connection drops (`nil`: half
    /// the body).
    public var bytesBeforeClose: Int?

    /// Set by ``FaultInjector/throttle(_:toBytesPerSecond:server:)``: the body goes out at about
    /// this many bytes per second.
    var bytesPerSecond: Int?

    /// Set by fault injection: after the head (with no `Content-Length`), body bytes keep coming
    /// until the client closes the connection; ``body`` is not sent.
    public var endlessBody = false

    /// With ``closeMidBody``, the body bytes that go out before the connection drops.
    public var bodyBeforeClose: Data { body.prefix(min(bytesBeforeClose ?? body.count / 2, body.count)) }

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response (compact, as Starlette's `JSONResponse` renders it).
    static func json(_ status: Int, _ bytes: [UInt8]) -> StationResponse {
        StationResponse(status: status, headers: [("content-type", "application/json")], body: Data(bytes))
    }

    /// `{"detail": "<text>"}` with `status`, FastAPI's `HTTPException` shape.
    static func detail(_ status: Int, _ text: String) -> StationResponse {
        json(status, JSONOut.compact(["detail": .string(text)]))
    }

    /// The first value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}
