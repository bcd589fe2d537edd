import Foundation
import StationClient

/// What a folder's sync state says, for a user to see (`cipher sync DIR --status`): the last run,
/// the files tracked, what waits for the user, and the trash. Read by ``DriveSync/status()``
/// without the station and without the folder's lock (a sync may be running).
public struct SyncStatus: Sendable {
    /// The last run of a sync of this folder, or `nil` before the first (or after
    /// ``DriveSync/forgetState()``).
    public var lastRun: LastRun?
    /// The files the sync state tracks (in sync at the last run).
    public var trackedFileCount: Int
    /// The most files the folder had in sync: the default deletion limit is half of it.
    public var highWaterMark: Int
    /// Actions begun and not recorded as done: a run was stopped midway; the next sync resolves them.
    public var interruptedActionCount: Int
    /// The files in the trash (every sync's trash folder).
    public var trashFileCount: Int
    /// Their bytes.
    public var trashByteCount: Int64

    /// A run as it ended.
    public struct LastRun: Sendable {
        /// When it ended. A run that did nothing, failed nothing and waits on the same deletions
        /// and skipped items as the last one writes nothing (a sync that changes nothing writes
        /// nothing at all): this is then the last run that did or found something new.
        public var date: Date
        /// Its actions done.
        public var completedActionCount: Int
        /// Its actions that failed (tried again by the next sync).
        public var failureCount: Int
        /// The deletions it held back (over the deletion limit, not approved): up to
        /// ``SyncStatus/maximumListedItems`` of them; ``heldDeletionCount`` counts all.
        public var heldDeletions: [String]
        /// How many deletions it held back.
        public var heldDeletionCount: Int
        /// What it left alone that waits for the user (links, refused names, collisions, files
        /// too large; not what a later sync continues): up to ``SyncStatus/maximumListedItems``;
        /// ``skippedCount`` counts all.
        public var skipped: [SkippedItem]
        /// How many items it left alone.
        public var skippedCount: Int
        /// Bytes it sent and fetched.
        public var byteCount: Int64
    }

    /// The most held deletions and skipped items a status keeps by name.
    public static let maximumListedItems = 100
}

/// The stored form of ``SyncStatus/LastRun``.
struct LastRunRecord: Codable, Sendable {
    var version = 1
    var date: Date
    var completed: Int
    var failures: Int
    var held: [String]
    var heldCount: Int
    var skipped: [Skipped]
    var skippedCount: Int
    var bytes: Int64

    struct Skipped: Codable, Sendable {
        var path: String
        var isRemote: Bool
        var kind: String
        var message: String
    }

    init(_ report: SyncReport, date: Date) {
        self.date = date
        completed = report.completed.count
        failures = report.failures.count
        let limit = SyncStatus.maximumListedItems
        held = report.heldDeletions.prefix(limit).map(\.path)
        heldCount = report.heldDeletions.count
        let lasting = report.skipped.filter { $0.reason.kind != SkippedItem.Reason.deferred.kind }
        skipped = lasting.prefix(limit).map { Skipped(path: $0.path, isRemote: $0.isRemote, kind: $0.reason.kind, message: $0.reason.description) }
        skippedCount = lasting.count
        bytes = report.byteCount
    }

    /// Whether this run (one that did nothing) has nothing new to record after `other`: no
    /// failure, and the same deletions held and items skipped.
    func sameOutcome(as other: LastRunRecord) -> Bool {
        completed == 0 && failures == 0 && held == other.held && heldCount == other.heldCount && skippedCount == other.skippedCount
            && skipped.map { [$0.path, $0.kind, $0.message] } == other.skipped.map { [$0.path, $0.kind, $0.message] }
    }

    var lastRun: SyncStatus.LastRun {
        SyncStatus.LastRun(date: date, completedActionCount: completed, failureCount: failures, heldDeletions: held, heldDeletionCount: heldCount,
                           skipped: skipped.map { SkippedItem(path: $0.path, isRemote: $0.isRemote, reason: .init(kind: $0.kind, description: $0.message)) },
                           skippedCount: skippedCount, byteCount: bytes)
    }
}

extension DriveSync {
    /// The folder's sync status: its last run, the files tracked, what waits, the trash. Reads the
    /// sync state and the trash only (no station, no lock, nothing changed).
    ///
    /// - Throws: ``DriveSyncError`` `.state` when the sync state cannot be read.
    public func status() async throws(DriveSyncError) -> SyncStatus {
        let store = await stateStore()
        let (state, _) = try await store.load()
        let trash = (try? local.walkTrash(before: nil, removing: false)) ?? EmptiedTrash()
        return SyncStatus(lastRun: try await store.loadLastRun()?.lastRun, trackedFileCount: state.files.count,
                          highWaterMark: state.folderSize, interruptedActionCount: state.pending.count,
                          trashFileCount: trash.fileCount, trashByteCount: trash.byteCount)
    }
}
