import Foundation
import LoopbackHTTP
import Transport

/// An `HTTPTransport` that hands requests straight to an emulator, with no sockets: the fastest way
/// to run a client against the emulator in unit tests.
///
/// Each request goes to the same handler the emulator's HTTP server runs on a connection, in
/// process (LoopbackHTTP's in-process delivery, which the transport conformance suite checks case
/// by case): paths under `/ipfs/` and `/ipns/` go to the emulated gateway, everything else to the
/// station, whatever the URL's host and port (sent as `Host`, as an HTTP client would). Responses
/// carry `Date` and `Server` as over HTTP; a body over the station's upload limit is answered 413;
/// response bodies reach the client in pieces of at most 64 KiB, with back-pressure (a reader that
/// is behind holds the emulator's write back), and progress is reported as they move, in steps, as
/// over a socket (a request body's too, as the emulator reads it). ``FaultInjector/throttle(_:toBytesPerSecond:server:)`` slows a route's answers
/// to a byte rate, for a test that cancels a transfer halfway. `https` requests go through a simulated TLS handshake with
/// the emulator's key (``StationEmulator/serverKeyFingerprint``): pins are enforced and a
/// self-signed key refused unpinned, as a TLS transport would (see <doc:TestingWithTheEmulator>).
/// An injected mid-body fault throws `TransportError` with kind
/// `.connectionLost` (a streamed response first yields the bytes sent before the cut); an endless
/// body streams until the reader stops, fills the memory limit (`.responseTooLarge`) or runs into
/// the request's time limit.
public struct InProcessTransport: HTTPTransport {
    /// Which of an emulator's servers a transport (or an HTTP server) reaches.
    enum Role: Sendable {
        /// The station, and the gateway for `/ipfs/…` and `/ipns/…` (one host for both).
        case stationAndGateway
        /// The gateway alone (station paths answer the gateway's 404).
        case gateway
        /// The station alone (its HTTP server; gateway paths answer the station's 404).
        case station
    }

    private let delivery: InProcessHTTPTransport
    /// The emulator the requests go to, kept alive for as long as the transport is.
    private let emulator: StationEmulator?

    /// A transport into `emulator`.
    public init(emulator: StationEmulator) {
        self.init(emulator: emulator, role: .stationAndGateway)
    }

    init(emulator: StationEmulator, role: Role) {
        self.emulator = emulator
        delivery = InProcessHTTPTransport(handler: emulator.loopbackHandler(role),
                                          certificate: emulator.serverKeys.certificate(for: role))
    }

    /// The emulator's in-process delivery with another target, such as
    /// `InProcessHTTPTransport.loopbackServers`, the conformance cases' own servers.
    init(delivery: InProcessHTTPTransport) {
        emulator = nil
        self.delivery = delivery
    }

    /// Runs `request` through the emulator.
    ///
    /// - Throws: `TransportError`: `.invalidRequest` for a request `HTTPRequest.validate()` rejects
    ///   (or pinned to a plain `http` URL), `.pinMismatch` for an `https` request pinned to keys
    ///   other than ``StationEmulator/serverKeyFingerprint``, `.tlsFailure` for an unpinned `https`
    ///   request while the emulator presents a self-signed key (neither reaches the emulator),
    ///   `.cancelled` when the task is cancelled,
    ///   `.requestBodyFailed` when the body cannot be read or breaks its declared length,
    ///   `.connectionLost` for an injected mid-body fault, `.timedOut` past the request's time
    ///   limits, `.responseTooLarge` / `.responseBodyFailed` when the response cannot be delivered as
    ///   `options.response` asks.
    public func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        try await delivery.send(request, body: body, options: options)
    }

    /// The key the emulator presents at `url` (``StationEmulator/serverKeyFingerprint``, whether
    /// or not it is trusted); see `HTTPTransport.presentedPublicKey(at:)`. Nothing reaches the
    /// emulator.
    ///
    /// - Throws: `TransportError` (for a `GET` of `url`): `.invalidRequest` unless `url` is `https`
    ///   with a host, `.cancelled` when the task is cancelled.
    public func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        try await delivery.presentedPublicKey(at: url)
    }
}
