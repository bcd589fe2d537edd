import CurlTransport
import Foundation
import Testing
import Transport
import TransportTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `CurlTransport.send(batch:options:)`: requests to one host pipelined on one connection, answers
/// in order, and the unanswered requests sent again when the server closes part-way.
@Suite("CurlTransport: pipelined batches")
struct PipelineTests {
    private func batch(_ server: LoopbackHTTPServer, _ paths: [String]) -> [HTTPBatchRequest] {
        paths.map { HTTPBatchRequest(HTTPRequest(method: .post, url: server.url($0)), body: Data("body of \($0)".utf8)) }
    }

    /// Serves `handler` (after reading each request's body), sends `paths` as one batch of POSTs
    /// and returns the outcomes with the server's counts.
    private func exchange(
        _ paths: [String], transport: CurlTransport = .forTests(), handler: @escaping LoopbackHTTPServer.Handler
    ) async throws -> (outcomes: [Result<HTTPResponse, any Error>], statistics: LoopbackHTTPServer.Statistics) {
        let server = try LoopbackHTTPServer { request, response in
            _ = try request.readBody()
            try handler(request, response)
        }
        defer { server.stop() }
        let outcomes = await transport.send(batch: batch(server, paths), options: TransferOptions())
        return (outcomes, server.statistics)
    }

    /// The `TransportError` kind of each outcome; `nil` for a response or another error.
    private func kinds(_ outcomes: some Sequence<Result<HTTPResponse, any Error>>) -> [TransportError.Kind?] {
        outcomes.map { outcome in
            guard case .failure(let error as TransportError) = outcome else { return nil }
            return error.kind
        }
    }

    private func bodies(_ outcomes: [Result<HTTPResponse, any Error>]) -> [String] {
        outcomes.map { outcome in
            switch outcome {
            case .success(let response): String(decoding: response.body.data ?? Data(), as: UTF8.self)
            case .failure(let error): "error: \(error)"
            }
        }
    }

    /// The server holds every answer back until all requests of the batch have arrived on one
    /// connection, then writes them in one piece: only a pipelining client gets through, and the
    /// reader must split one read into many answers.
    @Test func aBatchGoesOutOnOneConnectionBeforeAnyAnswer() async throws {
        let server = try HoldingServer(expecting: 12)
        defer { server.stop() }
        let transport = CurlTransport.forTests(idle: 20, total: 30)
        let requests = (0..<12).map { HTTPBatchRequest(HTTPRequest(method: .get, url: server.url("/r\($0)"))) }
        let outcomes = await transport.send(batch: requests, options: TransferOptions())
        #expect(bodies(outcomes) == (0..<12).map { "/r\($0)" })
        #expect(server.connections == 1)
    }

