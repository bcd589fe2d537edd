import Foundation
import ClassicalCrypto
import PQCrypto
import ContentAddressing
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

    /// How old a staging file or a download's partial must be (since its last change) before a
    /// later process removes it as the leftover of one that was killed: a day, far longer than
    /// any live transfer leaves its file untouched.
    static let staleAge: TimeInterval = 86_400

    /// The prefix of an upload's staging file in the temporary directory, followed by 16 hex digits.
    static let uploadPrefix = "cipher-upload-"

    /// A fresh upload staging file in `directory`: `cipher-upload-<16 hex>`.
    static func upload(in directory: URL) -> URL {
        directory.appendingPathComponent(uploadPrefix + Hex.encode(SecureRandom.bytes(count: 8)))
    }

    /// Removes the upload staging files in `directory` (``upload(in:)``'s names only) that have
    /// not changed for `age` seconds: what a process killed mid-upload left behind. Never fails.
    static func removeStaleUploads(in directory: URL, olderThan age: TimeInterval = staleAge) {
        removeStale(in: directory, olderThan: age) { name in
            name.hasPrefix(uploadPrefix) && isHex16(name.dropFirst(uploadPrefix.count))
        }
    }

    /// Removes the partial downloads beside `destination` (``temporary(beside:suffix:)``'s names
    /// for it, with one of `suffixes`) that have not changed for `age` seconds. Never fails.
    static func removeStalePartials(beside destination: URL, suffixes: [String], olderThan age: TimeInterval = staleAge) {
        removeStale(in: destination.deletingLastPathComponent(), olderThan: age) { name in
            suffixes.contains { TemporaryFileName.isTemporary(name, beside: destination.path, suffix: $0) }
        }
    }

    private static func removeStale(in directory: URL, olderThan age: TimeInterval, matching: (String) -> Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        let cutoff = Date().addingTimeInterval(-age)
        for name in names where matching(name) {
            let url = directory.appendingPathComponent(name)
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                  attributes[.type] as? FileAttributeType == .typeRegular,
                  let modified = attributes[.modificationDate] as? Date, modified < cutoff else { continue }
            try? FileManager.default.removeItem(at: url)
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

    /// Renames `temporary` onto `destination` in one step (rename(2) replaces an existing file).
    ///
    /// - Throws: ``StationClientError`` `.localFile` when `destination` cannot be written.
    static func moveIntoPlace(_ temporary: URL, at destination: URL, operation: String) throws {
        guard rename(temporary.path, destination.path) == 0 else {
            throw StationClientError(.localFile, operation: operation,
                                     message: "cannot move the download to \(destination.path): errno \(errno)")
        }
    }
}
