#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A download in progress: a new file in `.cipher-sync/incoming` (``LocalFolder/createIncoming()``),
/// written through ``handle``, then put in place by ``LocalFolder/place(_:at:replacing:modified:)``.
/// Until then its name is removed on deinit, so a failed or cancelled download leaves nothing.
final class IncomingFile {
    /// `.cipher-sync/incoming`.
    let directory: DirectoryDescriptor
    /// Its name there.
    let name: String
    let descriptor: Int32
    /// A handle on the file, for a downloading call; valid while this object lives (it does not
    /// close the descriptor).
    let handle: FileHandle
    /// Whether it was put in place (its incoming name is gone).
    private(set) var isPlaced = false

    /// Takes over `descriptor`, the file `name` in `directory`.
    init(directory: DirectoryDescriptor, name: String, adopting descriptor: Int32) {
        self.directory = directory
        self.name = name
        self.descriptor = descriptor
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
    }

    deinit {
        if !isPlaced { _ = unlinkat(directory.descriptor, name, 0) }
        _ = close(descriptor)
    }

    /// The SHA-256 of what was written, read from the file's start.
    func sha256() throws(SyncPathRefusal) -> [UInt8] { try OpenedFile.sha256(of: descriptor) }

    /// The file as it is now (`fstat`).
    func stamp() throws(SyncPathRefusal) -> FileStamp { FileStamp(try OpenedFile.status(of: descriptor)) }

    /// Gives the file the permission bits `mode` (`fchmod`).
    func setPermissions(_ mode: mode_t) throws(SyncPathRefusal) {
        guard fchmod(descriptor, mode) == 0 else { throw DirectoryDescriptor.failure("cannot set the download's permissions") }
    }

    /// Records that the file was renamed (or linked) into place.
    func markPlaced() { isPlaced = true }
}
