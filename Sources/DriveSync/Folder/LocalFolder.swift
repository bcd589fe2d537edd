import Foundation
import SHA2
import ClassicalCrypto
import OrderedJSON

/// What the sync knows of a local file without reading it: size, modification time (microseconds
/// since 1970: what Foundation's dates carry exactly, and what `utimes` sets) and file number.
/// Equal sizes and times mean an unchanged file.
struct FileStamp: Sendable, Hashable, Codable {
    var size: Int64
    var modified: Int64
    var fileNumber: UInt64

    /// The stamp of the regular file at `url` (not following a symbolic link), or `nil` when there
    /// is nothing there; `type` is what else is there.
    static func of(_ url: URL) -> (stamp: FileStamp?, type: FileAttributeType?) {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return (nil, nil) }
        let type = attributes[.type] as? FileAttributeType
        guard type == .typeRegular else { return (nil, type) }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        let modified = (attributes[.modificationDate] as? Date).map { Int64(($0.timeIntervalSince1970 * 1e6).rounded()) } ?? 0
        let number = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0
        return (FileStamp(size: size, modified: modified, fileNumber: number), type)
    }

    /// Whether `other` is the same file content as far as a stamp tells: size and modification time.
    func matches(_ other: FileStamp) -> Bool { size == other.size && modified == other.modified }
}

/// The synced folder on disk: scanning it, and every change the sync makes to it (placing a
/// downloaded file, moving a file to the trash, renaming a conflict copy), each a single rename
/// that never replaces a file the plan did not expect.
struct LocalFolder: Sendable {
    let root: URL

    /// Where the sync keeps its own files: `.cipher-sync` in the folder (same file system, so each
    /// move is a rename).
    var dataDirectory: URL { root.appendingPathComponent(SyncPath.reservedDirectory, isDirectory: true) }
    /// Downloads in progress; emptied at the start of each sync (a killed sync leaves its part there).
    var incomingDirectory: URL { dataDirectory.appendingPathComponent("incoming", isDirectory: true) }
    /// Files deleted locally because they were deleted on another device, by sync time.
    var trashDirectory: URL { dataDirectory.appendingPathComponent("trash", isDirectory: true) }

    func url(of path: SyncPath) -> URL {
        path.components.reduce(root) { $0.appendingPathComponent($1) }
    }

    struct Scan {
        var files: [SyncPath: FileStamp] = [:]
        var skipped: [SkippedItem] = []
    }

