#if canImport(CCurl)
import CurlTransport
import Foundation
import HTTPTransportConformance
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// The teeth of the suite's `presentedKeyIsRead` case: wrappers around CurlTransport that handle
/// `presentedPublicKey(at:)` right or wrong, run against a TLS front presenting run.py's kind of
/// certificate. A wrapper that loses the key must fail here, not at a user's first pairing.
@Suite("HTTPTransportConformance: reading the server's key")
struct KeyReadingConformanceTests {
    /// A wrapper that adds a header to every request and answers key readings as ``probe`` says.
    struct Wrapper: HTTPTransport {
        enum Probe: String, CaseIterable, CustomTestStringConvertible {
            /// Hands the reading to the wrapped transport: right.
            case forwards
            /// Answers `.probingUnsupported` itself, as a wrapper that never heard of the requirement.
            case answersUnsupported
            /// Answers a key no server has.
            case answersAnotherKey
            /// Reads the key, then "warms up" a connection with a GET pinned to it: a request sent.
            case sendsARequest

            var testDescription: String { rawValue }
        }

        let base = CurlTransport.forTests()
        let probe: Probe

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            var request = request
            request.headers["X-Wrapper"] = "1"
            return try await base.send(request, body: body, options: options)
        }

        func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
            switch probe {
            case .forwards:
                return try await base.presentedPublicKey(at: url)
            case .answersUnsupported:
                throw TransportError.probingUnsupported(at: url, reason: "this wrapper does not read keys")
            case .answersAnotherKey:
                return try PublicKeyFingerprint(sha256: [UInt8](repeating: 0xCD, count: 32))
            case .sendsARequest:
                let key = try await base.presentedPublicKey(at: url)
                _ = try await send(HTTPRequest(method: .get, url: url), body: .none, options: TransferOptions(pinnedPublicKeys: [key]))
                return key
            }
        }
    }

    /// Runs `presentedKeyIsRead` against `transport` and a fresh front; `nil` when it passes.
    static func failure(of transport: any HTTPTransport, readsServerKeys: Bool) async throws -> ConformanceFailure? {
        let conformanceCase = try #require(HTTPTransportConformance.tlsCase(named: "presentedKeyIsRead"))
        let backend = try LoopbackHTTPServer { request, response in
            try request.consumeBody()
            try response.send(status: 200)
        }
        defer { backend.stop() }
        let front = try TLSFront.start(backendPort: backend.port, certificate: .runPyStyle)
        defer { front.stop() }
        let endpoint = ConformanceTLSEndpoint(url: front.url, pin: front.pin, readsServerKeys: readsServerKeys,
                                              requestsReceived: { backend.statistics.requestsReceived })
        do {
            try await conformanceCase.run(against: transport, endpoint: endpoint)
            return nil
        } catch let failure as ConformanceFailure {
            return failure
        }
    }

    @Test func aWrapperThatForwardsPasses() async throws {
        let failure = try await Self.failure(of: Wrapper(probe: .forwards), readsServerKeys: true)
        #expect(failure == nil, "\(String(describing: failure))")
    }

    @Test(arguments: [Wrapper.Probe.answersUnsupported, .answersAnotherKey, .sendsARequest])
    func aWrapperThatDropsOrBreaksTheReadingFails(_ probe: Wrapper.Probe) async throws {
        let failure = try await Self.failure(of: Wrapper(probe: probe), readsServerKeys: true)
        #expect(failure?.caseName == "presentedKeyIsRead", "\(String(describing: failure))")
        switch probe {
        case .answersUnsupported: #expect(failure?.got.contains("probingUnsupported") == true)
        case .answersAnotherKey: #expect(failure?.check.hasSuffix("the key read") == true)
        case .sendsARequest: #expect(failure?.check.hasSuffix("requests the server received") == true)
        case .forwards: break
        }
    }

    /// Said not to read keys, a transport must answer `.probingUnsupported`: one that does is
    /// fine, one that returns a key contradicts its caller.
    @Test func aTransportSaidNotToReadKeysMustAnswerUnsupported() async throws {
        #expect(try await Self.failure(of: Wrapper(probe: .answersUnsupported), readsServerKeys: false) == nil)
        let failure = try await Self.failure(of: Wrapper(probe: .forwards), readsServerKeys: false)
        #expect(failure?.caseName == "presentedKeyIsRead", "\(String(describing: failure))")
        #expect(failure?.got.hasPrefix("the key") == true)
    }
}
#endif
