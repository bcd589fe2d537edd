import Foundation
import LoopbackHTTP
import Transport

/// `Range` requests: the header goes out as set, and 206 / 416 answers come back as responses.
enum RangeCases {
    static let all: [ConformanceCase] = [rangeRequestsGetPartialContent, unsatisfiableRangeGets416]

    static let size: Int64 = 1_000_000
    static let pattern = PatternBytes(seed: 21)

    /// Serves `size` pattern bytes with single-range support, parsed here independently of
    /// `ByteRange`.
    static func rangeServer() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { request, response in
            guard let range = request.header("Range") else {
                try response.send(status: 200, body: pattern.bytes(offset: 0, count: Int(size)))
                return
            }
            let spec = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            var first = size, last: Int64 = -1
            if spec.count == 2, spec[0].isEmpty, let suffix = Int64(spec[1]) {
                first = max(0, size - suffix)
                last = size - 1
            } else if spec.count == 2, let start = Int64(spec[0]) {
                first = start
                last = spec[1].isEmpty ? size - 1 : min(size - 1, Int64(spec[1]) ?? -1)
            }
            guard first < size, first <= last else {
                try response.send(status: 416, headers: [("Content-Range", "bytes */\(size)")])
                return
            }
            try response.send(status: 206, headers: [("Content-Range", "bytes \(first)-\(last)/\(size)")],
                              body: pattern.bytes(offset: first, count: Int(last - first + 1)))
        }
    }

    static let rangeRequestsGetPartialContent = ConformanceCase(
        "rangeRequestsGetPartialContent",
        "Closed, open-ended and suffix ranges get 206 with their Content-Range and exactly those bytes, "
            + "in memory and streamed."
    ) { c in
        let server = try rangeServer()
        defer { server.stop() }
        let ranges: [(ByteRange, ClosedRange<Int64>)] = [
            (.closed(0...0), 0...0), (.closed(1000...1999), 1000...1999), (.from(900_000), 900_000...999_999),
            (.suffix(12_345), 987_655...999_999),
        ]
        for (range, expected) in ranges {
            for destination in [ResponseDestination.memory(), .stream] {
                var request = HTTPRequest(method: .get, url: server.url("/content"))
                request.byteRange = range
                let response = try await c.send(request, options: TransferOptions(response: destination))
                let check = "\(range.headerValue) (\(destination))"
                try c.expectEqual(response.status, 206, "status of \(check)")
                try c.expectEqual(response.contentRange, ContentRange(range: expected, completeLength: size),
                                  "Content-Range of \(check)")
                let body = try await c.bodyBytes(of: response, check)
                try c.expect(body.count == expected.count && pattern.matches(body, offset: expected.lowerBound),
                             "body of \(check)", expected: "bytes \(expected)", got: "\(body.count) bytes")
            }
        }
    }

    static let unsatisfiableRangeGets416 = ConformanceCase(
        "unsatisfiableRangeGets416", "A range past the end gets 416 with `Content-Range: bytes */<length>`."
    ) { c in
        let server = try rangeServer()
        defer { server.stop() }
        var request = HTTPRequest(method: .get, url: server.url("/content"))
        request.byteRange = .from(size)
        let response = try await c.send(request)
        try c.expectEqual(response.status, 416, "status")
        try c.expectEqual(response.contentRange, ContentRange(range: nil, completeLength: size), "Content-Range")
    }
}
