#if canImport(CCurl)
import CurlTransport
import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// HTTP/2 over TLS through `nghttpx` before a loopback HTTP/1.1 backend. The test needs nghttpx
/// (`scripts/install-system-deps.sh` installs it) and fails, rather than skips, without it.
/// An echo backend behind an `nghttpx` HTTP/2 front: the backend answers `<method> <path> <body
/// length>` and records each request's `Via` header.
private struct HTTP2Echo {
    let via: Locked<[String?]>
    let backend: LoopbackHTTPServer
    let front: HTTP2Front

    init() throws {
        let via = Locked<[String?]>([])
        backend = try LoopbackHTTPServer { request, response in
            via.withLock { $0.append(request.header("Via")) }
            let body = try request.readBody()
            try response.send(status: 200, body: Array("\(request.method) \(request.path) \(body.count)".utf8))
        }
        self.via = via
        do {
            front = try HTTP2Front.start(backendPort: backend.port)
        } catch {
            backend.stop()
            throw error
        }
    }

    func stop() {
        front.stop()
        backend.stop()
    }

    /// Sends request `index` of a run to the front's `path`, pinning its key: a POST of `bodySize`
    /// bytes when `index` is even, else a GET. Returns the answer and the echo it should carry.
    func send(
        _ index: Int, to path: String, bodySize: Int, through transport: CurlTransport
    ) async throws -> (response: HTTPResponse, echo: Data) {
        let post = index.isMultiple(of: 2)
        let request = HTTPRequest(method: post ? .post : .get, url: front.url(path))
        let response = try await transport.send(request, body: post ? .bytes(Data(count: bodySize)) : .none,
                                                options: TransferOptions(pinnedPublicKeys: [front.pin]))
        return (response, Data("\(post ? "POST" : "GET") \(path) \(post ? bodySize : 0)".utf8))
    }
}

@Suite("CurlTransport: HTTP/2")
struct HTTP2Tests {
    /// Sequential requests go over HTTP/2, as seen from three sides: the front's access log (ALPN
    /// `h2`), the backend (nghttpx's `Via: 2 nghttpx`) and the response's `httpVersion`; and they
    /// all share one connection (one client port in the front's log).
    @Test func sequentialRequestsShareOneHTTP2Connection() async throws {
        let echo = try HTTP2Echo()
        defer { echo.stop() }
        let transport = CurlTransport.forTests()
        let count = 6
        for index in 0..<count {
            let (response, expected) = try await echo.send(index, to: "/r\(index)", bodySize: 1000, through: transport)
            #expect(response.status == 200)
            #expect(response.httpVersion == "2", "request \(index)")
            #expect(response.body.data == expected)
        }
        #expect(echo.via.value == Array(repeating: "2 nghttpx", count: count))
        // nghttpx logs a request as its stream closes, which may be just after the client has the answer.
        #expect(await eventually(timeout: 30) { echo.front.requestLog.count == count })
        let logged = echo.front.requestLog
        #expect(logged.map(\.path) == (0..<count).map { "/r\($0)" })
        #expect(logged.allSatisfy { $0.alpn == "h2" }, "\(logged)")
        #expect(Set(logged.map(\.clientPort)).count == 1, "client ports: \(logged.map(\.clientPort))")
    }

    /// Concurrent requests to one origin are streams of a shared connection, and the easy handles
    /// they used are reused by the next round: every request of every round succeeds. (A handle
    /// that ran a multiplexed stream keeps its receive buffer, and libcurl then refuses a new
    /// buffer size; that must not fail the next transfer on the handle.)
    @Test func concurrentRoundsReuseHandlesAfterHTTP2Streams() async throws {
        let echo = try HTTP2Echo()
        defer { echo.stop() }
        let transport = CurlTransport.forTests()
        for round in 0..<4 {
            let answers = try await withThrowingTaskGroup(of: (Int, (response: HTTPResponse, echo: Data)).self) { group in
                for index in 0..<8 {
                    group.addTask { (index, try await echo.send(index, to: "/\(round)/\(index)", bodySize: 300, through: transport)) }
                }
                var answers: [Int: (response: HTTPResponse, echo: Data)] = [:]
                for try await (index, answer) in group { answers[index] = answer }
                return answers
            }
            for index in 0..<8 {
                let (response, expected) = try #require(answers[index])
                #expect(response.status == 200)
                #expect(response.httpVersion == "2")
                #expect(response.body.data == expected)
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
#endif
