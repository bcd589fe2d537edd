import Foundation
import Manifest
import StationClient

/// A file on the station, as the listing behind a plan showed it (``SyncPlan/remoteFiles``): a
/// drive post inside the ``SyncOptions/remoteRoot`` whose name the sync takes. Every field but
/// the paths is the station's word, stated in the post's sealed metadata.
public struct RemoteFile: Sendable, Hashable, CustomStringConvertible {
    /// Its remote path: the post's `DriveFileMetadata` `path` and `filename` joined, the root
    /// included (`/Work/notes/plan.md`).
    public let remotePath: String
    /// Its path relative to the local folder (`notes/plan.md`): where the sync puts it.
    public let path: String
    /// The post's CID.
    public let postCID: String
    /// The plaintext's size its metadata states, in bytes.
    public let size: Int64?
    /// When the file was last modified, as its metadata states (`modifiedAt`).
    public let modified: Date?
    /// The plaintext's SHA-256 its metadata states (lowercase hex), for files a sync published.
    public let sha256: String?

    /// The conflict copy its name says it is (a copy another device made, or a version the
    /// station held beside another), or `nil`: read from ``path`` by ``ConflictCopy/init(parsing:)``.
    public var conflict: ConflictCopy? { ConflictCopy(parsing: path) }

    /// `"/Work/notes/plan.md (bafy…)"`.
    public var description: String { "\(remotePath) (\(postCID))" }

    /// The files of `versions` (the listing's, inside `root`), in the listing's order.
    static func files(_ versions: [RemoteVersion], posts: [String: ListedPost<DriveFileMetadata>], root: RemoteRoot) -> [RemoteFile] {
        versions.map { version in
            let modified = posts[version.postCID]?.metadata?.modifiedAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
            return RemoteFile(remotePath: root.directory(of: version.path) + version.path.filename, path: version.path.description,
                              postCID: version.postCID, size: version.statedSize, modified: modified, sha256: version.sha256)
        }
    }
}
