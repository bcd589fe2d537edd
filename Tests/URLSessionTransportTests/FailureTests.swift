import LoopbackHTTP
import TestSupport
import URLSessionTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Transport
import TransportTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Timeouts, cancellation, broken connections and unreachable hosts. Limits are short (1–2 s) and
/// the assertions only check that the right failure happens, not how fast.
@Suite("URLSessionTransport: failures")
struct FailureTests {
    /// A body that keeps trickling never trips the idle limit, but the total limit still ends it.
    @Test func totalTimeoutForOrdinaryRequests() async throws {
        #expect(await errorKindOfATrickle(URLSessionTransport.forTests(idle: 60, total: 1.5)) == .timedOut)
    }

    /// Streamed and file transfers keep only the idle limit by default: this one outlives the
    /// 1 s total limit while bytes keep moving.
    @Test func streamingTransfersHaveNoTotalLimitByDefault() async throws {
        #expect(try await streamedTrickle(URLSessionTransport.forTests(idle: 60, total: 1)) == Data(repeating: 0x43, count: 25))
        // The same request with explicit limits is cut off: the conformance case totalTimeoutOfAStream.
    }

    /// Cancelling while the body is on its way stops the upload. The body is a stream on Apple
    /// platforms; on Linux, where streams are spooled before sending, a large sparse file.
    @Test func cancellingMidUpload() async throws {
        let bytesAtServer = Locked<Int64>(0)
        let closed = Locked(false)
        let server = try LoopbackHTTPServer(handler: TestHandlers.countingUpload(into: bytesAtServer, closed: closed))
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let total: Int64 = 1 << 40  // never finishes on its own
        #if canImport(FoundationNetworking)
        let file = directory.file("sparse.bin")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        try handle.truncate(atOffset: UInt64(total))  // sparse: no disk used
        try handle.close()
        let body = HTTPRequestBody.file(file)
        #else
        let body = HTTPRequestBody.stream(HTTPBodyStream(length: total, PatternBytes(seed: 31).stream(count: total)))
        #endif
        let task = Task {
            try await URLSessionTransport.forTests().send(HTTPRequest(method: .post, url: server.url("/up")), body: body)
        }
        #expect(await eventually { bytesAtServer.value > 4 * 1024 * 1024 })
        task.cancel()
        let error = await transportError { _ = try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(await eventually { closed.value })
    }

    #if canImport(FoundationNetworking)
    /// Cancelling while a stream is still being spooled (Linux) stops it there, before anything is sent.
    @Test func cancellingWhileSpooling() async throws {
        let server = try LoopbackHTTPServer(handler: TestHandlers.ok())
        defer { server.stop() }
        let produced = Locked<Int64>(0)
        let chunk = Data(count: 64 * 1024)
        // Signalled by the producer itself once 4 MiB are spooled, so the test waits for that
        // however slowly a busy machine runs it.
        let (spooling, reached) = AsyncStream<Void>.makeStream()
        // Declared at 1 GiB, not endless: even if the cancellation were missed, the spool file
        // (unlinked, so invisible to `du`) cannot fill the disk under the other tests.
        let body = HTTPBodyStream(length: 1 << 30) {
            // A producer that lets other tasks run, as a real one reading a file or a socket does.
            await Task.yield()
            if produced.withLock({ $0 += Int64(chunk.count); return $0 }) >= 4 * 1024 * 1024 { reached.finish() }
            return chunk
        }
        let task = Task {
            try await URLSessionTransport.forTests().send(HTTPRequest(method: .put, url: server.url("/s")), body: .stream(body))
        }
        for await _ in spooling {}
        task.cancel()
        let error = await transportError { _ = try await task.value }
        #expect(error?.kind == .cancelled)
        #expect(server.statistics.requestsReceived == 0)
    }
    #endif

    #if os(Linux)
    /// A listener whose accept queue is full never completes the handshake (Linux drops the SYN),
    /// so the connect limit fires.
    @Test func connectTimeout() async throws {
        #expect(try await errorKindConnectingToAFullListener(URLSessionTransport.forTests(idle: 1)) == .timedOut)
    }
    #endif
}
