#if canImport(CCurl)
import LoopbackHTTP
import TestSupport
import CurlTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

/// The trust-on-first-use probe against `openssl s_server` with certificates made by the system
/// `openssl`. Pinning and CA verification are the conformance suite's TLS cases (ConformanceTests).
@Suite("CurlTransport: TLS probe")
struct TLSTests {
    /// A self-signed server and the pin `openssl` computes for it.
    struct SelfSignedServer {
        let directory: TemporaryDirectory
        let server: OpenSSLTLSServer
        let files: OpenSSLTool.CertificateFiles
        let pin: PublicKeyFingerprint

        init(keyType: OpenSSLTool.KeyType = .ecP256) throws {
            directory = try TemporaryDirectory()
            files = try OpenSSLTool.makeSelfSignedCertificate(in: directory.url, keyType: keyType)
            pin = try PublicKeyFingerprint(pin: "sha256//" + OpenSSLTool.publicKeyPin(of: files.certificate))
            server = try OpenSSLTLSServer(serving: files, logDirectory: directory.url)
        }

        func stop() {
            server.stop()
            directory.cleanup()
        }
    }

    /// Trust on first use: the probe reports the key `openssl` computes, and pinning it works.
    @Test(arguments: [OpenSSLTool.KeyType.ecP256, .rsa2048])
    func probeReportsTheFingerprintToPin(keyType: OpenSSLTool.KeyType) async throws {
        let station = try SelfSignedServer(keyType: keyType)
        defer { station.stop() }
        let transport = CurlTransport.forTests()
        let seen = try await transport.probeServerCertificate(at: station.server.url)
        #expect(seen.publicKeyFingerprint == station.pin)
        #expect(seen.der == (try OpenSSLTool.certificateDER(of: station.files.certificate)))
        #expect(seen.subject.contains("localhost"))
        #expect(seen.subject == seen.issuer)
        #expect(!seen.notAfter.isEmpty)
        #expect(seen.chainLength == 1)

        let response = try await transport.send(HTTPRequest(method: .get, url: station.server.url), body: .none,
                                                options: TransferOptions(pinnedPublicKeys: [seen.publicKeyFingerprint]))
        #expect(response.status == 200)
    }

    @Test func probeNeedsAnHTTPSServer() async throws {
        let transport = CurlTransport.forTests()
        let plain = try #require(URL(string: "http://127.0.0.1:1/"))
        #expect(await transportError { _ = try await transport.probeServerCertificate(at: plain) }?.kind == .invalidRequest)
        // A plain HTTP server cannot complete a TLS handshake.
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { server.stop() }
        let notTLS = try #require(URL(string: "https://127.0.0.1:\(server.port)/"))
        #expect(await transportError { _ = try await transport.probeServerCertificate(at: notTLS) }?.kind == .tlsFailure)
        server.stop()
        #expect(await transportError { _ = try await transport.probeServerCertificate(at: notTLS) }?.kind == .cannotConnect)
    }
}
#endif
