import Foundation
import Transport

/// Pinning, certificate verification and reading the server's key against a caller's TLS
/// endpoint. Every pinned check accepts `.pinningUnsupported` in place of the pinned outcome, as
/// long as nothing was sent; the key is read or refused as the caller says the transport does.
enum TLSCases {
    static let all: [TLSConformanceCase] = [
        pinnedServerIsTrusted, anyMatchingPinIsEnough, mismatchedPinIsRejected, unpinnedSelfSignedServerIsRejected,
        pinsTravelWithEachRequest, caTrustedServerIsAccepted, presentedKeyIsRead,
    ]

    /// A fingerprint no server has.
    static func otherPin() throws -> PublicKeyFingerprint {
        try PublicKeyFingerprint(sha256: [UInt8](repeating: 0xAB, count: 32))
    }

    /// What a pinned request came to.
    enum PinnedOutcome {
        case response(HTTPResponse)
        case failed(TransportError)
        /// The transport cannot pin and did not send the request.
        case unsupported
    }

    /// Sends a GET of `endpoint.url` under `pins`; a `.pinningUnsupported` answer must leave the
    /// server's request count unchanged.
    static func sendPinned(_ c: ConformanceContext, _ endpoint: ConformanceTLSEndpoint, pins: [PublicKeyFingerprint],
                           _ check: String) async throws -> PinnedOutcome {
        let before = endpoint.requestsReceived()
        do {
            let response = try await c.transport.send(HTTPRequest(method: .get, url: endpoint.url), body: .none,
                                                      options: TransferOptions(pinnedPublicKeys: pins))
            return .response(response)
        } catch let error as TransportError {
            guard error.kind == .pinningUnsupported else { return .failed(error) }
            try c.expectEqual(endpoint.requestsReceived() - before, 0,
                              "\(check): requests the server received although pinning is unsupported")
            return .unsupported
        } catch {
            throw c.failure(check, expected: "a response or a TransportError", got: "\(type(of: error)): \(error)")
        }
    }

    /// Fails unless a pinned request that should succeed did (or was refused as unsupported).
    static func expectPinnedSuccess(_ c: ConformanceContext, _ endpoint: ConformanceTLSEndpoint,
                                    pins: [PublicKeyFingerprint], _ check: String) async throws {
        switch try await sendPinned(c, endpoint, pins: pins, check) {
        case .response(let response): try c.expectEqual(response.status, 200, "\(check): status")
        case .failed(let error): throw c.failure(check, expected: "200 (or .pinningUnsupported, unsent)", got: "\(error)")
        case .unsupported: break
        }
    }

    /// Fails unless an unpinned or pinned request fails with `kind` before reaching the server.
    static func expectRefused(_ c: ConformanceContext, _ endpoint: ConformanceTLSEndpoint, pins: [PublicKeyFingerprint],
                              _ kind: TransportError.Kind, _ check: String) async throws {
        let before = endpoint.requestsReceived()
        let outcome = try await sendPinned(c, endpoint, pins: pins, check)
        switch outcome {
        case .response(let response):
            throw c.failure(check, expected: "TransportError \(kind)", got: "a \(response.status) response")
        case .failed(let error):
            try c.expect(error.kind == kind, check, expected: "TransportError \(kind)", got: "\(error)")
            try c.expectEqual(error.url, endpoint.url, "\(check): the error's URL")
        case .unsupported:
            if pins.isEmpty { throw c.failure(check, expected: "TransportError \(kind)", got: ".pinningUnsupported unpinned") }
        }
        try c.expectEqual(endpoint.requestsReceived() - before, 0, "\(check): requests the server received")
    }

    static let pinnedServerIsTrusted = TLSConformanceCase(
        "pinnedServerIsTrusted", "A request pinned to the server's key is answered, self-signed certificate and all."
    ) { c, endpoint in
        try await expectPinnedSuccess(c, endpoint, pins: [endpoint.pin], "GET pinned to the server's key")
    }