    @Test func answersComeBackInOrderWithTheirBodies() async throws {
        let server = try LoopbackHTTPServer { request, response in
            let body = try request.readBody()
            try response.send(status: request.path == "/missing" ? 404 : 200,
                              body: Array("\(request.path) got \(String(decoding: body, as: UTF8.self))".utf8))
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        let paths = (0..<40).map { $0 == 7 ? "/missing" : "/p\($0)" }
        let outcomes = await transport.send(batch: batch(server, paths), options: TransferOptions())
        #expect(bodies(outcomes) == paths.map { "\($0) got body of \($0)" })
        let statuses = outcomes.map { (try? $0.get())?.status ?? 0 }
        #expect(statuses == paths.map { $0 == "/missing" ? 404 : 200 })
        // 40 requests, at most `maximumPipelineDepth` per connection.
        #expect(server.statistics.requestsReceived == 40)
        #expect(server.statistics.connectionsAccepted == (40 + CurlTransport.maximumPipelineDepth - 1) / CurlTransport.maximumPipelineDepth)
    }

    /// A server that closes the connection after some answers (as servers do after a number of
    /// requests) leaves the rest unanswered: they go out again on a new connection.
    @Test func requestsLeftUnansweredAreSentAgain() async throws {
        let paths = (0..<10).map { "/p\($0)" }
        let (outcomes, statistics) = try await exchange(paths) { request, response in
            try response.send(status: 200, body: Array(request.path.utf8))
            if request.path == "/p3" || request.path == "/p8" { response.abortConnection() }
        }
        #expect(bodies(outcomes) == paths)
        #expect(statistics.connectionsAccepted == 3)
    }

    /// Once the transport knows a host's pace, it leaves a pipeline's answers unread for most of
    /// the time they take and reads them together: the answers, their order, a close part-way and
    /// the time limits still come out the same.
    @Test func pipelinesAfterTheFirstReadTheirAnswersTogether() async throws {
        let server = try LoopbackHTTPServer { request, response in
            _ = try request.readBody()
            Thread.sleep(forTimeInterval: 0.005)
            try response.send(status: 200, body: Array(request.path.utf8))
            if request.path == "/last2" { response.abortConnection() }
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests(idle: 1, total: 5)
        for round in 0..<3 {
            let paths = (0..<8).map { "/r\(round)-\($0)" }
            let outcomes = await transport.send(batch: batch(server, paths), options: TransferOptions())
            #expect(bodies(outcomes) == paths)
        }
        let paths = (0..<6).map { "/last\($0)" }
        let outcomes = await transport.send(batch: batch(server, paths), options: TransferOptions())
        #expect(bodies(outcomes) == paths)
        #expect(server.statistics.requestsReceived == 30)
    }

    /// `Connection: close` on an answer ends the connection there; the rest use a new one.
    @Test func aClosingAnswerMovesTheRestToANewConnection() async throws {
        let paths = (0..<5).map { "/p\($0)" }
        let (outcomes, statistics) = try await exchange(paths) { request, response in
            let headers = request.path == "/p1" ? [("Connection", "close")] : []
            try response.send(status: 200, headers: headers, body: Array(request.path.utf8))
        }
        #expect(bodies(outcomes) == paths)
        #expect(statistics.connectionsAccepted == 2)
    }

    /// A broken answer fails its request and the ones after it; the answers before it stand.
    @Test func aMalformedAnswerFailsTheRest() async throws {
        let (outcomes, _) = try await exchange((0..<4).map { "/p\($0)" }) { request, response in
            if request.path == "/p2" {
                try response.writeRaw(Array("SPDY/9 200 Whatever\r\n\r\n".utf8))
                response.abortConnection()
            } else {
                try response.send(status: 200, body: Array(request.path.utf8))
            }
        }
        #expect(bodies(outcomes).prefix(2) == ["/p0", "/p1"])
        #expect(kinds(outcomes.suffix(2)) == [.protocolError, .protocolError])
        #expect(try outcomes[3].failureURL()?.path == "/p3")
    }

    /// A new connection that the server closes without answering is not tried again and again.
    @Test func aServerThatNeverAnswersFailsTheBatchOnce() async throws {
        let (outcomes, statistics) = try await exchange(["/a", "/b", "/c"]) { _, response in response.abortConnection() }
        #expect(kinds(outcomes) == [.connectionLost, .connectionLost, .connectionLost])
        #expect(statistics.connectionsAccepted == 1)
    }

    @Test func aTimedOutRequestFailsTheOnesAfterIt() async throws {
        let server = try LoopbackHTTPServer { request, response in
            if request.path == "/slow" { Thread.sleep(forTimeInterval: 3) }
            try response.send(status: 200, body: Array(request.path.utf8))
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        let options = TransferOptions(timeouts: TransferTimeouts(idle: 1, total: 1))
        let requests = ["/fast", "/slow", "/after"].map { HTTPBatchRequest(HTTPRequest(method: .get, url: server.url($0))) }
        let outcomes = await transport.send(batch: requests, options: options)
        #expect(bodies(outcomes).first == "/fast")
        #expect(kinds(outcomes.dropFirst()) == [.timedOut, .timedOut])
    }

    @Test func cancellingTheTaskCancelsTheUnansweredRequests() async throws {
        let server = try LoopbackHTTPServer { request, response in
            if request.path != "/p0" { Thread.sleep(forTimeInterval: 0.5) }
            try response.send(status: 200, body: Array(request.path.utf8))
        }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        let requests = (0..<6).map { HTTPBatchRequest(HTTPRequest(method: .get, url: server.url("/p\($0)"))) }
        let task = Task { await transport.send(batch: requests, options: TransferOptions()) }
        try await Task.sleep(nanoseconds: 300_000_000)
        task.cancel()
        let outcomes = await task.value
        #expect(bodies(outcomes).first == "/p0")
        let rest = kinds(outcomes.dropFirst())
        #expect(rest.contains(.cancelled))
        #expect(rest.allSatisfy { $0 == .cancelled || $0 == nil })
    }

    /// Requests to other hosts, and invalid ones, are answered in their places.
    @Test func mixedBatchesKeepTheirOrder() async throws {
        let first = try LoopbackHTTPServer { request, response in try response.send(status: 200, body: Array("1\(request.path)".utf8)) }
        let second = try LoopbackHTTPServer { request, response in try response.send(status: 200, body: Array("2\(request.path)".utf8)) }
        defer {
            first.stop()
            second.stop()
        }
        let transport = CurlTransport.forTests()
        var invalid = HTTPRequest(method: .get, url: first.url("/bad"))
        invalid.headers.add("Bad Name", value: "x")
        let requests = [
            HTTPBatchRequest(HTTPRequest(method: .get, url: first.url("/a"))),
            HTTPBatchRequest(HTTPRequest(method: .get, url: second.url("/b"))),
            HTTPBatchRequest(invalid),
            HTTPBatchRequest(HTTPRequest(method: .get, url: first.url("/c"))),
        ]
        let outcomes = await transport.send(batch: requests, options: TransferOptions())
        #expect(bodies(outcomes)[0] == "1/a")
        #expect(bodies(outcomes)[1] == "2/b")
        #expect(bodies(outcomes)[3] == "1/c")
        #expect(kinds([outcomes[2]]) == [.invalidRequest])
        #expect(first.statistics.connectionsAccepted == 1)
    }

    /// Requests the transport cannot pipeline (progress wanted) go one by one, concurrently.
    @Test func requestsWithProgressAreSentOneByOne() async throws {
        let server = try LoopbackHTTPServer { request, response in try response.send(status: 200, body: Array(request.path.utf8)) }
        defer { server.stop() }
        let transport = CurlTransport.forTests()
        let options = TransferOptions(progress: { _ in })
        let requests = (0..<3).map { HTTPBatchRequest(HTTPRequest(method: .get, url: server.url("/p\($0)"))) }
        let outcomes = await transport.send(batch: requests, options: options)
        #expect(bodies(outcomes) == ["/p0", "/p1", "/p2"])
    }
}

private extension Result where Success == HTTPResponse, Failure == any Error {
    func failureURL() throws -> URL? {
        guard case .failure(let error as TransportError) = self else { return nil }
        return error.url
    }
}

/// A raw TCP server for one pipelined batch: it reads until `expecting` request heads (no bodies)
/// have arrived, then writes all answers (each echoing its request target) in one write.
final class HoldingServer: @unchecked Sendable {
    private let listener: Int32
    let port: UInt16
    private let lock = NSLock()
    private var accepted = 0

    var connections: Int {
        lock.lock()
        defer { lock.unlock() }
        return accepted
    }

    init(expecting count: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw TransportError(.other, method: .get, url: URL(fileURLWithPath: "/"), message: "cannot listen") }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve(count) }
        thread.start()
    }

    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func serve(_ count: Int) {
        defer { close(listener) }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        lock.lock()
        accepted += 1
        lock.unlock()
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let separator = Array("\r\n\r\n".utf8)
        var heads: [String] = []
        while heads.count < count {
            let read = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard read > 0 else { return }
            received += buffer[0..<read]
            while let end = received.firstRange(of: separator) {
                heads.append(String(decoding: received[..<end.lowerBound], as: UTF8.self))
                received.removeSubrange(..<end.upperBound)
            }
        }
        var answers = ""
        for head in heads {
            let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? "?"
            answers += "HTTP/1.1 200 OK\r\nContent-Length: \(target.utf8.count)\r\n\r\n\(target)"
        }
        _ = Array(answers.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        // Wait for the client to close its end.
        _ = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
    }
}
