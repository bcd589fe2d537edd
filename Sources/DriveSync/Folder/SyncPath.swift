import Foundation
import Manifest

/// A file's place in the synced folder: its path relative to the folder, components joined by
/// `/` (`documents/work/notes.txt`). On the station it is CipherVault's `path` (`/documents/work/`)
/// plus `filename` (`notes.txt`).
struct SyncPath: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The components, each checked by ``SyncPath/check(component:)``.
    let components: [String]

    /// The relative path, `/`-separated.
    var description: String { components.joined(separator: "/") }
    var filename: String { components.last ?? "" }
    /// CipherVault's `path`: `/`, or `/a/b/` for a file in `a/b`.
    var remoteDirectory: String { components.count <= 1 ? "/" : "/" + components.dropLast().joined(separator: "/") + "/" }
    /// The directories it sits in, outermost first (`a`, `a/b` for `a/b/c`).
    var parents: [String] {
        guard components.count > 1 else { return [] }
        return (1..<components.count).map { components[0..<$0].joined(separator: "/") }
    }

    /// By bytes, as `==` compares: two spellings of one name sort apart, in a fixed order.
    static func < (lhs: SyncPath, rhs: SyncPath) -> Bool { lhs.description.utf8.lexicographicallyPrecedes(rhs.description.utf8) }

    // Byte for byte: Swift's `String ==` treats canonically equivalent spellings (`é` and
    // `e` + U+0301) as equal, but Linux stores them as two files; ``NameClaims`` refuses the second.
    static func == (lhs: SyncPath, rhs: SyncPath) -> Bool { lhs.description.utf8.elementsEqual(rhs.description.utf8) }
    func hash(into hasher: inout Hasher) { hasher.combine(Array(description.utf8)) }

    /// The longest component in UTF-8 bytes (NAME_MAX on Linux, macOS and Windows' NTFS).
    static let maximumComponentByteCount = 255
    /// The longest relative path in UTF-8 bytes, leaving room for the folder's own path in PATH_MAX.
    static let maximumByteCount = 1024
    /// The deepest nesting accepted.
    static let maximumDepth = 64
    /// The folder's own directory of sync data (trash, incoming downloads): never synced, and no
    /// remote name may start with it.
    static let reservedDirectory = ".cipher-sync"

    /// A checked path from components.
    ///
    /// - Throws: the reason the path cannot name a file inside the folder.
    init(components: [String]) throws(SyncPathRefusal) {
        guard !components.isEmpty else { throw .init("the name is empty") }
        guard components.count <= Self.maximumDepth else { throw .init("more than \(Self.maximumDepth) folders deep") }
        for component in components { try Self.check(component: component) }
        guard Self.fold(components[0]) != Self.fold(Self.reservedDirectory) else {
            throw .init("\(Self.reservedDirectory) is where the sync keeps its own files")
        }
        let path = components.joined(separator: "/")
        guard path.utf8.count <= Self.maximumByteCount else { throw .init("the path is longer than \(Self.maximumByteCount) bytes") }
        self.components = components
    }

    /// The path of a relative path as it is written locally (`a/b.txt`).
    init(relative text: String) throws(SyncPathRefusal) {
        try self.init(components: text.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
    }

    /// The path a station's drive metadata names: `path` (`nil` or `/` for the top) and `filename`.
    /// Both are the station's data and are checked: no `..`, no `.`, no empty component other than
    /// the leading and trailing `/` of `path`, no control characters, no `\`, bounded lengths.
    init(remotePath path: String?, filename: String) throws(SyncPathRefusal) {
        var directory = path ?? "/"
        if directory.isEmpty { directory = "/" }
        guard directory.hasPrefix("/") else { throw .init("the folder \(directory) is not written from the top (/…/)") }
        directory.removeFirst()
        if directory.hasSuffix("/") { directory.removeLast() }
        let parents = directory.isEmpty ? [] : directory.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !filename.utf8.contains(UInt8(ascii: "/")) else { throw .init("the file name contains /") }
        try self.init(components: parents + [filename])
    }

    /// Checks one component: a name a file system stores as it is, inside its directory.
    static func check(component: String) throws(SyncPathRefusal) {
        guard !component.isEmpty else { throw .init("a folder name is empty") }
        guard component != ".", component != ".." else { throw .init("\(component) names no file of its own") }
        guard component.utf8.count <= maximumComponentByteCount else {
            throw .init("a name is longer than \(maximumComponentByteCount) bytes")
        }
        for scalar in component.unicodeScalars {
            if scalar.value == 0 { throw .init("a name contains NUL") }
            if scalar.properties.generalCategory == .control { throw .init("a name contains a control character") }
            if scalar == "\\" { throw .init("a name contains \\ (a folder separator on Windows)") }
            if scalar == "/" { throw .init("a name contains /") }
        }
    }

    /// A name as case-insensitive, normalization-insensitive file systems (APFS, HFS+, NTFS) compare it.
    static func fold(_ text: String) -> String {
        text.precomposedStringWithCanonicalMapping.lowercased()
    }

    /// This path with `suffix` before the extension, its stem shortened (to one character at
    /// least) to stay within the limits: `notes (conflict from laptop 2026-12-06T061502Z).txt`;
    /// `nil` when it cannot.
    func inserting(_ suffix: String) -> SyncPath? {
        var (stem, ext) = Self.splitExtension(filename)
        // At least a character of the stem stays, so the name still reads as a copy of something.
        while (stem + suffix + ext).utf8.count > Self.maximumComponentByteCount, stem.count > 1 { stem.removeLast() }
        return try? SyncPath(components: Array(components.dropLast()) + [stem + suffix + ext])
    }
}

