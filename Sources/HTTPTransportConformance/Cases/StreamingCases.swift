import Foundation
import LoopbackHTTP
import Transport

/// Large bodies both ways (checked byte for byte against a pattern as they move), memory limits,
/// response files and progress.
enum StreamingCases {
    static let all: [ConformanceCase] = [
        uploads64MiBFromAStream, uploads64MiBFromAFile, downloads64MiBAsAStream, downloads64MiBToAFile,
        memoryLimitIsEnforced, failedDownloadRemovesThePartialFile, droppingAStreamCancelsTheTransfer, progressIsReported,
        progressComesInSteps,
    ]

    /// The size of the large bodies: well past ``maximumLead``, so a transport that holds a whole body
    /// fails the cases that bound the lead, and small enough to keep the suite quick.
    static let bodySize: Int64 = 64 * 1024 * 1024

    /// How far the producing side of a streamed body may run ahead of the consuming side: socket
    /// buffers plus the transport's own bounded buffer fit easily (the transports tested here, over loopback:
    /// at most 5 MiB up and 9 MiB down, measured), a transport holding the whole body does not.
    static let maximumLead: Int64 = 24 * 1024 * 1024

    static let uploads64MiBFromAStream = ConformanceCase(
        "uploads64MiBFromAStream",
        "A 64 MiB sized stream uploads byte for byte with Content-Length, read no further ahead of the server "
            + "than 24 MiB."
    ) { c in
        let pattern = PatternBytes(seed: 1)
        let atServer = Locked<Int64>(0)
        let server = try c.serve(TestHandlers.verifyingUpload(pattern) { read in
            atServer.withLock { $0 = read }
        })
        let produced = Locked<Int64>(0)
        let mostAhead = Locked<Int64>(0)
        let body = HTTPBodyStream(length: bodySize) {
            let offset = produced.value
            guard offset < bodySize else { return nil }
            // Measured on each pull, before producing more: how far the transport has read ahead.
            mostAhead.withLock { $0 = max($0, offset - atServer.value) }
            let count = Int(min(256 * 1024, bodySize - offset))
            produced.withLock { $0 += Int64(count) }
            return pattern.data(offset: offset, count: count)
        }
        let response = try await c.send(HTTPRequest(method: .post, url: server.url("/upload")), body: .stream(body))
        try c.expectEqual(String(decoding: try await c.bodyBytes(of: response, "POST /upload"), as: UTF8.self),
                          TestHandlers.verifiedUploadReply(bodySize), "the server's check of the body")
        try c.expect(mostAhead.value <= maximumLead, "how far the transport read the stream ahead of the server",
                     expected: "at most \(maximumLead) bytes", got: "\(mostAhead.value) bytes")
    }

    static let uploads64MiBFromAFile = ConformanceCase(
        "uploads64MiBFromAFile", "A 64 MiB file uploads byte for byte with its size as Content-Length."
    ) { c in
        let directory = try c.scratchDirectory()
        let pattern = PatternBytes(seed: 2)
        let file = directory.appendingPathComponent("upload.bin")
        try pattern.writeFile(file, count: bodySize)
        let server = try c.serve(TestHandlers.verifyingUpload(pattern))
        let response = try await c.send(HTTPRequest(method: .put, url: server.url("/upload")), body: .file(file))
        try c.expectEqual(String(decoding: try await c.bodyBytes(of: response, "PUT /upload"), as: UTF8.self),
                          TestHandlers.verifiedUploadReply(bodySize), "the server's check of the body")
    }

