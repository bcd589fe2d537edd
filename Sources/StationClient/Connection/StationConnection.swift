import Foundation
import ClassicalCrypto
import Signing
import Transport
import OrderedJSON
import Manifest

/// Where a request to the station goes: its endpoint and the TLS key pins it carries.
struct StationOrigin: Sendable, Equatable {
    var url: URL
    var pins: [PublicKeyFingerprint]
}

/// A `GET` of one of the station's endpoints that need no signature (`/health`, `/profile`) and
/// how its answer is decoded, read through ``StationConnection/read(_:)`` or, before pairing,
/// ``StationConnection/read(_:at:transport:timeouts:)``.
struct UnsignedRead<Answer: Decodable & Sendable>: Sendable {
    let path: String
    let limit: Int
    /// A status besides 2xx whose body is still the answer.
    let alsoAccepting: Int?

    func call(timeouts: TransferTimeouts) -> StationCall {
        .unsigned(.get, path, limit: limit, timeouts: timeouts)
    }
}

extension UnsignedRead where Answer == HealthResponse {
    /// A degraded station answers 503 with its health: that is an answer, not a refusal.
    static var health: Self { Self(path: "/health", limit: ResponseLimit.small, alsoAccepting: 503) }
}

extension UnsignedRead where Answer == StationProfile {
    static var profile: Self { Self(path: "/profile", limit: ResponseLimit.profile, alsoAccepting: nil) }
}

/// A paired device's connection to its station: the credentials (endpoint, pins, signing
/// identity), the clock offset learned from the station, endpoint mobility, and ``send(_:budget:)``
/// for every call, signed or not.
///
/// Its state sits behind a lock, read without an actor hop, so concurrent calls (a listing's
/// `/rewrap`s) sign and send in parallel; only a credential change is written to the key store.
final class StationConnection: Sendable {
    private struct State {
        var credentials: DeviceCredentials
        var clockOffset: Int64 = 0
        /// The search for a new endpoint under way, shared by every call that failed meanwhile.
        var resolution: Task<StationOrigin, any Error>?
    }

    let configuration: StationClientConfiguration
    private let state: Locked<State>

    init(credentials: DeviceCredentials, configuration: StationClientConfiguration) {
        self.configuration = configuration
        state = Locked(State(credentials: credentials))
    }

    /// The current credentials (the endpoint changes when the station moves).
    var credentials: DeviceCredentials { state.withLock { $0.credentials } }

    /// Seconds added to the local clock when signing, learned from a `stale request` answer.
    var clockOffset: Int64 { state.withLock { $0.clockOffset } }

    /// The current endpoint and the pins its requests carry.
    var origin: StationOrigin {
        state.withLock { StationOrigin(url: $0.credentials.endpoint, pins: requestPins(for: $0.credentials.endpointTrust, in: $0.credentials)) }
    }

    /// The pins for an endpoint trusted as `trust`: ``StationClientConfiguration/stationPublicKeyPins``
    /// when the app set them (an override of the stored pin), else the stored pin for a pinned
    /// endpoint, else none.
    func requestPins(for trust: EndpointTrust) -> [PublicKeyFingerprint] {
        state.withLock { requestPins(for: trust, in: $0.credentials) }
    }

    private func requestPins(for trust: EndpointTrust, in credentials: DeviceCredentials) -> [PublicKeyFingerprint] {
        if !configuration.stationPublicKeyPins.isEmpty { return configuration.stationPublicKeyPins }
        guard trust == .pinnedKey, let pin = credentials.stationPublicKeyPin else { return [] }
        return [pin]
    }

    /// Who signs and with which clock offset, read together.
    struct SigningContext: Sendable {
        let identity: SigningIdentity
        let clockOffset: Int64

        /// The six `x-cipher-*` headers for a request whose body hashes to `bodySHA256`, dated
        /// with the clock offset.
        /// - Throws: ``StationClientError`` (`.refused`, named `operation`) when the method or
        ///   path cannot be signed.
        func headers(method: String, path: String, bodySHA256: [UInt8], operation: String) throws -> SignedRequestHeaders {
            let offset = clockOffset
            let signer = RequestSigner(identity: identity, clock: { RequestSigner.systemClock() + offset })
            do {
                return try signer.sign(method: method, path: path, bodySHA256: bodySHA256)
            } catch {
                throw StationClientError(.refused, operation: operation, message: "cannot sign: \(error)", underlying: error)
            }
        }
    }

