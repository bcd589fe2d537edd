import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// The one request-body pipe both transports use: CurlTransport reads it without blocking (libcurl's
/// read callback pauses), URLSessionTransport with blocking reads on its body thread (Darwin's
/// bound-stream pump). Its promises are checked here, in both reading modes.
@Suite("Transport: request body pipe")
struct RequestBodyPipeTests {
    typealias Failures = Locked<[TransportError.Kind]>

    /// How a read ended: `.end`, `.failed` (the kind is in the failures) or bytes.
    enum Last: Equatable {
        case end, failed, other
    }

    /// Reads the pipe to its end with blocking reads (`idle` seconds at most each; no limit by
    /// default, so a producer task that a loaded test pool starts late is not taken for a stalled
    /// one) on a thread of its own, as URLSession's body thread does.
    static func drain(_ pipe: RequestBodyPipe, idle: TimeInterval? = nil) async -> (bytes: [UInt8], last: Last) {
        await withCheckedContinuation { continuation in
            Thread {
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 7000)
                while true {
                    let result = buffer.withUnsafeMutableBytes { pipe.read(into: $0, idleLimit: idle) }
                    switch result {
                    case .bytes(let count): bytes += buffer[0..<count]
                    case .end: return continuation.resume(returning: (bytes, .end))
                    case .failed: return continuation.resume(returning: (bytes, .failed))
                    case .wouldBlock: return continuation.resume(returning: (bytes, .other))
                    }
                }
            }.start()
        }
    }

    static func pipe(length: Int64?, failures: Failures) -> RequestBodyPipe {
        RequestBodyPipe(declaredLength: length, highWater: 16 * 1024) { failure in
            failures.withLock { $0.append(failure.kind) }
        }
    }

    /// A pipe fed by a producer that stalls for a minute before ending its stream.
    static func stalledPipe(failures: Failures) -> RequestBodyPipe {
        let pipe = Self.pipe(length: nil, failures: failures)
        pipe.start(HTTPBodyStream(length: nil) {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            return nil
        })
        return pipe
    }

    @Test func deliversEveryByteInOrder() async {
        let pattern = PatternBytes(seed: 71)
        let failures = Failures([])
        let pipe = Self.pipe(length: 1_000_000, failures: failures)
        pipe.start(HTTPBodyStream(length: 1_000_000, pattern.stream(count: 1_000_000, chunkSize: 9000)))
        let (bytes, last) = await Self.drain(pipe)
        #expect(last == .end)
        #expect(bytes.count == 1_000_000)
        #expect(pattern.matches(Data(bytes), offset: 0))
        #expect(failures.value.isEmpty)
    }

    /// A stream longer or shorter than declared, or one that throws, fails instead of sending a
    /// body that disagrees with its `Content-Length`.
    @Test func streamsMustKeepTheirWord() async {
        struct ProducerFailure: Error {}
        let cases: [(String, HTTPBodyStream)] = [
            ("short", HTTPBodyStream(length: 1000, HTTPBodyStream(Data(count: 900), chunkSize: 100))),
            ("long", HTTPBodyStream(length: 1000, HTTPBodyStream(Data(count: 1100), chunkSize: 100))),
            ("failing", HTTPBodyStream(length: 1000) { throw ProducerFailure() }),
        ]
        for (name, stream) in cases {
            let failures = Failures([])
            let pipe = Self.pipe(length: 1000, failures: failures)
            pipe.start(stream)
            let (bytes, last) = await Self.drain(pipe)
            #expect(last == .failed, "\(name)")
            #expect(bytes.count < 1000, "\(name): the last byte is held back until the stream ends")
            #expect(failures.value == [.requestBodyFailed], "\(name)")
        }
    }

    /// A producer that stalls longer than the idle limit fails the read instead of blocking forever.
    @Test func stalledProducerTimesOut() async {
        let failures = Failures([])
        let pipe = Self.stalledPipe(failures: failures)
        let (_, last) = await Self.drain(pipe, idle: 0.2)
        #expect(last == .failed)
        #expect(failures.value == [.timedOut])
        pipe.close()
    }

    /// Closing the pipe wakes a blocked read.
    @Test func closeWakesTheReader() async {
        let pipe = Self.stalledPipe(failures: Failures([]))
        async let drained = Self.drain(pipe, idle: nil)
        try? await Task.sleep(nanoseconds: 50_000_000)
        pipe.close()
        #expect(await drained.last == .failed)
    }

    /// Read without blocking, as libcurl's read callback does: an empty pipe answers `.wouldBlock`
    /// and calls `resume` once the producer has added bytes or ended; the body arrives whole, in
    /// order, and the last byte waits for the end of the stream.
    @Test func nonBlockingReadsPauseAndResume() async {
        let pattern = PatternBytes(seed: 72)
        let failures = Failures([])
        let pipe = Self.pipe(length: 200_000, failures: failures)
        let resumed = Locked(0)
        pipe.start(HTTPBodyStream(length: 200_000, pattern.stream(count: 200_000, chunkSize: 9000))) {
            resumed.withLock { $0 += 1 }
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 7000)
        var paused = 0
        reading: while true {
            switch buffer.withUnsafeMutableBytes({ pipe.read(into: $0) }) {
            case .bytes(let count): bytes += buffer[0..<count]
            case .wouldBlock:
                paused += 1
                let before = paused
                #expect(await eventually(timeout: 30) { resumed.value >= before })
            case .end: break reading
            case .failed(let failure): Issue.record("failed: \(failure.message)"); break reading
            }
        }
        #expect(bytes == pattern.bytes(offset: 0, count: 200_000))
        #expect(resumed.value == paused)
        #expect(pipe.bytesConsumed == 200_000)
        #expect(failures.value.isEmpty)
    }

    /// A non-blocking reader learns of a broken stream through `resume` and the next read.
    @Test func nonBlockingReadSeesTheFailure() async {
        struct ProducerFailure: Error {}
        let pipe = RequestBodyPipe(declaredLength: nil, highWater: 16 * 1024)
        let resumed = Locked(false)
        let gate = Locked(false)
        pipe.start(HTTPBodyStream(length: nil) {
            while !gate.value { try await Task.sleep(nanoseconds: 10_000_000) }
            throw ProducerFailure()
        }) { resumed.withLock { $0 = true } }
        var buffer = [UInt8](repeating: 0, count: 100)
        guard case .wouldBlock = buffer.withUnsafeMutableBytes({ pipe.read(into: $0) }) else {
            Issue.record("expected the empty pipe to answer wouldBlock")
            return
        }
        gate.withLock { $0 = true }
        #expect(await eventually(timeout: 30) { resumed.value })
        guard case .failed(let failure) = buffer.withUnsafeMutableBytes({ pipe.read(into: $0) }) else {
            Issue.record("expected the failure")
            return
        }
        #expect(failure.kind == .requestBodyFailed)
        #expect(failure.underlying is ProducerFailure)
    }
}
