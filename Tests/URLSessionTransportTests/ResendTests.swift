import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LoopbackHTTP
import TestSupport
import Testing
import Transport
import TransportTestSupport
@testable import URLSessionTransport

/// URLSession asks for the request body again (`needNewBodyStream`) when it resends a request after
/// a recoverable error: a file or in-memory body and a restartable stream are given again from
/// their first byte, a one-shot stream refuses with a typed error; the pump that feeds Darwin's bound stream pair ends, closing
/// its output, on every way out; a background configuration is refused.
@Suite("URLSessionTransport: resending a body, the body pump, background configurations")
struct ResendTests {
    /// A server that drops the connection mid-exchange, on a connection reused from an earlier
    /// request: it takes the upload and closes without a byte of answer, as a server does that
    /// closed the pooled connection meanwhile (uvicorn after 5 s idle). URLSession (libcurl under
    /// FoundationNetworking) retries on a new connection and asks for the body again, which must
    /// start over from byte 0. (A server that cuts the body itself gives the client a send error,
    /// which libcurl does not retry.)
    @Test func uploadResentAfterTheServerDropsTheConnectionMidBody() async throws {
        let size = 512 * 1024  // under libcurl's 1 MiB threshold for `Expect: 100-continue`
        let pattern = PatternBytes(seed: 0x5E5E)
        let server = try FirstUploadDroppingServer(pattern: pattern)
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let file = directory.file("body.bin")
        try pattern.writeFile(file, count: Int64(size))

        let transport = URLSessionTransport.forTests()
        // The first request leaves a kept-alive connection in the pool; the upload reuses it.
        _ = try await transport.send(HTTPRequest(method: .get, url: server.url("/warm")))
        let response = try await transport.send(HTTPRequest(method: .put, url: server.url("/upload")), body: .file(file))
        #expect(response.status == 200)
        #expect(response.body.data.map { String(decoding: $0, as: UTF8.self) } == "\(size)")
        let seen = server.uploads
        #expect(seen.count == 2, "the upload was sent \(seen.count) time(s)")
        #expect(seen.last?.bytes == Int64(size) && seen.last?.intact == true, "the resent body: \(String(describing: seen.last))")
    }

    /// Every request for a file body gets the whole file from its first byte, however far the
    /// stream handed out before had been read; that one is closed.
    @Test func fileBodyStartsOverForEveryRequest() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let file = directory.file("body.bin")
        let pattern = PatternBytes(seed: 7)
        try pattern.writeFile(file, count: 100_000)
        let request = HTTPRequest(method: .put, url: try #require(URL(string: "http://127.0.0.1:1/upload")))
        let supply = BodyStreamSupply(.file(try FileBodySource(url: file, request: request, onFailure: { _, _, _ in })))
        #expect(supply.length == 100_000)

        guard case .source(let first) = supply.next() else { Issue.record("no first stream"); return }
        var buffer = [UInt8](repeating: 0, count: 30_000)
        #expect(buffer.withUnsafeMutableBytes { first.read(into: $0) } == .bytes(30_000))
        for request in 2...3 {
            guard case .source(let again) = supply.next() else { Issue.record("request \(request) refused"); return }
            #expect(buffer.withUnsafeMutableBytes { first.read(into: $0) } == .failed, "the earlier stream is closed")
            #expect(Self.readAll(again) == pattern.data(offset: 0, count: 100_000), "request \(request)")
        }
        #expect(supply.requests == 3)
        supply.close()
        guard case .refused(let kind, _) = supply.next() else { Issue.record("answered after close"); return }
        #expect(kind == .requestBodyFailed)
    }

    @Test func inMemoryBodyIsGivenWholeEveryTime() {
        let supply = BodyStreamSupply(.memory(Data("hello".utf8)))
        for _ in 0..<3 {
            guard case .data(let data) = supply.next() else { Issue.record("refused"); return }
            #expect(data == Data("hello".utf8))
        }
    }

    /// A one-shot stream is handed out once; asked again, the transfer gets a typed error.
    @Test func oneShotStreamRefusesASecondRequest() {
        let pipe = Self.pipe()
        let supply = BodyStreamSupply(.stream(pipe, HTTPBodyStream(length: 5, next: { Data("hello".utf8) })))
        guard case .source = supply.next() else { Issue.record("no first stream"); return }
        guard case .refused(let kind, let message) = supply.next() else { Issue.record("a second stream was handed out"); return }
        #expect(kind == .requestBodyFailed)
        #expect(message.contains("restartable"))
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(buffer.withUnsafeMutableBytes { pipe.read(into: $0) } == .failed, "the refused stream is closed")
    }

