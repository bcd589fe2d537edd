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
    /// a killed process's leftover: the versions that staged uploads locked each file right after
    /// creating it, so only a file younger than this may be one of theirs still being made.
    static let unlockedUploadAge: TimeInterval = 60

    /// The prefix of an upload staging file of earlier versions (a publish now stages
    /// nothing), followed by 16 hex digits: what ``removeStaleUploads(in:olderThan:)`` sweeps.
    static let uploadPrefix = "cipher-upload-"

    /// Removes what a process of an earlier version, killed mid-upload, left in `directory`: the
    /// upload staging files (`cipher-upload-<16 hex>` only) that no process holds a lock on and that have not changed
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

    /// Renames `temporary` onto `destination` in one step (``DurableWrite/rename(_:onto:need:)``: an
    /// existing file is replaced, and the directory flushed). Ordering is the need: a download
    /// lost to a power cut is fetched again, never half-written.
    ///
    /// - Throws: ``StationClientError`` `.localFile` when `destination` cannot be written.
    static func moveIntoPlace(_ temporary: URL, at destination: URL, operation: String) throws {
        guard DurableWrite.rename(temporary.path, onto: destination.path, need: .ordering) == 0 else {
            throw StationClientError(.localFile, operation: operation,
                                     message: "cannot move the download to \(destination.path): errno \(errno)")
        }
    }
}
