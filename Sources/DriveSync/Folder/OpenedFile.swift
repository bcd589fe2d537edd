#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ClassicalCrypto
import Foundation
import SHA2

/// A local file of the folder, open for reading (``LocalFolder/open(_:expecting:)``): what is
/// hashed and published is this file, whatever happens to its name meanwhile. Closed on deinit.
final class OpenedFile: Sendable {
    let descriptor: Int32
    /// The file as it was opened.
    let stamp: FileStamp
    /// Whether any of its execute permissions was set when it was opened.
    let isExecutable: Bool
    /// A handle on the descriptor, for a publishing call; valid while this object lives (it does
    /// not close the descriptor).
    let handle: FileHandle

    /// Takes over `descriptor`, a regular file whose `fstat` is `status`.
    init(adopting descriptor: Int32, status: stat) {
        self.descriptor = descriptor
        stamp = FileStamp(status)
        isExecutable = status.st_mode & 0o111 != 0
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
    }

    deinit { _ = close(descriptor) }

    /// The SHA-256 of the whole file, read from its start (the descriptor's position is left alone).
    func sha256() throws(SyncPathRefusal) -> [UInt8] { try Self.sha256(of: descriptor) }

    /// Whether the file is still as it was opened (`fstat` gives the same stamp).
    func unchanged() -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && FileStamp(status).matches(stamp)
    }

    /// The SHA-256 of the file open as `descriptor`, read from its start through a duplicate of
    /// it (ClassicalCrypto's file hashing; the descriptor's position is left alone).
    static func sha256(of descriptor: Int32) throws(SyncPathRefusal) -> [UInt8] {
        do {
            return try SHA2.SHA256.hash(file: try FileDescriptor.duplicating(descriptor, path: "the file"))
        } catch {
            throw SyncPathRefusal("cannot read the file: \(error)")
        }
    }

    /// The `fstat` of `descriptor`.
    static func status(of descriptor: Int32) throws(SyncPathRefusal) -> stat {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw DirectoryDescriptor.failure("cannot read the file")
        }
        return status
    }
}
