import LoopbackHTTP
import URLSessionTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

@Suite("URLSessionTransport: Range requests")
struct RangeTests {
    static let size: Int64 = 1_000_000
    static let pattern = PatternBytes(seed: 21)

    /// Serves `size` pattern bytes with single-range support, parsed here independently of the
    /// `ByteRange` type under test.
    static func rangeServer() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request, response in
            guard let range = request.header("Range") else {
                try response.send(status: 200, headers: [("Accept-Ranges", "bytes")],
                                  body: pattern.bytes(offset: 0, count: Int(size)))
                return
            }
            let spec = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            var first: Int64, last: Int64
            if spec.count == 2, spec[0].isEmpty, let suffix = Int64(spec[1]) {
                first = max(0, size - suffix)
                last = size - 1
            } else if spec.count == 2, let start = Int64(spec[0]) {
                first = start
                last = spec[1].isEmpty ? size - 1 : min(size - 1, Int64(spec[1]) ?? -1)
            } else {
                first = size
                last = -1
            }
            guard first < size, first <= last else {
                try response.send(status: 416, headers: [("Content-Range", "bytes */\(size)")])
                return
            }
            try response.send(status: 206, headers: [("Content-Range", "bytes \(first)-\(last)/\(size)")],
                              body: pattern.bytes(offset: first, count: Int(last - first + 1)))
        }
    }

    @Test(arguments: [
        (ByteRange.closed(0...0), Int64(0), Int64(0)),
        (.closed(1000...1999), 1000, 1999),
        (.closed(999_000...999_999), 999_000, 999_999),
        (.from(900_000), 900_000, 999_999),
        (.suffix(12_345), 987_655, 999_999),
    ])
    func partialContent(range: ByteRange, first: Int64, last: Int64) async throws {
        let server = try Self.rangeServer()
        defer { server.stop() }
        var request = HTTPRequest(method: .get, url: server.url("/content"))
        request.byteRange = range
        let response = try await URLSessionTransport.forTests().send(request)
        #expect(response.status == 206)
        #expect(response.contentRange == ContentRange(range: first...last, completeLength: Self.size))
        let body = try #require(response.body.data)
        #expect(body.count == Int(last - first + 1))
        #expect(Self.pattern.matches(body, offset: first))
    }

    @Test func unsatisfiableRange() async throws {
        let server = try Self.rangeServer()
        defer { server.stop() }
        var request = HTTPRequest(method: .get, url: server.url("/content"))
        request.byteRange = .from(Self.size)
        let response = try await URLSessionTransport.forTests().send(request)
        #expect(response.status == 416)
        #expect(response.contentRange == ContentRange(range: nil, completeLength: Self.size))
    }

    /// Resuming: the first part to a file, the rest streamed from where it stopped.
    @Test func resumeAfterPartialDownload() async throws {
        let server = try Self.rangeServer()
        defer { server.stop() }
        let transport = URLSessionTransport.forTests()
        var head = HTTPRequest(method: .get, url: server.url("/content"))
        head.byteRange = .closed(0...399_999)
        let first = try await transport.send(head)
        var rest = HTTPRequest(method: .get, url: server.url("/content"))
        rest.byteRange = .from(400_000)
        let second = try await transport.send(rest, body: .none, options: TransferOptions(response: .stream))
        guard case .stream(let stream) = second.body else {
            Issue.record("expected a stream")
            return
        }
        #expect(stream.length == 600_000)
        var whole = try #require(first.body.data)
        whole.append(try await stream.collect(upTo: 1_000_000))
        #expect(whole.count == Int(Self.size))
        #expect(Self.pattern.matches(whole, offset: 0))
    }
}
