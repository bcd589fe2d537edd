import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackHTTP
import Testing
import TestSupport
import Transport
import TransportTestSupport
@testable import URLSessionTransport

/// Reading a server's key (`presentedPublicKey(at:)`): what a server-trust challenge is answered
/// and what the task's end comes to (platform-neutral, with certificates and pins made by
/// `openssl`), and the one-shot session's wait, which on Linux runs without a challenge (so only
/// its failures can be seen here).
@Suite("URLSessionTransport: reading a server's key")
struct KeyReadingTests {
    /// A self-signed certificate's DER and the pin `openssl` computes for it, and a second one.
    struct Certificates {
        let leaf: [UInt8]
        let leafPin: PublicKeyFingerprint
        let other: [UInt8]

        init() throws {
            let directory = try TemporaryDirectory()
            defer { directory.cleanup() }
            let leafFiles = try OpenSSLTool.makeSelfSignedCertificate(in: directory.url, name: "leaf")
            let otherFiles = try OpenSSLTool.makeSelfSignedCertificate(in: directory.url, name: "other", keyType: .rsa2048)
            leaf = [UInt8](try OpenSSLTool.certificateDER(of: leafFiles.certificate))
            other = [UInt8](try OpenSSLTool.certificateDER(of: otherFiles.certificate))
            leafPin = try PublicKeyFingerprint(pin: OpenSSLTool.publicKeyPin(of: leafFiles.certificate))
        }
    }

    static let url = URL(string: "https://station.test:8443/")

