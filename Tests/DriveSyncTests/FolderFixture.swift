#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import DriveSync

/// A synced folder of its own (`folder`, at `root`) and a folder beside it (`outside`) that no
/// operation may touch, in a new temporary directory removed however the test ends.
struct FolderFixture {
    let base: URL
    let root: URL
    let outside: URL
    var folder: LocalFolder

    static func with(_ body: (inout FolderFixture) throws -> Void) throws {
        var fixture = try make()
        defer { fixture.remove() }
        try body(&fixture)
    }

    static func with(_ body: (inout FolderFixture) async throws -> Void) async throws {
        var fixture = try make()
        defer { fixture.remove() }
        try await body(&fixture)
    }

    private static func make() throws -> FolderFixture {
        let base = FileManager.default.temporaryDirectory.resolvingSymlinksInPath()
            .appendingPathComponent("drive-sync-folder-" + UUID().uuidString.prefix(8))
        let root = base.appendingPathComponent("folder", isDirectory: true)
        let outside = base.appendingPathComponent("outside", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        return FolderFixture(base: base, root: root, outside: outside, folder: LocalFolder(root: root))
    }

    /// Removes everything, made writable first (a test may have taken a folder's permissions away).
    private func remove() {
        if let enumerator = FileManager.default.enumerator(atPath: base.path) {
            while let name = enumerator.nextObject() as? String { _ = chmod(base.appendingPathComponent(name).path, 0o700) }
        }
        try? FileManager.default.removeItem(at: base)
    }

    func url(_ relative: String, in directory: URL? = nil) -> URL {
        (directory ?? root).appendingPathComponent(relative)
    }

    func write(_ relative: String, _ text: String, in directory: URL? = nil) throws {
        let url = url(relative, in: directory)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    func read(_ relative: String, in directory: URL? = nil) throws -> String {
        String(decoding: try Data(contentsOf: url(relative, in: directory)), as: UTF8.self)
    }

    /// Every entry under `directory`, relative, sorted (links not followed).
    func tree(of directory: URL) -> [String] {
        ((FileManager.default.enumerator(atPath: directory.path)?.allObjects as? [String]) ?? []).sorted()
    }

    /// Creates an empty file whose name is `name`'s bytes, as they are (no UTF-8 needed), in `directory`.
    static func createFile(named name: [UInt8], in directory: URL) throws {
        let path = (Array(directory.path.utf8) + [UInt8(ascii: "/")] + name + [0]).map { CChar(bitPattern: $0) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(descriptor >= 0, "cannot create the file: errno \(errno)")
        _ = close(descriptor)
    }

    /// Waits until a file changed now gets a later change time than any file changed before the
    /// call: change times have the file system's granularity (a clock tick, or a second), and a
    /// test that tells two versions apart by it must not make both within one.
    static func waitForTheNextFileTime(in folder: URL) throws {
        let probe = folder.deletingLastPathComponent().appendingPathComponent(".time-probe-" + UUID().uuidString.prefix(8))
        defer { try? FileManager.default.removeItem(at: probe) }
        func touch() throws -> Int64 {
            try Data("probe".utf8).write(to: probe)
            var status = stat()
            try #require(stat(probe.path, &status) == 0)
            return FileStamp(status).changed
        }
        let start = try touch()
        var tries = 0
        while try touch() <= start, tries < 5000 {
            usleep(1000)
            tries += 1
        }
    }
}
