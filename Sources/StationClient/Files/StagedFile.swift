import Foundation
import Sodium
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

    /// Renames `temporary` onto `destination` in one step (rename(2) replaces an existing file).
    ///
    /// - Throws: ``StationClientError`` `.refused` when `destination` cannot be written.
    static func moveIntoPlace(_ temporary: URL, at destination: URL, operation: String) throws {
        guard rename(temporary.path, destination.path) == 0 else {
            throw StationClientError(.refused, operation: operation,
                                     message: "cannot move the download to \(destination.path): errno \(errno)")
        }
    }
}
