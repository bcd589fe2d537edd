import Foundation
import LoopbackHTTP
import Transport

/// Status codes, redirects, header fields and response framing.
enum MessageCases {
    static let all: [ConformanceCase] = [
        statusCodesAreResponses, redirectsAreReturnedNotFollowed, largeHeadsBothWays,
        headersKeepOrderSpellingAndRepeats, chunkedAndCloseDelimitedResponses, informationalResponsesAreSkipped,
        invalidRequestsAreRejected, malformedAndEmptyReplies, concurrentRequests, connectionsAreReused,
    ]

    static let statusCodesAreResponses = ConformanceCase(
        "statusCodesAreResponses", "Every HTTP status, 204 and 304 included, is returned as a response, never thrown."
    ) { c in
        let server = try c.serve { request, response in
            let code = Int(request.path.dropFirst("/status/".count)) ?? 599
            let bodiless = code == 204 || code == 304
            try response.send(status: code, reason: "Test", body: bodiless ? [] : Array("status \(code)".utf8))
        }
        for code in [200, 201, 204, 304, 400, 401, 403, 404, 409, 413, 416, 422, 429, 500, 502, 503] {
            let response = try await c.send(HTTPRequest(method: .get, url: server.url("/status/\(code)")))
            try c.expectEqual(response.status, code, "status of GET /status/\(code)")
            let body = try await c.bodyBytes(of: response, "GET /status/\(code)")
            let expected = code == 204 || code == 304 ? Data() : Data("status \(code)".utf8)
            try c.expectEqual(body, expected, "body of GET /status/\(code)")
        }
    }

    static let redirectsAreReturnedNotFollowed = ConformanceCase(
        "redirectsAreReturnedNotFollowed",
        "A 3xx redirect comes back as the response with its Location; the transport does not follow it."
    ) { c in
        let server = try c.serve { request, response in
            let code = Int(request.path.dropFirst("/redirect/".count)) ?? 302
            try response.send(status: code, reason: "Moved", headers: [("Location", "/elsewhere")],
                              body: Array("moved".utf8))
        }
        let codes = [301, 302, 303, 307, 308]
        for code in codes {
            for method in [HTTPMethod.get, .post] {
                let request = HTTPRequest(method: method, url: server.url("/redirect/\(code)"))
                let response = try await c.send(request, body: method == .post ? .bytes(Data("signed".utf8)) : .none)
                try c.expectEqual(response.status, code, "status of \(method) /redirect/\(code)")
                try c.expectEqual(response.headers["location"], "/elsewhere", "Location of \(method) /redirect/\(code)")
            }
        }
        try c.expectEqual(server.statistics.requestsReceived, codes.count * 2,
                          "requests the server received (a followed redirect adds one)")
    }

    static let largeHeadsBothWays = ConformanceCase(
        "largeHeadsBothWays", "Request and response heads of over 56 KiB (one 24 KiB field, 64 more) go through whole."
    ) { c in
        let bigValue = String(repeating: "0123456789abcdef", count: 1536)
        let manyFields = (0..<64).map { ("X-Field-\($0)", String(repeating: "v", count: 512)) }
        let seen = Locked<(big: String?, fields: Int)?>(nil)
        let server = try c.serve { request, response in
            seen.withLock {
                $0 = (request.header("X-Big"), request.headers.filter { $0.name.hasPrefix("X-Field-") }.count)
            }
            try response.send(status: 200, headers: [("X-Big-Reply", bigValue)] + manyFields, body: Array("ok".utf8))
        }
        var request = HTTPRequest(method: .get, url: server.url("/big"))
        request.headers["X-Big"] = bigValue
        for (name, value) in manyFields { request.headers.add(name, value: value) }
        let response = try await c.send(request)
        try c.expectEqual(response.status, 200, "status")
        try c.expect(response.headers["x-big-reply"] == bigValue, "the 24 KiB response field",
                     expected: "\(bigValue.count) characters", got: "\(response.headers["x-big-reply"]?.count ?? 0)")
        try c.expectEqual(response.headers.fields.filter { $0.name.hasPrefix("X-Field-") }.count, 64,
                          "X-Field-* response fields")
        try c.expectEqual(try await c.bodyBytes(of: response, "GET /big"), Data("ok".utf8), "body")
        let received = seen.value
        try c.expect(received?.big == bigValue, "the 24 KiB request field at the server",
                     expected: "\(bigValue.count) characters", got: "\(received?.big?.count ?? 0)")
        try c.expectEqual(received?.fields, 64, "X-Field-* request fields at the server")
    }

    static let headersKeepOrderSpellingAndRepeats = ConformanceCase(
        "headersKeepOrderSpellingAndRepeats",
        "Request fields reach the server in their order and spelling, repeats and empty values included; "
            + "repeated response fields are all kept."
    ) { c in
        let seen = Locked<[(name: String, value: String)]>([])
        let answer = [("Set-Cookie", "a=1"), ("X-Mixed-CASE", "v"), ("set-cookie", "b=2")]
        let server = try c.serve(TestHandlers.recordingHeaders(into: seen, answer: answer))
        let sent = [("x-cipher-uid", "Station-UID"), ("X-Cipher-Timestamp", "1700000000"), ("X-Repeat", "one"), ("x-repeat", "two"),
                    ("X-Empty", "")]
        let request = HTTPRequest(method: .get, url: server.url("/h"), headers: HTTPHeaders(sent))
        let response = try await c.send(request)
        try c.expectEqual(response.headers.values(for: "SET-COOKIE"), ["a=1", "b=2"], "repeated Set-Cookie fields")
        try c.expectEqual(response.headers["x-mixed-case"], "v", "case-insensitive look-up")
        let ours = seen.value.filter { $0.name.lowercased().hasPrefix("x-") }
        try c.expectEqual(ours.map(\.name), sent.map(\.0), "X-* field names at the server, in order")
        try c.expectEqual(ours.map(\.value), sent.map(\.1), "X-* field values at the server, in order")
    }

