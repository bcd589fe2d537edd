#if canImport(CCurl)
import CCurl
import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport
@testable import CurlTransport

@Suite("CurlTransport: configuration and lifetime")
struct ConfigurationTests {
    @Test func defaults() {
        let configuration = CurlTransport.Configuration()
        #expect(configuration.idleTimeout == 120)
        #expect(configuration.requestTimeout == 300)
        #expect(configuration.caBundlePath == nil)
        #expect(configuration.userAgent == "swift-cipher-station")
    }

    /// Loopback never goes through a proxy; the environment's own list is kept; `*` stays `*`.
    @Test func noProxyList() {
        #expect(CurlTransport.noProxyList(environment: [:]) == "localhost,127.0.0.1,::1")
        #expect(CurlTransport.noProxyList(environment: ["no_proxy": "example.org, .internal"])
            == "example.org,.internal,localhost,127.0.0.1,::1")
        #expect(CurlTransport.noProxyList(environment: ["NO_PROXY": "localhost,10.0.0.1"]) == "localhost,10.0.0.1,127.0.0.1,::1")
        #expect(CurlTransport.noProxyList(environment: ["no_proxy": "a", "NO_PROXY": "b"]).hasPrefix("a,"))
        #expect(CurlTransport.noProxyList(environment: ["no_proxy": "*"]) == "*")
    }

    /// A small body gets libcurl's smallest upload buffer (below glibc's mmap threshold); a large
    /// or unknown-length one keeps the configured buffer, capped at 2 MiB.
    @Test func uploadBufferSize() {
        let size = CurlHTTPTransfer.uploadBufferSize
        #expect(size(0, 128 * 1024) == 16 * 1024)
        #expect(size(300, 128 * 1024) == 16 * 1024)
        #expect(size(40_000, 128 * 1024) == 40_000)
        #expect(size(128 * 1024 - 1, 128 * 1024) == 128 * 1024 - 1)
        #expect(size(128 * 1024, 128 * 1024) == 128 * 1024)
        #expect(size(100 * 1024 * 1024, 128 * 1024) == 128 * 1024)
        #expect(size(nil, 128 * 1024) == 128 * 1024)
        #expect(size(nil, 8 * 1024 * 1024) == 2 * 1024 * 1024)
        #expect(size(3 * 1024 * 1024, 8 * 1024 * 1024) == 2 * 1024 * 1024)
    }

    @Test func userAgent() async throws {
        let seen = Locked<[String?]>([])
        let server = try LoopbackHTTPServer { request, response in
            seen.withLock { $0.append(request.header("User-Agent")) }
            try response.send(status: 200)
        }
        defer { server.stop() }
        _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: server.url("/")))
        _ = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: server.url("/"), headers: ["User-Agent": "App/2"]))
        _ = try await CurlTransport.forTests { $0.userAgent = nil }.send(HTTPRequest(method: .get, url: server.url("/")))
        #expect(seen.value == ["swift-cipher-station", "App/2", nil])
    }

    /// The idle-connection cache size is honoured: with the default, alternating between two
    /// servers keeps one connection to each; with room for a single idle connection, the transport
    /// has to reconnect. (Which connection libcurl evicts is its own choice, so only the totals are
    /// checked.)
    @Test func idleConnectionCache() async throws {
        func connections(_ transport: CurlTransport) async throws -> (Int, Int) {
            let a = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
            let b = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
            defer {
                a.stop()
                b.stop()
            }
            for _ in 0..<3 {
                _ = try await transport.send(HTTPRequest(method: .get, url: a.url("/")))
                _ = try await transport.send(HTTPRequest(method: .get, url: b.url("/")))
            }
            #expect(a.statistics.requestsReceived == 3)
            #expect(b.statistics.requestsReceived == 3)
            return (a.statistics.connectionsAccepted, b.statistics.connectionsAccepted)
        }
        let roomy = try await connections(CurlTransport.forTests())
        #expect(roomy == (1, 1))
        let tight = try await connections(CurlTransport.forTests { $0.maximumIdleConnections = 1 })
        #expect(tight.0 + tight.1 >= 3)  // at least one reconnection; the default needed none
    }

    /// A streamed body keeps working after its transport is gone.
    @Test func streamOutlivesTransport() async throws {
        let pattern = PatternBytes(seed: 41)
        let server = try LoopbackHTTPServer { _, response in
            try response.send(status: 200, body: pattern.bytes(offset: 0, count: 3_000_000))
        }
        defer { server.stop() }
        var transport: CurlTransport? = CurlTransport.forTests()
        let response = try await transport?.send(HTTPRequest(method: .get, url: server.url("/")), body: .none,
                                                 options: TransferOptions(response: .stream))
        transport = nil
        guard case .stream(let stream)? = response?.body else {
            Issue.record("expected a stream")
            return
        }
        let body = try await stream.collect(upTo: 3_000_000)
        #expect(body.count == 3_000_000)
        #expect(pattern.matches(body, offset: 0))
    }

    /// Dropping the last reference shuts the curl thread down, which releases the engine.
    @Test func engineShutsDownWithItsLastOwner() async throws {
        weak var engine: CurlEngine?
        do {
            let lifetime = CurlEngineLifetime(maximumConnections: 4)
            engine = lifetime.engine
            #expect(engine?.setupFailure == nil)
        }
        #expect(await eventually(timeout: 30) { engine == nil })
    }

    /// Response head parsing: status lines, fields, folding, and bytes that are not UTF-8.
    @Test func responseHeadLines() {
        typealias Parser = ResponseHeadParser
        #expect(Parser.parse(line: Array("HTTP/1.1 200 OK\r\n".utf8)) == .status(200))
        #expect(Parser.parse(line: Array("HTTP/2 404\r\n".utf8)) == .status(404))
        #expect(Parser.parse(line: Array("HTTP/1.1 20 OK\r\n".utf8)) == .ignored)
        #expect(Parser.parse(line: Array("HTTP/1.1 abc OK\r\n".utf8)) == .ignored)
        #expect(Parser.parse(line: Array("HTTP/1.1\r\n".utf8)) == .ignored)
        #expect(Parser.parse(line: Array("\r\n".utf8)) == .endOfBlock)
        #expect(Parser.parse(line: Array("\n".utf8)) == .endOfBlock)
        #expect(Parser.parse(line: Array("Content-Type:  text/plain \t\r\n".utf8)) == .field(name: "Content-Type", value: "text/plain"))
        #expect(Parser.parse(line: Array("X-Empty:\r\n".utf8)) == .field(name: "X-Empty", value: ""))
        #expect(Parser.parse(line: Array("X-Colon: a:b\r\n".utf8)) == .field(name: "X-Colon", value: "a:b"))
        #expect(Parser.parse(line: Array("  folded part\r\n".utf8)) == .continuation("folded part"))
        #expect(Parser.parse(line: Array("no colon here\r\n".utf8)) == .ignored)
        #expect(Parser.parse(line: Array(": no name\r\n".utf8)) == .ignored)
        #expect(Parser.parse(line: Array("X-Ünïcode: ✓\r\n".utf8)) == .field(name: "X-Ünïcode", value: "✓"))
        #expect(Parser.parse(line: [0x58, 0x3A, 0x20, 0xE9, 0xFF, 0x0D, 0x0A]) == .field(name: "X", value: "\u{E9}\u{FF}"))
    }

    /// Folded header lines from a real exchange are joined to their field.
    @Test func foldedHeadersOverTheWire() async throws {
        let server = try LoopbackHTTPServer { _, response in
            try response.writeRaw(Array("HTTP/1.1 200 OK\r\nX-Folded: first\r\n  second\r\nContent-Length: 2\r\n\r\nok".utf8))
        }
        defer { server.stop() }
        let response = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: server.url("/")))
        #expect(response.headers["X-Folded"] == "first second")
        #expect(response.body.data == Data("ok".utf8))
    }

    @Test func curlCodesMapToKinds() {
        #expect(CurlErrorMapping.kind(of: CURLE_COULDNT_RESOLVE_HOST) == .dnsFailure)
        #expect(CurlErrorMapping.kind(of: CURLE_COULDNT_CONNECT) == .cannotConnect)
        #expect(CurlErrorMapping.kind(of: CURLE_OPERATION_TIMEDOUT) == .timedOut)
        #expect(CurlErrorMapping.kind(of: CURLE_SSL_PINNEDPUBKEYNOTMATCH) == .pinMismatch)
        #expect(CurlErrorMapping.kind(of: CURLE_PEER_FAILED_VERIFICATION) == .tlsFailure)
        #expect(CurlErrorMapping.kind(of: CURLE_PARTIAL_FILE) == .connectionLost)
        #expect(CurlErrorMapping.kind(of: CURLE_WEIRD_SERVER_REPLY) == .protocolError)
        #expect(CurlErrorMapping.kind(of: CURLE_URL_MALFORMAT) == .invalidRequest)
        #expect(CurlErrorMapping.kind(of: CURLE_OUT_OF_MEMORY) == .other)
    }
}
#endif
