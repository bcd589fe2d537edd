import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport
import Transport
import TransportTestSupport
@testable import URLSessionTransport

/// The platform-neutral decisions: which `TransportError.Kind` a URLError becomes, and whether a
/// certificate chain satisfies the pins.
@Suite("URLSessionTransport: error mapping, pin decision, configuration")
struct MappingTests {
    @Test(arguments: [
        (URLError.Code.cannotFindHost, TransportError.Kind.dnsFailure),
        (.dnsLookupFailed, .dnsFailure),
        (.cannotConnectToHost, .cannotConnect),
        (.notConnectedToInternet, .cannotConnect),
        (.timedOut, .timedOut),
        (.cancelled, .cancelled),
        (.secureConnectionFailed, .tlsFailure),
        (.serverCertificateUntrusted, .tlsFailure),
        (.serverCertificateHasUnknownRoot, .tlsFailure),
        (.serverCertificateHasBadDate, .tlsFailure),
        (.serverCertificateNotYetValid, .tlsFailure),
        (.clientCertificateRejected, .tlsFailure),
        (.networkConnectionLost, .connectionLost),
        (.badServerResponse, .protocolError),
        (.cannotParseResponse, .protocolError),
        (.unsupportedURL, .protocolError),
        (.badURL, .invalidRequest),
        (.appTransportSecurityRequiresSecureConnection, .tlsFailure),
        (.fileDoesNotExist, .requestBodyFailed),
        (.requestBodyStreamExhausted, .requestBodyFailed),
        (.cannotWriteToFile, .responseBodyFailed),
        (.dataLengthExceedsMaximum, .other),
    ])
    func urlErrorCodes(code: URLError.Code, kind: TransportError.Kind) {
        #expect(URLErrorMapping.kind(of: code, detail: "") == kind)
    }

    /// FoundationNetworking reports libcurl failures it has no code for as `.unknown` with
    /// libcurl's text (and CURLE_GOT_NOTHING as `.badServerResponse` with "Empty reply").
    @Test(arguments: [
        ("SSL certificate problem: self-signed certificate", TransportError.Kind.tlsFailure),
        ("SSL certificate problem: unable to get local issuer certificate", .tlsFailure),
        ("OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to 127.0.0.1:4433", .tlsFailure),
        ("TLS connect error: error:0A00010B:SSL routines::wrong version number", .tlsFailure),
        ("transfer closed with 948576 bytes remaining to read", .connectionLost),
        ("Recv failure: Connection reset by peer", .connectionLost),
        ("Send failure: Broken pipe", .connectionLost),
        ("Empty reply from server", .connectionLost),
        ("Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server", .cannotConnect),
        ("Could not resolve host: cipher-station-test.invalid", .dnsFailure),
        ("Connection timed out after 1001 milliseconds", .timedOut),
        ("Weird server reply", .protocolError),
        ("Received HTTP/0.9 when not allowed", .protocolError),
        ("something libcurl has never said", .other),
    ])
    func libcurlTexts(text: String, kind: TransportError.Kind) {
        #expect(URLErrorMapping.kind(of: .unknown, detail: text) == kind)
    }

    @Test func emptyReplyIsALostConnection() {
        #expect(URLErrorMapping.kind(of: .badServerResponse, detail: "Empty reply from server") == .connectionLost)
        #expect(URLErrorMapping.kind(of: .badServerResponse, detail: "") == .protocolError)
    }

    /// A transport error wraps the URLError with its code and keeps the request it belongs to.
    @Test func errorsNameTheirRequest() throws {
        let url = try #require(URL(string: "http://127.0.0.1:1/x"))
        let error = URLErrorMapping.error(URLError(.cannotConnectToHost), method: .put, url: url)
        #expect(error.kind == .cannotConnect)
        #expect(error.method == .put)
        #expect(error.url == url)
        #expect(error.code == URLError.Code.cannotConnectToHost.rawValue)
        #expect(error.underlying is URLError)
    }

