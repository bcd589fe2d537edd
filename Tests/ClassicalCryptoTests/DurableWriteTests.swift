import Foundation
import Testing

@testable import ClassicalCrypto

/// The durable flush and rename every write-then-rename goes through: the platform's flush for
/// what the caller needs first (`F_BARRIERFSYNC` for ordering, `F_FULLFSYNC` for surviving a power
/// cut, on Darwin), `fsync` when that fails or does not exist; the rename replaces the destination
/// in one step.
@Suite("Durable writes")
struct DurableWriteTests {
    /// The choice, by value on every platform: the numbers are `<sys/fcntl.h>`'s, and where the
    /// Darwin module builds they are its constants.
    @Test func eachNeedHasItsDarwinCommand() {
        #expect(DurableWrite.darwinCommand(for: .ordering) == .barrierFsync)
        #expect(DurableWrite.darwinCommand(for: .powerLoss) == .fullFsync)
        #expect(DurableWrite.DarwinFlushCommand.barrierFsync.rawValue == 85)
        #expect(DurableWrite.DarwinFlushCommand.fullFsync.rawValue == 51)
        #if canImport(Darwin)
        #expect(DurableWrite.DarwinFlushCommand.barrierFsync.rawValue == F_BARRIERFSYNC)
        #expect(DurableWrite.DarwinFlushCommand.fullFsync.rawValue == F_FULLFSYNC)
        #endif
    }

    @Test(arguments: DurabilityNeed.allCases)
    func thePlatformFlushGetsTheCommandForTheNeed(_ need: DurabilityNeed) {
        let commands = Recorder<DurableWrite.DarwinFlushCommand>()
        let fsyncs = Recorder<Int32>()
        let result = DurableWrite.flush(7, need: need, platform: { descriptor, command in
            #expect(descriptor == 7)
            commands.add(command)
            return 0
        }, fsync: { fsyncs.add($0); return 0 })
        #expect(result == 0)
        #expect(commands.seen == [DurableWrite.darwinCommand(for: need)])
        #expect(fsyncs.seen.isEmpty, "a flush the platform did needs no fsync")
    }

    @Test(arguments: DurabilityNeed.allCases)
    func fallsBackToFsyncWhenThePlatformFlushFails(_ need: DurabilityNeed) {
        let fsyncs = Recorder<Int32>()
        let result = DurableWrite.flush(7, need: need, platform: { _, _ in -1 }, fsync: { descriptor in
            fsyncs.add(descriptor)
            return 0
        })
        #expect(result == 0)
        #expect(fsyncs.seen == [7])
    }

    @Test func anFsyncFailureIsReported() {
        #expect(DurableWrite.flush(7, need: .powerLoss, platform: nil, fsync: { _ in -1 }) == -1)
        #expect(DurableWrite.flush(7, need: .ordering, platform: { _, _ in -1 }, fsync: { _ in -1 }) == -1)
    }

    /// The platform's own flush on a real file, for each need; Linux has only `fsync`, for both.
    @Test func flushesARealFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("durable-\(UUID().uuidString)").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        try #require(descriptor >= 0)
        defer {
            close(descriptor)
            unlink(path)
        }
        for need in DurabilityNeed.allCases {
            #expect(DurableWrite.flush(descriptor, need: need) == 0)
        }
        #if canImport(Darwin)
        #expect(DurableWrite.platformFlush != nil)
        #else
        #expect(DurableWrite.platformFlush == nil)
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
        #expect(DurableWrite.rename(temporary, onto: destination, need: .ordering) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("new".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["item"])
        #expect(DurableWrite.rename(temporary, onto: destination) == -1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("new".utf8))
    }

    /// What a flush was handed, in order (the closures run synchronously, on the test's thread).
    private final class Recorder<Value>: @unchecked Sendable {
        var seen: [Value] = []
        func add(_ value: Value) { seen.append(value) }
    }
}
