import Foundation
import Testing

@testable import ClassicalCrypto

/// The one durable flush every write-then-rename goes through: the platform's full flush first
/// (`F_FULLFSYNC` on Darwin), `fsync` when that fails or does not exist.
@Suite("Durable writes")
struct DurableWriteTests {
    @Test func fallsBackToFsyncWhenTheFullFlushFails() {
        let fsyncs = Counter()
        let result = DurableWrite.flush(7, fullFlush: { _ in -1 }, fsync: { descriptor in
            fsyncs.add(descriptor)
            return 0
        })
        #expect(result == 0)
        #expect(fsyncs.seen == [7])
    }

    @Test func aSuccessfulFullFlushIsEnough() {
        let fsyncs = Counter()
        #expect(DurableWrite.flush(7, fullFlush: { _ in 0 }, fsync: { fsyncs.add($0); return 0 }) == 0)
        #expect(fsyncs.seen.isEmpty)
    }

    @Test func anFsyncFailureIsReported() {
        #expect(DurableWrite.flush(7, fullFlush: nil, fsync: { _ in -1 }) == -1)
    }

    /// The platform's own flush on a real file; Linux has no full flush of its own.
    @Test func flushesARealFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        #expect(DurableWrite.flush(descriptor) == 0)
        #if canImport(Darwin)
        #expect(DurableWrite.platformFullFlush != nil)
        #else
        #expect(DurableWrite.platformFullFlush == nil)
        #endif
    }

    private final class Counter: @unchecked Sendable {
        var seen: [Int32] = []
        func add(_ descriptor: Int32) { seen.append(descriptor) }
    }
}
