import CurlTransport
import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// HTTP/2 over TLS through `nghttpx` before a loopback HTTP/1.1 backend. The test needs nghttpx
/// (`scripts/install-system-deps.sh` installs it) and fails, rather than skips, without it.
@Suite("CurlTransport: HTTP/2")
struct HTTP2Tests {
    /// Sequential requests go over HTTP/2, as seen from three sides: the front's access log (ALPN
    /// `h2`), the backend (nghttpx's `Via: 2 nghttpx`) and the response's `httpVersion`; and they
    /// all share one connection (one client port in the front's log).
    @Test func sequentialRequestsShareOneHTTP2Connection() async throws {
        let via = Locked<[String?]>([])
        let backend = try LoopbackHTTPServer { request, response in
            via.withLock { $0.append(request.header("Via")) }
            let body = try request.readBody()
            try response.send(status: 200, body: Array("\(request.method) \(request.path) \(body.count)".utf8))
        }
        defer { backend.stop() }
        let front = try HTTP2Front.start(backendPort: backend.port)
        defer { front.stop() }
        let transport = CurlTransport.forTests()
        let options = TransferOptions(pinnedPublicKeys: [front.pin])
        let count = 6
        for index in 0..<count {
            let post = index.isMultiple(of: 2)
            let request = HTTPRequest(method: post ? .post : .get, url: front.url("/r\(index)"))
            let response = try await transport.send(request, body: post ? .bytes(Data(count: 1000)) : .none, options: options)
            #expect(response.status == 200)
            #expect(response.httpVersion == "2", "request \(index)")
            #expect(response.body.data == Data("\(post ? "POST" : "GET") /r\(index) \(post ? 1000 : 0)".utf8))
        }
        #expect(via.value == Array(repeating: "2 nghttpx", count: count))
        // nghttpx logs a request as its stream closes, which may be just after the client has the answer.
        #expect(await eventually(timeout: 30) { front.requestLog.count == count })
        let logged = front.requestLog
        #expect(logged.map(\.path) == (0..<count).map { "/r\($0)" })
        #expect(logged.allSatisfy { $0.alpn == "h2" }, "\(logged)")
        #expect(Set(logged.map(\.clientPort)).count == 1, "client ports: \(logged.map(\.clientPort))")
    }

    /// Concurrent requests to one origin are streams of a shared connection, and the easy handles
    /// they used are reused by the next round: every request of every round succeeds. (A handle
    /// that ran a multiplexed stream keeps its receive buffer, and libcurl then refuses a new
    /// buffer size; that must not fail the next transfer on the handle.)
    @Test func concurrentRoundsReuseHandlesAfterHTTP2Streams() async throws {
        let backend = try LoopbackHTTPServer { request, response in
            let body = try request.readBody()
            try response.send(status: 200, body: Array("\(request.path) \(body.count)".utf8))
        }
        defer { backend.stop() }
        let front = try HTTP2Front.start(backendPort: backend.port)
        defer { front.stop() }
        let transport = CurlTransport.forTests()
        let options = TransferOptions(pinnedPublicKeys: [front.pin])
        for round in 0..<4 {
            let answers = try await withThrowingTaskGroup(of: (Int, HTTPResponse).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let post = index.isMultiple(of: 2)
                        let request = HTTPRequest(method: post ? .post : .get, url: front.url("/\(round)/\(index)"))
                        return (index, try await transport.send(request, body: post ? .bytes(Data(count: 300)) : .none,
                                                                options: options))
                    }
                }
                var answers: [Int: HTTPResponse] = [:]
                for try await (index, response) in group { answers[index] = response }
                return answers
            }
            for index in 0..<8 {
                let response = try #require(answers[index])
                #expect(response.status == 200)
                #expect(response.httpVersion == "2")
                #expect(response.body.data == Data("/\(round)/\(index) \(index.isMultiple(of: 2) ? 300 : 0)".utf8))
            }
        }
    }

    /// A plain-HTTP exchange reports HTTP/1.1.
    @Test func plainHTTPReportsVersion1_1() async throws {
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200) }
        defer { server.stop() }
        let response = try await CurlTransport.forTests().send(HTTPRequest(method: .get, url: server.url("/")))
        #expect(response.httpVersion == "1.1")
    }
}
