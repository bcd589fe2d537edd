import Foundation
import ClassicalCrypto
import PQCrypto
import ContentAddressing
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file (a download, a key-store item) staged under a temporary name beside its destination
/// and moved onto it only once complete and verified, so the destination is always either its
/// old self or the whole new file.
enum StagedFile {
    /// A fresh hidden name in `destination`'s directory (short, whatever `destination` is called).
    static func temporary(beside destination: URL, suffix: String) -> URL {
        URL(fileURLWithPath: TemporaryFileName.path(beside: destination.path, suffix: suffix))
    }

    /// What a download into a file the app opened stages its bytes beside, in `directory` (the
    /// client's temporary directory): ``temporary(beside:suffix:)`` of it is
    /// `.cipher-download.<16 hex>.<suffix>`, never a name beside a path of the app's.
    static func openFileDownload(in directory: URL) -> URL {
        directory.appendingPathComponent("cipher-download")
    }

    /// How old a staging file or a download's partial must be (since its last change) before a
    /// later process removes it as the leftover of one that was killed: a day, far longer than
    /// any live transfer leaves its file untouched.
    static let staleAge: TimeInterval = 86_400

    /// How old an upload staging file no process holds a lock on must be before it is removed as
    /// a killed process's leftover: the lock comes right after the file's creation, so only a file
    /// younger than this may be a live upload not yet locked (or one of a version before the lock).
    static let unlockedUploadAge: TimeInterval = 60

    /// The prefix of an upload's staging file in the temporary directory, followed by 16 hex digits.
    static let uploadPrefix = "cipher-upload-"

    /// A fresh upload staging file name in `directory`: `cipher-upload-<16 hex>`.
    static func upload(in directory: URL) -> URL {
        directory.appendingPathComponent(uploadPrefix + Hex.encode(SecureRandom.bytes(count: 8)))
    }

    /// Runs `body` with an upload's staging file, which it owns from the file's creation:
    /// the file is created (empty, readable by its owner only) in `directory` before `body` runs
    /// and removed when `body` returns or throws, cancellation included, whoever still holds its
    /// URL (a transport can keep a request's parts alive after the call was cancelled). While it
    /// exists it is registered in `uploads`, so a process that must exit before its
    /// tasks unwind removes it there, and locked (`flock`), so no other process takes it for a
    /// leftover. First, the leftovers of killed processes in `directory` are removed
    /// (``removeStaleUploads(in:olderThan:)``).
    ///
    /// - Throws: ``StationClientError`` `.localFile` when the file cannot be created,
    ///   `.cancelled` when the process is exiting (``StagedUploads/removeAllBeforeExit()``),
    ///   and whatever `body` throws.
    static func withUpload<Result>(
        in directory: URL, registeredIn uploads: StagedUploads, operation: String, isolation: isolated (any Actor)? = #isolation,
        _ body: (URL) async throws -> Result
    ) async throws -> Result {
        removeStaleUploads(in: directory)
        let staged = upload(in: directory)
        try uploads.create(staged, operation: operation)
        defer { uploads.remove(staged) }
        return try await body(staged)
    }

