import LoopbackHTTP
import URLSessionTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

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

    /// What the server receives for each method/body combination.
    struct Received: Sendable, Equatable {
        var method: String
        var contentLength: String?
        var contentType: String?
        var expect: String?
        var chunked: Bool
        var body: [UInt8]
    }

    @Test func methodsAndBodiesReachTheServer() async throws {
        let seen = Locked<[Received]>([])
        let server = try LoopbackHTTPServer { request, response in
            let body = try request.readBody()
            seen.withLock {
                $0.append(Received(method: request.method, contentLength: request.header("Content-Length"),
                                   contentType: request.header("Content-Type"), expect: request.header("Expect"),
                                   chunked: request.isChunked, body: body))
            }
            try response.send(status: 200, body: Array("\(body.count)".utf8))
        }
        defer { server.stop() }
        let transport = URLSessionTransport.forTests()
        let payload = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let url = server.url("/echo")

        var post = HTTPRequest(method: .post, url: url)
        post.headers["Content-Type"] = "application/json"
        _ = try await transport.send(post, body: .bytes(payload))
        _ = try await transport.send(HTTPRequest(method: .put, url: url), body: .bytes(payload))
        _ = try await transport.send(HTTPRequest(method: .patch, url: url), body: .stream(HTTPBodyStream(payload, chunkSize: 1000)))
        _ = try await transport.send(HTTPRequest(method: .post, url: url))
        _ = try await transport.send(HTTPRequest(method: .delete, url: url))
        let head = try await transport.send(HTTPRequest(method: .head, url: url))
        #expect(head.body.data == Data())
        #expect(head.headers["Content-Length"] == "1")

        let received = seen.value
        try #require(received.count == 6)
        #expect(received[0] == Received(method: "POST", contentLength: "3000", contentType: "application/json",
                                        expect: nil, chunked: false, body: [UInt8](payload)))
        // No Content-Type of libcurl's choosing, and no "Expect: 100-continue" round trip.
        #expect(received[1] == Received(method: "PUT", contentLength: "3000", contentType: nil, expect: nil,
                                        chunked: false, body: [UInt8](payload)))
        #expect(received[2] == Received(method: "PATCH", contentLength: "3000", contentType: nil, expect: nil,
                                        chunked: false, body: [UInt8](payload)))
        #expect(received[3] == Received(method: "POST", contentLength: "0", contentType: nil, expect: nil,
                                        chunked: false, body: []))
        #expect(received[4] == Received(method: "DELETE", contentLength: nil, contentType: nil, expect: nil,
                                        chunked: false, body: []))
        #expect(received[5].method == "HEAD")
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
        let server = try LoopbackHTTPServer { request, response in
            seen.withLock { $0 = request.headers }
            try response.send(status: 200, headers: [("Set-Cookie", "a=1"), ("X-Mixed-CASE", "v"), ("Set-Cookie", "b=2")])
        }
        defer { server.stop() }
        var request = HTTPRequest(method: .get, url: server.url("/h"))
        request.headers.add("x-cipher-uid", value: "Station-UID")
        request.headers.add("X-Cipher-Timestamp", value: "1700000000")
        request.headers.add("X-Repeat", value: "one")
        request.headers.add("x-repeat", value: "two")
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

    /// Request and response heads well over 16 KiB.
    @Test func largeHeadersBothWays() async throws {
        let bigValue = String(repeating: "0123456789abcdef", count: 1536)  // 24 KiB in one field
        let manyFields = (0..<64).map { ("X-Field-\($0)", String(repeating: "v", count: 512)) }  // 32 KiB more
        let seen = Locked<(headBytes: Int, big: String?, fields: Int)?>(nil)
        let server = try LoopbackHTTPServer { request, response in
            seen.withLock {
                $0 = (request.headBytes, request.header("X-Big"),
                      request.headers.filter { $0.name.hasPrefix("X-Field-") }.count)
            }
            try response.send(status: 200, headers: [("X-Big-Reply", bigValue)] + manyFields, body: Array("ok".utf8))
        }
        defer { server.stop() }
        var request = HTTPRequest(method: .get, url: server.url("/big"))
        request.headers["X-Big"] = bigValue
        for (name, value) in manyFields { request.headers.add(name, value: value) }
        let response = try await URLSessionTransport.forTests().send(request)
        #expect(response.status == 200)
        #expect(response.headers["x-big-reply"] == bigValue)
        #expect(response.headers["x-field-63"] == String(repeating: "v", count: 512))
        let received = try #require(seen.value)
        #expect(received.headBytes > 56 * 1024)
        #expect(received.big == bigValue)
        #expect(received.fields == 64)
    }

    /// Sequential requests to one host share one connection.
    @Test func connectionsAreReused() async throws {
        let server = try LoopbackHTTPServer { request, response in
            _ = try request.readBody()
            try response.send(status: 200, body: Array("r".utf8))
        }
        defer { server.stop() }
        let transport = URLSessionTransport.forTests()
        for index in 0..<8 {
            let body: HTTPRequestBody = index.isMultiple(of: 2) ? .none : .bytes(Data("body \(index)".utf8))
            let response = try await transport.send(HTTPRequest(method: index.isMultiple(of: 2) ? .get : .post,
                                                                url: server.url("/r\(index)")), body: body)
            #expect(response.status == 200)
        }
        #expect(server.statistics.requestsReceived == 8)
        #expect(server.statistics.connectionsAccepted == 1)
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
