import Foundation
@testable import StationClient
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The one write-then-rename of the key and cache stores: a failure at any step leaves the
/// destination as it was, no temporary file, and no open descriptor.
@Suite("AtomicFile: nothing left behind when a write fails")
struct AtomicFileTests {
    /// Files this process has open under `directory` (Linux: `/proc/self/fd`).
    static func openFiles(under directory: URL) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
            .filter { $0.hasPrefix(directory.resolvingSymlinksInPath().path) }
    }

    @Test func aFailedFlushClosesTheDescriptorAndKeepsTheOldFile() throws {
        try Fixture.withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("item")
            try AtomicFile.replace(file, with: Array("old".utf8), need: .ordering, operation: "test")
            var flushed: [Int32] = []
            let failingFlush: AtomicFile.Flush = { descriptor in
                flushed.append(descriptor)
                errno = EIO
                return -1
            }
            let error = #expect(throws: StationClientError.self) {
                try AtomicFile.replace(file, with: Array("new".utf8), need: .powerLoss, operation: "test", flush: failingFlush)
            }
            #expect(error?.kind == .keyStore)
            #expect(error?.message.contains("cannot flush") == true)
            #expect(flushed.count == 1)
            #if os(Linux)
            #expect(Self.openFiles(under: directory).isEmpty)
            #endif
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["item"])
            #expect(try Data(contentsOf: file) == Data("old".utf8))

            let created = directory.appendingPathComponent("params")
            #expect(throws: StationClientError.self) {
                _ = try AtomicFile.createExclusively(Array("p".utf8), at: created, need: .powerLoss, operation: "test", flush: failingFlush)
            }
            #if os(Linux)
            #expect(Self.openFiles(under: directory).isEmpty)
            #endif
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["item"])
        }
    }

    @Test func anInterruptedRenameKeepsTheOldFile() throws {
        try Fixture.withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("item")
            try AtomicFile.replace(file, with: Array("old".utf8), need: .ordering, operation: "test")
            struct Interrupted: Error {}
            #expect(throws: StationClientError.self) {
                try AtomicFile.replace(file, with: Array("new".utf8), need: .ordering, operation: "test", beforeRename: { _ in throw Interrupted() })
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["item"])
            #expect(try Data(contentsOf: file) == Data("old".utf8))
            #expect(try AtomicFile.createExclusively(Array("p".utf8), at: file, need: .ordering, operation: "test") == false)
            try AtomicFile.replace(file, with: Array("new".utf8), need: .ordering, operation: "test")
            #expect(try Data(contentsOf: file) == Data("new".utf8))
        }
    }
}
