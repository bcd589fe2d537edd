import Foundation

/// The folder of the namespace a local folder maps to: `/` (the whole namespace, the default) or a
/// sub-folder such as `/Work/`, as CipherVault shows it.
///
/// With the root `/Work/`, `notes/plan.md` in the local folder is the post with
/// `DriveFileMetadata` `path: "/Work/notes/"` and `filename: "plan.md"`, and a file CipherVault
/// puts in `/Work/` arrives at the top of the local folder. Posts outside the root are not this
/// sync's: never listed, skipped, downloaded, moved or deleted, and they count toward no limit.
///
///     var options = SyncOptions(deviceName: "laptop")
///     options.remoteRoot = try RemoteRoot("/Work/")
///
/// Roots are compared byte for byte, as paths are (`/Work/` and `/work/` are two roots). The sync
/// state is kept per root, so two folders with different roots of one namespace never share it.
public struct RemoteRoot: Sendable, Hashable, CustomStringConvertible {
    /// The root's folder names, outermost first (empty for the whole namespace).
    let components: [String]

    /// The whole namespace: `/`.
    public static var namespace: RemoteRoot { RemoteRoot(checked: []) }

    private init(checked components: [String]) { self.components = components }

    /// A root from its path, written from the top: `/Work/` (or `/Work`), `/Projects/2026/`, `/`.
    ///
    /// The path is checked as the station's paths are: no empty folder name (`//`), no `.` or `..`,
    /// no control characters, NUL or `\`, at most 255 bytes per name, 1024 bytes and 64 folders in
    /// all. It is not normalized: it must already be written as the posts' `path` is.
    ///
    /// - Throws: ``DriveSyncError`` `.invalidRoot`, saying why.
    public init(_ path: String) throws(DriveSyncError) {
        guard path.hasPrefix("/") else { throw DriveSyncError(.invalidRoot, "the remote root \(path) is not written from the top (/…/)") }
        var inner = Substring(path.dropFirst())
        if inner.hasSuffix("/") {
            inner = inner.dropLast()
            guard !inner.isEmpty else { throw DriveSyncError(.invalidRoot, "the remote root \(path) has an empty folder name") }
        }
        let components = inner.isEmpty ? [] : inner.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard components.count <= SyncPath.maximumDepth else {
            throw DriveSyncError(.invalidRoot, "the remote root \(path) is more than \(SyncPath.maximumDepth) folders deep")
        }
        for component in components {
            do {
                try SyncPath.check(component: component)
            } catch {
                throw DriveSyncError(.invalidRoot, "the remote root \(path) is refused: \(error.reason)")
            }
        }
        guard path.utf8.count <= SyncPath.maximumByteCount else {
            throw DriveSyncError(.invalidRoot, "the remote root is longer than \(SyncPath.maximumByteCount) bytes")
        }
        self.components = components
    }

    /// The root as the posts' `DriveFileMetadata` `path` starts: `/` or `/Work/`.
    public var path: String { components.isEmpty ? "/" : "/" + components.joined(separator: "/") + "/" }

    /// ``path``.
    public var description: String { path }

    /// Whether it is the whole namespace (`/`).
    public var isNamespace: Bool { components.isEmpty }

    /// The folder path (relative to the local folder, `notes/plan.md`) of a post with this
    /// `DriveFileMetadata` `path` (`/Work/notes/`; `nil` or empty for `/`) and `filename`; `nil`
    /// when the post is outside the root, or its name could not be synced (it could leave the
    /// folder, or no file system stores it).
    public func folderPath(directory: String?, filename: String) -> String? {
        (try? relative(directory: directory, filename: filename))?.description
    }

    /// The folder path of a file at `remotePath` (its `DriveFileMetadata` `path` and `filename`
    /// joined: `/Work/notes/plan.md`); `nil` outside the root or for a name that cannot be synced.
    public func folderPath(forRemotePath remotePath: String) -> String? {
        guard let slash = remotePath.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let next = remotePath.utf8.index(after: slash)
        return folderPath(directory: String(remotePath[..<next]), filename: String(remotePath[next...]))
    }

    /// The `DriveFileMetadata` `path` a file at `folderPath` (`notes/plan.md`) is published with
    /// (`/Work/notes/`); `nil` when the sync would refuse the name.
    public func remoteDirectory(forFolderPath folderPath: String) -> String? {
        (try? SyncPath(relative: folderPath)).map(directory(of:))
    }

    /// The remote path of a file at `folderPath`: its `DriveFileMetadata` `path` and `filename`
    /// joined (`/Work/notes/plan.md`); `nil` when the sync would refuse the name.
    public func remotePath(forFolderPath folderPath: String) -> String? {
        (try? SyncPath(relative: folderPath)).map { directory(of: $0) + $0.filename }
    }

    /// CipherVault's `path` of a synced file: the root, then the folders it sits in.
    func directory(of path: SyncPath) -> String {
        path.components.count <= 1 ? self.path : self.path + path.components.dropLast().joined(separator: "/") + "/"
    }

    /// Whether a post with this `DriveFileMetadata` `path` is inside the root: its path starts
    /// with the root's bytes (`/Work/`, or `/Work` itself). Every post is inside `/`.
    func contains(directory: String?) -> Bool {
        isNamespace || Self.directoryBytes(directory).starts(with: path.utf8)
    }

    /// A post's `path` as bytes ending in `/`.
    private static func directoryBytes(_ directory: String?) -> [UInt8] {
        var bytes = Array((directory ?? "").utf8)
        if bytes.last != UInt8(ascii: "/") { bytes.append(UInt8(ascii: "/")) }
        return bytes
    }

    /// The synced path of a post's `path` and `filename`: `nil` when the post is outside the root.
    ///
    /// - Throws: the refusal of a name inside the root that cannot be synced.
    func relative(directory: String?, filename: String) throws(SyncPathRefusal) -> SyncPath? {
        guard !isNamespace else { return try SyncPath(remotePath: directory, filename: filename) }
        guard contains(directory: directory) else { return nil }
        // What follows the root's bytes, from the root's closing `/` (so the next byte is a name's first).
        let rest = String(decoding: Self.directoryBytes(directory)[(path.utf8.count - 1)...], as: UTF8.self)
        return try SyncPath(remotePath: rest, filename: filename)
    }
}
