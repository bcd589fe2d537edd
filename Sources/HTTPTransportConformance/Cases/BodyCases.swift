import Foundation
import LoopbackHTTP
import Transport

/// Request bodies as the server receives them: framing, lengths, and bodies that break their word.
enum BodyCases {
    static let all: [ConformanceCase] = [
        bodilessRequestsSendNoBody, bodilessPostPutPatchSendContentLengthZero, bodiesAreSentWithContentLength,
        unsizedStreamIsSentChunked, requestStreamsMustKeepTheirWord, unusableFilesFail, bodiesGoOutWithoutExpectContinue,
    ]

    /// What the server saw of one request.
    struct Received: Sendable, Equatable, CustomStringConvertible {
        var method: String
        var contentLength: String?
        var contentType: String?
        var chunked: Bool
        var body: [UInt8]

        var description: String {
            "\(method) Content-Length=\(contentLength ?? "none") Content-Type=\(contentType ?? "none")"
                + "\(chunked ? " chunked" : "") body=\(body.count) bytes"
        }
    }

    /// Records every request it receives in `seen`.
    static func recording(_ seen: Locked<[Received]>) -> LoopbackHTTPServer.Handler {
        { request, response in
            let body = try request.readBody()
            seen.withLock {
                $0.append(Received(method: request.method, contentLength: request.header("Content-Length"),
                                   contentType: request.header("Content-Type"), chunked: request.isChunked, body: body))
            }
            try response.send(status: 200, body: Array("\(body.count)".utf8))
        }
    }

    static let bodilessRequestsSendNoBody = ConformanceCase(
        "bodilessRequestsSendNoBody",
        "GET, HEAD and DELETE without a body send none (no Content-Length, not chunked); HEAD's response has no body."
    ) { c in
        let seen = Locked<[Received]>([])
        let server = try c.serve(recording(seen))
        for method in [HTTPMethod.get, .head, .delete] {
            let response = try await c.send(HTTPRequest(method: method, url: server.url("/none")))
            try c.expectEqual(response.status, 200, "status of \(method)")
            if method == .head {
                try c.expectEqual(try await c.bodyBytes(of: response, "HEAD"), Data(), "body of a HEAD response")
                try c.expectEqual(response.headers["Content-Length"], "1", "Content-Length of a HEAD response")
            }
        }
        let received = seen.value
        try c.expectEqual(received.count, 3, "requests the server received")
        for request in received {
            try c.expect(request.contentLength == nil && !request.chunked && request.body.isEmpty,
                         "\(request.method) at the server", expected: "no Content-Length, not chunked, no body",
                         got: request.description)
        }
    }

    static let bodilessPostPutPatchSendContentLengthZero = ConformanceCase(
        "bodilessPostPutPatchSendContentLengthZero", "POST, PUT and PATCH without a body say Content-Length: 0."
    ) { c in
        let seen = Locked<[Received]>([])
        let server = try c.serve(recording(seen))
        for method in [HTTPMethod.post, .put, .patch] {
            _ = try await c.send(HTTPRequest(method: method, url: server.url("/empty")))
        }
        let expected = ["POST", "PUT", "PATCH"].map {
            Received(method: $0, contentLength: "0", contentType: nil, chunked: false, body: [])
        }
        try c.expectEqual(seen.value, expected, "what the server received")
    }

    static let bodiesAreSentWithContentLength = ConformanceCase(
        "bodiesAreSentWithContentLength",
        "Bytes and sized-stream bodies go out with their exact Content-Length, unchunked, byte for byte, "
            + "with the caller's Content-Type or none."
    ) { c in
        let seen = Locked<[Received]>([])
        let server = try c.serve(recording(seen))
        let payload = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        var post = HTTPRequest(method: .post, url: server.url("/echo"))
        post.headers["Content-Type"] = "application/json"
        _ = try await c.send(post, body: .bytes(payload))
        _ = try await c.send(HTTPRequest(method: .put, url: server.url("/echo")), body: .bytes(payload))
        _ = try await c.send(HTTPRequest(method: .patch, url: server.url("/echo")),
                             body: .stream(HTTPBodyStream(payload, chunkSize: 1000)))
        let bytes = [UInt8](payload)
        try c.expectEqual(seen.value, [
            Received(method: "POST", contentLength: "3000", contentType: "application/json", chunked: false, body: bytes),
            Received(method: "PUT", contentLength: "3000", contentType: nil, chunked: false, body: bytes),
            Received(method: "PATCH", contentLength: "3000", contentType: nil, chunked: false, body: bytes),
        ], "what the server received")
    }

