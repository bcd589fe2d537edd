import Foundation
import LoopbackHTTP
import Transport

/// `Range` requests: the header goes out as set, and 206 / 416 answers come back as responses.
enum RangeCases {
    static let all: [ConformanceCase] = [rangeRequestsGetPartialContent, unsatisfiableRangeGets416, resumingAPartialDownload]

    static let size: Int64 = 1_000_000
    static let pattern = PatternBytes(seed: 21)

    /// Serves `size` pattern bytes with single-range support.
    static let content = TestHandlers.ranges(pattern, size: size)

    /// Sends a GET of the range server's content for `range`.
    static func get(_ range: ByteRange, from server: LoopbackHTTPServer, _ c: ConformanceContext,
                    options: TransferOptions = TransferOptions()) async throws -> HTTPResponse {
        var request = HTTPRequest(method: .get, url: server.url("/content"))
        request.byteRange = range
        return try await c.send(request, options: options)
    }

    static let rangeRequestsGetPartialContent = ConformanceCase(
        "rangeRequestsGetPartialContent",
        "Closed, open-ended and suffix ranges get 206 with their Content-Range and exactly those bytes, "
            + "in memory and streamed."
    ) { c in
        let server = try c.serve(content)
        let ranges: [(ByteRange, ClosedRange<Int64>)] = [
            (.closed(0...0), 0...0), (.closed(1000...1999), 1000...1999), (.closed(999_000...999_999), 999_000...999_999),
            (.from(900_000), 900_000...999_999), (.suffix(12_345), 987_655...999_999),
        ]
        for (range, expected) in ranges {
            for destination in [ResponseDestination.memory(), .stream] {
                let response = try await get(range, from: server, c, options: TransferOptions(response: destination))
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
        let server = try c.serve(content)
        let response = try await get(.from(size), from: server, c)
        try c.expectEqual(response.status, 416, "status")
        try c.expectEqual(response.contentRange, ContentRange(range: nil, completeLength: size), "Content-Range")
    }

    static let resumingAPartialDownload = ConformanceCase(
        "resumingAPartialDownload",
        "A download resumes where it stopped: the first part in memory, the rest streamed from an open-ended range, "
            + "whole and in order."
    ) { c in
        let server = try c.serve(content)
        let first = try await c.bodyBytes(of: try await get(.closed(0...399_999), from: server, c), "the first part")
        let second = try await get(.from(400_000), from: server, c, options: TransferOptions(response: .stream))
        guard case .stream(let stream) = second.body else {
            throw c.failure("the rest", expected: "a streamed body", got: "\(second.body)")
        }
        try c.expectEqual(stream.length, 600_000, "length of the streamed rest")
        var whole = first
        whole.append(try await c.bodyBytes(of: second, "the rest"))
        try c.expect(whole.count == Int(size) && pattern.matches(whole, offset: 0), "the resumed body",
                     expected: "the \(size) bytes in order", got: "\(whole.count) bytes")
    }
}
