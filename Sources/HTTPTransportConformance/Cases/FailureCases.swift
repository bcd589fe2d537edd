import Foundation
import LoopbackHTTP
import Transport

/// Cancellation, time limits, broken connections, unreachable hosts, requests and key readings
/// refused before anything is sent. Time limits are short and each case only checks that the right
/// failure happens, never how fast.
enum FailureCases {
    static let all: [ConformanceCase] = [
        cancellingAWaitingRequest, cancellingMidDownloadStream, cancellingMidUpload, alreadyCancelledTaskSendsNothing,
        idleTimeoutAfterTheHead, idleTimeoutBeforeAnyResponse, totalTimeout, totalTimeoutOfAStream, serverClosingMidBody,
        fileShrinkingDuringUpload, connectionRefused, unresolvableHost, pinsOnPlainHTTPAreRefused,
        readingTheKeyOfPlainHTTPIsRefused, readingTheKeyAtAClosedPortFails, encodedAnswersAreRefused,
    ]

    /// Idle limit for the idle cases: 1 s, with no total limit.
    static let idleOnly = TransferTimeouts(idle: 1, total: nil)

    static let cancellingAWaitingRequest = ConformanceCase(
        "cancellingAWaitingRequest",
        "Cancelling the task while it waits for the response throws .cancelled and closes the connection."
    ) { c in
        let closed = Locked(false)
        let server = try c.serve { request, response in
            try request.consumeBody()
            if response.waitForClientToClose(timeout: 60) { closed.withLock { $0 = true } }
        }
        let request = HTTPRequest(method: .get, url: server.url("/wait"))
        let task = Task { try await c.transport.send(request, body: .none, options: TransferOptions()) }
        try await c.expectCancellation(of: task, once: "the request reaching the server", { server.statistics.requestsReceived == 1 },
                                       "the cancelled send", request: request, closed: closed)
    }

    static let cancellingMidDownloadStream = ConformanceCase(
        "cancellingMidDownloadStream", "Cancelling the task reading a streamed body throws .cancelled and ends the transfer."
    ) { c in
        let closed = Locked(false)
        let server = try c.serve { _, response in
            try response.writeHead(status: 200, headers: [("Content-Length", "\(Int64(1) << 40)")])
            let chunk = [UInt8](repeating: 0x44, count: 64 * 1024)
            do {
                // Full speed for the first 8 MiB, then about 64 MiB/s: a transport that cannot
                // hold the server back (FoundationNetworking spills to disk) must not reach its
                // spill limit before a reader starved on a busy machine gets to cancel.
                var sent = 0
                while true {
                    try response.write(chunk)
                    sent += chunk.count
                    if sent > 8 << 20 { Thread.sleep(forTimeInterval: 0.001) }
                }
            } catch {
                closed.withLock { $0 = true }
            }
        }
        let received = Locked<Int64>(0)
        let request = HTTPRequest(method: .get, url: server.url("/endless"))
        let task = Task {
            let response = try await c.transport.send(request, body: .none, options: TransferOptions(response: .stream))
            guard case .stream(let stream) = response.body else { return }
            for try await chunk in stream { received.withLock { $0 += Int64(chunk.count) } }
        }
        try await c.expectCancellation(of: task, once: "4 MiB arriving", { received.value > 4 * 1024 * 1024 },
                                       "reading the cancelled stream", closed: closed)
    }

    static let cancellingMidUpload = ConformanceCase(
        "cancellingMidUpload", "Cancelling the task during a streamed upload throws .cancelled and ends the transfer."
    ) { c in
        let bytesAtServer = Locked<Int64>(0)
        let closed = Locked(false)
        let server = try c.serve(TestHandlers.countingUpload(into: bytesAtServer, closed: closed))
        let endless: Int64 = 1 << 40
        let body = HTTPBodyStream(length: endless, PatternBytes(seed: 31).stream(count: endless))
        let request = HTTPRequest(method: .post, url: server.url("/up"))
        let task = Task { try await c.transport.send(request, body: .stream(body), options: TransferOptions()) }
        try await c.expectCancellation(of: task, once: "4 MiB reaching the server", { bytesAtServer.value > 4 * 1024 * 1024 },
                                       "the cancelled upload", request: request, closed: closed)
    }

