// Where libcurl is absent (iOS, tvOS, watchOS, visionOS) CurlTransport is empty and these tests
// compile to nothing, as every file of this target.
#if canImport(CCurl)
import CurlTransport
import Foundation
import HTTPTransportConformance
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// CurlTransport against the transport conformance suite: one test per case, so a failure names
/// its case. The TLS cases run behind `scripts/tls-front.py` with both kinds of certificate;
/// CurlTransport reads server keys (its certificate probe), so `presentedKeyIsRead` wants the pin.
@Suite("CurlTransport: conformance")
struct ConformanceTests {
    @Test(arguments: HTTPTransportConformance.cases.map(\.name))
    func conformance(_ name: String) async throws {
        let conformanceCase = try #require(HTTPTransportConformance.conformanceCase(named: name))
        try await conformanceCase.run(against: CurlTransport.forTests())
    }

    /// How the TLS cases meet the fronts: which certificate the pinned endpoint presents, and
    /// whether the transport trusts the test CA (and so gets a CA-trusted URL to check).
    enum TLSSetup: String, CaseIterable, CustomTestStringConvertible {
        /// Pinning run.py's self-signed certificate; no CA trusted.
        case pinRunPyCertificate
        /// Pinning the CA-signed certificate by its key; the CA itself not trusted.
        case pinCASignedCertificate
        /// The transport trusts the test CA (`caBundlePath`): the CA-signed front is answered
        /// unpinned, while run.py's certificate still needs its pin.
        case trustTestCA

        var testDescription: String { rawValue }
    }

    @Test(arguments: HTTPTransportConformance.tlsCases.map(\.name), TLSSetup.allCases)
    func tlsConformance(_ name: String, setup: TLSSetup) async throws {
        let conformanceCase = try #require(HTTPTransportConformance.tlsCase(named: name))
        let backend = try LoopbackHTTPServer { request, response in
            try request.consumeBody()
            try response.send(status: 200, body: Array("behind the front: \(request.path)".utf8))
        }
        defer { backend.stop() }
        let requestsReceived: @Sendable () -> Int = { backend.statistics.requestsReceived }
        switch setup {
        case .pinRunPyCertificate, .pinCASignedCertificate:
            let front = try TLSFront.start(backendPort: backend.port,
                                           certificate: setup == .pinRunPyCertificate ? .runPyStyle : .testCA)
            defer { front.stop() }
            let endpoint = ConformanceTLSEndpoint(url: front.url, pin: front.pin, readsServerKeys: true,
                                                  requestsReceived: requestsReceived)
            try await conformanceCase.run(against: CurlTransport.forTests(), endpoint: endpoint)
        case .trustTestCA:
            let selfSigned = try TLSFront.start(backendPort: backend.port, certificate: .runPyStyle)
            defer { selfSigned.stop() }
            let caSigned = try TLSFront.start(backendPort: backend.port, certificate: .testCA)
            defer { caSigned.stop() }
            let caFile = try #require(caSigned.caFile)
            let transport = CurlTransport.forTests { $0.caBundlePath = caFile.path }
            let endpoint = ConformanceTLSEndpoint(url: selfSigned.url, pin: selfSigned.pin, caTrustedURL: caSigned.url,
                                                  readsServerKeys: true, requestsReceived: requestsReceived)
            try await conformanceCase.run(against: transport, endpoint: endpoint)
        }
    }

    /// The fronts themselves: what the backend answers arrives through TLS unchanged, and a
    /// transport without the test CA does not trust the CA-signed front.
    @Test func tlsFrontPassesBytesThrough() async throws {
        let pattern = PatternBytes(seed: 77)
        let backend = try LoopbackHTTPServer { request, response in
            try request.consumeBody()
            try response.send(status: 200, body: pattern.bytes(offset: 0, count: 3_000_000))
        }
        defer { backend.stop() }
        let front = try TLSFront.start(backendPort: backend.port, certificate: .testCA)
        defer { front.stop() }
        let caFile = try #require(front.caFile)
        let trusting = CurlTransport.forTests { $0.caBundlePath = caFile.path }
        let response = try await trusting.send(HTTPRequest(method: .post, url: front.url("/through")),
                                               body: .bytes(Data(count: 1_000_000)))
        #expect(response.status == 200)
        #expect(response.body.data.map { $0.count == 3_000_000 && pattern.matches($0, offset: 0) } == true)
        let error = await transportError { _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: front.url)) }
        #expect(error?.kind == .tlsFailure)
    }
}
#endif
