import Foundation
import Transport

/// One duty of an `HTTPTransport`, checked against a live loopback server.
public struct ConformanceCase: Sendable, Identifiable, CustomStringConvertible {
    /// A stable identifier in lowerCamelCase, for example `statusCodesAreResponses`; use it to
    /// name or select tests.
    public let name: String
    /// One sentence saying what the transport must do.
    public let summary: String
    private let body: @Sendable (ConformanceContext) async throws -> Void

    init(_ name: String, _ summary: String, body: @escaping @Sendable (ConformanceContext) async throws -> Void) {
        self.name = name
        self.summary = summary
        self.body = body
    }

    /// The name, so the case can identify itself in a test runner.
    public var id: String { name }

    /// `"<name>: <summary>"`.
    public var description: String { "\(name): \(summary)" }

    /// Runs the case against `transport`.
    ///
    /// - Throws: ``ConformanceFailure`` naming the check that failed, what it expected and what the
    ///   transport did; also when the case cannot set itself up (no loopback socket, no temporary
    ///   directory).
    public func run(against transport: any HTTPTransport) async throws {
        try await ConformanceContext.run(caseName: name, transport: transport, body)
    }
}

/// One TLS duty of an `HTTPTransport` (pinning, certificate verification, reading a server's
/// key), checked against an endpoint the caller provides.
///
/// A transport that cannot enforce public-key pins passes a pinned check by throwing
/// `TransportError` with kind `.pinningUnsupported`, but only if the request never reached the
/// server (``ConformanceTLSEndpoint/requestsReceived``). Whether the transport must read the
/// server's key (`HTTPTransport.presentedPublicKey(at:)`) or answer `.probingUnsupported` is the
/// caller's statement, ``ConformanceTLSEndpoint/readsServerKeys``.
public struct TLSConformanceCase: Sendable, Identifiable, CustomStringConvertible {
    /// A stable identifier in lowerCamelCase, for example `mismatchedPinIsRejected`.
    public let name: String
    /// One sentence saying what the transport must do.
    public let summary: String
    private let body: @Sendable (ConformanceContext, ConformanceTLSEndpoint) async throws -> Void

    init(_ name: String, _ summary: String,
         body: @escaping @Sendable (ConformanceContext, ConformanceTLSEndpoint) async throws -> Void) {
        self.name = name
        self.summary = summary
        self.body = body
    }

    /// The name, so the case can identify itself in a test runner.
    public var id: String { name }

    /// `"<name>: <summary>"`.
    public var description: String { "\(name): \(summary)" }

    /// Runs the case against `transport` and the server at `endpoint`.
    ///
    /// Run the TLS cases of one endpoint one at a time: they count the requests its server
    /// receives.
    ///
    /// - Throws: ``ConformanceFailure`` naming the check that failed.
    public func run(against transport: any HTTPTransport, endpoint: ConformanceTLSEndpoint) async throws {
        try await ConformanceContext.run(caseName: name, transport: transport) { context in
            try await body(context, endpoint)
        }
    }
}

/// A TLS server for the TLS cases, which the caller starts (a TLS front before a loopback HTTP
/// server, a test station) and describes here, with what the transport under test can do.
///
/// The server at ``url`` must be on loopback (or another address the test owns), present a
/// certificate the transport does not trust through its certificate authorities (a self-signed
/// one, as a station's), whose public key is ``pin``, and answer `GET` of any path with 200.
/// ``requestsReceived`` counts the HTTP requests that reached it, so the cases can tell a refused
/// request from one that was sent.
public struct ConformanceTLSEndpoint: Sendable {
    /// An `https` URL of the server, for example `https://127.0.0.1:8443/`.
    public var url: URL
    /// The SHA-256 fingerprint of the public key the server presents.
    public var pin: PublicKeyFingerprint
    /// An `https` URL whose certificate the transport under test does trust through its
    /// certificate authorities (for example because it was configured with the test CA), answering
    /// `GET` with 200; `nil` leaves that check out (the `caTrustedServerIsAccepted` case then
    /// checks nothing).
    public var caTrustedURL: URL?
    /// Whether the transport under test reads the key a server presents on this platform: `true`
    /// makes `presentedKeyIsRead` require `presentedPublicKey(at: url)` to return ``pin`` without
    /// sending a request; `false` makes it require `TransportError` with kind `.probingUnsupported`
    /// naming ``url``. A decorator that should read keys but drops the probe fails either way.
    public var readsServerKeys: Bool
    /// How many HTTP requests the server behind ``url`` has received so far, so the cases can tell
    /// whether a refused request was sent.
    public var requestsReceived: @Sendable () -> Int

    /// Describes an endpoint; see each property. `readsServerKeys` has no default: say what the
    /// transport under test does on this platform.
    public init(url: URL, pin: PublicKeyFingerprint, caTrustedURL: URL? = nil, readsServerKeys: Bool,
                requestsReceived: @escaping @Sendable () -> Int) {
        self.url = url
        self.pin = pin
        self.caTrustedURL = caTrustedURL
        self.readsServerKeys = readsServerKeys
        self.requestsReceived = requestsReceived
    }
}