    static let alreadyCancelledTaskSendsNothing = ConformanceCase(
        "alreadyCancelledTaskSendsNothing", "A send from an already cancelled task throws .cancelled and sends nothing."
    ) { c in
        try await c.expectRefusedUnsent([.cancelled], "the send", requests: { [HTTPRequest(method: .get, url: $0.url("/never"))] }) { request in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await c.transport.send(request, body: .none, options: TransferOptions())
            }
            _ = try await task.value
        }
    }

    static let idleTimeoutAfterTheHead = ConformanceCase(
        "idleTimeoutAfterTheHead",
        "A body that stops moving fails with .timedOut under a 1 s idle limit, and the connection is closed."
    ) { c in
        let closed = Locked(false)
        let server = try c.serve(TestHandlers.stalling(closed: closed))
        try await c.expectError(.timedOut, sending: HTTPRequest(method: .get, url: server.url("/stall")),
                                options: TransferOptions(timeouts: idleOnly))
        try await c.eventually("the server seeing the connection close") { closed.value }
    }

    static let idleTimeoutBeforeAnyResponse = ConformanceCase(
        "idleTimeoutBeforeAnyResponse", "A server that never answers fails the request with .timedOut under a 1 s idle limit."
    ) { c in
        let server = try c.serve { request, response in
            try request.consumeBody()
            _ = response.waitForClientToClose(timeout: 60)
        }
        try await c.expectError(.timedOut, sending: HTTPRequest(method: .post, url: server.url("/silent")),
                                body: .bytes(Data("x".utf8)), options: TransferOptions(timeouts: idleOnly))
    }

    static let totalTimeout = ConformanceCase(
        "totalTimeout", "A body that keeps trickling fails with .timedOut under a 1.5 s total limit (idle limit 60 s)."
    ) { c in
        let server = try c.serve(TestHandlers.trickle(0x42, count: 600, declared: 100_000))
        try await c.expectError(.timedOut, sending: HTTPRequest(method: .get, url: server.url("/slow")),
                                options: TransferOptions(timeouts: TransferTimeouts(idle: 60, total: 1.5)))
    }

    static let totalTimeoutOfAStream = ConformanceCase(
        "totalTimeoutOfAStream",
        "A streamed body that keeps trickling fails with .timedOut under an explicit 1 s total limit (idle limit 60 s)."
    ) { c in
        let server = try c.serve(TestHandlers.trickle(0x43, count: 25, declared: 25))
        let request = HTTPRequest(method: .get, url: server.url("/trickle"))
        try await c.expectError([.timedOut], "reading the streamed body", request: request) {
            let options = TransferOptions(response: .stream, timeouts: TransferTimeouts(idle: 60, total: 1))
            let response = try await c.transport.send(request, body: .none, options: options)
            if case .stream(let stream) = response.body { _ = try await stream.collect(upTo: 100) }
        }
    }

    static let serverClosingMidBody = ConformanceCase(
        "serverClosingMidBody",
        "A connection closed mid-body fails with .connectionLost, in memory and while streaming (after the bytes sent)."
    ) { c in
        let server = try c.serve(TestHandlers.cutMidBody(0x45))
        let request = HTTPRequest(method: .get, url: server.url("/cut"))
        try await c.expectError(.connectionLost, sending: request, "collected in memory")
        let response = try await c.send(request, options: TransferOptions(response: .stream))
        guard case .stream(let stream) = response.body else {
            throw c.failure("the response body", expected: ".stream", got: "\(response.body)")
        }
        let received = Locked(0)
        try await c.expectError([.connectionLost], "reading the stream") {
            for try await chunk in stream { received.withLock { $0 += chunk.count } }
        }
        try c.expectEqual(received.value, 100_000, "bytes streamed before the break")
    }

    /// 1 MiB of zeros as gzip (1,051 bytes): what a hostile server sends to make a decoding client
    /// fill a limit a thousand times faster than the bytes it sends.
    static let gzippedMebibyte: [UInt8] = [0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0x02, 0x03]
        + [0xED, 0xC1, 0x31, 0x01, 0, 0, 0, 0xC2, 0xA0, 0xF5, 0x4F, 0x6D, 0x08, 0x5F, 0xA0]
        + [UInt8](repeating: 0, count: 1016) + [0x3E, 0x03, 0x1C, 0xEA, 0x38, 0xA7, 0, 0, 0x10, 0]

    static let encodedAnswersAreRefused = ConformanceCase(
        "encodedAnswersAreRefused",
        "A gzip answer fails with .unsupportedContentEncoding (never decoded), in memory, to a file and streamed; identity is delivered as sent."
    ) { c in
        let server = try c.serve { request, response in
            try request.consumeBody()
            if request.path == "/identity" {
                try response.send(status: 200, headers: [("Content-Encoding", "identity")], body: Array("as sent".utf8))
            } else {
                try response.send(status: 200, headers: [("Content-Encoding", "gzip"), ("Content-Type", "application/octet-stream")],
                                  body: gzippedMebibyte)
            }
        }
        let request = HTTPRequest(method: .get, url: server.url("/gzip"))
        try await c.expectError(.unsupportedContentEncoding, sending: request, "collected in memory")
        let directory = try c.scratchDirectory()
        let file = directory.appendingPathComponent("encoded.bin")
        try await c.expectError(.unsupportedContentEncoding, sending: request, options: TransferOptions(response: .file(file)),
                                "written to a file")
        try c.expect(!FileManager.default.fileExists(atPath: file.path), "the response file after the refusal",
                     expected: "no file", got: "a file")
        try await c.expectError([.unsupportedContentEncoding], "streamed", request: request) {
            let response = try await c.transport.send(request, body: .none, options: TransferOptions(response: .stream))
            guard case .stream(let stream) = response.body else { return }
            for try await _ in stream {}
        }
        let identity = try await c.send(HTTPRequest(method: .get, url: server.url("/identity")))
        try c.expectEqual(identity.body.data, Data("as sent".utf8), "the identity answer's body")
    }

    static let fileShrinkingDuringUpload = ConformanceCase(
        "fileShrinkingDuringUpload",
        "A request body file that shrinks during the upload fails with .requestBodyFailed instead of sending less."
    ) { c in
        let directory = try c.scratchDirectory()
        let file = directory.appendingPathComponent("shrinking.bin")
        try PatternBytes(seed: 51).writeFile(file, count: 48 * 1024 * 1024)
        let readByServer = Locked<Int64>(0)
        let mayContinue = Locked(false)
        let server = try c.serve { request, response in
            try request.consumeBody { bytes, _ in
                let total = readByServer.withLock { count -> Int64 in
                    count += Int64(bytes.count)
                    return count
                }
                // Hold the upload after 1 MiB until the case has truncated the file.
                while total >= 1 << 20, !mayContinue.value { usleep(10_000) }
            }
            try response.send(status: 200)
        }
        let request = HTTPRequest(method: .put, url: server.url("/up"))
        let task = Task { try await c.transport.send(request, body: .file(file), options: TransferOptions()) }
        defer { task.cancel() }
        try await c.eventually("1 MiB reaching the server") { readByServer.value >= 1 << 20 }
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: 24 * 1024 * 1024)
        try handle.close()
        mayContinue.withLock { $0 = true }
        try await c.expectError([.requestBodyFailed], "the upload", request: request) { _ = try await task.value }
    }

    static let connectionRefused = ConformanceCase(
        "connectionRefused", "A port nobody listens on fails with .cannotConnect naming the request."
    ) { c in
        let server = try c.serve(TestHandlers.ok())
        let url = server.url("/nobody")
        server.stop()
        try await c.expectError(.cannotConnect, sending: HTTPRequest(method: .delete, url: url))
    }

    static let unresolvableHost = ConformanceCase(
        "unresolvableHost", "A host name that does not resolve (RFC 6761 `.invalid`) fails with .dnsFailure."
    ) { c in
        guard let url = URL(string: "http://cipher-station-test.invalid/profile") else {
            throw c.failure("the test URL", expected: "a URL", got: "nil")
        }
        try await c.expectError(.dnsFailure, sending: HTTPRequest(method: .get, url: url))
    }

    static let pinsOnPlainHTTPAreRefused = ConformanceCase(
        "pinsOnPlainHTTPAreRefused",
        "A pinned request to an http URL fails with .invalidRequest (or .pinningUnsupported) and is not sent."
    ) { c in
        let pin = try PublicKeyFingerprint(sha256: [UInt8](repeating: 0xAB, count: 32))
        try await c.expectRefusedUnsent([.invalidRequest, .pinningUnsupported], "a pinned http request",
                                        requests: { [HTTPRequest(method: .get, url: $0.url("/pinned"))] }) { request in
            _ = try await c.transport.send(request, body: .none, options: TransferOptions(pinnedPublicKeys: [pin]))
        }
    }

    static let readingTheKeyOfPlainHTTPIsRefused = ConformanceCase(
        "readingTheKeyOfPlainHTTPIsRefused",
        "presentedPublicKey(at:) of an http URL fails with .invalidRequest (or .probingUnsupported) and sends nothing."
    ) { c in
        try await c.expectRefusedUnsent([.invalidRequest, .probingUnsupported], "reading the key of an http URL",
                                        requests: { [HTTPRequest(method: .get, url: $0.url("/key"))] }) { request in
            _ = try await c.transport.presentedPublicKey(at: request.url)
        }
    }

    static let readingTheKeyAtAClosedPortFails = ConformanceCase(
        "readingTheKeyAtAClosedPortFails",
        "presentedPublicKey(at:) of an https port nobody listens on fails with .cannotConnect (or .probingUnsupported) naming the URL."
    ) { c in
        let server = try c.serve(TestHandlers.ok())
        let port = server.port
        server.stop()
        guard let url = URL(string: "https://127.0.0.1:\(port)/key") else {
            throw c.failure("the test URL", expected: "a URL", got: "nil")
        }
        try await c.expectError([.cannotConnect, .probingUnsupported], "reading the key at a closed port",
                                request: HTTPRequest(method: .get, url: url)) {
            _ = try await c.transport.presentedPublicKey(at: url)
        }
    }
}
