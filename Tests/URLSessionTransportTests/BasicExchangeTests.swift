import LoopbackHTTP
import URLSessionTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

/// What URLSessionTransport does beyond the transport conformance suite (ConformanceTests), and
/// where FoundationNetworking keeps it from a case there: the weaker header guarantee, unsized
/// streams spooled on Linux, Foundation's own additions kept off the wire.
@Suite("URLSessionTransport: basic exchanges")
struct BasicExchangeTests {
    @Test func getReturnsStatusHeadersAndBody() async throws {
        let server = try LoopbackHTTPServer { request, response in
            try response.send(status: 200, reason: "OK", headers: [("X-Echo-Path", request.path)],
                              body: Array("hello \(request.method)".utf8))
        }
        defer { server.stop() }
        let transport = URLSessionTransport.forTests()
        let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/greeting?x=1")))
        #expect(response.status == 200)
        #expect(response.isSuccess)
        #expect(response.headers["x-echo-path"] == "/greeting")
        #expect(response.body.data == Data("hello GET".utf8))
    }

    /// A body of unknown length arrives whole: chunked on Apple platforms; on Linux, where a stream
    /// is spooled to disk before it is sent, with the spooled length.
    @Test func unsizedStreamArrivesWhole() async throws {
        let seen = Locked<(chunked: Bool, length: String?, body: [UInt8])?>(nil)
        let server = try LoopbackHTTPServer { request, response in
            let body = try request.readBody()
            seen.withLock { $0 = (request.isChunked, request.header("Content-Length"), body) }
            try response.send(status: 200)
        }
        defer { server.stop() }
        let pattern = PatternBytes(seed: 11)
        let stream = HTTPBodyStream(length: nil, pattern.stream(count: 300_000, chunkSize: 7000))
        let response = try await URLSessionTransport.forTests().send(HTTPRequest(method: .post, url: server.url("/u")),
                                                               body: .stream(stream))
        #expect(response.status == 200)
        let received = try #require(seen.value)
        #if canImport(FoundationNetworking)
        #expect(!received.chunked)
        #expect(received.length == "300000")
        #else
        #expect(received.chunked)
        #expect(received.length == nil)
        #endif
        #expect(received.body == pattern.bytes(offset: 0, count: 300_000))
    }

    /// Every request field reaches the server with its value, and every response field reaches the
    /// caller. URLSession keeps fields in dictionaries, so this is weaker than CurlTransport's
    /// guarantee: order is Foundation's, names are capitalized (FoundationNetworking), repeated
    /// names arrive joined by commas, and response repeats must share one spelling to survive.
    @Test func headersReachBothEnds() async throws {
        let seen = Locked<[(name: String, value: String)]>([])
        let answer = [("Set-Cookie", "a=1"), ("X-Mixed-CASE", "v"), ("Set-Cookie", "b=2")]
        let server = try LoopbackHTTPServer(handler: TestHandlers.recordingHeaders(into: seen, answer: answer))
        defer { server.stop() }
        let sent = [("x-cipher-uid", "Station-UID"), ("X-Cipher-Timestamp", "1700000000"), ("X-Repeat", "one"), ("x-repeat", "two")]
        let request = HTTPRequest(method: .get, url: server.url("/h"), headers: HTTPHeaders(sent))
        let response = try await URLSessionTransport.forTests().send(request)
        #expect(response.headers.values(for: "SET-COOKIE").joined(separator: ", ") == "a=1, b=2")
        #expect(response.headers["x-mixed-case"] == "v")

        func received(_ name: String) -> [String] {
            seen.value.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
        }
        #expect(received("x-cipher-uid") == ["Station-UID"])
        #expect(received("X-Cipher-Timestamp") == ["1700000000"])
        #expect(received("X-Repeat").joined(separator: ",").replacingOccurrences(of: " ", with: "") == "one,two")
    }

    /// Foundation's own additions stay off the wire: no content coding is asked for (so bodies
    /// arrive as stored), no cookie is stored or sent back, no cache answers a repeat.
    @Test func noDecodingCookiesOrCaching() async throws {
        let seen = Locked<[(acceptEncoding: String?, cookie: String?)]>([])
        let server = try LoopbackHTTPServer { request, response in
            seen.withLock { $0.append((request.header("Accept-Encoding"), request.header("Cookie"))) }
            try response.send(status: 200, headers: [("Set-Cookie", "session=1; Path=/"), ("Cache-Control", "max-age=3600")],
                              body: Array("fresh \(seen.value.count)".utf8))
        }
        defer { server.stop() }
        let transport = URLSessionTransport.forTests()
        let first = try await transport.send(HTTPRequest(method: .get, url: server.url("/c")))
        let second = try await transport.send(HTTPRequest(method: .get, url: server.url("/c")))
        #expect(first.body.data == Data("fresh 1".utf8))
        #expect(second.body.data == Data("fresh 2".utf8))
        let received = seen.value
        #expect(received.count == 2)
        #expect(received.allSatisfy { $0.acceptEncoding == "identity" && $0.cookie == nil })
    }

    /// A chunked response with trailers, and a body delimited by the connection closing.
    @Test func chunkedAndCloseDelimitedResponses() async throws {
        let server = try LoopbackHTTPServer { request, response in
            if request.path == "/chunked" {
                // No trailer: FoundationNetworking takes a trailer line for the start of a new head
                // and then traps ("Transfer completed, but there's no response").
                try response.writeHead(status: 200, headers: [("Transfer-Encoding", "chunked")])
                try response.write(Array("5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n".utf8))
            } else {
                try response.writeHead(status: 200)  // no length: the body ends when the connection does
                try response.write(Array("until close".utf8))
            }
        }
        defer { server.stop() }
        let transport = URLSessionTransport.forTests()
        let chunked = try await transport.send(HTTPRequest(method: .get, url: server.url("/chunked")))
        #expect(chunked.body.data == Data("hello, world".utf8))
        let closing = try await transport.send(HTTPRequest(method: .get, url: server.url("/close")))
        #expect(closing.body.data == Data("until close".utf8))
    }

}
