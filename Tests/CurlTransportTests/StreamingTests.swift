#if canImport(CCurl)
import CurlTransport
import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// Streaming behaviour beyond the transport conformance suite (ConformanceTests, which moves
/// 100 MiB both ways): back-pressure on a reader that stops, which needs waiting to observe.
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
}
#endif
