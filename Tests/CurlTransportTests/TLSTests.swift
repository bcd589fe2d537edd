import TestSupport
import CurlTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

/// TLS against `openssl s_server` with certificates made by the system `openssl`: pinning for
/// self-signed stations, CA verification, and the trust-on-first-use probe.
@Suite("CurlTransport: TLS and pinning")
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
            directory.remove()
        }
    }

    /// A fingerprint no server has.
    static let otherPin = (try? PublicKeyFingerprint(sha256: [UInt8](repeating: 0xAB, count: 32)))

    @Test func pinnedSelfSignedServerIsTrusted() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let transport = CurlTransport.forTests()
        let response = try await transport.send(HTTPRequest(method: .get, url: station.server.url), body: .none,
                                                options: TransferOptions(pinnedPublicKeys: [station.pin]))
        #expect(response.status == 200)
        #expect(String(decoding: response.body.data ?? Data(), as: UTF8.self).contains("s_server"))
    }

    /// A backup pin next to the right one still connects (pins are alternatives).
    @Test func anyMatchingPinIsEnough() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let other = try #require(Self.otherPin)
        let response = try await CurlTransport.forTests().send(
            HTTPRequest(method: .get, url: station.server.url), body: .none,
            options: TransferOptions(pinnedPublicKeys: [other, station.pin]))
        #expect(response.status == 200)
    }

    @Test func wrongPinIsRejected() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let other = try #require(Self.otherPin)
        let error = await transportError {
            _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: station.server.url), body: .none,
                                                        options: TransferOptions(pinnedPublicKeys: [other]))
        }
        #expect(error?.kind == .pinMismatch)
        #expect(error?.url == station.server.url)
    }

    /// Without a pin, a self-signed certificate fails CA verification.
    @Test func unpinnedSelfSignedServerIsRejected() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let error = await transportError {
            _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: station.server.url))
        }
        #expect(error?.kind == .tlsFailure)
    }

    /// A certificate from a trusted CA verifies (host name included); the system store alone does
    /// not know the test CA.
    @Test func caSignedServerVerifiesAgainstItsBundle() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let authority = try OpenSSLTool.makeCertificateAuthority(in: directory.url)
        let files = try OpenSSLTool.makeServerCertificate(in: directory.url, signedBy: authority)
        let server = try OpenSSLTLSServer(serving: files, logDirectory: directory.url)
        defer { server.stop() }
        let trusting = CurlTransport.forTests { $0.caBundlePath = authority.certificate.path }
        let response = try await trusting.send(HTTPRequest(method: .get, url: server.url))
        #expect(response.status == 200)
        let error = await transportError { _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: server.url)) }
        #expect(error?.kind == .tlsFailure)
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

    /// Pins travel with each request: one transport sends to one origin under different pins, and
    /// a connection made under one pin set is not reused under another.
    @Test func pinsTravelWithEachRequest() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let other = try #require(Self.otherPin)
        let transport = CurlTransport.forTests()
        let request = HTTPRequest(method: .get, url: station.server.url)
        #expect(try await transport.send(request, body: .none, options: TransferOptions(pinnedPublicKeys: [station.pin])).status == 200)
        #expect(await transportError {
            _ = try await transport.send(request, body: .none, options: TransferOptions(pinnedPublicKeys: [other]))
        }?.kind == .pinMismatch)
        #expect(await transportError { _ = try await transport.send(request) }?.kind == .tlsFailure)
        #expect(try await transport.send(request, body: .none, options: TransferOptions(pinnedPublicKeys: [station.pin])).status == 200)
    }

    /// A pin on a plain `http` URL cannot be checked, so the request is refused unsent.
    @Test func pinsOnPlainHTTPAreRefused() async throws {
        let pin = try #require(Self.otherPin)
        let url = try #require(URL(string: "http://127.0.0.1:1/"))
        let error = await transportError {
            _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: url), body: .none,
                                                        options: TransferOptions(pinnedPublicKeys: [pin]))
        }
        #expect(error?.kind == .invalidRequest)
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
