#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What identifies one version of a file: device, inode, size, and modification and change
/// times. Streamed SecretBox compares it between passes to notice a file that changed under it
/// (`ctime` cannot be set back by an ordinary process, so a rewrite always shows).
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: (seconds: Int64, nanoseconds: Int64)
    var changed: (seconds: Int64, nanoseconds: Int64)

    static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
            && lhs.modified == rhs.modified && lhs.changed == rhs.changed
    }
}

/// An open file descriptor, closed on deinit, with the few POSIX calls the streamed SecretBox
/// (and the UnixFS CID of a file) needs. Errors carry the failing call, the path and `errno`.
package final class FileDescriptor {
    let descriptor: Int32
    let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { _ = close(descriptor) }

    /// Opens `path` for reading.
    package static func openForReading(_ path: String) throws(ClassicalCryptoError) -> FileDescriptor {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        let file = FileDescriptor(descriptor: descriptor, path: path)
        #if os(Linux)
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_SEQUENTIAL)
        #endif
        return file
    }

    /// Creates `path`, which must not exist yet, for writing, readable only by its owner.
    static func createExclusive(_ path: String) throws(ClassicalCryptoError) -> FileDescriptor {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        return FileDescriptor(descriptor: descriptor, path: path)
    }

    /// Opens `path`, an existing regular file (not a symbolic link), for writing from its start,
    /// emptied first.
    static func openForOverwriting(_ path: String) throws(ClassicalCryptoError) -> FileDescriptor {
        let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        return FileDescriptor(descriptor: descriptor, path: path)
    }

    /// The file's current identity (`fstat`).
    func identity() throws(ClassicalCryptoError) -> FileIdentity {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw .fileSystem(operation: "fstat", path: path, errno: errno)
        }
        #if canImport(Darwin)
        let modified = status.st_mtimespec, changed = status.st_ctimespec
        #else
        let modified = status.st_mtim, changed = status.st_ctim
        #endif
        return FileIdentity(
            device: UInt64(truncatingIfNeeded: status.st_dev), inode: UInt64(truncatingIfNeeded: status.st_ino),
            size: Int64(status.st_size),
            modified: (Int64(modified.tv_sec), Int64(modified.tv_nsec)),
            changed: (Int64(changed.tv_sec), Int64(changed.tv_nsec)))
    }

    /// Reads until `buffer` is full or the file ends; returns the byte count (short only at the end).
    package func readFully(into buffer: UnsafeMutableRawBufferPointer) throws(ClassicalCryptoError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let count = read(descriptor, base + filled, buffer.count - filled)
            if count > 0 {
                filled += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw .fileSystem(operation: "read", path: path, errno: errno)
            }
        }
        return filled
    }

    /// Writes all of `buffer`.
    func writeAll(_ buffer: UnsafeRawBufferPointer) throws(ClassicalCryptoError) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            let count = write(descriptor, base + written, buffer.count - written)
            if count >= 0 {
                written += count
            } else if errno != EINTR {
                throw .fileSystem(operation: "write", path: path, errno: errno)
            }
        }
    }

    /// Writes all of `buffer` at `offset` from the start, leaving the file position alone.
    func writeAll(_ buffer: UnsafeRawBufferPointer, at offset: Int64) throws(ClassicalCryptoError) {
        guard let base = buffer.baseAddress else { return }
        var written = 0
        while written < buffer.count {
            let count = pwrite(descriptor, base + written, buffer.count - written, off_t(offset) + off_t(written))
            if count >= 0 {
                written += count
            } else if errno != EINTR {
                throw .fileSystem(operation: "pwrite", path: path, errno: errno)
            }
        }
    }

    /// Moves the read position to `offset` bytes from the start.
    func seek(to offset: Int64) throws(ClassicalCryptoError) {
        guard lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else {
            throw .fileSystem(operation: "lseek", path: path, errno: errno)
        }
    }
}

/// A file written under a temporary name beside its destination and renamed into place only when
/// complete, so a reader never sees a partial or unverified result at the destination.
final class AtomicOutputFile {
    let destination: String
    let temporaryPath: String
    let file: FileDescriptor
    private var committed = false

    /// Creates the temporary file; `expectedByteCount` reserves the final size up front.
    init(destination: String, expectedByteCount: Int) throws(ClassicalCryptoError) {
        self.destination = destination
        temporaryPath = TemporaryFileName.path(beside: destination, suffix: "partial")
        file = try FileDescriptor.createExclusive(temporaryPath)
        #if os(Linux)
        // Reserving the blocks first spares the file system from allocating them when the file is
        // renamed over an existing one (ext4 then forces them out synchronously): about three
        // times faster for a 64 MiB file. Failure only costs that speed, so it is ignored.
        if expectedByteCount > 0 { _ = posix_fallocate(file.descriptor, 0, off_t(expectedByteCount)) }
        #endif
    }

    /// Flushes the finished file (``DurableWrite``) and renames it onto the destination.
    func commit() throws(ClassicalCryptoError) {
        guard DurableWrite.flush(file.descriptor) == 0 else {
            throw .fileSystem(operation: "fsync", path: temporaryPath, errno: errno)
        }
        guard DurableWrite.rename(temporaryPath, onto: destination) == 0 else {
            throw .fileSystem(operation: "rename", path: destination, errno: errno)
        }
        committed = true
    }

    deinit {
        if !committed { _ = unlink(temporaryPath) }
    }
}
