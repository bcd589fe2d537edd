import CurlTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

@Suite("CurlTransport: basic exchanges")
struct BasicExchangeTests {
    @Test func getReturnsStatusHeadersAndBody() async throws {
        let server = try LoopbackHTTPServer { request, response in
            try response.send(status: 200, reason: "OK", headers: [("X-Echo-Path", request.path)],
                              body: Array("hello \(request.method)".utf8))
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/greeting?x=1")))
        #expect(response.status == 200)
        #expect(response.headers["x-echo-path"] == "/greeting")
        #expect(response.body.data == Data("hello GET".utf8))
    }
}
