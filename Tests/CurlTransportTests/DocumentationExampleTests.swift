#if canImport(CCurl)
import CurlTransport
import Foundation
import HTTPTransportConformance
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// A third party's transport, as the HTTPTransportConformance article has it: here one that adds
/// its own header and hands the exchange to CurlTransport.
struct MyTransport: HTTPTransport {
    private let base = CurlTransport()

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        var request = request
        request.headers["My-Transport"] = "1"
        return try await base.send(request, body: body, options: options)
    }

    func presentedPublicKey(at url: URL) async throws -> PublicKeyFingerprint {
        try await base.presentedPublicKey(at: url)
    }
}

// The article's examples (HTTPTransportConformance.docc/RunningTheSuite.md), compiled and run
// as written, so that the documentation cannot drift from the API.

@Suite("MyTransport conforms to HTTPTransport")
struct MyTransportConformanceTests {
    @Test(arguments: HTTPTransportConformance.cases.map(\.name))
    func conformance(_ name: String) async throws {
        let conformanceCase = try #require(HTTPTransportConformance.conformanceCase(named: name))
        try await conformanceCase.run(against: MyTransport())
    }

    @Test func tlsCasesOneAtATime() async throws {
        let backend = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { backend.stop() }
        let front = try TLSFront.start(backendPort: backend.port, certificate: .runPyStyle)
        defer { front.stop() }
        let (frontURL, frontPin) = (front.url, front.pin)
        let endpoint = ConformanceTLSEndpoint(
            url: frontURL,
            pin: frontPin,
            caTrustedURL: nil,
            readsServerKeys: true,
            requestsReceived: { backend.statistics.requestsReceived }
        )
        for tlsCase in HTTPTransportConformance.tlsCases {
            try await tlsCase.run(against: MyTransport(), endpoint: endpoint)
        }
    }
}
#endif
