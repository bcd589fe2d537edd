import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import SHA2
import Transport

/// The body of a signed call, fixed before signing so the signature covers the exact bytes sent.
enum SignedBody: Sendable {
    /// No body (GET): the hash is SHA-256 of the empty string.
    case empty
    /// JSON bytes.
    case json([UInt8])
    /// A multipart form and the SHA-256 of its exact encoded bytes, hashed once before sending.
    case multipart(MultipartForm, sha256: [UInt8])

    var sha256: [UInt8] {
        switch self {
        case .empty: SHA256.hash(data: [UInt8]())
        case .json(let bytes): SHA256.hash(data: bytes)
        case .multipart(_, let digest): digest
        }
    }

    /// A fresh request body (a multipart stream restarts from its first byte each time).
    var requestBody: HTTPRequestBody {
        switch self {
        case .empty: .none
        case .json(let bytes): .bytes(Data(bytes))
        case .multipart(let form, _): form.requestBody()
        }
    }

    var contentType: String? {
        switch self {
        case .empty: nil
        case .json: "application/json"
        case .multipart(let form, _): form.contentType
        }
    }
}

extension StationClient {
    /// What a signed exchange needs from the actor, read once so signing runs off the actor.
    struct SigningContext: Sendable {
        let identity: SigningIdentity
        let clockOffset: Int64
    }

    func signingContext() -> SigningContext {
        SigningContext(
            identity: SigningIdentity(uid: credentials.stationUID, deviceUID: credentials.deviceUID,
                                      signingKey: credentials.signingPrivateKey),
            clockOffset: clockOffset)
    }

