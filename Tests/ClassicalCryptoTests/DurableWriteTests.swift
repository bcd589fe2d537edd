import Foundation
import Testing

@testable import ClassicalCrypto

/// The durable flush and rename every write-then-rename goes through: the platform's full flush
/// first (`F_FULLFSYNC` on Darwin), `fsync` when that fails or does not exist; the rename replaces
/// the destination in one step.
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

    /// The rename replaces what is at the destination whole and leaves no temporary file; a rename
    /// that cannot happen reports -1 and changes nothing.
    @Test func renameReplacesTheDestinationInOneStep() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("item").path
        let temporary = directory.appendingPathComponent("item.tmp").path
        try Data("old".utf8).write(to: URL(fileURLWithPath: destination))
        try Data("new".utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(DurableWrite.rename(temporary, onto: destination) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["item"])
        #expect(DurableWrite.rename(temporary, onto: destination) == -1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("new".utf8))
    }

    private final class Counter: @unchecked Sendable {
        var seen: [Int32] = []
        func add(_ descriptor: Int32) { seen.append(descriptor) }
    }
}
