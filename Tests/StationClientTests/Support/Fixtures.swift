import Foundation
import LoopbackHTTP
import TestSupport
import Transport
import Manifest
import Testing
@testable import StationClient
@_exported import TransportTestSupport

/// Collects log lines (the SDK never prints; tests check what it reports).
final class LogCollector: Sendable {
    private let lines = Locked<[LogEvent]>([])
    var handler: LogHandler { { event in self.lines.withLock { $0.append(event) } } }
    var messages: [String] { lines.withLock { $0.map(\.message) } }
}

enum Fixture {
    static func temporaryDirectory() throws -> URL {
        try TemporaryDirectory(prefix: "station-client-tests").url
    }

    /// Runs `body` with a new empty directory, removed with what is in it however `body` ends.
    @discardableResult
    static func withTemporaryDirectory<Value>(_ body: (URL) throws -> Value) throws -> Value {
        let directory = try TemporaryDirectory(prefix: "station-client-tests")
        defer { directory.cleanup() }
        return try body(directory.url)
    }

    /// Runs `body` with a new empty directory, removed with what is in it however `body` ends,
    /// cancellation included.
    @discardableResult
    static func withTemporaryDirectory<Value>(_ body: (URL) async throws -> Value) async throws -> Value {
        let directory = try TemporaryDirectory(prefix: "station-client-tests")
        defer { directory.cleanup() }
        return try await body(directory.url)
    }

    /// Expects `directory` to hold nothing: no partial download, no temporary file left behind.
    static func expectEmpty(_ directory: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, sourceLocation: sourceLocation)
    }

    static func drive(_ name: String, size: Int) -> DriveFileMetadata {
        DriveFileMetadata(filename: name, mimeType: "application/octet-stream", sizeBytes: size, createdAt: 1_700_000_000,
                          modifiedAt: 1_700_000_000, path: "/")
    }

    /// Makes `url` a file of `byteCount` bytes without writing them (sparse): a file past a size
    /// limit, cheaply. An existing file is cut or extended to that size.
    static func sparseFile(at url: URL, byteCount: some BinaryInteger) throws {
        if !FileManager.default.fileExists(atPath: url.path) {
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(byteCount))
    }
}

/// A social client's own metadata type.
struct FramePost: Codable, Sendable, Equatable {
    var caption: String
    var likes: Int
}