    func learnClockOffset(_ offset: Int64) {
        clockOffset = offset
    }

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
        let offset = clockOffset
        let signer = RequestSigner(identity: signingContext().identity, clock: { RequestSigner.systemClock() + offset })
        do {
            return try signer.sign(method: method, path: path, body: body)
        } catch {
            throw StationClientError(.refused, operation: "signing \(method) \(path)", message: "cannot sign: \(error)",
                                     underlying: error)
        }
    }

    /// Everything a signed call reads from the actor, read in one hop (or once for a whole listing).
    struct CallState: Sendable {
        let origin: StationOrigin
        let signing: SigningContext
    }

    /// The calls one listing may still make: one per post it lists (stale-clock and new-endpoint
    /// retries included), so a station cannot make a listing send more, and the signing context
    /// a stale-clock retry learned during it, for the listing's other calls.
    final class ListingCalls: Sendable {
        private let state: Locked<(remaining: Int, signing: SigningContext?)>

        init(posts: Int) { state = Locked((max(0, posts), nil)) }

        /// Takes one call, or returns `false` when none is left.
        func take() -> Bool {
            state.withLock { state in
                guard state.remaining > 0 else { return false }
                state.remaining -= 1
                return true
            }
        }

        var learnedSigning: SigningContext? { state.withLock { $0.signing } }

        func learned(_ signing: SigningContext) { state.withLock { $0.signing = signing } }
    }

    func callState() -> CallState {
        CallState(origin: currentOrigin(), signing: signingContext())
    }

    /// Sends a signed owner request, with endpoint mobility, and retries once after a
    /// `stale request` answer with the clock offset from the answer's `Date` header.
    ///
    /// Runs off the actor: `state` (or one hop to read it) is all it needs unless the station has
    /// moved or the clock is off. Without `options`, at most `limit` bytes of the answer are
    /// collected (see ``ResponseLimit``); a longer one fails the call.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``StationClientError`` when no answer could be had.
    nonisolated func signed(
        _ method: HTTPMethod, _ path: String, body: SignedBody = .empty, options: TransferOptions? = nil,
        limit: Int = ResponseLimit.small, operation: String, state: CallState? = nil, calls: ListingCalls? = nil
    ) async throws -> HTTPResponse {
        let options = options ?? ResponseLimit.options(limit, timeouts: configuration.requestTimeouts)
        let state = if let state { state } else { await callState() }
        return try await withEndpointMobility(operation: operation, origin: state.origin) { origin in
            // After a move the endpoint differs, and the signing state is read afresh.
            let context = origin == state.origin ? state.signing : nil
            return try await self.signedOnce(method, path, body: body, origin: origin, options: options,
                                             operation: operation, context: context, calls: calls)
        }
    }

    private nonisolated func signedOnce(
        _ method: HTTPMethod, _ path: String, body: SignedBody, origin: StationOrigin, options: TransferOptions, operation: String,
        context known: SigningContext?, calls: ListingCalls?
    ) async throws -> HTTPResponse {
        // A clock offset another call of the listing learned applies to this one too.
        var context = if let known { calls?.learnedSigning ?? known } else { await signingContext() }
        for attempt in 0..<2 {
            guard calls?.take() ?? true else {
                throw StationClientError(.refused, operation: operation,
                                         message: "the listing already made one call per post it lists; nothing was sent")
            }
            let response = try await Self.exchange(
                method, path, body: body, endpoint: origin.url, context: context, transport: configuration.transport,
                options: options, pins: origin.pins, operation: operation)
            guard attempt == 0, response.status == 401, Self.isStaleAnswer(response),
                  let stationTime = response.headers["Date"].flatMap(Self.parseHTTPDate) else {
                return response
            }
            let offset = stationTime - RequestSigner.systemClock()
            log(.warning, "\(operation): the station says the request is stale; retrying with a clock offset of \(offset) s")
            await learnClockOffset(offset)
            context = await signingContext()
            calls?.learned(context)
        }
        throw StationClientError(.station, operation: operation, message: "unreachable")
    }

    static func exchange(
        _ method: HTTPMethod, _ path: String, body: SignedBody, endpoint: URL, context: SigningContext,
        transport: any HTTPTransport, options: TransferOptions, pins: [PublicKeyFingerprint], operation: String
    ) async throws -> HTTPResponse {
        let request = try signedRequest(method, path, url: url(endpoint, path), body: body, context: context, operation: operation)
        do {
            return try await transport.send(request, body: body.requestBody,
                                            options: stationOptions(options, endpoint: endpoint, pins: pins))
        } catch {
            throw StationClientError.wrap(error, operation: operation)
        }
    }

    /// The request to `url` (the endpoint and `path`) with its six `x-cipher-*` headers (and
    /// `Content-Type`), signed over `path` and `body`.
    static func signedRequest(
        _ method: HTTPMethod, _ path: String, url: URL, body: SignedBody, context: SigningContext, operation: String
    ) throws -> HTTPRequest {
        let offset = context.clockOffset
        let signer = RequestSigner(identity: context.identity, clock: { RequestSigner.systemClock() + offset })
        let headers: SignedRequestHeaders
        do {
            headers = try signer.sign(method: method.rawValue, path: path, bodySHA256: body.sha256)
        } catch {
            throw StationClientError(.refused, operation: operation, message: "cannot sign: \(error)", underlying: error)
        }
        var request = HTTPRequest(method: method, url: url)
        for field in headers.fields { request.headers.add(field.name, value: field.value) }
        if let contentType = body.contentType { request.headers.add("Content-Type", value: contentType) }
        return request
    }

    static func isStaleAnswer(_ response: HTTPResponse) -> Bool {
        StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message == "stale request"
    }

    /// Parses an RFC 9110 `Date` header (`Sun, 06 Nov 1994 08:49:37 GMT`) into Unix seconds.
    static func parseHTTPDate(_ text: String) -> Int64? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    /// Sends a signed call and requires a 2xx answer, decoding it as `T`.
    nonisolated func signedJSON<T: Decodable>(
        _ method: HTTPMethod, _ path: String, body: SignedBody = .empty, as type: T.Type, limit: Int = ResponseLimit.small,
        operation: String
    ) async throws -> T {
        let response = try await signed(method, path, body: body, limit: limit, operation: operation)
        guard response.isSuccess else { throw StationClientError.station(response, operation: operation) }
        return try Self.decode(type, from: response, operation: operation)
    }
}
