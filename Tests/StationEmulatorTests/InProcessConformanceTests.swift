import Foundation
import HTTPTransportConformance
@testable import LoopbackHTTP
@testable import StationEmulator
import Testing
import Transport

/// The emulator's `InProcessTransport` against the transport conformance suite: its in-process
/// delivery (the code every `emulator.transport` request goes through) with each case's own
/// `LoopbackHTTPServer` handler as the target, found by the port of the case's URL.
///
/// Not run: the cases in ``notApplicable``, each with its reason. The TLS cases run against
/// loopback servers presenting simulated certificates (``tlsEndpoint()``): in process the
/// handshake is simulated from a certificate's key fingerprint, pins and all.
@Suite("InProcessTransport: conformance")
struct InProcessConformanceTests {
    /// Cases that check what only a wire connection has.
    static let notApplicable: [String: String] = [
        "connectionsAreReused": "it counts TCP connections; in process there are none to reuse",
        "chunkedAndCloseDelimitedResponses":
            "its handler writes chunked framing bytes by hand; in process the handler's bytes are the body, not HTTP/1.1 framing",
    ]

    static let caseNames = HTTPTransportConformance.cases.map(\.name).filter { notApplicable[$0] == nil }

    @Test(arguments: caseNames)
    func conformance(_ name: String) async throws {
        let conformanceCase = try #require(HTTPTransportConformance.conformanceCase(named: name))
        try await conformanceCase.run(against: InProcessTransport(delivery: .loopbackServers))
    }

    /// A self-signed endpoint (its pin a fixed fingerprint no real key has) and a CA-trusted one,
    /// each a loopback server answering 200, reached in process at `https://127.0.0.1:<port>/`.
    static func tlsEndpoint() throws -> (endpoint: ConformanceTLSEndpoint, servers: [LoopbackHTTPServer]) {
        func server(_ certificate: SimulatedCertificate) throws -> LoopbackHTTPServer {
            let server = try LoopbackHTTPServer { _, response in try response.send(status: 200, body: Array("ok".utf8)) }
            server.simulatedCertificate = certificate
            return server
        }
        let pin = try PublicKeyFingerprint(sha256: [UInt8](repeating: 0x5C, count: 32))
        let selfSigned = try server(SimulatedCertificate(publicKey: pin, isSignedByTrustedAuthority: false))
        let caSigned = try server(SimulatedCertificate(publicKey: try PublicKeyFingerprint(sha256: [UInt8](repeating: 0x3A, count: 32)),
                                                       isSignedByTrustedAuthority: true))
        let url = try #require(URL(string: "https://127.0.0.1:\(selfSigned.port)/"))
        let caTrustedURL = try #require(URL(string: "https://127.0.0.1:\(caSigned.port)/"))
        let endpoint = ConformanceTLSEndpoint(url: url, pin: pin, caTrustedURL: caTrustedURL, readsServerKeys: true,
                                              requestsReceived: { selfSigned.statistics.requestsReceived })
        return (endpoint, [selfSigned, caSigned])
    }

    @Test(arguments: HTTPTransportConformance.tlsCases.map(\.name))
    func tlsConformance(_ name: String) async throws {
        let tlsCase = try #require(HTTPTransportConformance.tlsCase(named: name))
        let (endpoint, servers) = try Self.tlsEndpoint()
        defer { servers.forEach { $0.stop() } }
        try await tlsCase.run(against: InProcessTransport(delivery: .loopbackServers), endpoint: endpoint)
    }

    @Test("A probe of the simulated endpoint answers its pin and reaches no handler")
    func probeAnswersThePin() async throws {
        let (endpoint, servers) = try Self.tlsEndpoint()
        defer { servers.forEach { $0.stop() } }
        let transport = InProcessTransport(delivery: .loopbackServers)
        #expect(try await transport.presentedPublicKey(at: endpoint.url) == endpoint.pin)
        let caURL = try #require(endpoint.caTrustedURL)
        #expect(try await transport.presentedPublicKey(at: caURL) != endpoint.pin)
        #expect(endpoint.requestsReceived() == 0)
        #expect(servers[1].statistics.requestsReceived == 0)
    }

    /// Every case left out is one the suite has, so a renamed case cannot drop out silently.
    @Test func leftOutCasesExist() {
        let names = Set(HTTPTransportConformance.cases.map(\.name))
        #expect(Set(Self.notApplicable.keys).subtracting(names).isEmpty)
    }
}
