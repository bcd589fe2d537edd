#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ClassicalCrypto

/// An open directory of the synced folder, closed on deinit.
///
/// Every look and change the sync makes goes through one, reached component by component from
/// the folder's root with `O_NOFOLLOW | O_DIRECTORY`: a path string is resolved afresh by each
/// call, so a folder swapped for a symbolic link between two calls would lead outside the folder;
/// a descriptor stays on the directory it was opened on, and a link on the way is refused.
final class DirectoryDescriptor: Sendable {
    let descriptor: Int32
    /// How it was reached, for messages (`.` for the folder itself).
    let name: String

    private init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    deinit { _ = close(descriptor) }

    static let openFlags: Int32 = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC

    /// Opens the directory at `path` (its last component must not be a symbolic link).
    static func open(path: String) throws(SyncPathRefusal) -> DirectoryDescriptor {
        let descriptor = systemOpen(path, openFlags)
        guard descriptor >= 0 else {
            let code = errno
            throw refusal(opening: path, code: code, kind: try? linkStatus(at: path))
        }
        return DirectoryDescriptor(descriptor: descriptor, name: ".")
    }

    /// Opens the directory `name` in this one: refused when it is a symbolic link (never
    /// followed), not a directory, or absent (`code` `ENOENT`).
    func openDirectory(_ name: String) throws(SyncPathRefusal) -> DirectoryDescriptor {
        try openDirectory(bytes: Array(name.utf8))
    }

    /// As ``openDirectory(_:)``, for a name as a listing gives it (not necessarily UTF-8).
    func openDirectory(bytes: [UInt8]) throws(SyncPathRefusal) -> DirectoryDescriptor {
        let cName = try Self.cName(bytes)
        let name = Self.display(cName)
        let child = openat(descriptor, cName, Self.openFlags)
        guard child >= 0 else {
            let code = errno
            throw Self.refusal(opening: name, code: code, kind: try? status(of: cName))
        }
        return DirectoryDescriptor(descriptor: child, name: self.name == "." ? name : self.name + "/" + name)
    }

    /// Opens the directory `name` in this one, creating it with `mode` when absent.
    func openDirectory(_ name: String, creatingWithMode mode: mode_t) throws(SyncPathRefusal) -> DirectoryDescriptor {
        do {
            return try openDirectory(name)
        } catch where error.code == ENOENT {
            // Created by someone else meanwhile (EEXIST) is as good, if it is a directory: the open checks.
            if mkdirat(descriptor, try Self.cName(name), mode) != 0 {
                let code = errno
                guard code == EEXIST else {
                    throw SyncPathRefusal("cannot create the folder \(name): \(Self.errnoText(code))", code: code)
                }
            }
            return try openDirectory(name)
        }
    }

    /// Opens the directories `components` down from this one, each a real directory; with `mode`,
    /// the missing ones are created.
    func openDirectory(components: some Sequence<String>, creatingWithMode mode: mode_t? = nil) throws(SyncPathRefusal)
        -> DirectoryDescriptor {
        var directory = self
        for component in components {
            if let mode {
                directory = try directory.openDirectory(component, creatingWithMode: mode)
            } else {
                directory = try directory.openDirectory(component)
            }
        }
        return directory
    }