    static func probe() throws -> ServerKeyProbe {
        ServerKeyProbe(url: try #require(url))
    }

    /// Reads `url`'s key through a one-shot session, as the transport does on Apple platforms.
    static func read(_ url: URL, idleTimeout: TimeInterval = 60) async throws -> PublicKeyFingerprint {
        try await ServerKeyProbe(url: url).run(sessions: SessionPool(makeConfiguration: { .ephemeral }), idleTimeout: idleTimeout)
    }

    // MARK: The challenge and the task's end (platform-neutral)

    /// The server-trust challenge is cancelled once the leaf's key is read; the task's end (the
    /// cancelled challenge) then gives that key, not one further up the chain.
    @Test(.enabled(if: Programs.canStart, "starts openssl for its certificates, which this platform cannot"))
    func theServerTrustChallengeGivesTheLeafKeyAndIsCancelled() throws {
        let certificates = try Certificates()
        let probe = try Self.probe()
        let answer = probe.answer(serverTrust: true) { [certificates.leaf, certificates.other] }
        #expect(answer == .cancelAuthenticationChallenge)
        #expect(try probe.outcome(completedWith: URLError(.cancelled)).get() == certificates.leafPin)
        // A second challenge (another connection) does not replace the key read first.
        #expect(probe.answer(serverTrust: true) { [certificates.other] } == .cancelAuthenticationChallenge)
        #expect(try probe.outcome(completedWith: nil).get() == certificates.leafPin)
    }

    /// A challenge without a trust object, without certificates or with one that does not parse
    /// is still cancelled, and the reading fails with `.protocolError`, as CurlTransport's does.
    @Test(arguments: [nil, [], [[0x30, 0x03, 0x02, 0x01, 0x00]]] as [[[UInt8]]?])
    func aChallengeWithoutAReadableCertificateIsAProtocolError(_ chain: [[UInt8]]?) throws {
        let probe = try Self.probe()
        #expect(probe.answer(serverTrust: true) { chain } == .cancelAuthenticationChallenge)
        let error = probe.outcome(completedWith: URLError(.cancelled)).failure
        #expect(error?.kind == .protocolError)
        #expect(error?.url == Self.url)
        #expect(error?.method == .get)
    }

    /// Other challenges (a proxy asking for credentials) get the system's handling and read nothing.
    @Test(.enabled(if: Programs.canStart, "starts openssl for its certificates, which this platform cannot"))
    func otherChallengesGetTheDefaultHandling() throws {
        let certificates = try Certificates()
        let probe = try Self.probe()
        #expect(probe.answer(serverTrust: false) { [certificates.leaf] } == .performDefaultHandling)
        #expect(probe.outcome(completedWith: URLError(.cancelled)).failure?.kind == .cancelled)
    }

    /// Without a challenge, the task's failure is mapped as every URLSessionTransport failure is;
    /// a task that ended without one and without a failure read nothing.
    @Test func withoutAChallengeTheFailureIsMapped() throws {
        let probe = try Self.probe()
        let cases: [(URLError.Code, TransportError.Kind)] = [
            (.cannotFindHost, .dnsFailure), (.cannotConnectToHost, .cannotConnect), (.timedOut, .timedOut),
            (.serverCertificateUntrusted, .tlsFailure), (.secureConnectionFailed, .tlsFailure), (.cancelled, .cancelled),
        ]
        for (code, kind) in cases {
            let error = probe.outcome(completedWith: URLError(code)).failure
            #expect(error?.kind == kind, "\(code)")
            #expect(error?.url == Self.url)
            #expect(error?.method == .get)
        }
        #expect(probe.outcome(completedWith: nil).failure?.kind == .tlsFailure)
    }

    // MARK: The one-shot session's wait

    @Test func aPortNobodyListensOnIsCannotConnect() async throws {
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        let port = server.port
        server.stop()
        let url = try #require(URL(string: "https://127.0.0.1:\(port)/"))
        let error = await transportError { _ = try await Self.read(url) }
        #expect(error?.kind == .cannotConnect, "\(String(describing: error))")
        #expect(error?.url == url)
    }

    @Test func anUnresolvableHostIsADNSFailure() async throws {
        let url = try #require(URL(string: "https://cipher-station-test.invalid/"))
        let error = await transportError { _ = try await Self.read(url) }
        #expect(error?.kind == .dnsFailure, "\(String(describing: error))")
    }

    /// Behind run.py's kind of certificate, Apple platforms read the key in the challenge without
    /// sending a request; FoundationNetworking verifies the certificate instead and fails.
    @Test(.enabled(if: Programs.canStart, "starts a TLS front (python3, openssl), which this platform cannot"))
    func aSelfSignedServer() async throws {
        let backend = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { backend.stop() }
        let front = try TLSFront.start(backendPort: backend.port, certificate: .runPyStyle)
        defer { front.stop() }
        #if canImport(FoundationNetworking)
        let error = await transportError { _ = try await Self.read(front.url) }
        #expect(error?.kind == .tlsFailure, "\(String(describing: error))")
        #else
        #expect(try await Self.read(front.url) == front.pin)
        #expect(try await URLSessionTransport.forTests().presentedPublicKey(at: front.url) == front.pin)
        #endif
        #expect(backend.statistics.requestsReceived == 0)
    }

    #if os(Linux)
    /// A connection that never completes fails with `.timedOut` under the idle limit.
    @Test func aStalledConnectionTimesOut() async throws {
        let listener = try FullListener()
        defer { listener.close() }
        let url = try #require(URL(string: "https://127.0.0.1:\(listener.port)/"))
        let error = await transportError { _ = try await Self.read(url, idleTimeout: 1) }
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
    }

    /// Cancelling the caller ends the reading with `.cancelled` (the idle limit is far away).
    @Test func cancellingTheCallerCancelsTheReading() async throws {
        let listener = try FullListener()
        defer { listener.close() }
        let url = try #require(URL(string: "https://127.0.0.1:\(listener.port)/"))
        let reading = Task { try await Self.read(url, idleTimeout: 600) }
        try await Task.sleep(nanoseconds: 200_000_000)
        reading.cancel()
        let error = await transportError { _ = try await reading.value }
        #expect(error?.kind == .cancelled, "\(String(describing: error))")
        #expect(error?.url == url)
    }
    #endif

    // MARK: The transport's answers

    /// A URL that is not https with a host is refused before anything is connected.
    @Test func onlyHTTPSURLsAreRead() async throws {
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { server.stop() }
        for url in [server.url("/key"), URL(fileURLWithPath: "/tmp/key")] {
            let error = await transportError { _ = try await URLSessionTransport.forTests().presentedPublicKey(at: url) }
            #expect(error?.kind == .invalidRequest, "\(url)")
            #expect(error?.url == url)
        }
        #expect(server.statistics.connectionsAccepted == 0)
    }

    #if canImport(FoundationNetworking)
    /// On Linux no key can be read: the answer is `.probingUnsupported`, with nothing connected.
    @Test func linuxAnswersProbingUnsupported() async throws {
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { server.stop() }
        let url = try #require(URL(string: "https://127.0.0.1:\(server.port)/key"))
        let error = await transportError { _ = try await URLSessionTransport.forTests().presentedPublicKey(at: url) }
        #expect(error?.kind == .probingUnsupported)
        #expect(error?.url == url)
        #expect(server.statistics.connectionsAccepted == 0)
    }
    #endif
}

extension Result {
    /// The error of a failure, or `nil`.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