    static let downloads64MiBAsAStream = ConformanceCase(
        "downloads64MiBAsAStream",
        "A 64 MiB response streams byte for byte, with its length, the server never more than 24 MiB ahead "
            + "of the reader."
    ) { c in
        let pattern = PatternBytes(seed: 3)
        let written = Locked<Int64>(0)
        let server = try c.serve(TestHandlers.patternDownload(pattern, count: bodySize) { offset in
            written.withLock { $0 = offset }
        })
        let response = try await c.send(HTTPRequest(method: .get, url: server.url("/download")),
                                        options: TransferOptions(response: .stream))
        try c.expectEqual(response.status, 200, "status")
        guard case .stream(let stream) = response.body else {
            throw c.failure("the response body", expected: ".stream", got: "\(response.body)")
        }
        try c.expectEqual(stream.length, bodySize, "the stream's length")
        var received: Int64 = 0
        var mostAhead: Int64 = 0
        var matches = true
        do {
            for try await chunk in stream {
                if matches, !pattern.matches(chunk, offset: received) { matches = false }
                received += Int64(chunk.count)
                // `written` only moves once a write has gone to the socket, so this never overstates.
                mostAhead = max(mostAhead, written.value - received)
            }
        } catch {
            throw c.failure("reading the stream", expected: "\(bodySize) bytes", got: "\(error) after \(received)")
        }
        try c.expectEqual(received, bodySize, "bytes read from the stream")
        try c.expect(matches, "the streamed bytes", expected: "the pattern the server sent", got: "different bytes")
        try c.expect(mostAhead <= maximumLead, "how far the server got ahead of the reader",
                     expected: "at most \(maximumLead) bytes", got: "\(mostAhead) bytes")
    }