    static let chunkedAndCloseDelimitedResponses = ConformanceCase(
        "chunkedAndCloseDelimitedResponses",
        "A chunked response (trailers dropped) and a body that ends when the connection closes arrive whole."
    ) { c in
        let server = try c.serve { request, response in
            if request.path == "/chunked" {
                try response.writeHead(status: 200, headers: [("Transfer-Encoding", "chunked"), ("Content-Length", "0")])
                try response.write(Array("5\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n".utf8))
            } else {
                try response.writeHead(status: 200)  // no length: the body ends when the connection does
                try response.write(Array("until close".utf8))
            }
        }
        let chunked = try await c.send(HTTPRequest(method: .get, url: server.url("/chunked")))
        try c.expectEqual(try await c.bodyBytes(of: chunked, "GET /chunked"), Data("hello, world".utf8), "chunked body")
        let closing = try await c.send(HTTPRequest(method: .get, url: server.url("/close")))
        try c.expectEqual(try await c.bodyBytes(of: closing, "GET /close"), Data("until close".utf8),
                          "close-delimited body")
    }

    static let informationalResponsesAreSkipped = ConformanceCase(
        "informationalResponsesAreSkipped", "A 103 Early Hints block before the final head is not the response."
    ) { c in
        let server = try c.serve { _, response in
            try response.writeInformational(status: 103, reason: "Early Hints", headers: [("Link", "</a>; rel=preload")])
            try response.send(status: 200, headers: [("X-Final", "yes")], body: Array("final".utf8))
        }
        for destination in [ResponseDestination.memory(), .stream] {
            let response = try await c.send(HTTPRequest(method: .get, url: server.url("/hints")),
                                            options: TransferOptions(response: destination))
            try c.expectEqual(response.status, 200, "status (\(destination))")
            try c.expectEqual(response.headers["X-Final"], "yes", "final head's field (\(destination))")
            try c.expectEqual(try await c.bodyBytes(of: response, "GET /hints"), Data("final".utf8), "body (\(destination))")
        }
    }

    static let invalidRequestsAreRejected = ConformanceCase(
        "invalidRequestsAreRejected",
        "A header value with CR/LF, a non-http scheme, a bad method or header name fail with .invalidRequest, unsent."
    ) { c in
        try await c.expectRefusedUnsent([.invalidRequest], "an invalid request", requests: { server in
            var requests = [HTTPRequest(method: .get, url: server.url("/x"), headers: ["X-Evil": "a\r\nX-Injected: 1"])]
            if let ftp = URL(string: "ftp://127.0.0.1:\(server.port)/file") { requests.append(HTTPRequest(method: .get, url: ftp)) }
            requests.append(HTTPRequest(method: HTTPMethod("GET /x"), url: server.url("/x")))
            requests.append(HTTPRequest(method: .get, url: server.url("/x"), headers: ["Bad Name": "v"]))
            return requests
        }) { request in
            _ = try await c.transport.send(request, body: .none, options: TransferOptions())
        }
    }

    static let malformedAndEmptyReplies = ConformanceCase(
        "malformedAndEmptyReplies",
        "A reply that is not HTTP fails with .protocolError; a connection closed without a reply with .connectionLost."
    ) { c in
        let server = try c.serve { request, response in
            if request.path == "/garbage" { try response.writeRaw(Array("THIS IS NOT HTTP\r\n\r\n".utf8)) }
            response.abortConnection()
        }
        try await c.expectError(.protocolError, sending: HTTPRequest(method: .get, url: server.url("/garbage")))
        try await c.expectError(.connectionLost, sending: HTTPRequest(method: .get, url: server.url("/empty")))
    }

    static let concurrentRequests = ConformanceCase(
        "concurrentRequests", "24 requests sent at once through one transport each get their own answer."
    ) { c in
        let server = try c.serve { request, response in
            try response.send(status: 200, body: Array(request.path.utf8))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                group.addTask {
                    let response = try await c.send(HTTPRequest(method: .get, url: server.url("/c/\(index)")))
                    try c.expectEqual(try await c.bodyBytes(of: response, "GET /c/\(index)"), Data("/c/\(index)".utf8),
                                      "body of GET /c/\(index)")
                }
            }
            try await group.waitForAll()
        }
        try c.expectEqual(server.statistics.requestsReceived, 24, "requests the server received")
    }

    static let connectionsAreReused = ConformanceCase(
        "connectionsAreReused", "Eight sequential requests to one host, with and without bodies, share one connection."
    ) { c in
        let server = try c.serve { request, response in
            _ = try request.readBody()
            try response.send(status: 200, body: Array("r".utf8))
        }
        for index in 0..<8 {
            let body: HTTPRequestBody = index.isMultiple(of: 2) ? .none : .bytes(Data("body \(index)".utf8))
            let request = HTTPRequest(method: index.isMultiple(of: 2) ? .get : .post, url: server.url("/r\(index)"))
            try c.expectEqual(try await c.send(request, body: body).status, 200, "status of request \(index)")
        }
        try c.expectEqual(server.statistics.requestsReceived, 8, "requests the server received")
        try c.expectEqual(server.statistics.connectionsAccepted, 1, "connections the server accepted")
    }
}