    static let anyMatchingPinIsEnough = TLSConformanceCase(
        "anyMatchingPinIsEnough", "Pins are alternatives: a backup pin next to the right one still connects."
    ) { c, endpoint in
        try await expectPinnedSuccess(c, endpoint, pins: [try otherPin(), endpoint.pin], "GET pinned to [other, right]")
    }

    static let mismatchedPinIsRejected = TLSConformanceCase(
        "mismatchedPinIsRejected", "A request pinned to another key fails with .pinMismatch and never reaches the server."
    ) { c, endpoint in
        try await expectRefused(c, endpoint, pins: [try otherPin()], .pinMismatch, "GET pinned to another key")
    }

    static let unpinnedSelfSignedServerIsRejected = TLSConformanceCase(
        "unpinnedSelfSignedServerIsRejected",
        "Without pins, a certificate no trusted CA signed fails with .tlsFailure and the request is not sent."
    ) { c, endpoint in
        try await expectRefused(c, endpoint, pins: [], .tlsFailure, "unpinned GET")
    }

    static let pinsTravelWithEachRequest = TLSConformanceCase(
        "pinsTravelWithEachRequest",
        "One transport alternates pinned, unpinned and wrongly pinned requests to one origin, each judged by its own pins."
    ) { c, endpoint in
        try await expectPinnedSuccess(c, endpoint, pins: [endpoint.pin], "first pinned GET")
        try await expectRefused(c, endpoint, pins: [], .tlsFailure, "unpinned GET after a pinned one")
        try await expectRefused(c, endpoint, pins: [try otherPin()], .pinMismatch, "wrongly pinned GET after a pinned one")
        try await expectPinnedSuccess(c, endpoint, pins: [endpoint.pin], "pinned GET again")
    }

    static let caTrustedServerIsAccepted = TLSConformanceCase(
        "caTrustedServerIsAccepted",
        "Without pins, a server whose certificate a trusted CA signed is answered (checks nothing without caTrustedURL)."
    ) { c, endpoint in
        guard let url = endpoint.caTrustedURL else { return }
        let response = try await c.send(HTTPRequest(method: .get, url: url))
        try c.expectEqual(response.status, 200, "status of the unpinned GET of \(url)")
    }

    static let presentedKeyIsRead = TLSConformanceCase(
        "presentedKeyIsRead",
        "presentedPublicKey(at:) returns the server's key and sends no request (a transport said not to read keys throws "
            + ".probingUnsupported naming the URL); an unpinned request afterwards is still refused."
    ) { c, endpoint in
        let check = "presentedPublicKey(at: \(endpoint.url))"
        let before = endpoint.requestsReceived()
        let answer: Result<PublicKeyFingerprint, TransportError>
        do {
            answer = .success(try await c.transport.presentedPublicKey(at: endpoint.url))
        } catch let error as TransportError {
            answer = .failure(error)
        } catch {
            throw c.failure(check, expected: "a key or a TransportError", got: "\(type(of: error)): \(error)")
        }
        switch (endpoint.readsServerKeys, answer) {
        case (true, .success(let key)):
            try c.expectEqual(key, endpoint.pin, "\(check): the key read")
        case (true, .failure(let error)):
            throw c.failure(check, expected: "the server's key \(endpoint.pin) (the caller says this transport reads keys; "
                                + "a wrapper forwards presentedPublicKey(at:))", got: "\(error)")
        case (false, .success(let key)):
            throw c.failure(check, expected: "TransportError probingUnsupported (the caller says this transport cannot read keys)",
                            got: "the key \(key)")
        case (false, .failure(let error)):
            try c.expect(error.kind == .probingUnsupported, check, expected: "TransportError probingUnsupported", got: "\(error)")
            try c.expectEqual(error.url, endpoint.url, "\(check): the error's URL")
        }
        try c.expectEqual(endpoint.requestsReceived() - before, 0, "\(check): requests the server received")
        // Reading a key trusts nothing: the connection it used must not carry a later request.
        try await expectRefused(c, endpoint, pins: [], .tlsFailure, "unpinned GET after reading the key")
    }
}
