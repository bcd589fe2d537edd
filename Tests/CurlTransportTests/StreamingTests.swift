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
        let written = Locked<Int64>(0)
        let server = try LoopbackHTTPServer(handler: TestHandlers.patternDownload(pattern, count: total) { offset in
            written.withLock { $0 = offset }
        })
        defer { server.stop() }
        let response = try await CurlTransport.forTests().send(
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
        #expect(written.value < 64 * 1024 * 1024, "the server ran \(written.value) bytes ahead of a stalled reader")
    }
}
