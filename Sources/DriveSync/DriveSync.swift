import Foundation
import Manifest
import PQCrypto
import StationClient

/// Keeps a local folder and a namespace of drive posts in step, both ways.
///
/// A file's remote path is CipherVault's: the post's `DriveFileMetadata` `path` plus `filename`
/// (`notes.txt` in `documents` is `path: "/documents/"`, `filename: "notes.txt"`), so files synced
/// here show in CipherVault and the other way round. The folder maps to the whole namespace, or
/// to a folder of it (``SyncOptions/remoteRoot``: `/Work/`). Every decision is three-way, against
/// the sync state the last sync left (sealed in the client's `StationClientConfiguration.cacheStore`,
/// keyed by station, namespace, remote root and folder); see <doc:KeepingAFolderInSync>.
///
///     let sync = DriveSync(client: client, folder: folder)
///     let plan = try await sync.plan()
///     let report = try await sync.run(plan)
///
/// The state must survive a relaunch: a client whose cache store lives in memory only (the
/// default for a key store other than `FileKeyStore`) is refused with `.cacheStoreNotPersistent`
/// unless ``SyncOptions/allowsNonPersistentState`` says otherwise; pass an
/// `EncryptedFileCacheStore`.
///
/// One sync of a folder runs at a time: an exclusive lock on `lock` in the work folder
/// (`.cipher-sync` by default, ``SyncOptions/workFolder``; released by the system when a process
/// dies), so a second sync throws `.busy` or waits (``SyncOptions/waitsForOtherSyncs``).
///
/// Uses only `StationClient`'s public calls: listing, exactly-once publishing from an open file,
/// downloading into one, deleting.
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

    var local: LocalFolder { LocalFolder(root: folder, workFolder: options.workFolder?.standardizedFileURL) }

    /// Refuses a cache store that does not survive a relaunch, unless the options allow it.
    func requirePersistentState() throws(DriveSyncError) {
        guard !options.allowsNonPersistentState, !client.configuration.cacheStore.persistsAcrossLaunches else { return }
        throw DriveSyncError(
            .cacheStoreNotPersistent,
            "the client's cache store does not survive a relaunch (\(type(of: client.configuration.cacheStore))), so the sync state "
                + "would be lost and the next launch would download and compare every file again: pass "
                + "StationClientConfiguration(cacheStore: EncryptedFileCacheStore(directory:keyStore:)) with a key store that persists "
                + "(a FileKeyStore gets one by default), or set SyncOptions.allowsNonPersistentState")
    }

    func stateStore() async -> SyncStateStore {
        SyncStateStore(cacheStore: client.configuration.cacheStore, station: await client.credentials.stationUID,
                       namespace: client.configuration.namespace, folder: folder, root: options.remoteRoot)
    }

    /// Plans and runs a sync, holding the folder's lock from the scan to the last action.
    ///
    /// - Throws: as ``plan()`` and ``run(_:progress:)``.
    public func sync(progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws(DriveSyncError) -> SyncReport {
        try requirePersistentState()
        let lock = try await FolderLock.acquire(local, waiting: options.waitsForOtherSyncs)
        defer { withExtendedLifetime(lock) {} }
        return try await run(try await planLocked(), progress: progress, checkingState: false)
    }

    /// Decides what a sync would do, changing nothing in the folder or on the station: scans the
    /// folder (reading only files whose size, times or file number changed), lists the namespace,
    /// and resolves what an interrupted sync left in the journal. A file present on both sides
    /// that the state does not explain is compared by the SHA-256 the post's metadata states; a
    /// post without one (published by another client), with the same size as the file, is
    /// downloaded into `incoming` in the work folder and hashed, so an upload whose answer was lost is
    /// recognised instead of duplicated.
    ///
    /// Holds the folder's lock while it plans (``SyncOptions/waitsForOtherSyncs``).
    ///
    /// - Throws: ``DriveSyncError``: `.folder`, `.offline` when the station cannot be reached (only
    ///   the offline listing could be read, or none; ``planLocalChanges()`` shows what waits in the
    ///   folder meanwhile), `.station` when the listing is refused or its answer is bad, `.state`,
    ///   `.busy` when another sync of the folder is running, `.cacheStoreNotPersistent`, `.workFolder`.
    public func plan() async throws(DriveSyncError) -> SyncPlan {
        try requirePersistentState()
        let lock = try await FolderLock.acquire(local, waiting: options.waitsForOtherSyncs)
        defer { withExtendedLifetime(lock) {} }
        return try await planLocked()
    }

    private func planLocked() async throws(DriveSyncError) -> SyncPlan {
        local.removeIncoming()
        let rules = try local.ignoreRules(after: options.ignoreRules)
        let scan = try local.scan(ignoring: rules)
        let listing: PostListing<DriveFileMetadata>
        do {
            listing = try await client.listPosts(as: DriveFileMetadata.self)
        } catch {
            let kind: DriveSyncError.Kind = switch (error as? StationClientError)?.kind {
            case .unreachable?: .offline
            case .cancelled?: .cancelled
            default: .station
            }
            throw DriveSyncError(kind, "cannot list the namespace \(client.configuration.namespace): \(error)", underlying: error)
        }
        guard !listing.isOffline else {
            // Deciding from the offline listing would take every post since it for a deletion.
            let operation = "listing namespace \(client.configuration.namespace)"
            throw DriveSyncError(.offline, "the station is unreachable (only the offline listing could be read)",
                                 underlying: StationClientError(.unreachable, operation: operation, message: "the station is unreachable"))
        }
        let (state, isCheckpointed) = try await stateStore().load()
        var posts: [String: ListedPost<DriveFileMetadata>] = [:]
        for post in listing.posts { posts[post.postCID] = post }
        let (versions, skipped) = Planner.versions(of: listing, root: options.remoteRoot)
        var plan = await decide(state: state, isCheckpointed: isCheckpointed, scan: scan, rules: rules, versions: versions,
                                skipped: skipped, posts: posts)
        plan.posts = posts
        plan.remoteFiles = RemoteFile.files(versions, posts: posts, root: options.remoteRoot)
        local.removeIncoming()
        return plan
    }

    /// What a sync would do for the folder's own changes, decided without the station: for an app
    /// to show what waits locally while the station is unreachable (`.offline`).
    ///
    /// The folder is scanned as ``plan()`` scans it and compared with the sync state the last sync
    /// left, the station taken to hold exactly the files of that state (the planner's decisions,
    /// with the state's view of the station as the listing): new and changed files are uploads,
    /// files deleted here are `deleteRemote`s, moved ones are moves. What changed on the station
    /// since the last sync is not known, so no download, conflict or local deletion shows.
    /// Nothing is sent to the station and nothing of the folder's files or the state changes
    /// (the work folder and its lock are created when missing, as for any sync).
    ///
    /// The plan is for display only (``SyncPlan/isLocalOnly``): ``run(_:progress:)`` refuses it
    /// with `.planOutdated`; once the station is back, ``plan()`` again.
    ///
    /// - Throws: ``DriveSyncError``: `.folder`, `.workFolder`, `.state`, `.busy` when another sync
    ///   of the folder is running.
    public func planLocalChanges() async throws(DriveSyncError) -> SyncPlan {
        let lock = try await FolderLock.acquire(local, waiting: options.waitsForOtherSyncs)
        defer { withExtendedLifetime(lock) {} }
        let rules = try local.ignoreRules(after: options.ignoreRules)
        let scan = try local.scan(ignoring: rules)
        let (state, isCheckpointed) = try await stateStore().load()
        // The station as the state last saw it: every synced file's post, unchanged. Each states
        // its digest, and the reading has no posts, so no comparison ever downloads.
        let versions = state.files.sorted { $0.key < $1.key }.map { path, entry in
            RemoteVersion(postCID: entry.postCID, path: path, statedSize: entry.stamp.size, sha256: entry.sha256, replaces: nil,
                          createdAt: nil)
        }
        var plan = await decide(state: state, isCheckpointed: isCheckpointed, scan: scan, rules: rules, versions: versions,
                                skipped: [], posts: [:])
        plan.isLocalOnly = true
        plan.remoteFiles = RemoteFile.files(versions, posts: [:], root: options.remoteRoot)
        return plan
    }

    /// The planner's decisions over a state, a scan and the station's versions (read through `posts`).
    private func decide(state: SyncState, isCheckpointed: Bool, scan: LocalFolder.Scan, rules: IgnoreRules, versions: [RemoteVersion],
                        skipped: [SkippedItem], posts: [String: ListedPost<DriveFileMetadata>]) async -> SyncPlan {
        var planner = Planner(options: options, reading: FolderReading(client: client, local: local, posts: posts), state: state,
                              scan: scan, versions: versions, skipped: skipped, date: Date())
        planner.isCheckpointed = isCheckpointed
        planner.largestUpload = largestUpload()
        planner.ignoreRules = rules
        var plan = await planner.plan()
        plan.ignoreRules = rules
        return plan
    }

    /// Runs `plan`: each action journalled in the sync state before and after, so a run stopped at
    /// any point (cancelled, killed, the station failing) resumes with the next ``plan()`` without
    /// a duplicate post, a lost file or a half-written one. A failed action is reported and the run
    /// goes on; the next sync tries it again.
    ///
    /// Holds the folder's lock while it runs (``SyncOptions/waitsForOtherSyncs``), and runs only a
    /// plan made from the sync state as it is now: a sync that ran since the plan was made makes
    /// it `.planOutdated` (plan again).
    ///
    /// A plan over the deletion limit (``SyncPlan/exceedsDeletionLimit``) runs without its
    /// deletions: they are held back and listed in ``SyncReport/heldDeletions``, the rest is done.
    /// To let through the deletions a user saw, ``run(_:approvingDeletions:progress:)``.
    ///
    /// A run that shows no progress for ``SyncOptions/progressTimeout`` stops with `.station`.
    ///
    /// - Throws: ``DriveSyncError``: `.planOutdated` (nothing changed; also for a local-only plan),
    ///   `.busy`, `.state`, `.cancelled`, `.offline` when the station cannot be reached and
    ///   `.station` when it is too slow or the run stalled (the run stops there; the next sync
    ///   resumes), `.cacheStoreNotPersistent`, `.workFolder`.
    public func run(_ plan: SyncPlan, progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws(DriveSyncError)
        -> SyncReport {
        try await run(plan, approvingDeletions: [], progress: progress)
    }

    /// Runs `plan` as ``run(_:progress:)`` does, with the deletions a user approved let through
    /// whatever the deletion limit: the plan the user saw runs as it is, with no new plan and no
    /// change of ``SyncOptions/maximumDeletions``.
    ///
    /// A deletion of `plan` runs when an action of `approvedDeletions` is the same deletion: the
    /// same kind and path, of the same post, and for a local file, of the file as the scan saw it
    /// (its size, times and file number). Pass ``SyncPlan/deletions`` of the plan shown, or
    /// ``SyncReport/heldDeletions`` of an earlier run with a new plan: deletions that are still
    /// the same go through, and any other deletion of the plan (one the user never saw) is held
    /// back as the limit decides (``SyncReport/heldDeletions``), never run. Approved deletions
    /// the plan does not have are ignored.
    ///
    /// What changed since the plan never adds a deletion: a run does only the plan's actions, and
    /// each checks its file first (a local file edited since the plan is not trashed or replaced:
    /// that action fails and the next sync decides again). A plan whose sync state changed (a sync
    /// ran since) is refused with `.planOutdated`: plan again and approve with the deletions the
    /// user saw, as above. When every deletion ran approved, the folder's high-water mark starts
    /// again from the files it has, as after a run with an explicit limit.
    ///
    /// - Throws: as ``run(_:progress:)``.
    public func run(_ plan: SyncPlan, approvingDeletions approvedDeletions: [SyncAction],
                    progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws(DriveSyncError) -> SyncReport {
        try requirePersistentState()
        let lock = try await FolderLock.acquire(local, waiting: options.waitsForOtherSyncs)
        defer { withExtendedLifetime(lock) {} }
        return try await run(plan, approving: Set(approvedDeletions.filter(\.isDeletion)), progress: progress, checkingState: true)
    }

    private func run(_ plan: SyncPlan, approving approved: Set<SyncAction> = [], progress: (@Sendable (SyncProgress) -> Void)?,
                     checkingState: Bool) async throws(DriveSyncError) -> SyncReport {
        guard !plan.isLocalOnly else {
            throw DriveSyncError(.planOutdated, "a local-only plan (made without the station) cannot run: plan again once the station is reachable")
        }
        let store = await stateStore()
        if checkingState {
            guard try await store.load().state == plan.original else {
                throw DriveSyncError(.planOutdated, "the folder was synced since this plan was made: plan again")
            }
        }
        // The trash keeps what runs moved there for the retention, then goes (best effort: a
        // trash that cannot be emptied is reported by `emptyTrash`, never a reason not to sync).
        let emptied = options.trashRetention.flatMap { retention in
            try? local.walkTrash(before: Date(timeIntervalSinceNow: -Double(retention.components.seconds)), removing: true)
        } ?? EmptiedTrash()
        let sync = self
        var report = try await ProgressWatchdog.run(timeout: options.progressTimeout, operation: "syncing \(folder.path)") {
            (watchdog: ProgressWatchdog?) async throws(DriveSyncError) -> SyncReport in
            var runner = Runner(sync: sync, plan: plan, approved: approved, store: store,
                                progress: watchdog.map { $0.watching(progress) } ?? progress, watchdog: watchdog)
            return try await runner.run()
        }
        report.emptiedTrash = emptied
        // A run that did nothing and found what the last one found writes nothing at all.
        let record = LastRunRecord(report, date: Date())
        // For display only: a record that cannot be read or written never costs the report.
        var unchanged = false
        if report.completed.isEmpty && !plan.needsCheckpoint, let last = try? await store.loadLastRun() { unchanged = record.sameOutcome(as: last) }
        if !unchanged { try? await store.saveLastRun(record) }
        return report
    }

    /// The rules this folder's syncs follow: ``SyncOptions/ignoreRules`` and then the folder's
    /// `.cipherignore` (see ``IgnoreRules`` for the syntax).
    ///
    /// - Throws: ``DriveSyncError`` `.folder` when `.cipherignore` is there but cannot be read.
    public func ignoreRules() throws(DriveSyncError) -> IgnoreRules {
        try local.ignoreRules(after: options.ignoreRules)
    }

    /// Forgets the sync state of this folder: the next sync compares both sides afresh (files the
    /// same on both are recognised by their stated digests; the rest is copied, nothing deleted).
    /// Only the sync state and the last run's outcome go: the client's post keys and offline
    /// listing stay, so the next sync sends no `/rewrap` for posts it knew.
    ///
    /// - Throws: ``DriveSyncError`` `.state` when the cache store cannot be written.
    public func forgetState() async throws(DriveSyncError) {
        try await stateStore().delete()
    }

    /// The largest file an upload of this sync can carry, for the longest metadata a synced file
    /// can have (names and paths at their limits), so no file below it fails for its request's size.
    func largestUpload() -> Int64? {
        let longest = DriveFileMetadata(
            filename: String(repeating: "x", count: SyncPath.maximumComponentByteCount), mimeType: "application/octet-stream",
            sizeBytes: Int.max, createdAt: Int.max, modifiedAt: Int.max,
            path: options.remoteRoot.path + String(repeating: "x", count: SyncPath.maximumByteCount) + "/",
            sha256: String(repeating: "0", count: 64), replaces: String(repeating: "x", count: 128), executable: true)
        return try? client.largestPublishableFileSize(metadata: longest, audience: options.audience)
    }

    /// The metadata a local file is published with: CipherVault's fields, the plaintext's SHA-256,
    /// the post it replaces and whether it is executable.
    func metadata(for path: SyncPath, stamp: FileStamp, sha256: String, replaces: String?, executable: Bool) -> DriveFileMetadata {
        let pathExtension = (path.filename as NSString).pathExtension
        return DriveFileMetadata(filename: path.filename, mimeType: DriveFileMetadata.mimeType(forPathExtension: pathExtension),
                                 sizeBytes: Int(stamp.size), createdAt: Int(Date().timeIntervalSince1970),
                                 modifiedAt: Int(stamp.modified / 1_000_000), path: options.remoteRoot.directory(of: path),
                                 sha256: sha256, replaces: replaces, executable: executable)
    }
}
