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
package struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    /// The file's size in bytes.
    package var size: Int64
    var modified: (seconds: Int64, nanoseconds: Int64)
    var changed: (seconds: Int64, nanoseconds: Int64)
    /// Whether it is a regular file (not a directory, device, pipe or socket). Not compared: an
    /// inode keeps its type.
    package var isRegularFile: Bool

    package static func == (lhs: FileIdentity, rhs: FileIdentity) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
            && lhs.modified == rhs.modified && lhs.changed == rhs.changed
    }
}

/// An open file descriptor, closed on deinit, with the few POSIX calls the streamed SecretBox
/// (and the UnixFS CID of a file) needs. Errors carry the failing call, the path and `errno`.
///
/// The streamed SecretBox reads and writes at explicit offsets (`pread`, `pwrite`), so a
/// descriptor duplicated from one the app still holds (``duplicating(_:path:)``) leaves the app's
/// file offset where it was. Its one stored descriptor never changes, and positional calls share
/// no offset, so a reader on another thread is the kernel's concern: hence the unchecked `Sendable`
/// (a ``SecretBoxFileSealer`` holds its file open while a transport reads the body on its thread).
package final class FileDescriptor: @unchecked Sendable {
    let descriptor: Int32
    /// What names the file in errors: its path, or a description for a duplicated descriptor.
    package let path: String

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

    /// A descriptor of its own for the file the caller's `descriptor` has open (a `dup`, closed
    /// on exec), closed on deinit while the caller's stays open: reading through it never
    /// reopens the file by a path a symbolic link could redirect. The two share the file offset
    /// and status flags. `path` names the file in errors.
    package static func duplicating(_ descriptor: Int32, path: String) throws(ClassicalCryptoError) -> FileDescriptor {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .fileSystem(operation: "dup", path: path, errno: errno) }
        return FileDescriptor(descriptor: copy, path: path)
    }

    /// Creates `path`, which must not exist yet, for writing, readable only by its owner.
    static func createExclusive(_ path: String) throws(ClassicalCryptoError) -> FileDescriptor {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: path, errno: errno) }
        return FileDescriptor(descriptor: descriptor, path: path)
    }

    /// The file's current identity (`fstat`).
    package func identity() throws(ClassicalCryptoError) -> FileIdentity {
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
            changed: (Int64(changed.tv_sec), Int64(changed.tv_nsec)),
            isRegularFile: status.st_mode & S_IFMT == S_IFREG)
    }

    /// Reads until `buffer` is full or the file ends; returns the byte count (short only at the end).
    /// Without `offset` it reads from the file offset, which moves on; with it, from `offset`
    /// bytes from the start (`pread`), leaving the file offset alone.
    package func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64? = nil) throws(ClassicalCryptoError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var filled = 0
        while filled < buffer.count {
            let count = if let offset {
                pread(descriptor, base + filled, buffer.count - filled, off_t(offset) + off_t(filled))
            } else {
                read(descriptor, base + filled, buffer.count - filled)
            }
            if count > 0 {
                filled += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw .fileSystem(operation: offset == nil ? "read" : "pread", path: path, errno: errno)
            }
        }
        return filled
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

    /// Sets the file's length to `size` (`ftruncate`): emptied with 0, before it is written from its start.
    func truncate(to size: Int64) throws(ClassicalCryptoError) {
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            throw .fileSystem(operation: "ftruncate", path: path, errno: errno)
        }
    }

    /// Flushes the file's data as far as `need` asks (``DurableWrite/flush(_:need:platform:fsync:)``).
    func flush(need: DurabilityNeed) throws(ClassicalCryptoError) {
        guard DurableWrite.flush(descriptor, need: need) == 0 else {
            throw .fileSystem(operation: "fsync", path: path, errno: errno)
        }
    }

    /// Makes this file hold exactly the bytes of `source`: empties it, copies `source` from its
    /// start into it from its start, and flushes it. Neither file offset moves. After a failure
    /// this file may hold part of `source`.
    package func overwrite(withContentsOf source: FileDescriptor) throws(ClassicalCryptoError) {
        try truncate(to: 0)
        _ = try SecretBoxFileSealer.transformChunks(of: source, from: 0, into: self, at: 0,
                                                    chunkByteCount: SecretBoxFileSealer.defaultChunkByteCount) { _ in }
        // Ordering: a copy of bytes `source` still holds (a download, which can be fetched again).
        try flush(need: .ordering)
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
    ///
    /// Ordering, not power loss: what is written here is made from a file that stays where it was
    /// (sealed from a plaintext, opened from a sealed file), so a power cut costs a redo; the
    /// order keeps the destination from ever holding the name without the bytes.
    func commit() throws(ClassicalCryptoError) {
        try file.flush(need: .ordering)
        guard DurableWrite.rename(temporaryPath, onto: destination, need: .ordering) == 0 else {
            throw .fileSystem(operation: "rename", path: destination, errno: errno)
        }
        committed = true
    }

    deinit {
        if !committed { _ = unlink(temporaryPath) }
    }
}
