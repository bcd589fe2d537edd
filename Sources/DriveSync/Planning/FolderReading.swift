import Foundation
import Manifest
import PQCrypto
import StationClient

/// The planner's reads of a real folder and station: a local file hashed through the descriptor
/// the folder opened (the regular file the scan saw), a post without a stated digest downloaded
/// into the folder's `incoming` and hashed there (emptied by every plan and run).
struct FolderReading: PlannerReading {
    let client: StationClient
    let local: LocalFolder
    let posts: [String: ListedPost<DriveFileMetadata>]

    func localDigest(of path: SyncPath, stamp: FileStamp) -> (digest: [UInt8], stamp: FileStamp)? {
        guard let file = try? local.open(path, expecting: nil), file.stamp.fileNumber == stamp.fileNumber,
              file.stamp.device == stamp.device, let digest = try? file.sha256(), file.unchanged() else { return nil }
        return (digest, file.stamp)
    }

    func remoteDigest(of version: RemoteVersion) async -> String? {
        guard let post = posts[version.postCID], let incoming = try? local.createIncoming() else { return nil }
        do {
            try await client.download(post, into: incoming.handle)
            return Hex.encode(try incoming.sha256())
        } catch {
            return nil
        }
    }
}
