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
        var download = try #require(try await startStreamedDownload(URLSessionTransport.forTests(), pattern: pattern, total: total),
                                    "expected a streamed body")
        defer { download.server.stop() }
        #expect(download.firstChunkMatches)
        await waitUntilSteady(download.written)
        #if canImport(FoundationNetworking)
        var received = Int64(download.firstChunkCount)
        var matches = true
        while let chunk = try await download.iterator.next() {
            if matches, !pattern.matches(chunk, offset: received) { matches = false }
            received += Int64(chunk.count)
        }
        #expect(received == total)
        #expect(matches)
        #else
        #expect(download.written.value < 64 * 1024 * 1024, "the server ran \(download.written.value) bytes ahead of a stalled reader")
        #endif
    }

}