    /// A restartable stream (every publish's multipart form) is read again from its first byte
    /// through a fresh pipe each time URLSession asks, however far the one before had been read;
    /// that one is closed. The bytes are what the first reading gives.
    @Test func restartableStreamStartsOverForEveryRequest() throws {
        let pattern = PatternBytes(seed: 9)
        let body = pattern.data(offset: 0, count: 300_000)
        let first = Self.pipe()
        let stream = HTTPBodyStream(body, chunkSize: 10_000)
        first.start(stream)
        let supply = BodyStreamSupply(.stream(first, stream))
        #expect(supply.length == 300_000)
        guard case .source(let reading) = supply.next() else { Issue.record("no first stream"); return }
        var buffer = [UInt8](repeating: 0, count: 1000)
        #expect(buffer.withUnsafeMutableBytes { reading.read(into: $0) } == .bytes(1000))
        for request in 2...3 {
            guard case .source(let again) = supply.next() else { Issue.record("request \(request) refused"); return }
            #expect(buffer.withUnsafeMutableBytes { reading.read(into: $0) } == .failed, "the earlier stream is closed")
            #expect(Self.readAll(again) == body, "request \(request)")
        }
        supply.close()
    }

    static func pipe() -> StreamBodyPipe {
        StreamBodyPipe(declaredLength: nil, highWater: 64 * 1024, idleLimit: 60, onFailure: { _, _, _ in })
    }

    /// The pump's output is full and nobody reads it (URLSession cancelled the task): the stop the
    /// transfer's cancellation runs (through the supply) ends the thread, which closes the output.
    @Test func cancelledUploadLeavesNoPumpThreadBlocked() async throws {
        let output = FullOutput(capacity: 8192)
        // An endless stream body, read through the supply's pipe (as a publish's is on Apple platforms).
        let pipe = Self.pipe()
        let stream = HTTPBodyStream(length: nil, next: { Data(count: 4096) })
        pipe.start(stream)
        let supply = BodyStreamSupply(.stream(pipe, stream))
        guard case .source(let body) = supply.next() else { Issue.record("no stream"); return }
        let pump = BoundStreamPump(source: body, output: output, chunkSize: 4096, eventWaitLimit: 3600)
        supply.onStopCurrent { pump.stop() }
        pump.start()
        #expect(await eventually(timeout: 60) { pump.phase == .waitingForSpace }, "the pump filled the output")
        supply.close()  // what URLSessionTransfer.fail(.cancelled, …) and didComplete do
        // The stop ends the pump's wait for an event that never comes (its safety net is an hour).
        let ended = pump.waitUntilFinished(timeout: 60)
        let closedByPump = output.closes.value > 0
        output.close()  // releases a thread a blocking write would hold (the bug), so the test ends
        #expect(ended, "the pump thread is still running: \(pump.phase)")
        #expect(closedByPump, "the pump closed its output")
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(buffer.withUnsafeMutableBytes { body.read(into: $0) } == .failed, "the supply closed the pump's source")
    }

    /// A reader that drains a small output bit by bit wakes the pump each time (no timer: its
    /// safety-net wait is set beyond the test's time limit), and the body arrives whole and in order.
    @Test func thePumpWakesOnTheReadersProgress() async throws {
        let output = DrainingOutput(capacity: 8192)
        let pump = BoundStreamPump(source: ChunkSource(chunks: 200), output: output, chunkSize: 4096, eventWaitLimit: 3600)
        pump.start()
        var received = [UInt8]()
        var closed = false
        let deadline = Date(timeIntervalSinceNow: 120)
        while !closed, Date() < deadline {
            let (bytes, isClosed) = output.drain()
            received += bytes
            closed = isClosed
            if bytes.isEmpty { try await Task.sleep(nanoseconds: 1_000_000) }
        }
        received += output.drain().bytes
        #expect(pump.waitUntilFinished(timeout: 60))
        #expect(received.count == 200 * ChunkSource.chunkSize)
        #expect(received.allSatisfy { $0 == 0x42 })
    }

    /// A body copied to its end closes the output too.
    @Test func completedPumpClosesItsOutput() async throws {
        let output = FullOutput(capacity: .max)
        let pump = BoundStreamPump(source: ChunkSource(chunks: 5), output: output, chunkSize: 4096)
        pump.start()
        #expect(pump.waitUntilFinished(timeout: 60))
        #expect(output.closes.value == 1)
        #expect(output.taken.value == 5 * ChunkSource.chunkSize)
    }

