#if canImport(CCurl)
import CurlTransport
import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// Streaming behaviour beyond the transport conformance suite (ConformanceTests, which moves
/// 100 MiB both ways): back-pressure on a reader that stops, which needs waiting to observe, and
/// a stream body sent again when libcurl rewinds it.
@Suite("CurlTransport: streaming bodies")
struct StreamingTests {
    /// A slow reader holds the transfer back: the server can only get as far ahead as the socket
    /// buffers and the transport's bounded buffer allow, far less than the body.
    @Test func slowReaderAppliesBackpressure() async throws {
        let pattern = PatternBytes(seed: 5)
        let total: Int64 = 256 * 1024 * 1024
        let download = try #require(try await startStreamedDownload(CurlTransport.forTests(), pattern: pattern, total: total),
                                    "expected a streamed body")
        defer { download.server.stop() }
        #expect(download.firstChunkMatches)
        await waitUntilSteady(download.written)
        #expect(download.written.value < 64 * 1024 * 1024, "the server ran \(download.written.value) bytes ahead of a stalled reader")
    }

    /// A server that takes an upload on a connection reused from an earlier request and closes
    /// without a byte of answer (``FirstUploadDroppingServer``): libcurl sends the request again on
    /// a new connection and rewinds the body. A restartable stream (a
    /// publish's multipart form) starts over from its first byte; a one-shot stream cannot, and
    /// the transfer fails with a typed error instead of sending part of a body.
    @Test(arguments: [true, false])
    func streamResentAfterTheServerDropsTheConnectionMidBody(restartable: Bool) async throws {
        let size = 512 * 1024
        let pattern = PatternBytes(seed: 0x5E5F)
        let server = try FirstUploadDroppingServer(pattern: pattern)
        defer { server.stop() }
        let body = pattern.data(offset: 0, count: size)
        let stream = restartable
            ? HTTPBodyStream(body, chunkSize: 64 * 1024)
            : HTTPBodyStream(length: Int64(size), AsyncThrowingStream<Data, any Error> { continuation in
                continuation.yield(body)
                continuation.finish()
            })
        let transport = CurlTransport.forTests()
        _ = try await transport.send(HTTPRequest(method: .get, url: server.url("/warm")))
        let request = HTTPRequest(method: .put, url: server.url("/upload"))
        guard restartable else {
            let error = await #expect(throws: TransportError.self) { try await transport.send(request, body: .stream(stream)) }
            #expect(error?.kind != .cancelled)
            #expect(server.uploads.count == 1)
            return
        }
        let response = try await transport.send(request, body: .stream(stream))
        #expect(response.status == 200)
        #expect(response.body.data.map { String(decoding: $0, as: UTF8.self) } == "\(size)")
        let seen = server.uploads
        #expect(seen.count == 2, "the upload was sent \(seen.count) time(s)")
        #expect(seen.last?.bytes == Int64(size) && seen.last?.intact == true, "the resent body: \(String(describing: seen.last))")
    }
}
#endif
