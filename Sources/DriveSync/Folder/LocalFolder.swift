#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ClassicalCrypto
import OrderedJSON
import PQCrypto

/// The synced folder on disk: scanning it, and every change the sync makes to it (placing a
/// downloaded file, moving a file to the trash, renaming a conflict copy).
///
/// Everything goes through directory descriptors opened from ``root`` one component at a time,
/// never following a symbolic link (``DirectoryDescriptor``), so a folder swapped for a link
/// between the plan and the run cannot lead outside the folder; and each change is one rename
/// that never replaces a file the plan did not expect.
struct LocalFolder: Sendable {
    /// The folder (as ``DriveSync/folder``: a link the user chose as the folder is resolved).
    let root: URL
    /// The sync's work folder (``SyncOptions/workFolder``), or `nil` for `.cipher-sync` in the folder.
    var workFolder: URL? = nil
    /// Called with each directory's path just before the scan opens it (tests make one vanish there).
    var willOpenDirectory: (@Sendable (SyncPath) -> Void)? = nil

    /// The refusal of a change whose file is no longer the one planned for.
    static let changed = SyncPathRefusal("the local file changed during the sync; it is left as it is")
    /// Where downloads in progress are, in `.cipher-sync`: emptied at the start and end of each
    /// sync (a killed sync leaves its part there).
    static let incomingName = "incoming"
    /// Files deleted locally because they were deleted on another device, by sync time, in `.cipher-sync`.
    static let trashName = "trash"
    /// The mode of the sync's own directories: its files are the user's alone.
    static let privateMode: mode_t = 0o700
    /// The mode of folders created for synced files (less the umask), as any program creates them.
    static let folderMode: mode_t = 0o777

    /// The folder itself, opened (its last component not followed).
    func openRoot() throws(SyncPathRefusal) -> DirectoryDescriptor {
        try DirectoryDescriptor.open(path: root.path)
    }

    // MARK: Scanning

    /// Every regular file under the folder, by path, read through directory descriptors; symbolic
    /// links, special files and names no other device could store are skipped and reported, what
    /// cannot be read is in ``Scan/unread`` (and reported), and `.cipher-sync` is left out.
    ///
    /// - Throws: `.folder` when the folder itself is not a readable directory.
    /// The rules of the folder's `.cipherignore` (``IgnoreRules/fileName``) after `base`;
    /// `base` alone when there is none.
    ///
    /// - Throws: `.folder` when the file is there but cannot be read (not a regular file, no
    ///   permission): nothing is decided without the rules the user wrote.
    func ignoreRules(after base: IgnoreRules) throws(DriveSyncError) -> IgnoreRules {
        let text: String
        do {
            let path = try SyncPath(components: [IgnoreRules.fileName])
            let file = try open(path, expecting: nil)
            let bytes = try file.handle.read(upToCount: IgnoreRules.maximumByteCount + 1) ?? Data()
            text = String(decoding: bytes, as: UTF8.self)
        } catch let refusal as SyncPathRefusal where refusal.code == ENOENT {
            return base
        } catch {
            throw DriveSyncError(.folder, "cannot read \(IgnoreRules.fileName): \((error as? SyncPathRefusal)?.reason ?? "\(error)")",
                                 underlying: error)
        }
        return base.adding(IgnoreRules(parsing: text))
    }