extension SyncPath {
    /// A file name's stem and extension: the extension from its last `.` (as a character), unless
    /// that is the name's first (`.bashrc` has none); `notes.txt` is `notes` and `.txt`.
    static func splitExtension(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }
}

/// Why a name was refused (a remote name that could write outside the folder, or a local name
/// no other device could store).
struct SyncPathRefusal: Error, Sendable {
    let reason: String
    /// The `errno` of the system call that failed, if one did (the trash tells a taken place, `ENOTDIR`, from a real failure).
    let code: Int32?
    init(_ reason: String, code: Int32? = nil) {
        self.reason = reason
        self.code = code
    }
}

/// Claims names as a case-insensitive file system would: the first spelling of a file or folder
/// name (folded) wins, and a later file whose path, or a folder on it, folds equal to a claimed
/// one under another spelling is refused. So two devices, one of them on APFS, never disagree on
/// which file a name means.
struct NameClaims {
    private var files: [String: String] = [:]
    private var folders: [String: String] = [:]

    /// Claims `path`; `nil` when it is free (or already claimed with this exact spelling), otherwise
    /// the claimed spelling it collides with.
    mutating func claim(_ path: SyncPath) -> String? {
        for parent in path.parents {
            let folded = SyncPath.fold(parent)
            if let file = files[folded] { return file }
            if let existing = folders[folded], !existing.utf8.elementsEqual(parent.utf8) { return existing }
        }
        let folded = SyncPath.fold(path.description)
        if let existing = files[folded], !existing.utf8.elementsEqual(path.description.utf8) { return existing }
        if let folder = folders[folded] { return folder }
        for parent in path.parents { folders[SyncPath.fold(parent)] = parent }
        files[folded] = path.description
        return nil
    }
}

extension DriveFileMetadata {
    /// The MIME type `DriveSync` and the `cipher` tool give a file with this extension
    /// (`application/octet-stream` when unknown), as CipherVault shows it.
    public static func mimeType(forPathExtension pathExtension: String) -> String {
        let types = [
            "txt": "text/plain", "md": "text/markdown", "html": "text/html", "csv": "text/csv", "json": "application/json",
            "pdf": "application/pdf", "zip": "application/zip", "png": "image/png", "jpg": "image/jpeg",
            "jpeg": "image/jpeg", "gif": "image/gif", "heic": "image/heic", "webp": "image/webp", "mp4": "video/mp4",
            "mov": "video/quicktime", "mp3": "audio/mpeg", "m4a": "audio/mp4",
        ]
        return types[pathExtension.lowercased()] ?? "application/octet-stream"
    }
}
