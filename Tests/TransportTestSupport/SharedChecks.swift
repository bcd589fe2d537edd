import Foundation
import LoopbackHTTP
import Transport

// Checks of a transport's *configured* defaults, which the conformance suite cannot make (it runs
// against a transport as given): each transport's tests build it with short defaults and run these.

/// The kind of error `transport` fails with on a plain request whose body trickles for 100 s
/// without ever idling (its configured total limit must end it: `.timedOut`); `nil` if it does not fail.
package func errorKindOfATrickle(_ transport: any HTTPTransport) async -> TransportError.Kind? {
    guard let server = try? LoopbackHTTPServer(handler: TestHandlers.trickle(0x42, count: 1000, declared: 100_000)) else { return nil }
    defer { server.stop() }
    return await transportError { _ = try await transport.send(HTTPRequest(method: .get, url: server.url("/slow"))) }?.kind
}

/// What `transport` reads from a streamed response that trickles 25 bytes over 2.5 s, sent with
/// no per-request limits (a transport keeps only its idle limit for streams, so the whole
/// `0x43` × 25 arrives even when its configured total limit is shorter).
package func streamedTrickle(_ transport: any HTTPTransport) async throws -> Data? {
    let server = try LoopbackHTTPServer(handler: TestHandlers.trickle(0x43, count: 25, declared: 25))
    defer { server.stop() }
    let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/trickle")), body: .none,
                                            options: TransferOptions(response: .stream))
    guard case .stream(let stream) = response.body else { return nil }
    return try await stream.collect(upTo: 100)
}

/// A `total`-byte pattern download being received as a stream, for back-pressure checks: the
/// server (stop it when done), how far it has written, the stream's iterator, and whether the
/// first chunk read matched the pattern.
package struct StreamedDownload {
    package let server: LoopbackHTTPServer
    package let written: Locked<Int64>
    package var iterator: HTTPBodyStream.AsyncIterator
    package let firstChunkMatches: Bool
    package let firstChunkCount: Int
}

/// Starts a `total`-byte download of `pattern` through `transport` as a stream and reads its first
/// chunk; `nil` when the body is not a stream.
package func startStreamedDownload(_ transport: any HTTPTransport, pattern: PatternBytes,
                                   total: Int64) async throws -> StreamedDownload? {
    let written = Locked<Int64>(0)
    let server = try LoopbackHTTPServer(handler: TestHandlers.patternDownload(pattern, count: total) { offset in
        written.withLock { $0 = offset }
    })
    let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/big")), body: .none,
                                            options: TransferOptions(response: .stream))
    guard case .stream(let stream) = response.body else {
        server.stop()
        return nil
    }
    var iterator = stream.makeAsyncIterator()
    let first = try await iterator.next()
    return StreamedDownload(server: server, written: written, iterator: iterator,
                            firstChunkMatches: first.map { pattern.matches($0, offset: 0) } == true,
                            firstChunkCount: first?.count ?? 0)
}

#if os(Linux)
/// The kind of error `transport` fails with connecting to a listener whose accept queue is full
/// (Linux drops the SYN, so the handshake never completes and the configured connect limit must
/// fire: `.timedOut`).
package func errorKindConnectingToAFullListener(_ transport: any HTTPTransport) async throws -> TransportError.Kind? {
    let listener = try FullListener()
    defer { listener.close() }
    guard let url = URL(string: "http://127.0.0.1:\(listener.port)/") else { return nil }
    return await transportError { _ = try await transport.send(HTTPRequest(method: .get, url: url)) }?.kind
}
#endif