    /// Reads the folder's files, leaving out what `rules` ignore (an ignored folder is not entered).
    func scan(ignoring rules: IgnoreRules = .none) throws(DriveSyncError) -> Scan {
        let top: DirectoryDescriptor
        let names: [[UInt8]]
        do {
            top = try openRoot()
            names = try top.entries()
        } catch {
            switch error.code {
            case ENOENT?: throw DriveSyncError(.folder, "\(root.path) is not a folder (it does not exist)")
            case ENOTDIR?, ELOOP?: throw DriveSyncError(.folder, "\(root.path) is not a folder")
            default: throw DriveSyncError(.folder, "cannot read \(root.path): \(error.reason)", underlying: error)
            }
        }
        var scan = Scan()
        var pending: [(parent: DirectoryDescriptor, path: SyncPath)] = []
        // A work folder of the app's choice may lie inside the folder: it is found by identity
        // (device and file number), whatever the path that leads to it.
        let work = workFolder == nil ? nil : (try? dataDirectory(in: top, creating: false)).flatMap { try? $0.status() }
        let workIdentity = work.map { (device: $0.st_dev, file: $0.st_ino) }
        add(names, of: top, at: [], workFolder: workIdentity, ignoring: rules, to: &scan, pending: &pending)
        // Depth first, so only the descriptors of the directories on the way stay open.
        while let (parent, path) = pending.popLast() {
            willOpenDirectory?(path)
            let directory: DirectoryDescriptor
            let names: [[UInt8]]
            do {
                directory = try parent.openDirectory(path.filename)
                names = try directory.entries()
            } catch {
                scan.markUnread(path)
                continue
            }
            add(names, of: directory, at: path.components, workFolder: workIdentity, ignoring: rules, to: &scan, pending: &pending)
        }
        return scan
    }