    /// App Transport Security's refusal (NSURLErrorAppTransportSecurityRequiresSecureConnection,
    /// -1022), and a TLS failure of a pinned request (what ATS does to a self-signed station
    /// without an exception), name the Info.plist key that is missing; the code is mapped the same
    /// on every platform.
    @Test func appTransportSecurityFailuresNameTheMissingException() throws {
        #expect(URLError.Code.appTransportSecurityRequiresSecureConnection.rawValue == -1022)
        let station = try #require(URL(string: "https://station.example.net:8443/api/health"))
        let refused = URLErrorMapping.error(URLError(.appTransportSecurityRequiresSecureConnection), method: .get, url: station)
        #expect(refused.kind == .tlsFailure)
        #expect(refused.message.contains("NSExceptionAllowsInsecureHTTPLoads") && refused.message.contains("station.example.net"))
        #expect(refused.message.contains("NSAllowsArbitraryLoads"))

        let overridden = URLErrorMapping.error(URLError(.serverCertificateUntrusted), method: .get, url: station, pinned: true)
        #expect(overridden.kind == .tlsFailure)
        #expect(overridden.message.contains("NSExceptionAllowsInsecureHTTPLoads"))
        let unpinned = URLErrorMapping.error(URLError(.serverCertificateUntrusted), method: .get, url: station)
        #expect(!unpinned.message.contains("App Transport Security"), "a CA-checked request's TLS failure is not ATS's")

        // The arbitrary-loads key is named with the keys that make the system ignore it.
        #expect(refused.message.contains("ignored when NSAllowsLocalNetworking"))
        // Local names: NSAllowsLocalNetworking and the local-network prompt's description.
        for lan in ["https://cipherstation.local/", "https://nas/"] {
            let error = URLErrorMapping.error(URLError(.secureConnectionFailed), method: .get, url: try #require(URL(string: lan)), pinned: true)
            #expect(error.message.contains("NSAllowsLocalNetworking = YES") && error.message.contains("NSLocalNetworkUsageDescription"), "\(lan)")
            #expect(!error.message.contains("NSExceptionDomains"), "\(lan)")
        }
        // IP addresses: an exception domain for the address or its range (iOS 17, macOS 14), or
        // arbitrary loads; the prompt's description for a private address, not for a public one.
        for (address, host, local) in [("https://192.168.1.20:8443/", "192.168.1.20", true), ("https://[fd12::1]:8443/", "fd12::1", true),
                                       ("https://203.0.113.7/", "203.0.113.7", false)] {
            let error = URLErrorMapping.error(URLError(.secureConnectionFailed), method: .get, url: try #require(URL(string: address)), pinned: true)
            #expect(error.message.contains("NSExceptionDomains › \(host)") && error.message.contains("iOS 17"), "\(address)")
            #expect(error.message.contains("NSAllowsArbitraryLoads"), "\(address)")
            #expect(error.message.contains("NSLocalNetworkUsageDescription") == local, "\(address)")
        }
        #expect(URLErrorMapping.isIPAddress("10.0.0.2") && URLErrorMapping.isIPAddress("fd12::1"))
        #expect(!URLErrorMapping.isIPAddress("station.local") && !URLErrorMapping.isIPAddress("1.2.3") && !URLErrorMapping.isIPAddress("256.1.1.1"))
        #expect(!URLErrorMapping.isLocalNetwork("8.8.8.8") && !URLErrorMapping.isLocalNetwork("172.32.0.1"))
        #expect(URLErrorMapping.isLocalNetwork("172.20.0.1") && URLErrorMapping.isLocalNetwork("10.0.0.2"))
    }

    /// `Accept-Language` is set explicitly (Apple's URLSession would otherwise send the user's
    /// locale); a request's own value is kept.
    @Test func acceptLanguageIsExplicit() throws {
        let url = try #require(URL(string: "https://station.example/api/health"))
        let plain = URLRequestBuilder.make(HTTPRequest(method: .get, url: url), body: .none, bodyLength: nil, streamsBody: false,
                                           idleTimeout: 10, userAgent: nil)
        #expect(plain.value(forHTTPHeaderField: "Accept-Language") == "*")
        var request = HTTPRequest(method: .get, url: url)
        request.headers["Accept-Language"] = "fr"
        let own = URLRequestBuilder.make(request, body: .none, bodyLength: nil, streamsBody: false, idleTimeout: 10, userAgent: nil)
        #expect(own.value(forHTTPHeaderField: "Accept-Language") == "fr")
    }

    /// Pins are checked against the leaf's key only, like libcurl's `CURLOPT_PINNEDPUBLICKEY`.
    @Test(.enabled(if: Programs.canStart, "starts openssl for its certificates, which this platform cannot"))
    func pinDecisionUsesTheLeafKey() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let leafFiles = try OpenSSLTool.makeSelfSignedCertificate(in: directory.url, name: "leaf")
        let otherFiles = try OpenSSLTool.makeSelfSignedCertificate(in: directory.url, name: "other", keyType: .rsa2048)
        let leaf = [UInt8](try OpenSSLTool.certificateDER(of: leafFiles.certificate))
        let other = [UInt8](try OpenSSLTool.certificateDER(of: otherFiles.certificate))
        let leafPin = try PublicKeyFingerprint(pin: OpenSSLTool.publicKeyPin(of: leafFiles.certificate))
        let otherPin = try PublicKeyFingerprint(pin: OpenSSLTool.publicKeyPin(of: otherFiles.certificate))

        #expect(PinDecision.evaluate(chain: [leaf], pins: [leafPin]) == .accept)
        #expect(PinDecision.evaluate(chain: [leaf, other], pins: [otherPin, leafPin]) == .accept)
        // A pin matching only a certificate further up the chain is not enough.
        #expect(PinDecision.evaluate(chain: [leaf, other], pins: [otherPin]) == .reject(presented: leafPin))
        #expect(PinDecision.evaluate(chain: [], pins: [leafPin]) == .reject(presented: nil))
        #expect(PinDecision.evaluate(chain: [[0x30, 0x03, 0x02, 0x01, 0x00]], pins: [leafPin]) == .reject(presented: nil))
    }

    @Test func configurationDefaults() {
        let configuration = URLSessionTransport.Configuration()
        #expect(configuration.idleTimeout == 120)
        #expect(configuration.requestTimeout == 300)
        #expect(configuration.streamBufferSize == 1024 * 1024)
        #expect(configuration.userAgent == "swift-cipher-station")
    }
}