    func signingContext() -> SigningContext {
        state.withLock { state in
            SigningContext(
                identity: SigningIdentity(uid: state.credentials.stationUID, deviceUID: state.credentials.deviceUID,
                                          signingKey: state.credentials.signingPrivateKey),
                clockOffset: state.clockOffset)
        }
    }

    // MARK: Credentials

    /// Applies `change` to the credentials and, when it reports a change, saves them to the key
    /// store; returns what `change` returned.
    @discardableResult
    func updateCredentials(_ change: (inout DeviceCredentials) throws -> Bool) async throws -> Bool {
        let changed = try state.withLock { try change(&$0.credentials) }
        if changed { try await saveCredentials() }
        return changed
    }

    /// Saves the current credentials to the configuration's key store.
    func saveCredentials() async throws {
        try await configuration.keyStore.saveSecret(credentials.encoded(), as: KeyStoreItem.credentials, operation: "saving credentials")
    }

    /// Removes the credentials from the key store (the connection keeps working in memory).
    func forget() async throws {
        try await configuration.keyStore.delete(KeyStoreItem.credentials)
    }

    /// Shares one search for the station's new endpoint between every call that failed on
    /// `failed`; a call that failed on an endpoint since replaced gets the current origin.
    func resolvedOrigin(after failed: StationOrigin) async throws -> StationOrigin {
        enum Step { case current, wait(Task<StationOrigin, any Error>, started: Bool) }
        let step: Step = state.withLock { state in
            if state.credentials.endpoint != failed.url { return .current }
            if let running = state.resolution { return .wait(running, started: false) }
            let task = Task { try await self.resolveEndpoint() }
            state.resolution = task
            return .wait(task, started: true)
        }
        switch step {
        case .current:
            return origin
        case .wait(let task, let started):
            defer { if started { state.withLock { $0.resolution = nil } } }
            return try await task.value
        }
    }

    // MARK: Sending

    /// Sends `request`, with endpoint mobility; a signed request answered `stale request` is
    /// signed again, once, with the clock offset from the answer's `Date` header.
    ///
    /// Each request sent (the stale-clock and new-endpoint retries included) takes a call from
    /// `budget` when one is given; none left fails the call before anything is sent.
    /// - Returns: the response, whatever its status (a tunnel's 5xx is thrown as `.unreachable`).
    /// - Throws: ``StationClientError`` when no answer could be had.
    func send(_ request: StationCall, budget: CallBudget? = nil) async throws -> HTTPResponse {
        try await withEndpointMobility(operation: request.operation) { origin in
            let first = try await self.sendOnce(request, at: origin, budget: budget)
            guard request.isSigned, let offset = Self.stationClockOffset(after: first) else { return first }
            self.configuration.log(.warning, "\(request.operation): the station says the request is stale; retrying with a clock offset of \(offset) s")
            self.state.withLock { $0.clockOffset = offset }
            return try await self.sendOnce(request, at: origin, budget: budget)
        }
    }

    private func sendOnce(_ request: StationCall, at origin: StationOrigin, budget: CallBudget?) async throws -> HTTPResponse {
        guard budget?.take() ?? true else {
            throw StationClientError(.refused, operation: request.operation,
                                     message: "the listing already made one call per post it lists; nothing was sent")
        }
        return try await Self.exchange(request, at: origin, signing: request.isSigned ? signingContext() : nil,
                                       transport: configuration.transport)
    }

    /// Sends `request` once to `origin` (signed with `signing`, or unsigned without): the wire
    /// step every call takes, those of a client not paired yet included. A tunnel's answer in
    /// front of a dead station (see ``isTunnelFailure(_:)``) is thrown as `.unreachable`.
    static func exchange(
        _ request: StationCall, at origin: StationOrigin, signing: SigningContext?, transport: any HTTPTransport
    ) async throws -> HTTPResponse {
        let operation = request.operation
        var http = HTTPRequest(method: request.method, url: url(origin.url, request.path))
        if let signing {
            let headers = try signing.headers(method: request.method.rawValue, path: request.path, bodySHA256: request.body.sha256,
                                              operation: operation)
            for field in headers.fields { http.headers.add(field.name, value: field.value) }
        }
        if let contentType = request.body.contentType { http.headers.add("Content-Type", value: contentType) }
        for header in request.unsignedHeaders { http.headers.add(header.name, value: header.value) }
        let response: HTTPResponse
        do {
            response = try await transport.send(http, body: request.body.requestBody,
                                                options: pinned(request.options, endpoint: origin.url, pins: origin.pins))
        } catch {
            throw StationClientError.wrap(error, operation: operation)
        }
        if let failure = StationClientError.tunnel(response, operation: operation) { throw failure }
        return response
    }