    /// Sorts the entries `names` of `directory` (at `components`) into the scan.
    private func add(_ names: [[UInt8]], of directory: DirectoryDescriptor, at components: [String],
                     workFolder: (device: dev_t, file: ino_t)?, ignoring rules: IgnoreRules, to scan: inout Scan,
                     pending: inout [(parent: DirectoryDescriptor, path: SyncPath)]) {
        for name in names.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            if components.isEmpty && name.elementsEqual(SyncPath.reservedDirectory.utf8) { continue }
            let text = String(decoding: name, as: UTF8.self)
            let shown = (components + [text]).joined(separator: "/")
            // Decoding replaced a byte: the name is not UTF-8, and no decoded form names this file.
            guard text.utf8.elementsEqual(name) else {
                scan.skipped.append(SkippedItem(path: shown, reason: .invalidName("the name is not valid UTF-8")))
                continue
            }
            let status = try? directory.status(of: name)
            if let status, status.isSymbolicLink {
                scan.skipped.append(SkippedItem(path: shown, reason: .symbolicLink))
                continue
            }
            if let status, !status.isDirectory && !status.isRegularFile {
                scan.skipped.append(SkippedItem(path: shown, reason: .specialFile))
                continue
            }
            let path: SyncPath
            do {
                path = try SyncPath(components: components + [text])
            } catch {
                scan.skipped.append(SkippedItem(path: shown, reason: .invalidName(error.reason)))
                continue
            }
            guard let status else {
                scan.markUnread(path)
                continue
            }
            if status.isDirectory, let workFolder, status.st_dev == workFolder.device, status.st_ino == workFolder.file {
                // Reported, so the planner decides nothing under it (nothing downloaded into it).
                scan.skipped.append(SkippedItem(path: path.description, reason: .workFolder))
            } else if rules.decides(path, isDirectory: status.isDirectory) {
                // Its folders were entered, so only the path itself is left to decide.
                continue
            } else if status.isDirectory {
                scan.directories.append(path)
                pending.append((directory, path))
            } else {
                scan.files[path] = FileStamp(status)
            }
        }
    }

    // MARK: Reading

    /// The directory `path` is in, reached from the folder (missing ones created with `creating`).
    func directory(containing path: SyncPath, from top: DirectoryDescriptor, creating: Bool) throws(SyncPathRefusal)
        -> DirectoryDescriptor {
        try top.openDirectory(components: path.components.dropLast(), creatingWithMode: creating ? Self.folderMode : nil)
    }

    /// The permission bits (`0o777`: never the set-id bits, which downloaded content must not
    /// inherit) of the regular file at `path` now; `nil` as for ``stamp(of:)``.
    func permissions(of path: SyncPath) -> mode_t? {
        guard let top = try? openRoot(), let parent = try? directory(containing: path, from: top, creating: false),
              let status = try? parent.status(of: path.filename), status.isRegularFile else { return nil }
        return status.st_mode & 0o777
    }

    /// The stamp of the regular file at `path` now; `nil` when there is none, or a symbolic link
    /// or a file where a folder should be on the way.
    func stamp(of path: SyncPath) -> FileStamp? {
        guard let top = try? openRoot(), let parent = try? directory(containing: path, from: top, creating: false),
              let status = try? parent.status(of: path.filename), status.isRegularFile else { return nil }
        return FileStamp(status)
    }

    /// Opens the regular file at `path` for reading; with `expected`, only when it is still that
    /// file, unchanged (same device, file number and stamp).
    ///
    /// It is opened non-blocking: a FIFO swapped in for the file would otherwise wait for a writer
    /// forever; it is refused as not a regular file.
    func open(_ path: SyncPath, expecting expected: FileStamp?) throws(SyncPathRefusal) -> OpenedFile {
        let parent = try directory(containing: path, from: try openRoot(), creating: false)
        // Looked at first, so nothing but a regular file is ever opened (a device may act on open).
        let before: stat
        do {
            before = try parent.status(of: path.filename)
        } catch {
            throw error.code == ENOENT && expected != nil ? Self.changed : error
        }
        guard before.isRegularFile else { throw expected != nil ? Self.changed : SyncPathRefusal("\(path) is not a regular file") }
        if let expected, !FileStamp(before).matches(expected) { throw Self.changed }
        let descriptor = try parent.openFile(path.filename, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY)
        let status: stat
        do {
            status = try OpenedFile.status(of: descriptor)
        } catch {
            _ = close(descriptor)
            throw error
        }
        let file = OpenedFile(adopting: descriptor, status: status)
        guard status.isRegularFile else { throw expected != nil ? Self.changed : SyncPathRefusal("\(path) is not a regular file") }
        if let expected, !file.stamp.matches(expected) { throw Self.changed }
        return file
    }

    // MARK: The sync's own directory

    /// The work folder as messages name it: its path, or `.cipher-sync`.
    var workFolderName: String { workFolder?.path ?? SyncPath.reservedDirectory }

    /// The work folder (`.cipher-sync`, opened from `top`, or ``workFolder``): a real directory
    /// (a symbolic link is refused, never followed) on the folder's device; created (private)
    /// with `creating`. A work folder of the app's choice is opened by its path (as the folder
    /// is; its last component is not followed), and refused when it is the folder itself or a
    /// folder the synced folder lies in (emptying `incoming` would then remove synced files).
    func dataDirectory(in top: DirectoryDescriptor, creating: Bool) throws(SyncPathRefusal) -> DirectoryDescriptor {
        guard let workFolder else {
            let data = creating ? try top.openDirectory(SyncPath.reservedDirectory, creatingWithMode: Self.privateMode)
                : try top.openDirectory(SyncPath.reservedDirectory)
            try Self.requireSameDevice(data, as: top)
            return data
        }
        let device = try top.status().st_dev
        let otherDevice = SyncPathRefusal(
            "it is on another file system than the folder (a download is renamed from it into the folder)", code: EXDEV)
        let data: DirectoryDescriptor
        do {
            data = try DirectoryDescriptor.open(path: workFolder.path)
        } catch where error.code == ENOENT && creating {
            let parent = try DirectoryDescriptor.open(path: workFolder.deletingLastPathComponent().path)
            // Nothing is created where it could not be used.
            guard try parent.status().st_dev == device else { throw otherDevice }
            data = try parent.openDirectory(workFolder.lastPathComponent, creatingWithMode: Self.privateMode)
        }
        let work = try data.status()
        guard work.st_dev == device else { throw otherDevice }
        // The folder and each folder above it, up to the file system's root.
        var current = top
        for _ in 0..<4096 {
            let here = try current.status()
            guard here.st_ino != work.st_ino || here.st_dev != work.st_dev else {
                throw SyncPathRefusal(current === top ? "it is the synced folder itself" : "the synced folder lies inside it",
                                      code: EINVAL)
            }
            let parent = try current.openDirectory("..")
            let above = try parent.status()
            if above.st_ino == here.st_ino && above.st_dev == here.st_dev { break }
            current = parent
        }
        return data
    }

    /// `.cipher-sync/incoming`, as ``dataDirectory(in:creating:)`` opens `.cipher-sync`.
    private func incomingDirectory(creating: Bool) throws(SyncPathRefusal) -> DirectoryDescriptor {
        let top = try openRoot()
        let data = try dataDirectory(in: top, creating: creating)
        let incoming = creating ? try data.openDirectory(Self.incomingName, creatingWithMode: Self.privateMode)
            : try data.openDirectory(Self.incomingName)
        try Self.requireSameDevice(incoming, as: top)
        return incoming
    }

    /// Refuses `directory` on another device than the folder: a mount point there could take
    /// what the sync writes elsewhere, and a rename into the folder would fail anyway.
    static func requireSameDevice(_ directory: DirectoryDescriptor, as top: DirectoryDescriptor) throws(SyncPathRefusal) {
        guard try directory.status().st_dev == top.status().st_dev else {
            throw SyncPathRefusal("\(directory.name) is on another file system than the folder; it is not used", code: EXDEV)
        }
    }

    /// A new, empty file in `.cipher-sync/incoming` for a download, created exclusively with the
    /// mode a new file gets (`0o666`, or `0o777` when `executable`, less the umask).
    func createIncoming(executable: Bool = false) throws(SyncPathRefusal) -> IncomingFile {
        let incoming = try incomingDirectory(creating: true)
        let name = Hex.encode(SecureRandom.bytes(count: 16))
        // The umask takes its bits off, as for any new file (no need to read it); `incoming`
        // is the owner's only, so the file is private until it is put in place.
        let descriptor = try incoming.openFile(name, flags: O_RDWR | O_CREAT | O_EXCL, mode: executable ? 0o777 : 0o666)
        return IncomingFile(directory: incoming, name: name, adopting: descriptor)
    }

    /// Removes what a killed sync left in `.cipher-sync/incoming`: every entry that is not a
    /// directory, by name through the directory's descriptor (nothing is removed recursively, and
    /// nothing when `.cipher-sync` or `incoming` is a link or on another file system).
    func removeIncoming() {
        guard let incoming = try? incomingDirectory(creating: false), let names = try? incoming.entries() else { return }
        for name in names {
            guard let status = try? incoming.status(of: name), !status.isDirectory else { continue }
            try? incoming.unlink(name)
        }
    }

    // MARK: Changing

    /// Puts the verified download `incoming` at `path`: only when `path` holds exactly the file of
    /// stamp `expected` (replaced in one rename), or nothing when `expected` is `nil` (a file
    /// that appeared meanwhile is never replaced). Creates the folders on the way (a link or a
    /// file there is refused), flushes the file and its directory, and gives its new mtime.
    ///
    /// - Returns: the stamp of the placed file (taken after the rename, which moves its change time).
    func place(_ incoming: IncomingFile, at path: SyncPath, replacing expected: FileStamp?, modified: Date?) throws(SyncPathRefusal)
        -> FileStamp {
        guard !incoming.isPlaced else { throw SyncPathRefusal("the download was already put in place") }
        let parent = try directory(containing: path, from: try openRoot(), creating: true)
        if let modified, let time = Self.fileTime(of: modified) {
            // A time the file system cannot store leaves the download's own: not worth failing it for.
            var times = [timespec(tv_sec: 0, tv_nsec: Self.omitTime), time]
            _ = futimens(incoming.descriptor, &times)
        }
        // Ordering (see DirectoryDescriptor.flush): the bytes are on disk before the name is.
        guard DurableWrite.flush(incoming.descriptor, need: .ordering) == 0 else {
            throw DirectoryDescriptor.failure("cannot write the download out")
        }
        if let expected {
            try Self.require(path.filename, in: parent, is: expected)
            try incoming.directory.rename(incoming.name, to: parent, path.filename)
        } else {
            do {
                try incoming.directory.renameWithoutReplacing(incoming.name, to: parent, path.filename)
            } catch where error.code == EEXIST {
                throw SyncPathRefusal("a local file appeared there during the sync; it is left as it is", code: EEXIST)
            }
        }
        incoming.markPlaced()
        parent.flush()
        return try incoming.stamp()
    }

    /// Moves the file at `path` (of stamp `expected`) to `destination` in the folder (a conflict
    /// copy's name), which must be free; the folders on the way to it are created.
    func move(_ path: SyncPath, expected: FileStamp, to destination: SyncPath) throws(SyncPathRefusal) {
        let top = try openRoot()
        let source = try directory(containing: path, from: top, creating: false)
        try Self.require(path.filename, in: source, is: expected)
        let target = try directory(containing: destination, from: top, creating: true)
        try Self.require(path.filename, in: source, is: expected)
        do {
            try source.renameWithoutReplacing(path.filename, to: target, destination.filename)
        } catch where error.code == EEXIST {
            // Taken by the file itself: a case-only rename on a case-insensitive file system
            // (`Photos/a.jpg` to `photos/a.jpg` on APFS), which only a plain rename performs.
            guard let there = try? target.status(of: destination.filename), let here = try? source.status(of: path.filename),
                  there.st_dev == here.st_dev, there.st_ino == here.st_ino else { throw error }
            try source.rename(path.filename, to: target, destination.filename)
        }
        target.flush()
        source.flush()
    }

    /// Removes the folders `path` sat in, innermost first, as long as each is empty (after a move
    /// out of them); never anything that holds a file.
    func removeEmptyParents(of path: SyncPath) {
        guard let top = try? openRoot() else { return }
        var components = Array(path.components.dropLast())
        while let name = components.popLast() {
            guard let parent = try? top.openDirectory(components: components), parent.removeEmptyDirectory(name) else { return }
            parent.flush()
        }
    }

    /// Moves the file at `path` (of stamp `expected`) to `.cipher-sync/trash/<trashFolder>/<path>`,
    /// or to `<trashFolder>-2`, `-3`… when that place is taken (a file of that path, or of one of
    /// its folders, was trashed in the same second).
    ///
    /// - Returns: where it went, relative to the folder.
    func moveToTrash(_ path: SyncPath, expected: FileStamp, trashFolder: String) throws(SyncPathRefusal) -> String {
        let top = try openRoot()
        let source = try directory(containing: path, from: top, creating: false)
        try Self.require(path.filename, in: source, is: expected)
        let trash = try dataDirectory(in: top, creating: true).openDirectory(Self.trashName, creatingWithMode: Self.privateMode)
        try Self.requireSameDevice(trash, as: top)
        for attempt in 1...1000 {
            let folder = attempt == 1 ? trashFolder : "\(trashFolder)-\(attempt)"
            let target: DirectoryDescriptor
            do {
                target = try trash.openDirectory(folder, creatingWithMode: Self.privateMode)
                    .openDirectory(components: path.components.dropLast(), creatingWithMode: Self.privateMode)
            } catch where error.code == ENOTDIR || error.code == ELOOP {
                continue
            }
            try Self.require(path.filename, in: source, is: expected)
            do {
                try source.renameWithoutReplacing(path.filename, to: target, path.filename)
            } catch where error.code == EEXIST {
                continue
            }
            target.flush()
            source.flush()
            return "\(workFolderName)/\(Self.trashName)/\(folder)/\(path)"
        }
        throw SyncPathRefusal("no free place in the trash for \(path)")
    }

    /// Refuses unless `name` in `directory` is the regular file of stamp `expected` (same device and
    /// file number, unchanged), looked at without following a link.
    static func require(_ name: String, in directory: DirectoryDescriptor, is expected: FileStamp) throws(SyncPathRefusal) {
        guard let status = try? directory.status(of: name), status.isRegularFile, FileStamp(status).matches(expected) else {
            throw changed
        }
    }

    // MARK: Times

    /// `UTIME_OMIT` (Swift does not import the macro): leaves the access time as it is.
    #if canImport(Darwin)
    static let omitTime = -2
    #else
    static let omitTime = (1 << 30) - 2
    #endif

    /// `date` as a `timespec`; `nil` for a date no file system stores (not finite, or beyond
    /// ±30 million years).
    static func fileTime(of date: Date) -> timespec? {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 1e15 else { return nil }
        let seconds = interval.rounded(.down)
        let nanoseconds = min(max(Int(((interval - seconds) * 1e9).rounded(.down)), 0), 999_999_999)
        return timespec(tv_sec: Int(seconds), tv_nsec: nanoseconds)
    }

    /// `2026-12-06T061502Z`: the RFC 3339 UTC time to the second without its colons, so it sorts
    /// and is valid in a file name on every file system (any date: it is clamped to years 1…9999).
    static func stamp(_ date: Date) -> String {
        RFC3339.string(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))).replacingOccurrences(of: ":", with: "")
    }
}