    /// Every regular file under the folder, by path; symbolic links, special files and names no
    /// other device could store are skipped and reported, and `.cipher-sync` is left out.
    ///
    /// - Throws: `.folder` when the folder itself is not a readable directory.
    func scan() throws(DriveSyncError) -> Scan {
        let (_, type) = FileStamp.of(root)
        guard type == .typeDirectory else {
            throw DriveSyncError(.folder, "\(root.path) is not a folder" + (type == nil ? " (it does not exist)" : ""))
        }
        var scan = Scan()
        var pending: [[String]] = [[]]
        while let components = pending.popLast() {
            let directory = components.reduce(root) { $0.appendingPathComponent($1) }
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            } catch {
                if components.isEmpty { throw DriveSyncError(.folder, "cannot read \(root.path)", underlying: error) }
                scan.skipped.append(SkippedItem(path: components.joined(separator: "/"), reason: .unreadable))
                continue
            }
            for name in names.sorted() {
                if components.isEmpty && name == SyncPath.reservedDirectory { continue }
                let relative = (components + [name]).joined(separator: "/")
                let (stamp, type) = FileStamp.of(directory.appendingPathComponent(name))
                if type == .typeDirectory {
                    pending.append(components + [name])
                    continue
                }
                guard let stamp else {
                    scan.skipped.append(SkippedItem(path: relative, reason: type == .typeSymbolicLink ? .symbolicLink : .specialFile))
                    continue
                }
                do {
                    scan.files[try SyncPath(components: components + [name])] = stamp
                } catch {
                    scan.skipped.append(SkippedItem(path: relative, reason: .invalidName(error.reason)))
                }
            }
        }
        return scan
    }

    /// The SHA-256 of the file at `url`, read in constant memory.
    static func sha256(of url: URL) throws -> [UInt8] {
        try SHA2.SHA256.hash(fileAt: url)
    }

    /// Removes what a killed sync left in `incoming`.
    func removeIncoming() {
        try? FileManager.default.removeItem(at: incomingDirectory)
    }

    /// A fresh file name in `incoming` for a download (the directory is created).
    func incomingFile() throws -> URL {
        try FileManager.default.createDirectory(at: incomingDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        return incomingDirectory.appendingPathComponent(UUID().uuidString.lowercased())
    }

    /// Creates the folders `path` sits in, each a real directory: a symbolic link or a file on
    /// the way is refused, so nothing is ever written outside the folder.
    func makeParents(of path: SyncPath) throws(SyncPathRefusal) {
        var directory = root
        for component in path.components.dropLast() {
            directory.appendPathComponent(component)
            let (_, type) = FileStamp.of(directory)
            switch type {
            case .typeDirectory?: continue
            case nil:
                do {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
                } catch {
                    throw .init("cannot create the folder \(component): \(error.localizedDescription)")
                }
            case .typeSymbolicLink?: throw .init("\(component) on the way is a symbolic link (not followed)")
            default: throw .init("\(component) on the way is not a folder")
            }
        }
    }

    /// Moves `source` (a verified download) to `path`: only when `path` holds exactly the file of
    /// stamp `expected` (replaced in one rename), or nothing when `expected` is `nil` (linked, so
    /// a file that appeared meanwhile is never replaced).
    func place(_ source: URL, at path: SyncPath, replacing expected: FileStamp?) throws(SyncPathRefusal) {
        try makeParents(of: path)
        let target = url(of: path)
        let (stamp, type) = FileStamp.of(target)
        if let expected {
            guard let stamp, stamp.matches(expected), stamp.fileNumber == expected.fileNumber else {
                throw .init("the local file changed during the sync; it is left as it is")
            }
            guard DurableWrite.rename(source.path, onto: target.path) == 0 else { throw .init("cannot put the file in place: \(Self.errnoText())") }
        } else {
            guard type == nil else { throw .init("a local file appeared there during the sync; it is left as it is") }
            guard link(source.path, target.path) == 0 else { throw .init("cannot put the file in place: \(Self.errnoText())") }
            unlink(source.path)
        }
    }

    /// Moves the file at `path` (of stamp `expected`) to `destination`, which must not exist.
    func move(_ path: SyncPath, expected: FileStamp, to destination: URL) throws(SyncPathRefusal) {
        let source = url(of: path)
        guard let stamp = FileStamp.of(source).stamp, stamp.matches(expected) else {
            throw .init("the local file changed during the sync; it is left as it is")
        }
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .init("cannot create \(destination.deletingLastPathComponent().path): \(error.localizedDescription)")
        }
        guard FileStamp.of(destination).type == nil else { throw .init("\(destination.path) already exists") }
        guard DurableWrite.rename(source.path, onto: destination.path) == 0 else { throw .init("cannot move the file: \(Self.errnoText())") }
    }

    /// The trash folder of a sync started at `date`: `.cipher-sync/trash/2026-12-06T061502Z`.
    func trash(startedAt date: Date) -> URL {
        trashDirectory.appendingPathComponent(Self.stamp(date), isDirectory: true)
    }

    /// Where `path` goes in the trash folder `trash`: its path there, or in `trash-2`, `trash-3`…
    /// when a file of that path was already trashed in the same second.
    func freeTrashPlace(for path: SyncPath, in trash: URL) -> URL {
        var folder = trash
        var attempt = 1
        while true {
            let place = path.components.reduce(folder) { $0.appendingPathComponent($1) }
            if FileStamp.of(place).type == nil || attempt >= 1000 { return place }
            attempt += 1
            folder = trash.deletingLastPathComponent().appendingPathComponent(trash.lastPathComponent + "-\(attempt)", isDirectory: true)
        }
    }

    /// `2026-12-06T061502Z`: the RFC 3339 UTC time to the second without its colons, so it sorts
    /// and is valid in a file name on every file system.
    static func stamp(_ date: Date) -> String {
        RFC3339.string(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))).replacingOccurrences(of: ":", with: "")
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
