import DriveSync
import Foundation
import Manifest
import StationClient
import ContentAddressing

/// The `drive` namespace as the CLI uses it: CipherVault's file metadata, name lookup.
enum DriveFiles {
    /// CipherVault's namespace: files put here show up in CipherVault and the other way round.
    static let namespace = "drive"

    /// DESIGN's file metadata for a local file.
    static func metadata(for file: URL) throws(CLIError) -> DriveFileMetadata {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        } catch {
            throw .failure("cannot read \(file.path): \(error.localizedDescription)")
        }
        guard (attributes[.type] as? FileAttributeType) == .typeRegular else { throw .failure("\(file.path) is not a regular file") }
        let size = (attributes[.size] as? NSNumber)?.intValue
        let modified = (attributes[.modificationDate] as? Date).map { Int($0.timeIntervalSince1970) }
        let now = Int(Date().timeIntervalSince1970)
        return DriveFileMetadata(filename: file.lastPathComponent, mimeType: DriveFileMetadata.mimeType(forPathExtension: file.pathExtension),
                                 sizeBytes: size, createdAt: now, modifiedAt: modified ?? now, path: "/")
    }

    /// The file's full path on the drive, its folder and its name (`/docs/notes.txt`); without a
    /// folder it sits at the top, as sync reads it.
    static func fullPath(_ metadata: DriveFileMetadata) -> String {
        let folder = metadata.path ?? "/"
        return folder + (folder.hasSuffix("/") ? "" : "/") + metadata.filename
    }

    /// Whether a stored filename can name a file in the current directory as it is: not empty,
    /// `.` or `..`, and without `/` or NUL (which would pick another directory or cut the name).
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    /// A downloaded post as `get` and `read --get` print it under `--json`.
    struct Saved: Encodable {
        var postCID: String
        var filename: String?
        /// Where it went: a path, or `-` for standard output.
        var output: String
        var sizeBytes: Int64
        /// For `read --get`: the followed station it came from.
        var station: String?
    }

    /// Downloads `post` where `-o` says (`get`, `read --get`, with `--force`): `-` writes the bytes
    /// `toMemory` fetches to standard output; otherwise `toFile` writes the file (by default its
    /// stored filename in the current directory) with a progress bar.
    ///
    /// - Throws: a failure when the stored filename, with no `-o`, is not a plain name.
    static func save(
        _ post: ListedPost<DriveFileMetadata>, context: CommandContext, toMemory: () async throws -> Data,
        toFile: (URL, ProgressHandler?) async throws -> Void
    ) async throws -> Saved {
        let (output, console) = (context.arguments.value("--output"), context.console)
        let name = post.metadata?.filename ?? post.postCID
        let target = output ?? name
        // The stored filename is the station's data: it never picks a directory or (being "-")
        // standard output; only the user's own `-o -` means that.
        if output == nil, !isPlainFileName(target) {
            throw CLIError.failure("the stored filename \(target) is not a plain name; use -o FILE")
        }
        if output == "-" {
            let bytes = try await toMemory()
            FileHandle.standardOutput.write(bytes)
            return Saved(postCID: post.postCID, filename: post.metadata?.filename, output: target, sizeBytes: Int64(bytes.count))
        }
        // Nothing the user has is overwritten without asking (a dangling symlink counts as there).
        var status = stat()
        if !context.arguments.has("--force"), lstat(target, &status) == 0 {
            throw CLIError.failure("\(target) already exists; add --force to replace it, or choose another name with -o FILE")
        }
        let destination = URL(fileURLWithPath: target)
        try await toFile(destination, console.progress("downloading \(name)"))
        console.finishProgress()
        let size = ((try? FileManager.default.attributesOfItem(atPath: destination.path)[.size]) as? NSNumber)?.int64Value ?? 0
        console.say("saved \(name) (\(Format.bytes(size))) to \(target)")
        return Saved(postCID: post.postCID, filename: post.metadata?.filename, output: target, sizeBytes: size)
    }

    /// The one post whose CID is `reference` or whose metadata `filename` is exactly `reference`.
    ///
    /// - Throws: a failure naming every CID when several posts have that filename, or when none matches.
    static func find(_ reference: String, in listing: PostListing<DriveFileMetadata>) throws(CLIError) -> ListedPost<DriveFileMetadata> {
        try find(reference, in: listing.posts)
    }

    /// The one post of `posts` whose CID is `reference` or whose metadata `filename` is exactly `reference`.
    ///
    /// - Throws: as ``find(_:in:)``.
    static func find(_ reference: String, in posts: [ListedPost<DriveFileMetadata>]) throws(CLIError) -> ListedPost<DriveFileMetadata> {
        if let post = posts.first(where: { $0.postCID == reference }) { return post }
        let named = posts.filter { $0.metadata?.filename == reference }
        switch named.count {
        case 1: return named[0]
        case 0: throw .failure("no file named \(reference) and no post with that CID in the \(namespace) namespace")
        default:
            throw .failure("\(named.count) files are named \(reference); use a CID: " + named.map(\.postCID).joined(separator: " "))
        }
    }
}