    static let downloads64MiBToAFile = ConformanceCase(
        "downloads64MiBToAFile",
        "A 64 MiB response is written byte for byte to the requested file, created with mode 0600."
    ) { c in
        let directory = try c.scratchDirectory()
        let pattern = PatternBytes(seed: 4)
        let server = try c.serve(TestHandlers.patternDownload(pattern, count: bodySize))
        let target = directory.appendingPathComponent("download.bin")
        let response = try await c.send(HTTPRequest(method: .get, url: server.url("/download")),
                                        options: TransferOptions(response: .file(target)))
        guard case .file(let url, let byteCount) = response.body else {
            throw c.failure("the response body", expected: ".file", got: "\(response.body)")
        }
        try c.expectEqual(url, target, "the file")
        try c.expectEqual(byteCount, bodySize, "the byte count")
        let handle = try FileHandle(forReadingFrom: target)
        defer { try? handle.close() }
        var offset: Int64 = 0
        var matches = true
        while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
            if matches, !pattern.matches(piece, offset: offset) { matches = false }
            offset += Int64(piece.count)
        }
        try c.expectEqual(offset, bodySize, "the file's size")
        try c.expect(matches, "the file's bytes", expected: "the pattern the server sent", got: "different bytes")
        let mode = (try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? NSNumber)?.intValue
        try c.expectEqual(mode.map { String($0, radix: 8) }, "600", "the file's mode")
    }

    static let memoryLimitIsEnforced = ConformanceCase(
        "memoryLimitIsEnforced", "A body over the .memory(limit:) fails with .responseTooLarge(limit:); one at the limit fits."
    ) { c in
        let server = try c.serve { request, response in
            let size = request.path == "/fits" ? 1024 * 1024 : 2 * 1024 * 1024
            try response.send(status: 200, body: [UInt8](repeating: 7, count: size))
        }
        let limit = 1024 * 1024
        let options = TransferOptions(response: .memory(limit: limit))
        let fits = try await c.send(HTTPRequest(method: .get, url: server.url("/fits")), options: options)
        try c.expectEqual(fits.body.data?.count, limit, "a body of exactly the limit")
        try await c.expectError(.responseTooLarge(limit: limit), sending: HTTPRequest(method: .get, url: server.url("/large")),
                                options: options)
    }

    static let failedDownloadRemovesThePartialFile = ConformanceCase(
        "failedDownloadRemovesThePartialFile",
        "A download to a file that breaks off fails with .connectionLost and leaves no partial file."
    ) { c in
        let server = try c.serve(TestHandlers.cutMidBody(1))
        let directory = try c.scratchDirectory()
        let target = directory.appendingPathComponent("partial.bin")
        try await c.expectError(.connectionLost, sending: HTTPRequest(method: .get, url: server.url("/cut")),
                                options: TransferOptions(response: .file(target)))
        try c.expect(!FileManager.default.fileExists(atPath: target.path), "the partial file",
                     expected: "removed", got: "still there")
    }

    static let droppingAStreamCancelsTheTransfer = ConformanceCase(
        "droppingAStreamCancelsTheTransfer", "Dropping an unfinished streamed response body closes its connection."
    ) { c in
        let closed = Locked(false)
        let server = try c.serve(TestHandlers.stalling(prefix: 5000, closed: closed))
        do {
            let response = try await c.send(HTTPRequest(method: .get, url: server.url("/drop")),
                                            options: TransferOptions(response: .stream))
            guard case .stream(let stream) = response.body else {
                throw c.failure("the response body", expected: ".stream", got: "\(response.body)")
            }
            var iterator = stream.makeAsyncIterator()
            try c.expect(try await iterator.next() != nil, "the first chunk", expected: "bytes", got: "the end")
        }
        try await c.eventually("the server seeing the connection close") { closed.value }
    }

    /// The size of the progress cases' bodies.
    static let progressSize = 4 * 1024 * 1024

    /// Sends a request (a streamed upload of ``progressSize`` bytes when `uploading`, else a GET)
    /// to a server answering ``progressSize`` pattern bytes in one write; returns every progress
    /// report, in order, once the whole response is in.
    static func reportedProgress(_ c: ConformanceContext, seed: UInt64, uploading: Bool) async throws -> [TransferProgress] {
        let pattern = PatternBytes(seed: seed)
        let server = try c.serve(TestHandlers.ok(body: pattern.bytes(offset: 0, count: progressSize)))
        let reports = Locked<[TransferProgress]>([])
        let options = TransferOptions(progress: { progress in reports.withLock { $0.append(progress) } })
        let response = if uploading {
            try await c.send(HTTPRequest(method: .post, url: server.url("/p")),
                             body: .stream(HTTPBodyStream(length: Int64(progressSize), pattern.stream(count: Int64(progressSize)))),
                             options: options)
        } else {
            try await c.send(HTTPRequest(method: .get, url: server.url("/large")), options: options)
        }
        try c.expectEqual(response.body.data?.count, progressSize, "the response body's size")
        return reports.value
    }

    static let progressIsReported = ConformanceCase(
        "progressIsReported",
        "Progress reaches the full upload and download sizes before send returns, announces both sizes, "
            + "ends with a complete report and never goes backwards."
    ) { c in
        let size = progressSize
        let all = try await reportedProgress(c, seed: 6, uploading: true)
        try c.expectEqual(all.map(\.bytesSent).max(), Int64(size), "the most bytesSent reported")
        try c.expectEqual(all.map(\.bytesReceived).max(), Int64(size), "the most bytesReceived reported")
        try c.expect(all.contains { $0.expectedBytesToSend == Int64(size) }, "expectedBytesToSend",
                     expected: "\(size) in some report", got: "\(Set(all.map(\.expectedBytesToSend)))")
        try c.expect(all.contains { $0.expectedBytesToReceive == Int64(size) }, "expectedBytesToReceive",
                     expected: "\(size) in some report", got: "\(Set(all.map(\.expectedBytesToReceive)))")
        let full = TransferProgress(bytesSent: Int64(size), expectedBytesToSend: Int64(size), bytesReceived: Int64(size),
                                    expectedBytesToReceive: Int64(size))
        try c.expectEqual(all.last, full, "the last report")
        let backwards = zip(all, all.dropFirst()).first { $0.bytesSent > $1.bytesSent || $0.bytesReceived > $1.bytesReceived }
        try c.expect(backwards == nil, "successive reports", expected: "never decreasing",
                     got: backwards.map { "\($0.0) then \($0.1)" } ?? "")
    }

    static let progressComesInSteps = ConformanceCase(
        "progressComesInSteps",
        "A 4 MiB response the server writes in one call is received in steps: progress reports at least 8 "
            + "figures between none and all of it, as the bytes arrive."
    ) { c in
        let size = progressSize
        let reports = try await reportedProgress(c, seed: 7, uploading: false)
        let between = Set(reports.map(\.bytesReceived).filter { $0 > 0 && $0 < Int64(size) })
        try c.expect(between.count >= 8, "progress figures strictly between 0 and \(size) bytes received",
                     expected: "at least 8", got: "\(between.count)")
    }
}