    /// This directory's `fstat`.
    func status() throws(SyncPathRefusal) -> stat {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Self.failure("cannot read \(name)") }
        return status
    }

    /// What `name` in this directory is, not following a symbolic link (`fstatat`,
    /// `AT_SYMLINK_NOFOLLOW`); absent: `code` `ENOENT`.
    func status(of name: String) throws(SyncPathRefusal) -> stat { try status(of: try Self.cName(name)) }

    /// As ``status(of:)-(String)``, for a name as a listing gives it.
    func status(of name: [UInt8]) throws(SyncPathRefusal) -> stat { try status(of: try Self.cName(name)) }

    private func status(of cName: [CChar]) throws(SyncPathRefusal) -> stat {
        var status = stat()
        guard fstatat(descriptor, cName, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw Self.failure("cannot read \(Self.display(cName))")
        }
        return status
    }

    /// Opens the file `name` in this directory (`openat`); `O_CLOEXEC` and `O_NOFOLLOW` are added.
    func openFile(_ name: String, flags: Int32, mode: mode_t = 0) throws(SyncPathRefusal) -> Int32 {
        let file = openat(descriptor, try Self.cName(name), flags | O_CLOEXEC | O_NOFOLLOW, mode)
        guard file >= 0 else { throw Self.failure("cannot open \(name)") }
        return file
    }

    /// Renames `name` here to `newName` in `directory`, replacing what is there (`renameat`).
    func rename(_ name: String, to directory: DirectoryDescriptor, _ newName: String) throws(SyncPathRefusal) {
        guard renameat(descriptor, try Self.cName(name), directory.descriptor, try Self.cName(newName)) == 0 else {
            throw Self.failure("cannot rename \(name) to \(newName)")
        }
    }

    /// Renames `name` here to `newName` in `directory` only when nothing is there (`code` `EEXIST`
    /// otherwise): `renameat2(RENAME_NOREPLACE)` on Linux, `renamex_np(RENAME_EXCL)` on Darwin;
    /// where the file system (or the system) has no such rename, a hard link then an unlink of
    /// the old name, which refuses an existing name as well.
    func renameWithoutReplacing(_ name: String, to directory: DirectoryDescriptor, _ newName: String) throws(SyncPathRefusal) {
        let (from, to) = (try Self.cName(name), try Self.cName(newName))
        if Self.renameNoReplace(descriptor, from, directory.descriptor, to) == 0 { return }
        let code = errno
        guard code == EINVAL || code == ENOSYS || code == ENOTSUP || code == EOPNOTSUPP else {
            let reason = code == EEXIST ? "\(newName) already exists" : "cannot move \(name) to \(newName): \(Self.errnoText(code))"
            throw SyncPathRefusal(reason, code: code)
        }
        try link(name, to: directory, newName)
        _ = unlinkat(descriptor, from, 0)
    }

    /// Links `name` here as `newName` in `directory` (`linkat`, not following a link); an existing
    /// `newName` is `code` `EEXIST`.
    func link(_ name: String, to directory: DirectoryDescriptor, _ newName: String) throws(SyncPathRefusal) {
        guard linkat(descriptor, try Self.cName(name), directory.descriptor, try Self.cName(newName), 0) == 0 else {
            let code = errno
            let reason = code == EEXIST ? "\(newName) already exists" : "cannot link \(name) as \(newName): \(Self.errnoText(code))"
            throw SyncPathRefusal(reason, code: code)
        }
    }

    /// Removes the name `name` (not a directory) from this directory (`unlinkat`).
    func unlink(_ name: [UInt8]) throws(SyncPathRefusal) {
        let cName = try Self.cName(name)
        guard unlinkat(descriptor, cName, 0) == 0 else {
            throw Self.failure("cannot remove \(Self.display(cName))")
        }
    }

    /// Removes the directory `name` from this directory when it is empty (`unlinkat` with
    /// `AT_REMOVEDIR`: never recursive); `false` when it is not empty or cannot be removed.
    @discardableResult
    func removeEmptyDirectory(_ name: String) -> Bool { removeEmptyDirectory(bytes: Array(name.utf8)) }

    /// As ``removeEmptyDirectory(_:)``, for a name as a listing gives it.
    @discardableResult
    func removeEmptyDirectory(bytes name: [UInt8]) -> Bool {
        guard let cName = try? Self.cName(name) else { return false }
        return unlinkat(descriptor, cName, AT_REMOVEDIR) == 0
    }

    /// The names in this directory (`.` and `..` left out), as their bytes: a name need not be
    /// UTF-8, and decoding it lossily would name another file.
    func entries() throws(SyncPathRefusal) -> [[UInt8]] {
        // fdopendir takes over the descriptor it is given: a duplicate, so this one stays ours.
        let duplicate = dup(descriptor)
        guard duplicate >= 0 else { throw Self.failure("cannot read the folder \(name)") }
        guard let stream = fdopendir(duplicate) else {
            let code = errno
            _ = close(duplicate)
            throw SyncPathRefusal("cannot read the folder \(name): \(Self.errnoText(code))", code: code)
        }
        defer { _ = closedir(stream) }
        // The duplicate shares this descriptor's position: start from the top.
        rewinddir(stream)
        var names: [[UInt8]] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                guard errno == 0 else { throw Self.failure("cannot read the folder \(name)") }
                return names
            }
            let bytes = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if bytes == [0x2E] || bytes == [0x2E, 0x2E] || bytes.isEmpty { continue }
            names.append(bytes)
        }
    }

    /// Flushes this directory's entries (a rename or link in it) before the sync's next write; best effort.
    ///
    /// Ordering, not power loss: what the sync does in the folder (a download put in place, a move,
    /// the trash) reaches the disk before the journal records it as done, and a power cut that
    /// takes both leaves the state the next sync plans from. Waiting for each to survive a power
    /// cut (`F_FULLFSYNC`) would cost every synced file a drive cache flush for nothing more.
    func flush() {
        _ = DurableWrite.flush(descriptor, need: .ordering)
    }

    // MARK: Helpers

    /// The name as C wants it, NUL-terminated; a NUL inside would cut it short, so it is refused.
    static func cName(_ name: String) throws(SyncPathRefusal) -> [CChar] { try cName(Array(name.utf8)) }

    static func cName(_ bytes: [UInt8]) throws(SyncPathRefusal) -> [CChar] {
        guard !bytes.contains(0) else { throw SyncPathRefusal("a name contains NUL") }
        return bytes.map { CChar(bitPattern: $0) } + [0]
    }

    /// A name for a message (never for opening: a byte that is not UTF-8 shows as U+FFFD).
    static func display(_ cName: [CChar]) -> String {
        String(decoding: cName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// The refusal of a failed call: `what`, with `errno`'s text and code (read first, before
    /// anything else can change it).
    static func failure(_ what: String) -> SyncPathRefusal {
        let code = errno
        return SyncPathRefusal("\(what): \(errnoText(code))", code: code)
    }

    private static func linkStatus(at path: String) throws(SyncPathRefusal) -> stat {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw failure("cannot read \(path)") }
        return status
    }

    /// Why `name` did not open as a directory, from what is there (`kind`, not followed).
    private static func refusal(opening name: String, code: Int32, kind: stat?) -> SyncPathRefusal {
        if let kind, kind.isSymbolicLink {
            return SyncPathRefusal("\(name) on the way is a symbolic link (not followed)", code: ELOOP)
        }
        if let kind, !kind.isDirectory {
            return SyncPathRefusal("\(name) on the way is not a folder", code: ENOTDIR)
        }
        if code == ENOENT { return SyncPathRefusal("\(name) does not exist", code: ENOENT) }
        return SyncPathRefusal("cannot open the folder \(name): \(errnoText(code))", code: code)
    }

    /// Renames without replacing: 0, or -1 with `errno` (`ENOSYS` where there is no such call).
    private static func renameNoReplace(_ fromDirectory: Int32, _ from: [CChar], _ toDirectory: Int32, _ to: [CChar]) -> Int32 {
        #if canImport(Darwin)
        return renameatx_np(fromDirectory, from, toDirectory, to, UInt32(RENAME_EXCL))
        #elseif canImport(Glibc)
        guard let renameat2 = linuxRenameat2 else {
            errno = ENOSYS
            return -1
        }
        return renameat2(fromDirectory, from, toDirectory, to, renameNoReplaceFlag)
        #else
        errno = ENOSYS
        return -1
        #endif
    }
}

extension stat {
    /// The file type bits of `st_mode` (the same values on Linux and Darwin).
    private var fileType: UInt32 { UInt32(st_mode) & 0o170000 }
    var isRegularFile: Bool { fileType == 0o100000 }
    var isDirectory: Bool { fileType == 0o040000 }
    var isSymbolicLink: Bool { fileType == 0o120000 }
}

/// `open(2)`, under a name that ``DirectoryDescriptor/open(path:)`` does not shadow.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }

#if canImport(Glibc)
/// glibc's `renameat2` (2.28 and later), which Swift's Glibc module does not declare (it is
/// `_GNU_SOURCE` only); looked up once, `nil` on an older glibc.
private typealias Renameat2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32
private let linuxRenameat2: Renameat2? = dlopen(nil, RTLD_LAZY).flatMap { dlsym($0, "renameat2") }
    .map { unsafeBitCast($0, to: Renameat2.self) }
/// `RENAME_NOREPLACE` of <linux/fs.h>.
private let renameNoReplaceFlag: UInt32 = 1
#endif