    /// A background configuration runs no data tasks and sends when the system chooses: refused
    /// with a typed error before anything is sent.
    @Test func backgroundConfigurationIsRefused() async throws {
        let transport = URLSessionTransport.forTests { $0.makeSessionConfiguration = { Self.backgroundConfiguration() } }
        let url = try #require(URL(string: "http://127.0.0.1:9/"))
        let error = await transportError { _ = try await transport.send(HTTPRequest(method: .get, url: url)) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("background") == true, "\(String(describing: error))")
        let probe = await transportError { _ = try await transport.presentedPublicKey(at: try #require(URL(string: "https://127.0.0.1:9/"))) }
        #expect(probe?.kind == .invalidRequest)
        #expect(SessionPool.refusal(of: .ephemeral) == nil && SessionPool.refusal(of: .default) == nil)
    }

    /// A configuration with a background identifier: Apple's `.background(withIdentifier:)`, which
    /// FoundationNetworking leaves out (but its `identifier` can be set).
    private static func backgroundConfiguration() -> URLSessionConfiguration {
        #if canImport(FoundationNetworking)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.identifier = "app.uploads"
        return configuration
        #else
        return .background(withIdentifier: "app.uploads")
        #endif
    }

    private static func readAll(_ source: any BlockingBodySource) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 8192)
        while case .bytes(let count) = buffer.withUnsafeMutableBytes({ source.read(into: $0) }) {
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }
}

/// A body source of `chunks` chunks of 4 KiB; `close()` makes every later read fail.
private final class ChunkSource: BlockingBodySource, Sendable {
    static let chunkSize = 4096
    let closed = Locked(false)
    private let remaining: Locked<Int>

    init(chunks: Int) { remaining = Locked(chunks) }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyRead {
        remaining.withLock { remaining -> BodyRead in
            guard !closed.value else { return .failed }
            guard remaining > 0 else { return .end }
            remaining -= 1
            let count = min(buffer.count, Self.chunkSize)
            for index in 0..<count { buffer[index] = 0x42 }
            return .bytes(count)
        }
    }

    func close() { closed.withLock { $0 = true } }
}

/// The output half of a bound stream pair whose reader has stopped: it takes `capacity` bytes, then
/// has no space, and a write into it blocks (as the pair's does) until it is closed.
private final class FullOutput: PumpOutput, @unchecked Sendable {
    let taken = Locked(0)
    let closes = Locked(0)
    private let capacity: Int
    private let condition = NSCondition()
    private var isClosed = false

    init(capacity: Int) { self.capacity = capacity }

    func open() {}

    var hasSpaceAvailable: Bool { taken.value < capacity }

    func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while !isClosed && taken.value >= capacity { condition.wait() }
        guard !isClosed else { return -1 }
        let count = min(length, capacity - taken.value)
        taken.withLock { $0 += count }
        return count
    }

    func close() {
        closes.withLock { $0 += 1 }
        condition.lock()
        isClosed = true
        condition.broadcast()
        condition.unlock()
    }

    // Its reader never takes a byte: only an interruption ends a wait.
    private var interrupted = false

    func waitForEvent(timeout: TimeInterval) {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !interrupted, condition.wait(until: deadline) {}
        interrupted = false
    }

    func interrupt() {
        condition.lock()
        interrupted = true
        condition.broadcast()
        condition.unlock()
    }
}

/// The output half of a bound stream pair with a small buffer that a reader drains: each drain is
/// an event (as the pair's space event), the only thing that ends the pump's wait.
private final class DrainingOutput: PumpOutput, @unchecked Sendable {
    let capacity: Int
    private let condition = NSCondition()
    private var buffered = [UInt8]()
    private var eventPending = false
    private(set) var closed = false

    init(capacity: Int) { self.capacity = capacity }

    func open() {}

    var hasSpaceAvailable: Bool {
        condition.lock()
        defer { condition.unlock() }
        return buffered.count < capacity
    }

    func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        let count = min(length, capacity - buffered.count)
        buffered.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
        return count
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    func waitForEvent(timeout: TimeInterval) {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !eventPending, condition.wait(until: deadline) {}
        eventPending = false
    }

    func interrupt() { signal() }

    /// Takes what is buffered (the reader's side) and tells the writer there is space.
    func drain() -> (bytes: [UInt8], closed: Bool) {
        condition.lock()
        let taken = buffered
        buffered.removeAll()
        let isClosed = closed
        condition.unlock()
        if !taken.isEmpty { signal() }
        return (taken, isClosed)
    }

    private func signal() {
        condition.lock()
        eventPending = true
        condition.broadcast()
        condition.unlock()
    }
}
