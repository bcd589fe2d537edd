#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import OrderedJSON

/// What ``DriveSync/emptyTrash(olderThan:)`` removed from the trash.
public struct EmptiedTrash: Sendable, Hashable {
    /// The files removed (a symbolic link or another entry that is not a folder counts as one).
    public var fileCount: Int
    /// The bytes of the regular files removed.
    public var byteCount: Int64
    /// The trash folders removed whole: one per sync that moved files to the trash.
    public var folderCount: Int
    /// The entries that could not be removed (permissions, another file system mounted there,
    /// nested deeper than a synced path can be): left in place.
    public var failedCount: Int

    /// Nothing removed.
    public init(fileCount: Int = 0, byteCount: Int64 = 0, folderCount: Int = 0, failedCount: Int = 0) {
        self.fileCount = fileCount
        self.byteCount = byteCount
        self.folderCount = folderCount
        self.failedCount = failedCount
    }
}

extension DriveSync {
    /// Empties the trash of this folder (`trash` in the work folder: `.cipher-sync/trash`, or in
    /// ``SyncOptions/workFolder``), whole or only the folders of syncs before `cutoff`.
    ///
    /// The trash holds a folder per sync that moved files there, named by the sync's time in UTC
    /// (`2026-12-06T061502Z`, or `…Z-2` when taken); with `cutoff`, only folders whose name
    /// says they are older are removed (others, named otherwise, are kept). Removal goes through
    /// directory descriptors from the trash down, one name at a time: a symbolic link is
    /// removed, never followed, and nothing on another file system is touched. Holds the
    /// folder's lock, like a sync (``SyncOptions/waitsForOtherSyncs``).
    ///
    /// - Parameter cutoff: remove only what syncs before this date trashed; `nil`: everything.
    /// - Returns: what was removed (and what could not be).
    /// - Throws: ``DriveSyncError``: `.busy` when a sync of the folder is running, `.folder` or
    ///   `.workFolder` when the trash cannot be opened (a symbolic link, on another file system).
    public func emptyTrash(olderThan cutoff: Date? = nil) async throws(DriveSyncError) -> EmptiedTrash {
        let local = self.local
        let lock = try await FolderLock.acquire(local, waiting: options.waitsForOtherSyncs)
        defer { withExtendedLifetime(lock) {} }
        do {
            return try local.walkTrash(before: cutoff, removing: true)
        } catch {
            throw DriveSyncError(local.workFolder == nil ? .folder : .workFolder,
                                 "cannot empty the trash in \(local.workFolderName): \(error.reason)", underlying: error)
        }
    }
}

extension LocalFolder {
    /// How deep inside a trash folder an entry may be and still be removed: a synced path's
    /// depth and a margin. Anything deeper was not put there by a sync; it is left.
    static let maximumTrashDepth = SyncPath.maximumDepth + 8

    /// Removes the trash folders of syncs before `cutoff` (all with `nil`), or without
    /// `removing` only counts what removing would take.
    func walkTrash(before cutoff: Date?, removing: Bool) throws(SyncPathRefusal) -> EmptiedTrash {
        let top = try openRoot()
        let trash: DirectoryDescriptor
        do {
            trash = try dataDirectory(in: top, creating: false).openDirectory(Self.trashName)
        } catch where error.code == ENOENT {
            return EmptiedTrash()
        }
        try Self.requireSameDevice(trash, as: top)
        let device = try trash.status().st_dev
        var emptied = EmptiedTrash()
        for name in try trash.entries().sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            if let cutoff {
                guard let date = Self.trashDate(String(decoding: name, as: UTF8.self)), date < cutoff else { continue }
            }
            let wasFolder = (try? trash.status(of: name))?.isDirectory == true
            if Self.remove(name, in: trash, device: device, depth: 0, removing: removing, into: &emptied), wasFolder { emptied.folderCount += 1 }
        }
        if removing { trash.flush() }
        return emptied
    }

    /// Removes `name` in `directory`: a folder emptied first (its entries one by one, never
    /// following a link, never leaving `device`), anything else unlinked. `true` when it is gone
    /// (without `removing`, counted as if it were).
    private static func remove(_ name: [UInt8], in directory: DirectoryDescriptor, device: dev_t, depth: Int, removing: Bool,
                               into emptied: inout EmptiedTrash) -> Bool {
        guard let status = try? directory.status(of: name) else {
            emptied.failedCount += 1
            return false
        }
        guard status.isDirectory else {
            guard !removing || (try? directory.unlink(name)) != nil else {
                emptied.failedCount += 1
                return false
            }
            emptied.fileCount += 1
            if status.isRegularFile { emptied.byteCount = emptied.byteCount.addingSaturated(Int64(status.st_size)) }
            return true
        }
        guard depth < maximumTrashDepth, status.st_dev == device, let child = try? directory.openDirectory(bytes: name),
              let opened = try? child.status(), opened.st_dev == device, opened.st_ino == status.st_ino,
              let names = try? child.entries() else {
            emptied.failedCount += 1
            return false
        }
        var allGone = true
        for entry in names where !remove(entry, in: child, device: device, depth: depth + 1, removing: removing, into: &emptied) {
            allGone = false
        }
        guard allGone, !removing || directory.removeEmptyDirectory(bytes: name) else {
            if allGone { emptied.failedCount += 1 }
            return false
        }
        return true
    }

    /// The time a trash folder's name gives (`2026-12-06T061502Z`, or with `-2`, `-3`… after
    /// it); `nil` for any other name.
    static func trashDate(_ name: String) -> Date? {
        let bytes = Array(name.utf8)
        guard bytes.count >= 18, bytes[17] == UInt8(ascii: "Z") else { return nil }
        if bytes.count > 18 {
            guard bytes[18] == UInt8(ascii: "-"), bytes.count > 19, bytes[19...].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return nil
            }
        }
        let stamp = bytes[0..<17]
        // `YYYY-MM-DDTHHMMSS` back to RFC 3339's `YYYY-MM-DDTHH:MM:SSZ`.
        let text = String(decoding: stamp[0..<13], as: UTF8.self) + ":" + String(decoding: stamp[13..<15], as: UTF8.self) + ":"
            + String(decoding: stamp[15..<17], as: UTF8.self) + "Z"
        return RFC3339.date(text)
    }
}
