#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one sync of a folder at a time: an exclusive `flock` on `lock` in the work folder
/// (`.cipher-sync/lock` by default), held while
/// this object lives (released on deinit, and by the kernel when the process dies, so a killed
/// sync never leaves the folder locked).
///
/// `flock` locks belong to an open file description: a second ``acquire(_:waiting:)`` opens the
/// file again, so it is refused by a lock of another process and of this one alike.
final class FolderLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { _ = close(descriptor) }

    /// How often a waiting ``acquire(_:waiting:)`` tries again.
    static let retryInterval: Duration = .milliseconds(100)

    /// Locks `folder` for one sync.
    ///
    /// - Parameter waiting: wait for a running sync to end (cancellable) instead of throwing `.busy`.
    /// - Throws: ``DriveSyncError``: `.busy` when another sync holds the lock (without `waiting`),
    ///   `.cancelled` when the task is cancelled while waiting, `.folder` when the lock file
    ///   cannot be opened (`.cipher-sync` a link, on another file system, not writable…).
    static func acquire(_ folder: LocalFolder, waiting: Bool) async throws(DriveSyncError) -> FolderLock {
        while true {
            if let lock = try attempt(folder) { return lock }
            guard waiting else { throw DriveSyncError(.busy, "another sync of this folder is running") }
            do {
                try await Task.sleep(for: retryInterval)
            } catch {
                throw DriveSyncError(.cancelled, "cancelled while waiting for another sync of this folder to end", underlying: error)
            }
        }
    }

    /// One try: the lock, or `nil` when another open file description holds it.
    private static func attempt(_ folder: LocalFolder) throws(DriveSyncError) -> FolderLock? {
        let data: DirectoryDescriptor
        let lock: FolderLock
        if let workFolder = folder.workFolder {
            // The app's work folder: its refusals are its own kind, the folder's are `.folder`.
            let top: DirectoryDescriptor
            do {
                top = try folder.openRoot()
            } catch {
                throw DriveSyncError(.folder, "cannot open \(folder.root.path): \(error.reason)", underlying: error)
            }
            do {
                data = try folder.dataDirectory(in: top, creating: true)
            } catch {
                throw DriveSyncError(.workFolder, "cannot use \(workFolder.path) as the work folder of \(folder.root.path): \(error.reason)",
                                     underlying: error)
            }
        } else {
            do {
                data = try folder.dataDirectory(in: try folder.openRoot(), creating: true)
            } catch {
                throw DriveSyncError(.folder, "cannot open the lock of \(folder.root.path): \(error.reason)", underlying: error)
            }
        }
        do {
            // Non-blocking, so a FIFO put there cannot hang the open; it is refused below.
            lock = FolderLock(descriptor: try data.openFile("lock", flags: O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY, mode: 0o600))
        } catch {
            throw DriveSyncError(.folder, "cannot open the lock of \(folder.root.path): \(error.reason)", underlying: error)
        }
        guard let status = try? OpenedFile.status(of: lock.descriptor), status.isRegularFile else {
            throw DriveSyncError(.folder, "\(folder.workFolderName)/lock of \(folder.root.path) is not a regular file")
        }
        while flock(lock.descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == EWOULDBLOCK { return nil }
            throw DriveSyncError(.folder, "cannot lock \(folder.root.path): \(DirectoryDescriptor.errnoText(code))")
        }
        // A lock file removed or replaced since it was opened would let another sync lock the new
        // one: only the file still at the name counts (a replacement means someone else is at work).
        guard let current = try? data.status(of: "lock"), current.st_dev == status.st_dev, current.st_ino == status.st_ino else {
            return nil
        }
        return lock
    }
}
