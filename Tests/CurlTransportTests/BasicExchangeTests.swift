import CurlTransport
import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// What CurlTransport does beyond the transport conformance suite (ConformanceTests): reusing
/// connections, and switching off libcurl's own request defaults.
@Suite("CurlTransport: basic exchanges")
struct BasicExchangeTests {
    /// Sequential requests to one host share one connection.
    @Test func connectionsAreReused() async throws {
        let server = try LoopbackHTTPServer { request, response in
            _ = try request.readBody()
            try response.send(status: 200, body: Array("r".utf8))
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        for index in 0..<8 {
            let body: HTTPRequestBody = index.isMultiple(of: 2) ? .none : .bytes(Data("body \(index)".utf8))
            let response = try await transport.send(HTTPRequest(method: index.isMultiple(of: 2) ? .get : .post,
                                                                url: server.url("/r\(index)")), body: body)
            #expect(response.status == 200)
        }
        #expect(server.statistics.requestsReceived == 8)
        #expect(server.statistics.connectionsAccepted == 1)
    }

    /// libcurl would add `Expect: 100-continue` (a round trip before a large body goes out); the
    /// transport switches it off for every body.
    @Test func bodiesGoOutWithoutExpectContinue() async throws {
        let seen = Locked<[String?]>([])
        let server = try LoopbackHTTPServer { request, response in
            seen.withLock { $0.append(request.header("Expect")) }
            try request.consumeBody()
            try response.send(status: 200)
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        let large = Data(count: 2 * 1024 * 1024)
        _ = try await transport.send(HTTPRequest(method: .post, url: server.url("/e")), body: .bytes(large))
        _ = try await transport.send(HTTPRequest(method: .put, url: server.url("/e")),
                                     body: .stream(HTTPBodyStream(large)))
        #expect(seen.value == [nil, nil])
    }
}
