import LoopbackHTTP
import TestSupport
import URLSessionTransport
import Foundation
import Testing
import Transport
import TransportTestSupport

/// Large bodies in both directions, in constant memory: the server checks every byte against a
/// deterministic pattern as it arrives, and the client checks what it reads the same way. (Peak
/// memory is measured by `cipher-bench --filter transport`, in a process of its own.)
@Suite("URLSessionTransport: streaming bodies")
struct StreamingTests {
    static let hundredMiB: Int64 = 100 * 1024 * 1024

    @Test func uploads100MiBFromAStream() async throws {
        let pattern = PatternBytes(seed: 1)
        let server = try LoopbackHTTPServer(handler: TestHandlers.verifyingUpload(pattern))
        defer { server.stop() }
        let body = HTTPBodyStream(length: Self.hundredMiB, pattern.stream(count: Self.hundredMiB))
        let response = try await URLSessionTransport.forTests().send(HTTPRequest(method: .post, url: server.url("/upload")),
                                                               body: .stream(body))
        #expect(response.body.data == Data(TestHandlers.verifiedUploadReply(Self.hundredMiB).utf8))
    }

    @Test func downloads100MiBAsAStream() async throws {
        let pattern = PatternBytes(seed: 3)
        let server = try LoopbackHTTPServer(handler: TestHandlers.patternDownload(pattern, count: Self.hundredMiB))
        defer { server.stop() }
        let response = try await URLSessionTransport.forTests().send(
            HTTPRequest(method: .get, url: server.url("/download")), body: .none,
            options: TransferOptions(response: .stream)
        )
        #expect(response.status == 200)
        guard case .stream(let stream) = response.body else {
            Issue.record("expected a streamed body")
            return
        }
        #expect(stream.length == Self.hundredMiB)
        var received: Int64 = 0
        var matches = true
        for try await chunk in stream {
            if matches, !pattern.matches(chunk, offset: received) { matches = false }
            received += Int64(chunk.count)
        }
        #expect(received == Self.hundredMiB)
        #expect(matches)
    }

    /// A slow reader holds the transfer back on Apple platforms: the server can only get as far
    /// ahead as the socket buffers and the transport's bounded buffer allow, far less than the body.
    /// On Linux the body past the buffer waits on disk instead (see `ResponseBufferTests`), so there
    /// the reader still gets every byte, in order, after the server has long finished.
    @Test func slowReaderAppliesBackpressure() async throws {
        let pattern = PatternBytes(seed: 5)
        #if canImport(FoundationNetworking)
        let total: Int64 = 64 * 1024 * 1024
        #else
        let total: Int64 = 256 * 1024 * 1024
        #endif
        let written = Locked<Int64>(0)
        let server = try LoopbackHTTPServer(handler: TestHandlers.patternDownload(pattern, count: total) { offset in
            written.withLock { $0 = offset }
        })
        defer { server.stop() }
        let response = try await URLSessionTransport.forTests().send(
            HTTPRequest(method: .get, url: server.url("/big")), body: .none, options: TransferOptions(response: .stream)
        )
        guard case .stream(let stream) = response.body else {
            Issue.record("expected a streamed body")
            return
        }
        var iterator = stream.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first.map { pattern.matches($0, offset: 0) } == true)
        await waitUntilSteady(written)
        #if canImport(FoundationNetworking)
        var received = Int64(first?.count ?? 0)
        var matches = true
        while let chunk = try await iterator.next() {
            if matches, !pattern.matches(chunk, offset: received) { matches = false }
            received += Int64(chunk.count)
        }
        #expect(received == total)
        #expect(matches)
        #else
        #expect(written.value < 64 * 1024 * 1024, "the server ran \(written.value) bytes ahead of a stalled reader")
        #endif
    }

    /// Progress reports both directions, ends at the full sizes and never goes backwards.
    @Test func progressReportsBothDirections() async throws {
        let size = 4 * 1024 * 1024
        let pattern = PatternBytes(seed: 6)
        let server = try LoopbackHTTPServer { request, response in
            try request.consumeBody()
            try response.send(status: 200, body: pattern.bytes(offset: 0, count: size))
        }
        defer { server.stop() }
        let reports = Locked<[TransferProgress]>([])
        let options = TransferOptions(progress: { progress in reports.withLock { $0.append(progress) } })
        let response = try await URLSessionTransport.forTests().send(
            HTTPRequest(method: .post, url: server.url("/p")),
            body: .stream(HTTPBodyStream(length: Int64(size), pattern.stream(count: Int64(size)))), options: options
        )
        #expect(response.body.data?.count == size)
        let all = reports.value
        let last = try #require(all.last)
        #expect(last.bytesSent == Int64(size))
        #expect(last.expectedBytesToSend == Int64(size))
        #expect(last.bytesReceived == Int64(size))
        #expect(last.expectedBytesToReceive == Int64(size))
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent && $0.bytesReceived <= $1.bytesReceived })
    }

    /// Files that cannot be read or written fail before anything is sent.
    @Test func unusableFilesFailEarly() async throws {
        let server = try LoopbackHTTPServer { _, response in try response.send(status: 200, body: Array("x".utf8)) }
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let transport = URLSessionTransport.forTests()
        let missing = await transportError {
            _ = try await transport.send(HTTPRequest(method: .put, url: server.url("/m")), body: .file(directory.file("absent")))
        }
        #expect(missing?.kind == .requestBodyFailed)
        let notAFile = await transportError {
            _ = try await transport.send(HTTPRequest(method: .put, url: server.url("/m")), body: .file(directory.url))
        }
        #expect(notAFile?.kind == .requestBodyFailed)
        let unwritable = await transportError {
            _ = try await transport.send(HTTPRequest(method: .get, url: server.url("/m")), body: .none,
                                         options: TransferOptions(response: .file(directory.file("no/such/dir/out"))))
        }
        #expect(unwritable?.kind == .responseBodyFailed)
        #expect(server.statistics.requestsReceived == 0)
    }

}