    /// `options` for a request to the station at `endpoint`: over `https`, carrying the station's
    /// public-key pins (plain `http` has no key to pin).
    static func pinned(_ options: TransferOptions, endpoint: URL, pins: [PublicKeyFingerprint]) -> TransferOptions {
        guard !pins.isEmpty, endpoint.scheme?.lowercased() == "https" else { return options }
        var pinned = options
        pinned.pinnedPublicKeys = pins
        return pinned
    }

    static func url(_ endpoint: URL, _ path: String) -> URL {
        var text = endpoint.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return URL(string: text + path) ?? endpoint.appendingPathComponent(path)
    }

    /// 502, 504 and Cloudflare's 52x/530 come from a tunnel, never from the station; a 503 whose
    /// body is not the station's JSON also does (the station's own 503s are JSON).
    static func isTunnelFailure(_ response: HTTPResponse) -> Bool {
        switch response.status {
        case 502, 504, 520...530: return true
        case 503:
            guard let data = response.body.data else { return false }
            return (try? WireJSON.parse([UInt8](data)).objectValue) == nil
        default: return false
        }
    }

    // MARK: Unsigned reads

    /// Reads `read` from the paired station, following it when it moves.
    func read<Answer>(_ read: UnsignedRead<Answer>) async throws -> Answer {
        let call = read.call(timeouts: configuration.requestTimeouts)
        return try Self.decodeAnswer(Answer.self, from: try await send(call), operation: call.operation,
                                     alsoAccepting: read.alsoAccepting)
    }

    /// Reads `read` once from the station at `origin`: what pairing, following and checking a
    /// new endpoint need from a station whose identity is not fixed yet.
    static func read<Answer>(
        _ read: UnsignedRead<Answer>, at origin: StationOrigin, transport: any HTTPTransport,
        timeouts: TransferTimeouts = StationClientConfiguration.defaultRequestTimeouts
    ) async throws -> Answer {
        let call = read.call(timeouts: timeouts)
        return try decodeAnswer(Answer.self, from: try await exchange(call, at: origin, signing: nil, transport: transport),
                                operation: call.operation, alsoAccepting: read.alsoAccepting)
    }

    // MARK: Answers

    /// `response` decoded as `T` when its status is 2xx or `alsoAccepting`; `.station` otherwise.
    static func decodeAnswer<T: Decodable>(
        _ type: T.Type, from response: HTTPResponse, operation: String, alsoAccepting acceptedStatus: Int? = nil
    ) throws -> T {
        guard response.isSuccess || response.status == acceptedStatus else {
            throw StationClientError.station(response, operation: operation)
        }
        return try decode(T.self, from: response, operation: operation)
    }

    static func decode<T: Decodable>(_ type: T.Type, from response: HTTPResponse, operation: String) throws -> T {
        do {
            return try WireJSON.decode(type, from: [UInt8](response.body.data ?? Data()))
        } catch {
            throw StationClientError(.invalidResponse, operation: operation, status: response.status,
                                     message: "unexpected answer: \(error)", underlying: error)
        }
    }

    // MARK: The station's clock

    /// The offset to the station's clock when `response` refuses a request as stale and dates
    /// itself; `nil` for any other answer.
    static func stationClockOffset(after response: HTTPResponse) -> Int64? {
        guard response.status == 401,
              StationErrorBody.parse([UInt8](response.body.data ?? Data()))?.message == "stale request",
              let stationTime = response.headers["Date"].flatMap(parseHTTPDate) else { return nil }
        return stationTime - RequestSigner.systemClock()
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
}

extension StationClientError {
    /// The `Kind.unreachable` error for an answer that came from a tunnel in front of a dead
    /// station (see ``StationConnection/isTunnelFailure(_:)``), or `nil` for any other answer.
    static func tunnel(_ response: HTTPResponse, operation: String) -> StationClientError? {
        guard StationConnection.isTunnelFailure(response) else { return nil }
        return StationClientError(.unreachable, operation: operation, message: "the tunnel answered \(response.status)",
                                  status: response.status)
    }
}
