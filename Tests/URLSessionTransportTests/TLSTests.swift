import LoopbackHTTP
import TestSupport
import Foundation
import Testing
import Transport
import TransportTestSupport
import URLSessionTransport

/// TLS against `openssl s_server` with certificates made by the system `openssl`: CA verification
/// everywhere, public-key pinning on Apple platforms, and its refusal on Linux.
@Suite("URLSessionTransport: TLS and pinning")
struct TLSTests {
    /// A self-signed server and the pin `openssl` computes for it.
    struct SelfSignedServer {
        let directory: TemporaryDirectory
        let server: OpenSSLTLSServer
        let pin: PublicKeyFingerprint

        init() throws {
            directory = try TemporaryDirectory()
            let files = try OpenSSLTool.makeSelfSignedCertificate(in: directory.url)
            pin = try PublicKeyFingerprint(pin: "sha256//" + OpenSSLTool.publicKeyPin(of: files.certificate))
            server = try OpenSSLTLSServer(serving: files, logDirectory: directory.url)
        }

        func stop() {
            server.stop()
            directory.cleanup()
        }
    }

    /// A server whose certificate a private CA signed, one the system does not know.
    struct CASignedServer {
        let directory: TemporaryDirectory
        let authority: OpenSSLTool.CertificateFiles
        let server: OpenSSLTLSServer

        init() throws {
            directory = try TemporaryDirectory()
            authority = try OpenSSLTool.makeCertificateAuthority(in: directory.url)
            let files = try OpenSSLTool.makeServerCertificate(in: directory.url, signedBy: authority)
            server = try OpenSSLTLSServer(serving: files, logDirectory: directory.url)
        }

        func stop() {
            server.stop()
            directory.cleanup()
        }
    }

    /// A fingerprint no server has.
    static let otherPin = (try? PublicKeyFingerprint(sha256: [UInt8](repeating: 0xAB, count: 32)))

    /// A certificate from a CA the system does not know fails verification.
    @Test(.enabled(if: Programs.canStart, "starts openssl s_server, which this platform cannot"))
    func serverSignedByAnUnknownCAIsRejected() async throws {
        let signed = try CASignedServer()
        defer { signed.stop() }
        let error = await transportError {
            _ = try await URLSessionTransport.forTests().send(HTTPRequest(method: .get, url: signed.server.url))
        }
        #expect(error?.kind == .tlsFailure, "\(String(describing: error))")
    }

    /// A server that does not speak TLS fails the handshake.
    @Test func plainHTTPServerOnAnHTTPSURL() async throws {
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { server.stop() }
        let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/"))
        let error = await transportError { _ = try await URLSessionTransport.forTests().send(HTTPRequest(method: .get, url: url)) }
        #expect(error?.kind == .tlsFailure, "\(String(describing: error))")
    }

    #if canImport(FoundationNetworking)
    /// FoundationNetworking has no server-trust challenge, so pins cannot be enforced: the request
    /// is refused before any connection is made, never sent unpinned.
    @Test func pinsAreUnsupportedOnLinuxAndNothingIsSent() async throws {
        let pin = try #require(Self.otherPin)
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { server.stop() }
        let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/pinned"))
        for body in [HTTPRequestBody.none, .bytes(Data("x".utf8)), .stream(HTTPBodyStream(Data("y".utf8)))] {
            let error = await transportError {
                _ = try await URLSessionTransport.forTests().send(HTTPRequest(method: .post, url: url), body: body,
                                                                  options: TransferOptions(pinnedPublicKeys: [pin]))
            }
            #expect(error?.kind == .pinningUnsupported)
            #expect(error?.url == url)
        }
        #expect(server.statistics.connectionsAccepted == 0)
    }

    /// FoundationNetworking reads `URLSessionCertificateAuthorityInfoFile` only on Android, so on
    /// Linux a private CA cannot be trusted through it: the CA-signed server still fails. (If a
    /// future FoundationNetworking honours it, this known issue stops reproducing.)
    @Test func certificateAuthorityEnvironmentVariableIsIgnoredOnLinux() async throws {
        let signed = try CASignedServer()
        defer { signed.stop() }
        let variable = "URLSessionCertificateAuthorityInfoFile"
        let previous = ProcessInfo.processInfo.environment[variable]
        setenv(variable, signed.authority.certificate.path, 1)
        defer {
            if let previous { setenv(variable, previous, 1) } else { unsetenv(variable) }
        }
        let outcome: Result<Int, TransportError>
        do {
            outcome = .success(try await URLSessionTransport.forTests().send(HTTPRequest(method: .get, url: signed.server.url)).status)
        } catch let error as TransportError {
            outcome = .failure(error)
        }
        withKnownIssue("FoundationNetworking ignores URLSessionCertificateAuthorityInfoFile outside Android",
                       isIntermittent: true) {
            let status = try outcome.get()
            #expect(status == 200)
        }
    }
    #else
    @Test(.enabled(if: Programs.canStart, "starts openssl s_server, which this platform cannot"))
    func pinnedSelfSignedServerIsTrusted() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let other = try #require(Self.otherPin)
        let transport = URLSessionTransport.forTests()
        for pins in [[station.pin], [other, station.pin]] {
            let response = try await transport.send(HTTPRequest(method: .get, url: station.server.url), body: .none,
                                                    options: TransferOptions(pinnedPublicKeys: pins))
            #expect(response.status == 200)
        }
    }

    @Test(.enabled(if: Programs.canStart, "starts openssl s_server, which this platform cannot"))
    func wrongPinIsRejected() async throws {
        let station = try SelfSignedServer()
        defer { station.stop() }
        let other = try #require(Self.otherPin)
        let transport = URLSessionTransport.forTests()
        let request = HTTPRequest(method: .get, url: station.server.url)
        #expect(try await transport.send(request, body: .none, options: TransferOptions(pinnedPublicKeys: [station.pin])).status == 200)
        let error = await transportError {
            _ = try await transport.send(request, body: .none, options: TransferOptions(pinnedPublicKeys: [other]))
        }
        #expect(error?.kind == .pinMismatch)
        #expect(await transportError { _ = try await transport.send(request) }?.kind == .tlsFailure)
    }
    #endif
}
