#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How the package makes a written file durable before it is renamed (or linked) into
/// place: every write-then-rename (key store, caches, sealed files, downloads) flushes through it.
///
/// On Darwin `fsync` only hands the data to the drive, which may keep it in its cache across a
/// power loss; `fcntl(F_FULLFSYNC)` asks the drive to write it out. Where a file system does not
/// support that (some network and FUSE file systems), `fsync` is the fallback. Elsewhere `fsync` is
/// the full flush.
package enum DurableWrite {
    /// The platform's full flush: `fcntl(F_FULLFSYNC)` on Darwin; `nil` where `fsync` is it.
    package static let platformFullFlush: (@Sendable (Int32) -> Int32)? = {
        #if canImport(Darwin)
        return { fcntl($0, F_FULLFSYNC) }
        #else
        return nil
        #endif
    }()

    /// Flushes `descriptor`'s data (a file's, or a directory's entries) to stable storage.
    ///
    /// - Parameters:
    ///   - fullFlush: the platform's full flush, tried first (tests pass one that fails);
    ///   - fsync: the fallback, and the flush where there is no full one.
    /// - Returns: 0 on success, -1 with `errno` set otherwise (as `fsync(2)`).
    package static func flush(_ descriptor: Int32, fullFlush: ((Int32) -> Int32)? = platformFullFlush,
                              fsync: (Int32) -> Int32 = { systemFsync($0) }) -> Int32 {
        if let fullFlush, fullFlush(descriptor) != -1 { return 0 }
        return fsync(descriptor)
    }

    /// Puts a flushed file in place: renames `temporary` onto `destination` (replacing what is there
    /// in one step), then flushes the directory's entries, so that after a crash the destination
    /// holds the new file or the old one, never a part of either.
    ///
    /// - Returns: 0 on success, -1 with `errno` set when the rename failed (as `rename(2)`).
    package static func rename(_ temporary: String, onto destination: String) -> Int32 {
        guard systemRename(temporary, destination) == 0 else { return -1 }
        let slash = destination.lastIndex(of: "/")
        flushDirectory(slash.map { $0 == destination.startIndex ? "/" : String(destination[..<$0]) } ?? ".")
        return 0
    }

    /// Flushes a directory's entries so that a rename or link in it survives a crash (best effort).
    package static func flushDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = flush(descriptor)
        _ = close(descriptor)
    }
}

/// `fsync(2)`, under a name that `DurableWrite.flush`'s parameter does not shadow.
private func systemFsync(_ descriptor: Int32) -> Int32 { fsync(descriptor) }

/// `rename(2)`, under a name that `DurableWrite.rename` does not shadow.
private func systemRename(_ old: String, _ new: String) -> Int32 { rename(old, new) }
