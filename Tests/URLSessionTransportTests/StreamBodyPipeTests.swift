import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport
@testable import URLSessionTransport

/// The pipe that feeds a request body stream to Darwin's bound-stream pump thread. It is
/// platform-neutral, so its promises are checked here on every platform.
@Suite("URLSessionTransport: request body pipe")
struct StreamBodyPipeTests {
    typealias Failures = Locked<[TransportError.Kind]>

    /// Reads the pipe to its end on a thread of its own, as the pump does.
    static func drain(_ pipe: StreamBodyPipe) async -> (bytes: [UInt8], last: BodyRead) {
        await withCheckedContinuation { continuation in
            Thread {
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 7000)
                while true {
                    let result = buffer.withUnsafeMutableBytes { pipe.read(into: $0) }
                    guard case .bytes(let count) = result else {
                        continuation.resume(returning: (bytes, result))
                        return
                    }
                    bytes += buffer[0..<count]
                }
            }.start()
        }
    }

    static func pipe(length: Int64?, failures: Failures, idle: TimeInterval? = 30) -> StreamBodyPipe {
        StreamBodyPipe(declaredLength: length, highWater: 16 * 1024, idleLimit: idle) { kind, _, _ in
            failures.withLock { $0.append(kind) }
        }
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
        let pipe = Self.pipe(length: nil, failures: failures, idle: 0.2)
        pipe.start(HTTPBodyStream(length: nil) {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            return nil
        })
        let (_, last) = await Self.drain(pipe)
        #expect(last == .failed)
        #expect(failures.value == [.timedOut])
        pipe.close()
    }

    /// Closing the pipe wakes a blocked read.
    @Test func closeWakesTheReader() async {
        let failures = Failures([])
        let pipe = Self.pipe(length: nil, failures: failures, idle: nil)
        pipe.start(HTTPBodyStream(length: nil) {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            return nil
        })
        async let drained = Self.drain(pipe)
        try? await Task.sleep(nanoseconds: 50_000_000)
        pipe.close()
        #expect(await drained.last == .failed)
    }
}
