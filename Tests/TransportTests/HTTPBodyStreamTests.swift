import Foundation
import Testing
import Transport

@Suite("Transport: HTTPBodyStream")
struct HTTPBodyStreamTests {
    @Test func chunksInMemoryBytes() async throws {
        let data = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0) })
        let stream = HTTPBodyStream(data, chunkSize: 300)
        #expect(stream.length == 1000)
        var sizes: [Int] = []
        var joined = Data()
        for try await chunk in stream {
            sizes.append(chunk.count)
            joined.append(chunk)
        }
        #expect(sizes == [300, 300, 300, 100])
        #expect(joined == data)
        // Single pass: the source is used up.
        #expect(try await stream.collect(upTo: 10) == Data())
    }

    /// A restartable stream gives a fresh reading from the first byte however far this one got
    /// (each made by the function it was given); a one-shot stream has none.
    @Test func restartableStreamsStartOverAndOneShotsDoNot() async throws {
        let data = Data((0..<200).map { UInt8($0) })
        let stream = HTTPBodyStream(data, chunkSize: 64)
        #expect(stream.isRestartable)
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == data.prefix(64))
        let again = try #require(stream.restarted())
        #expect(again.length == 200)
        #expect(try await again.collect(upTo: 1000) == data)
        #expect(try await stream.collect(upTo: 1000) == data.dropFirst(64), "the first reading goes on where it stopped")

        let readings = Locked(0)
        let made = HTTPBodyStream(length: 3, restartable: {
            readings.withLock { $0 += 1 }
            let done = Locked(false)
            return { done.withLock { done in defer { done = true }; return done ? nil : Data([1, 2, 3]) } }
        })
        #expect(readings.value == 1)
        #expect(try await made.collect(upTo: 10) == Data([1, 2, 3]))
        #expect(try await made.restarted()?.collect(upTo: 10) == Data([1, 2, 3]))
        #expect(readings.value == 2)

        let oneShot = HTTPBodyStream(length: nil, next: { nil })
        #expect(!oneShot.isRestartable)
        #expect(oneShot.restarted() == nil)
        #expect(HTTPBodyStream(length: nil, AsyncStream<Data> { $0.finish() }).restarted() == nil)
    }

    @Test func wrapsAnAsyncSequenceAndSkipsEmptyChunks() async throws {
        let (source, continuation) = AsyncThrowingStream<Data, Error>.makeStream()
        for piece in [Data([1, 2]), Data(), Data([3]), Data(), Data([4, 5, 6])] { continuation.yield(piece) }
        continuation.finish()
        let stream = HTTPBodyStream(length: nil, source)
        #expect(stream.length == nil)
        var chunks: [Data] = []
        for try await chunk in stream { chunks.append(chunk) }
        #expect(chunks == [Data([1, 2]), Data([3]), Data([4, 5, 6])])
    }

    @Test func errorsPassThrough() async throws {
        struct Broken: Error {}
        let calls = CallCounter()
        let stream = HTTPBodyStream(length: nil) {
            if calls.next() > 2 { throw Broken() }
            return Data([0])
        }
        await #expect(throws: Broken.self) { _ = try await stream.collect(upTo: 100) }
    }

    @Test func collectEnforcesItsLimit() async throws {
        let stream = HTTPBodyStream(Data(count: 101), chunkSize: 10)
        await #expect(throws: HTTPBodyStreamError.tooLarge(limit: 100)) { _ = try await stream.collect(upTo: 100) }
        let exact = HTTPBodyStream(Data(count: 100), chunkSize: 7)
        #expect(try await exact.collect(upTo: 100).count == 100)
    }
}

/// Counts calls from a `@Sendable` closure.
final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}