    static let unsizedStreamIsSentChunked = ConformanceCase(
        "unsizedStreamIsSentChunked", "A stream body of unknown length goes out chunked and arrives whole."
    ) { c in
        let seen = Locked<[Received]>([])
        let server = try c.serve(recording(seen))
        let pattern = PatternBytes(seed: 11)
        let stream = HTTPBodyStream(length: nil, pattern.stream(count: 300_000, chunkSize: 7000))
        _ = try await c.send(HTTPRequest(method: .post, url: server.url("/u")), body: .stream(stream))
        let received = seen.value
        try c.expectEqual(received.count, 1, "requests the server received")
        try c.expect(received[0].chunked && received[0].contentLength == nil, "framing at the server",
                     expected: "chunked, no Content-Length", got: received[0].description)
        try c.expect(received[0].body == pattern.bytes(offset: 0, count: 300_000), "body at the server",
                     expected: "the 300000 streamed bytes", got: "\(received[0].body.count) bytes that differ")
    }

    static let requestStreamsMustKeepTheirWord = ConformanceCase(
        "requestStreamsMustKeepTheirWord",
        "A stream that yields fewer or more bytes than its declared length, or throws, fails with "
            + ".requestBodyFailed (carrying what it threw)."
    ) { c in
        let server = try c.serve(TestHandlers.ok())
        struct ProducerFailure: Error {}
        let short = HTTPBodyStream(length: 1000, HTTPBodyStream(Data(count: 900), chunkSize: 100))
        let long = HTTPBodyStream(length: 1000, HTTPBodyStream(Data(count: 1100), chunkSize: 100))
        let pulls = Locked(0)
        let failing = HTTPBodyStream(length: 1000) {
            let count = pulls.withLock { count -> Int in
                count += 1
                return count
            }
            guard count < 3 else { throw ProducerFailure() }
            return Data(count: 100)
        }
        let request = HTTPRequest(method: .post, url: server.url("/strict"))
        for (name, stream) in [("short", short), ("long", long)] {
            try await c.expectError(.requestBodyFailed, sending: request, body: .stream(stream), "a \(name) stream")
        }
        let error = try await c.expectError(.requestBodyFailed, sending: request, body: .stream(failing), "a throwing stream")
        try c.expect(error.underlying is ProducerFailure, "the error of a throwing stream",
                     expected: "underlying == the stream's error", got: "underlying \(String(describing: error.underlying))")
    }

    static let unusableFilesFail = ConformanceCase(
        "unusableFilesFail",
        "A missing or non-regular request body file fails with .requestBodyFailed; an unwritable response file "
            + "with .responseBodyFailed; neither request is sent."
    ) { c in
        let server = try c.serve(TestHandlers.ok(body: Array("x".utf8)))
        let directory = try c.scratchDirectory()
        let put = HTTPRequest(method: .put, url: server.url("/m"))
        try await c.expectError(.requestBodyFailed, sending: put, body: .file(directory.appendingPathComponent("absent")), "a missing file")
        try await c.expectError(.requestBodyFailed, sending: put, body: .file(directory), "a directory as the body")
        try await c.expectError(.responseBodyFailed, sending: HTTPRequest(method: .get, url: server.url("/m")),
                                options: TransferOptions(response: .file(directory.appendingPathComponent("no/such/dir/out"))),
                                "a response file in a missing directory")
        try c.expectEqual(server.statistics.requestsReceived, 0, "requests the server received")
    }

    static let bodiesGoOutWithoutExpectContinue = ConformanceCase(
        "bodiesGoOutWithoutExpectContinue",
        "Small and 2 MiB bodies, bytes and streams, go out at once: no `Expect: 100-continue` round trip."
    ) { c in
        let seen = Locked<[String?]>([])
        let server = try c.serve { request, response in
            seen.withLock { $0.append(request.header("Expect")) }
            try request.consumeBody()
            try response.send(status: 200)
        }
        let small = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        let large = Data(count: 2 * 1024 * 1024)
        for (method, body) in [(HTTPMethod.post, HTTPRequestBody.bytes(small)), (.put, .bytes(large)),
                               (.patch, .stream(HTTPBodyStream(small, chunkSize: 1000))), (.put, .stream(HTTPBodyStream(large)))] {
            _ = try await c.send(HTTPRequest(method: method, url: server.url("/e")), body: body)
        }
        try c.expectEqual(seen.value, [nil, nil, nil, nil], "Expect fields the server received")
    }
}
