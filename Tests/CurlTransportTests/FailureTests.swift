#if canImport(CCurl)
import LoopbackHTTP
import TestSupport
import CurlTransport
import Foundation
import Testing
import Transport
import TransportTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// CurlTransport's configured time limits, beyond the transport conformance suite (ConformanceTests,
/// which covers per-request limits, cancellation, broken connections and unreachable hosts):
/// `Configuration.idleTimeout` / `requestTimeout` / `connectTimeout` apply when a request sets no
/// limits. Limits are short (1–2 s) and the assertions only check that the right failure happens.
@Suite("CurlTransport: failures")
struct FailureTests {
    @Test func configuredIdleTimeout() async throws {
        let closed = Locked(false)
        let server = try LoopbackHTTPServer(handler: TestHandlers.stalling(closed: closed))
        defer { server.stop() }
        let url = server.url("/stall")
        let error = await transportError {
            _ = try await CurlTransport.forTests(idle: 1).send(HTTPRequest(method: .get, url: url))
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.url == url)
        #expect(await eventually { closed.value })
    }

    /// A body that keeps trickling never trips the idle limit, but the total limit still ends it.
    @Test func configuredTotalTimeoutForOrdinaryRequests() async throws {
        #expect(await errorKindOfATrickle(CurlTransport.forTests(idle: 60, total: 1.5)) == .timedOut)
    }

    /// Streamed and file transfers keep only the idle limit by default: this one outlives the
    /// 1 s total limit while bytes keep moving.
    @Test func streamingTransfersHaveNoTotalLimitByDefault() async throws {
        #expect(try await streamedTrickle(CurlTransport.forTests(idle: 60, total: 1)) == Data(repeating: 0x43, count: 25))
        // The same request with explicit limits is cut off: the conformance case totalTimeoutOfAStream.
    }

    #if os(Linux)
    /// A listener whose accept queue is full never completes the handshake (Linux drops the SYN),
    /// so the connect limit fires.
    @Test func connectTimeout() async throws {
        #expect(try await errorKindConnectingToAFullListener(CurlTransport.forTests(connect: 1)) == .timedOut)
    }
    #endif
}
#endif
