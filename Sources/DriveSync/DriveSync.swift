import Foundation
import Manifest
import PQCrypto
import StationClient

/// Keeps a local folder and a namespace of drive posts in step, both ways.
///
/// A file's remote path is CipherVault's: the post's `DriveFileMetadata` `path` plus `filename`
/// (`notes.txt` in `documents` is `path: "/documents/"`, `filename: "notes.txt"`), so files synced
/// here show in CipherVault and the other way round. Every decision is three-way, against the
/// sync state the last sync left (sealed in the client's `StationClientConfiguration.cacheStore`,
/// keyed by station, namespace and folder); see <doc:KeepingAFolderInSync>.
///
///     let sync = DriveSync(client: client, folder: folder)
///     let plan = try await sync.plan()
///     let report = try await sync.run(plan)
///
/// Uses only `StationClient`'s public calls: listing, exactly-once publishing, downloading, deleting.
public struct DriveSync: Sendable {
    /// The client of the station; the sync works in its namespace.
    public let client: StationClient
    /// The local folder, its symbolic links resolved (a link the user chose as the folder is
    /// followed; links inside it never are).
    public let folder: URL
    /// How the sync decides.
    public var options: SyncOptions

    /// A sync of `folder` with the namespace of `client`'s configuration.
    public init(client: StationClient, folder: URL, options: SyncOptions = SyncOptions()) {
        self.client = client
        self.folder = folder.standardizedFileURL.resolvingSymlinksInPath()
        self.options = options
    }

    var local: LocalFolder { LocalFolder(root: folder) }

    func stateStore() async -> SyncStateStore {
        SyncStateStore(cacheStore: client.configuration.cacheStore, station: await client.credentials.stationUID,
                       namespace: client.configuration.namespace, folder: folder)
    }

    /// Plans and runs a sync.
    ///
    /// - Throws: as ``plan()`` and ``run(_:progress:)``.
    public func sync(progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws(DriveSyncError) -> SyncReport {
        try await run(try await plan(), progress: progress)
    }

    /// Decides what a sync would do, changing nothing: scans the folder (reading only files whose
    /// size, times or file number changed), lists the namespace, and resolves what an interrupted
    /// sync left in the journal. A file present on both sides that the state does not
    /// explain, with the same size on both, is downloaded to a temporary file and compared, so an
    /// upload whose answer was lost is recognised instead of duplicated.
    ///
    /// - Throws: ``DriveSyncError``: `.folder`, `.station` when the listing fails, `.state`.
    public func plan() async throws(DriveSyncError) -> SyncPlan {
        let scan = try local.scan()
        let listing: PostListing<DriveFileMetadata>
        do {
            listing = try await client.listPosts(as: DriveFileMetadata.self)
        } catch {
            throw DriveSyncError(.station, "cannot list the namespace \(client.configuration.namespace): \(error)", underlying: error)
        }
        guard !listing.isOffline else {
            // Deciding from the offline listing would take every post since it for a deletion.
            let operation = "listing namespace \(client.configuration.namespace)"
            throw DriveSyncError(.station, "the station is unreachable (only the offline listing could be read)",
                                 underlying: StationClientError(.unreachable, operation: operation, message: "the station is unreachable"))
        }
        let (state, isCheckpointed) = try await stateStore().load()
        var planner = Planner(sync: self, state: state, scan: scan, listing: listing)
        planner.isCheckpointed = isCheckpointed
        return try await planner.plan()
    }

    /// Runs `plan`: each action journalled in the sync state before and after, so a run stopped at
    /// any point (cancelled, killed, the station failing) resumes with the next ``plan()`` without
    /// a duplicate post, a lost file or a half-written one. A failed action is reported and the run
    /// goes on; the next sync tries it again.
    ///
    /// - Throws: ``DriveSyncError``: `.tooManyDeletions` (nothing changed), `.state`, `.cancelled`.
    public func run(_ plan: SyncPlan, progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws(DriveSyncError)
        -> SyncReport {
        guard !plan.exceedsDeletionLimit else {
            throw DriveSyncError(.tooManyDeletions, "the sync would delete \(plan.deletionCount) files; the limit is \(plan.deletionLimit)")
        }
        var runner = Runner(sync: self, plan: plan, store: await stateStore(), progress: progress)
        return try await runner.run()
    }

    /// Forgets the sync state of this folder: the next sync compares both sides afresh (files the
    /// same on both are recognised; the rest is copied, nothing deleted).
    ///
    /// - Throws: ``DriveSyncError`` `.state` when the cache store cannot be written.
    public func forgetState() async throws(DriveSyncError) {
        try await stateStore().delete()
    }

    /// The metadata a local file is published with: CipherVault's fields.
    func metadata(for path: SyncPath, stamp: FileStamp) -> DriveFileMetadata {
        let pathExtension = (path.filename as NSString).pathExtension
        return DriveFileMetadata(filename: path.filename, mimeType: DriveFileMetadata.mimeType(forPathExtension: pathExtension),
                                 sizeBytes: Int(stamp.size), createdAt: Int(Date().timeIntervalSince1970),
                                 modifiedAt: Int(stamp.modified / 1_000_000), path: path.remoteDirectory)
    }
}
