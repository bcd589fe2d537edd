@testable import CurlTransport
import Foundation
import Testing
import Transport
import TransportTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Small plain-HTTP exchanges the transport writes itself (`DirectExchange`): the bytes it sends,
/// which requests take that path, and connection reuse. The framing of answers is covered by
/// `HTTP1ResponseReaderTests`; every other CurlTransport test with an in-memory body runs through
/// this path too.
@Suite("CurlTransport: direct exchanges")
struct DirectExchangeTests {
    @Test func requestBytesAreExact() throws {
        let url = try #require(URL(string: "http://127.0.0.1:8443/rewrap?x=1#fragment"))
        var request = HTTPRequest(method: .post, url: url)
        request.headers.add("x-cipher-uid", value: "a")
        request.headers.add("Content-Length", value: "99")  // framing is the transport's
        request.headers.add("X-Empty", value: "")
        let target = try #require(CurlTransport.originAndTarget(of: url))
        let post = CurlTransport.requestBytes(request, authority: target.authority, path: target.path,
                                              body: Data("{}".utf8), userAgent: "ua")
        #expect(String(decoding: post, as: UTF8.self) == "POST /rewrap?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8443\r\n"
            + "x-cipher-uid: a\r\nX-Empty: \r\nUser-Agent: ua\r\nAccept: */*\r\nContent-Length: 2\r\n\r\n{}")

        let get = CurlTransport.requestBytes(HTTPRequest(method: .get, url: url, headers: ["Accept": "application/json"]),
                                             authority: target.authority, path: target.path, body: nil, userAgent: nil)
        #expect(String(decoding: get, as: UTF8.self)
            == "GET /rewrap?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8443\r\nAccept: application/json\r\n\r\n")

        let emptyPost = CurlTransport.requestBytes(HTTPRequest(method: .post, url: url), authority: "h", path: "/p",
                                                   body: nil, userAgent: nil)
        #expect(String(decoding: emptyPost, as: UTF8.self) == "POST /p HTTP/1.1\r\nHost: h\r\nAccept: */*\r\nContent-Length: 0\r\n\r\n")
    }

    @Test(arguments: [
        ("http://Host.Example:80/a/b", "Host.Example", "host.example:80", "host.example", "/a/b"),
        ("http://user:secret@h:8080", "h:8080", "h:8080", "h", "/"),
        ("http://[::1]:9000/x?y=1", "[::1]:9000", "[::1]:9000", "::1", "/x?y=1"),
        ("http://h?q=1", "h", "h:80", "h", "/?q=1"),
        ("HTTP://h/p#f", "h", "h:80", "h", "/p"),
    ])
    func originAndTarget(text: String, authority: String, origin: String, host: String, path: String) throws {
        let url = try #require(URL(string: text))
        let target = try #require(CurlTransport.originAndTarget(of: url))
        #expect(target.authority == authority)
        #expect(target.origin == origin)
        #expect(target.host == host)
        #expect(target.path == path)
    }

    @Test func onlyPlainHTTPIsDirect() throws {
        let url = try #require(URL(string: "https://h/p"))
        #expect(CurlTransport.originAndTarget(of: url) == nil)
    }

    @Test func noProxyMatching() {
        let list = "localhost,127.0.0.1,.example.com,other.org,[::1]"
        #expect(CurlTransport.noProxyMatches(host: "a.example.com", list: list))
        #expect(CurlTransport.noProxyMatches(host: "example.com", list: list))
        #expect(CurlTransport.noProxyMatches(host: "sub.other.org", list: list))
        #expect(CurlTransport.noProxyMatches(host: "::1", list: list))
        #expect(!CurlTransport.noProxyMatches(host: "notexample.com", list: list))
        #expect(!CurlTransport.noProxyMatches(host: "station.lan", list: list))
        #expect(CurlTransport.noProxyMatches(host: "anything", list: "*"))
    }

    /// With a proxy in the environment (where libcurl reads it), a host it applies to goes through
    /// libcurl, which speaks to the proxy in absolute form; loopback hosts never use a proxy and
    /// stay direct. (The tests run one at a time, so setting the variable here is safe.)
    @Test func proxiedHostsGoThroughLibcurl() async throws {
        let proxy = try LoopbackHTTPServer { request, response in
            try response.send(status: 200, body: Array(request.target.utf8))
        }
        defer { proxy.stop() }
        setenv("http_proxy", proxy.url("").absoluteString, 1)
        defer { unsetenv("http_proxy") }
        let transport = CurlTransport.forTests { $0.environment = ProcessInfo.processInfo.environment }
        let remote = try #require(URL(string: "http://station.invalid/profile"))
        let proxied = try await transport.send(HTTPRequest(method: .get, url: remote))
        #expect(proxied.body.data == Data("http://station.invalid/profile".utf8))
        let direct = try await transport.send(HTTPRequest(method: .get, url: proxy.url("/health")))
        #expect(direct.body.data == Data("/health".utf8))
    }

    /// A kept connection the server has closed since is not used: the request goes out on a new one.
    @Test func connectionsClosedByTheServerAreReplaced() async throws {
        let server = try LoopbackHTTPServer { _, response in
            try response.send(status: 200, body: Array("ok".utf8))
            response.abortConnection()
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        for index in 0..<3 {
            let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/r\(index)")))
            #expect(response.body.data == Data("ok".utf8))
            // Let the close reach the client before the next request.
            #expect(await eventually { server.statistics.connectionsClosed > index })
        }
        #expect(server.statistics.connectionsAccepted == 3)
        #expect(server.statistics.requestsReceived == 3)
    }

    /// `Connection: close` and HTTP/1.0 answers end their connection.
    @Test func closingAnswersAreNotReused() async throws {
        let server = try LoopbackHTTPServer { request, response in
            if request.path == "/old" {
                try response.writeRaw(Array("HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nold".utf8))
            } else {
                try response.send(status: 200, headers: [("Connection", "close")], body: Array("new".utf8))
            }
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        #expect(try await transport.send(HTTPRequest(method: .get, url: server.url("/new"))).body.data == Data("new".utf8))
        #expect(try await transport.send(HTTPRequest(method: .get, url: server.url("/old"))).body.data == Data("old".utf8))
        #expect(try await transport.send(HTTPRequest(method: .get, url: server.url("/new"))).body.data == Data("new".utf8))
        #expect(server.statistics.connectionsAccepted == 3)
    }

    /// HEAD, 204 and 304 answers have no body even when they announce a length.
    @Test func answersWithoutBodies() async throws {
        let server = try LoopbackHTTPServer { request, response in
            switch request.path {
            case "/204": try response.writeHead(status: 204)
            case "/304": try response.writeHead(status: 304, headers: [("Content-Length", "10")])
            default: try response.writeHead(status: 200, headers: [("Content-Length", "10")])
            }
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        for (method, path, status) in [(HTTPMethod.head, "/head", 200), (.get, "/204", 204), (.get, "/304", 304)] {
            let response = try await transport.send(HTTPRequest(method: method, url: server.url(path)))
            #expect(response.status == status)
            #expect(response.body.data == Data())
        }
        #expect(server.statistics.connectionsAccepted == 1)
    }
}