    /// Removes what a process killed mid-upload left in `directory`: the upload staging files
    /// (``upload(in:)``'s names only) that no process holds a lock on and that have not changed
    /// for `age` seconds, and the partial ciphertext that earlier versions wrote beside one
    /// (`.cipher-upload-<16 hex>.<16 hex>.partial`, never locked) after ``staleAge``. The kernel
    /// drops a dead process's lock, so a leftover is known as soon as its process is gone,
    /// whatever process later gets its pid. Never fails.
    static func removeStaleUploads(in directory: URL, olderThan age: TimeInterval = unlockedUploadAge) {
        removeStale(in: directory, olderThan: age, unlockedOnly: true) { isUpload($0[...]) }
        removeStale(in: directory, olderThan: max(age, staleAge)) { name in
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0].isEmpty && isUpload(parts[1]) && isHex16(parts[2]) && parts[3] == "partial"
        }
    }

    private static func isUpload(_ name: Substring) -> Bool {
        name.hasPrefix(uploadPrefix) && isHex16(name.dropFirst(uploadPrefix.count))
    }

    /// Removes the partial downloads beside `destination` (``temporary(beside:suffix:)``'s names
    /// for it, with one of `suffixes`) that have not changed for `age` seconds. Never fails.
    static func removeStalePartials(beside destination: URL, suffixes: [String], olderThan age: TimeInterval = staleAge) {
        removeStale(in: destination.deletingLastPathComponent(), olderThan: age) { name in
            suffixes.contains { TemporaryFileName.isTemporary(name, beside: destination.path, suffix: $0) }
        }
    }

    /// Removes the regular files in `directory` whose names match and that have not changed for
    /// `age` seconds; with `unlockedOnly`, only those it can lock (`flock`, not waiting), holding
    /// the lock while it unlinks them.
    private static func removeStale(in directory: URL, olderThan age: TimeInterval, unlockedOnly: Bool = false,
                                    matching: (String) -> Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let cutoff = Date().addingTimeInterval(-age)
        for name in names where matching(name) {
            let url = directory.appendingPathComponent(name)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                  attributes[.type] as? FileAttributeType == .typeRegular,
                  let modified = attributes[.modificationDate] as? Date, modified < cutoff else { continue }
            guard unlockedOnly else {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            // Non-blocking: a FIFO put there must not hang the sweep.
            let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { _ = unlink(url.path) }
            _ = close(descriptor)
        }
    }

    private static func isHex16(_ text: Substring) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Checks that the staged `file` is the content `expected` names: its UnixFS CID (chunked as
    /// the station adds it) has the same multihash. `source` ("the station", "the gateway") says
    /// whose bytes they are in the error.
    ///
    /// - Throws: ``StationClientError`` `.integrity` when the file cannot be hashed or is other bytes.
    static func verify(_ file: URL, is expected: CID, source: String, operation: String) throws {
        let actual: CID
        do {
            actual = try UnixFS.cid(ofFileAt: file)
        } catch {
            throw StationClientError(.integrity, operation: operation, message: "cannot hash the download", underlying: error)
        }
        guard actual.multihash == expected.multihash else {
            throw StationClientError(.integrity, operation: operation, message: "\(source)'s bytes do not match the CID")
        }
    }

    /// Renames `temporary` onto `destination` in one step (``DurableWrite/rename(_:onto:)``: an
    /// existing file is replaced, and the directory flushed).
    ///
    /// - Throws: ``StationClientError`` `.localFile` when `destination` cannot be written.
    static func moveIntoPlace(_ temporary: URL, at destination: URL, operation: String) throws {
        guard DurableWrite.rename(temporary.path, onto: destination.path) == 0 else {
            throw StationClientError(.localFile, operation: operation,
                                     message: "cannot move the download to \(destination.path): errno \(errno)")
        }
    }
}

/// The upload staging files alive in the clients of one configuration (each owned by a
/// ``StagedFile/withUpload(in:registeredIn:operation:isolation:_:)`` scope, which creates, registers, and
/// removes it): what a process that exits without waiting for its tasks (the CLI's second Ctrl-C)
/// removes first with ``removeAllBeforeExit()``. Its owner is whoever made it (the CLI's `main`,
/// or each configuration by default); copies of a configuration share it.
///
/// Each file is held open with an exclusive `flock` until it is removed: what tells other
/// processes' ``StagedFile/removeStaleUploads(in:olderThan:)`` that it is alive.
package final class StagedUploads: Sendable {
    private struct State {
        /// The locked descriptor of each file, by path.
        var paths: [String: Int32] = [:]
        var exiting = false
    }

    private let state = Locked(State())

    package init() {}

    /// Creates `url` (empty, owner-only, not there before), locks it and registers it.
    ///
    /// - Throws: ``StationClientError`` `.localFile` when it cannot be created, `.cancelled` after
    ///   ``removeAllBeforeExit()``.
    func create(_ url: URL, operation: String) throws {
        try state.withLock { state in
            guard !state.exiting else {
                throw StationClientError(.cancelled, operation: operation, message: "the process is exiting")
            }
            let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw StationClientError.localFile("cannot create the staging file \(url.path): errno \(errno)", operation: operation)
            }
            // A file system without flock leaves it unlocked: then no sweep can lock it either,
            // and it is left alone.
            _ = flock(descriptor, LOCK_EX | LOCK_NB)
            state.paths[url.path] = descriptor
        }
    }

    /// Removes `url`, releases its lock and forgets it. Never fails.
    func remove(_ url: URL) {
        state.withLock { state in
            // Unlinked before the lock goes, so no sweep meets it unlocked.
            _ = unlink(url.path)
            if let descriptor = state.paths.removeValue(forKey: url.path) { _ = close(descriptor) }
        }
    }

    /// The staging files alive now (their paths).
    var live: Set<String> { state.withLock { Set($0.paths.keys) } }

    /// Removes every staging file alive in this process (the ciphertext is written into the
    /// staging file itself) and refuses new ones: for a process about to exit without waiting for
    /// its tasks to unwind. Never fails.
    package func removeAllBeforeExit() {
        state.withLock { state in
            state.exiting = true
            for (path, descriptor) in state.paths {
                _ = unlink(path)
                _ = close(descriptor)
            }
            state.paths.removeAll()
        }
    }
}
