import Foundation
import Manifest
import StationClient

/// One change a sync makes, as a plan shows it and a report confirms it.
public struct SyncAction: Sendable, Hashable, CustomStringConvertible {
    /// What the action does (a struct with static members: end a `switch` over it with `default:`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The kind's name (`"upload"`).
        public let description: String
        private init(_ name: String = #function) { description = name }

        /// A local file is published (new, or a new version of a synced one; the old post is
        /// removed after the new one is published). Its metadata carries the plaintext's SHA-256
        /// and the post it replaces (`DriveFileMetadata`'s `sha256` and `replaces`).
        public static var upload: Kind { Kind() }
        /// A post is downloaded, checked against the SHA-256 its metadata states, and put in place
        /// atomically (new, or a new version: the local file it replaces goes to the trash first,
        /// and counts as a deletion).
        public static var download: Kind { Kind() }
        /// A local file deleted on another device goes to the trash (`.cipher-sync/trash`).
        public static var deleteLocal: Kind { Kind() }
        /// A post whose file was deleted here is removed from the namespace.
        public static var deleteRemote: Kind { Kind() }
        /// Both sides changed: the local version is kept under ``SyncAction/conflictCopyPath`` (and
        /// published there), the station's takes the name.
        public static var conflict: Kind { Kind() }
        /// A file moved or renamed (a synced file gone from one path, its content new at another):
        /// on the side where it moved, published at the new path (this station's API has no
        /// rename: a `/post` carries the file) and then the old post removed; on the other side,
        /// renamed in place, with nothing downloaded and nothing trashed. Not a deletion.
        /// ``SyncAction/path`` is the new path, ``SyncAction/conflictCopyPath`` the old one.
        public static var move: Kind { Kind() }
        /// A version at the same remote path that does not follow the synced one (made beside it,
        /// on another device or by the station): kept as a copy under ``SyncAction/conflictCopyPath``
        /// on both sides, then its post is removed. Versions with the same stated content are one
        /// file: the extra posts are removed (a `deleteRemote`), never copied.
        public static var duplicate: Kind { Kind() }
    }

    /// What it does.
    public let kind: Kind
    /// The file's path relative to the folder (`documents/notes.txt`).
    public let path: String
    /// The bytes it transfers (both ways for a conflict).
    public let byteCount: Int64
    /// Where the other version goes, for ``Kind/conflict`` and ``Kind/duplicate``; where the file
    /// was, for ``Kind/move``.
    public let conflictCopyPath: String?
    /// Why (`"new here"`, `"changed on the station"`, …).
    public let reason: String
    /// Whether it deletes a file or a post a user had, or replaces a local file with a version
    /// from the station (the old one goes to the trash): what ``SyncOptions/maximumDeletions`` counts.
    public let isDeletion: Bool
    /// What a removal takes away, in bytes: the local file's size for a file to the trash or a
    /// file a download replaces, the synced file's size for a post removed (or the size its
    /// metadata states); `nil` for an action that removes nothing, or when no size is known.
    public internal(set) var removedByteCount: Int64?
    let step: SyncStep
    /// The copy a ``Kind/conflict`` or ``Kind/duplicate`` makes, as the planner named it.
    var madeCopy: ConflictCopy? = nil

    /// The conflict copy, as values: for a ``Kind/conflict`` or ``Kind/duplicate``, the copy it
    /// makes (``ConflictCopy/originalPath`` is ``path``, ``ConflictCopy/copyPath`` is
    /// ``conflictCopyPath``, with the device and time); for any other action, the copy its file
    /// is, read from its name (a download of a copy another device made); otherwise `nil`.
    public var conflict: ConflictCopy? { madeCopy ?? ConflictCopy(parsing: path) }

    /// `"upload documents/notes.txt (12 KB, new here)"`.
    public var description: String {
        "\(kind) \(path)" + (conflictCopyPath.map { " → \($0)" } ?? "") + " (\(byteCount) bytes, \(reason))"
    }

    public static func == (lhs: SyncAction, rhs: SyncAction) -> Bool { lhs.step == rhs.step }
    public func hash(into hasher: inout Hasher) { hasher.combine(step) }
}

/// What an action does, as the run executes it.
enum SyncStep: Sendable, Hashable {
    /// Publish the local file as the successor of `ancestor` (the post the state had for it);
    /// then remove `replacing` (publish first, never the reverse).
    case upload(SyncPath, FileStamp, replacing: String?, ancestor: String?, audience: Audience)
    /// Download the post to the path: where the file of stamp `replacing` is (moved to the trash
    /// first), or only where nothing is; then remove `supersedes`.
    case download(SyncPath, postCID: String, replacing: FileStamp?, supersedes: [String])
    case trash(SyncPath, FileStamp)
    case deleteRemote(SyncPath, postCID: String)
    /// Rename the local file to `copy` and publish it there; download the post to the path;
    /// remove `supersedes`.
    case conflict(SyncPath, FileStamp, copy: SyncPath, postCID: String, supersedes: [String])
    /// Download the post to `copy`, publish it there, remove the post.
    case duplicate(SyncPath, copy: SyncPath, postCID: String)
    /// Publish the file moved here from `from` as the successor of `ancestor` (the post synced at
    /// `from`), then remove that post.
    case publishMove(SyncPath, from: SyncPath, FileStamp, ancestor: String, audience: Audience)
    /// Rename the local file at `from` (of stamp `stamp`) to the path, where the post `postCID`
    /// (the moved version) now is.
    case renameLocal(SyncPath, from: SyncPath, FileStamp, postCID: String)
}

/// A file or post the sync leaves alone, and why.
public struct SkippedItem: Sendable, Hashable, CustomStringConvertible {
    /// Why an item is skipped.
    public struct Reason: Sendable, Hashable, CustomStringConvertible {
        /// A short machine-readable name (`"symbolicLink"`).
        public let kind: String
        /// A readable explanation.
        public let description: String

        /// A symbolic link in the folder: never followed.
        public static let symbolicLink = Reason(kind: "symbolicLink", description: "a symbolic link (not followed)")
        /// A device, socket or pipe in the folder.
        public static let specialFile = Reason(kind: "specialFile", description: "not a regular file")
        /// A file or folder that cannot be read (permissions, an I/O error, gone while it was
        /// read): nothing under it is decided in this sync, on either side.
        public static let unreadable = Reason(kind: "unreadable", description: "cannot be read (nothing decided for it in this sync)")
        /// A public post (unencrypted and permanent): not synced, so no local edit republishes it in the open.
        public static let publicPost = Reason(kind: "publicPost", description: "a public post (not synced)")
        /// A post without drive metadata (no `filename`).
        public static let notADriveFile = Reason(kind: "notADriveFile", description: "no drive file metadata")
        /// A name no file system could store safely, or that could leave the folder.
        public static func invalidName(_ why: String) -> Reason { Reason(kind: "invalidName", description: "refused name: \(why)") }
        /// A name equal, ignoring case and Unicode normalization, to another file's.
        public static func nameCollision(with other: String) -> Reason {
            Reason(kind: "nameCollision", description: "differs from \(other) only in case or normalization")
        }
        /// Left for a later sync: more versions at one path, or more posts to compare by
        /// downloading, than one sync handles (a listing cannot make one plan download or copy
        /// without bound).
        public static let deferred = Reason(kind: "deferred", description: "more than one sync handles here; the next sync continues")
        /// A local file larger than the station accepts (its upload limit, less the request's
        /// own bytes): never uploaded, and nothing decided for its path.
        public static func tooLarge(limit: Int64) -> Reason {
            Reason(kind: "tooLarge", description: "larger than the \(limit) bytes the station accepts in one upload")
        }
        /// The sync's work folder (``SyncOptions/workFolder``) inside the synced folder: never
        /// synced, and nothing from the station is put there.
        public static let workFolder = Reason(kind: "workFolder", description: "the sync's own work folder (not synced)")
        /// A post the listing could not open.
        public static func unreadablePost(_ why: String) -> Reason { Reason(kind: "unreadablePost", description: why) }
    }

    /// The path relative to the folder, or for a post, the name it would have had (or its CID).
    public let path: String
    /// Whether it is a post of the station (otherwise a local file).
    public let isRemote: Bool
    /// Why it is skipped.
    public let reason: Reason

    init(path: String, isRemote: Bool = false, reason: Reason) {
        self.path = path
        self.isRemote = isRemote
        self.reason = reason
    }

    /// `"link.txt: a symbolic link (not followed)"`.
    public var description: String { "\(path)\(isRemote ? " (station)" : ""): \(reason)" }
}

/// What a sync will do, decided from three sides: the folder, the namespace's listing and the sync
/// state the last sync left. Make one with ``DriveSync/plan()``, show it, then ``DriveSync/run(_:progress:)``.
public struct SyncPlan: Sendable {
    /// The changes, in the order they run.
    public let actions: [SyncAction]
    /// Files and posts left alone.
    public let skipped: [SkippedItem]
    /// Journal entries of an interrupted sync that this plan resolved.
    public let resumedActionCount: Int
    /// How many deletions the options allow (``SyncOptions/maximumDeletions``; by default half
    /// of ``highWaterMark``).
    public let deletionLimit: Int
    /// The most files the folder has had in sync since deletions past the limit were last allowed:
    /// what the default limit is measured against.
    public let highWaterMark: Int
    /// The files in sync once the plan has run, as far as planning can tell.
    public let projectedFileCount: Int
    /// Whether the plan also stops when it leaves fewer than ``highWaterMark`` minus
    /// ``deletionLimit`` files (the default limit; an explicit one counts this run's deletions only).
    let limitsShrinking: Bool
    /// When the plan was made.
    public let date: Date
    let state: SyncState
    /// The state the plan was made from: a run refuses the plan when the stored state differs.
    let original: SyncState
    /// Whether the state must be written before the first action: planning changed it (the
    /// journal resolved, files adopted, new stamps) or it is not all in the checkpoint item.
    let needsCheckpoint: Bool
    var posts: [String: ListedPost<DriveFileMetadata>]
    /// The files of the station the plan decided from: the listing's drive posts inside
    /// ``SyncOptions/remoteRoot`` whose names the sync takes, each with its remote path and its
    /// path in the folder (posts it leaves alone are in ``skipped``; posts outside the root in
    /// neither). Show them as the station's side of the folder without listing again. In a
    /// local-only plan (``isLocalOnly``), the files as the sync state last saw them on the station
    /// (no modification time): what that plan decided from. A plan never decides from the
    /// offline listing, which would take every post published since for a deletion.
    public internal(set) var remoteFiles: [RemoteFile] = []
    /// The rules the plan followed (``SyncOptions/ignoreRules`` and the folder's
    /// `.cipherignore`): ignored paths got no decision on either side. Their
    /// ``IgnoreRules/problems`` name lines of `.cipherignore` that were left out.
    public internal(set) var ignoreRules = IgnoreRules.none
    /// Whether the plan was made without the station (``DriveSync/planLocalChanges()``): it shows
    /// what waits in the folder, and never runs (``DriveSync/run(_:progress:)`` refuses it).
    public internal(set) var isLocalOnly = false

    /// The deletions of the plan, in order (``SyncAction/isDeletion``): what to show a user before
    /// letting them through with ``DriveSync/run(_:approvingDeletions:progress:)``.
    public var deletions: [SyncAction] { actions.filter(\.isDeletion) }
    /// Files deleted locally (to the trash) or posts removed, as ``SyncAction/isDeletion`` counts them.
    public var deletionCount: Int { actions.filter(\.isDeletion).count }
    /// Whether the plan deletes more than ``deletionLimit``, or (with the default limit) would
    /// leave the folder with fewer than ``highWaterMark`` minus ``deletionLimit`` files, as a
    /// listing that shrinks run by run would: ``DriveSync/run(_:progress:)`` then holds back every
    /// deletion (``SyncReport/heldDeletions``) and does the rest.
    public var exceedsDeletionLimit: Bool {
        deletionCount > deletionLimit || (limitsShrinking && projectedFileCount < highWaterMark - deletionLimit)
    }
    /// The bytes uploads send.
    public var uploadByteCount: Int64 { byteCount(of: [.upload, .conflict, .duplicate]) }
    /// The bytes downloads fetch.
    public var downloadByteCount: Int64 { byteCount(of: [.download, .conflict, .duplicate]) }
    /// Whether both sides already agree (nothing to do).
    public var isInSync: Bool { actions.isEmpty }

    private func byteCount(of kinds: Set<SyncAction.Kind>) -> Int64 {
        actions.filter { kinds.contains($0.kind) }.reduce(Int64(0)) { $0.addingSaturated($1.byteCount) }
    }
}

/// An action that failed; the rest of the sync went on, and the next sync tries it again.
public struct SyncFailure: Sendable, CustomStringConvertible {
    /// The file's path relative to the folder.
    public let path: String
    /// The action that failed.
    public let action: SyncAction.Kind
    /// What went wrong.
    public let message: String
    /// The error (a `StationClientError` for the station's part), if any.
    public let underlying: (any Error)?

    /// `"upload notes.txt: …"`.
    public var description: String { "\(action) \(path): \(message)" }
}

/// What a run did.
public struct SyncReport: Sendable {
    /// The actions done, in order.
    public let completed: [SyncAction]
    /// The actions that failed (tried again by the next sync).
    public let failures: [SyncFailure]
    /// The deletions held back because the plan went over the deletion limit
    /// (``SyncPlan/exceedsDeletionLimit``) and were not approved: nothing of them was done. Show
    /// them; to let exactly these through, plan again and pass them to
    /// ``DriveSync/run(_:approvingDeletions:progress:)`` (deletions that changed meanwhile, or
    /// that are new, stay held).
    public let heldDeletions: [SyncAction]
    /// Files and posts left alone (from the plan).
    public let skipped: [SkippedItem]
    /// Bytes sent and fetched.
    public let byteCount: Int64
    /// How long the run took.
    public let duration: Duration
    /// What the run removed from the trash before it began: what earlier runs put there more
    /// than ``SyncOptions/trashRetention`` ago.
    public internal(set) var emptiedTrash = EmptiedTrash()

    /// Whether the folder and the namespace now agree on every file the sync handles: no action
    /// failed and no deletion was held back. Skipped items may still need the user's attention.
    public var isInSync: Bool { failures.isEmpty && heldDeletions.isEmpty }
}

/// Where a run is, for a progress display: actions and bytes done, throughput and an estimate of
/// the time left for the whole run.
///
/// A run calls its progress handler one report at a time, in order, from the tasks of its
/// transfers: return quickly, and reach the main actor without waiting for it
/// (`Task { @MainActor in … }`), never `DispatchQueue.main.sync`, which would hold every
/// transfer in flight.
public struct SyncProgress: Sendable {
    /// Actions finished (done or failed).
    public var completedActions: Int
    /// All actions of the run.
    public var totalActions: Int
    /// Bytes transferred so far: those of the finished actions and those the actions in flight
    /// have moved; never less than in an earlier report of the run.
    public var completedBytes: Int64
    /// All bytes the run transfers.
    public var totalBytes: Int64
    /// The file being worked on (``currentAction``'s path).
    public var currentPath: String?
    /// The action being worked on: what it does, to which file, and why. With several actions in
    /// flight (``SyncOptions/transfers``), the one this report is about: the one that just started
    /// or whose bytes just moved; after one finishes, the latest started of those still in flight
    /// (`nil` when none is, and between actions).
    public var currentAction: SyncAction?
    /// The bytes of the file being transferred (``currentAction``'s) that have moved so far (0
    /// between transfers), as the client's progress handler tells them while the file is sent or
    /// fetched. A conflict or
    /// a duplicate transfers two files, one after the other: each counts from 0.
    public var currentFileBytes: Int64
    /// The size of the file being transferred, once its transfer has started; `nil` otherwise.
    public var currentFileByteCount: Int64?
    /// Time since the run started.
    public var elapsed: Duration

    /// A progress figure (for an app's tests and previews).
    public init(completedActions: Int, totalActions: Int, completedBytes: Int64, totalBytes: Int64, currentPath: String? = nil,
                currentAction: SyncAction? = nil, currentFileBytes: Int64 = 0, currentFileByteCount: Int64? = nil, elapsed: Duration) {
        self.completedActions = completedActions
        self.totalActions = totalActions
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.currentPath = currentPath ?? currentAction?.path
        self.currentAction = currentAction
        self.currentFileBytes = currentFileBytes
        self.currentFileByteCount = currentFileByteCount
        self.elapsed = elapsed
    }

    /// Bytes per second so far (`nil` before any time has passed).
    public var bytesPerSecond: Double? {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds > 0 ? Double(completedBytes) / seconds : nil
    }

    /// The time left at the throughput so far, for the bytes and the actions left (each action
    /// also waits for the station's answers, which a byte rate alone does not show): the larger
    /// of the two estimates. `nil` until something finished.
    public var estimatedTimeRemaining: Duration? {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds > 0 else { return nil }
        var estimates: [Double] = []
        if completedBytes > 0 { estimates.append(Double(totalBytes - completedBytes) * seconds / Double(completedBytes)) }
        if completedActions > 0 { estimates.append(Double(totalActions - completedActions) * seconds / Double(completedActions)) }
        guard let estimate = estimates.max() else { return nil }
        return .milliseconds(Int64(estimate * 1000))
    }
}

/// How a sync decides.
public struct SyncOptions: Sendable {
    /// The most deletions (local files to the trash, local files replaced by a version from the
    /// station, posts removed) a run makes without being asked; `nil`: half the folder's
    /// high-water mark (the most files it had in sync, at least 1), and a run that would leave
    /// fewer than the mark minus the limit stops too, so a folder cannot shrink by half over
    /// several runs unasked. Above it the run holds back its deletions and does the rest, as
    /// `rclone`'s `--max-delete` does. A run with an explicit limit resets the mark to the files
    /// it leaves.
    public var maximumDeletions: Int?
    /// Whether ``DriveSync/sync(progress:)``, ``DriveSync/plan()`` and ``DriveSync/run(_:progress:)``
    /// wait for another sync of the same folder (another process, or another `DriveSync` in this
    /// one) to finish; `false`: they throw `.busy` at once.
    public var waitsForOtherSyncs: Bool
    /// The name conflict copies of local versions carry (`notes (conflict from laptop …).txt`),
    /// as ``ConflictCopy/writtenDeviceName(_:)`` writes it; ``defaultDeviceName`` unless the app
    /// gives one (it should: a name its user knows the device by).
    public var deviceName: String
    /// Who may read files published for the first time (a new version keeps its post's audience).
    public var audience: Audience
    /// How long a run may go without progress (an action started or finished, a file hashed, or
    /// 64 KiB moved: the client's own work counts, only the station's silence does not) before it
    /// stops with `.station` (its underlying `StationClientError` is
    /// `.tooSlow`); what was done is recorded and the next sync resumes. Each download also has
    /// its own deadline (`StationClientConfiguration.minimumDownloadRate`); this bounds the run
    /// as a whole, against a station that holds a transfer open or trickles its bytes.
    /// Default five minutes; `nil` turns it off.
    public var progressTimeout: Duration? = .seconds(300)
    /// The folder of the namespace the local folder maps to (``RemoteRoot/namespace``, `/`, by
    /// default): new files are published under it, and posts outside it are not this sync's.
    /// The sync state is kept per root.
    public var remoteRoot: RemoteRoot = .namespace
    /// What never travels, before the folder's own `.cipherignore`: ``IgnoreRules/defaults``
    /// (`.DS_Store`, `Thumbs.db` and the like) unless set; ``IgnoreRules/none`` syncs them too.
    public var ignoreRules: IgnoreRules = .defaults
    /// How long the trash keeps what runs moved there (local files deleted or replaced): a run
    /// first removes what runs more than this ago trashed (``SyncReport/emptiedTrash``). Default
    /// 30 days; `nil` keeps everything (``DriveSync/emptyTrash(olderThan:)`` empties it on demand).
    public var trashRetention: Duration? = .seconds(30 * 86_400)
    /// How many actions of a run go at a time: their uploads, downloads and post removals run
    /// concurrently, up to this many, while the journal and the local file operations stay one
    /// at a time, in order (a kill at any moment still resumes with each file published exactly
    /// once). Actions on one path (or a move's two paths, a conflict's copy) never overlap and
    /// keep the plan's order. Clamped to `1...16`; default ``defaultTransfers`` (4), chosen by
    /// measurement against the emulator with a real station's 0.18 s per request: 4 at a time
    /// syncs 300 small files 3.9 times as fast as 1 and 4 files of 50 MB 1.75 times; past 4 large
    /// files gain little on two cores, and a real station, whose work per request is CPU, gains
    /// no more (see `Benchmarks/README.md`).
    ///
    /// Memory is bounded by `transfers` × the client's per-transfer budget: each transfer streams
    /// its file in constant memory (its encryption and stream buffers, measured at 1 to 3 MB a
    /// transfer) and an upload stages nothing on disk, so a run holds at most `transfers` such
    /// buffers at once.
    public var transfers: Int {
        get { storedTransfers }
        set { storedTransfers = min(max(newValue, 1), 16) }
    }
    private var storedTransfers = SyncOptions.defaultTransfers
    /// The default of ``transfers``: 4.
    public static let defaultTransfers = 4
    /// Whether a sync may keep its state in a cache store that does not survive a relaunch
    /// (`CacheStore.persistsAcrossLaunches` is `false`: an `InMemoryCacheStore`). `false` (the
    /// default): ``DriveSync/plan()``, ``DriveSync/run(_:progress:)`` and ``DriveSync/sync(progress:)``
    /// throw `.cacheStoreNotPersistent`, since a relaunch would then download and compare every
    /// file again. Set it for tests and one-shot sessions.
    public var allowsNonPersistentState: Bool
    /// Where the sync keeps its own files: the lock, the trash and `incoming` (downloads until
    /// they are checked and put in place). `nil` (the default): `.cipher-sync` at the top of the
    /// folder. Another directory must be on the folder's file system (a download is renamed from
    /// it into the folder, and a trashed file into it): it is created (mode 0700) when missing,
    /// its parent must exist, and it must not be a symbolic link, the folder itself or a folder
    /// the synced folder lies in; otherwise the sync throws `.workFolder`. Inside the folder, it
    /// is never synced (reported in ``SyncPlan/skipped`` as `workFolder`). Keep it the same
    /// from one sync to the next: the trash is where it is.
    public var workFolder: URL?
    /// Called after each write of the sync state (journal entries and results) with their count
    /// so far; throwing stops the run there, as a kill would (tests of resumption).
    var afterStateWrite: (@Sendable (Int) throws -> Void)?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - maximumDeletions: the deletion limit (`nil`: half the folder's high-water mark).
    ///   - deviceName: the name conflict copies of local versions carry: pass the one the user knows
    ///     this device by (the name it was paired with). `nil`: ``defaultDeviceName``, the short
    ///     host name on macOS and Linux, the kind of device (`iPhone`, `iPad`…) on Apple's mobile
    ///     systems, read without a DNS lookup.
    ///   - audience: the audience of files published for the first time.
    ///   - waitsForOtherSyncs: wait for another sync of the folder instead of throwing `.busy`.
    ///   - remoteRoot: the folder of the namespace the folder maps to (`/`: all of it).
    ///   - workFolder: where the lock, the trash and incoming downloads go (`nil`: `.cipher-sync` in the folder).
    ///   - allowsNonPersistentState: whether the sync state may be kept in a cache store that does
    ///     not survive a relaunch (tests, one-shot sessions).
    public init(maximumDeletions: Int? = nil, deviceName: String? = nil, audience: Audience = .selfOnly,
                waitsForOtherSyncs: Bool = false, remoteRoot: RemoteRoot = .namespace, workFolder: URL? = nil,
                allowsNonPersistentState: Bool = false) {
        self.maximumDeletions = maximumDeletions
        self.waitsForOtherSyncs = waitsForOtherSyncs
        self.deviceName = deviceName ?? Self.defaultDeviceName
        self.audience = audience
        self.remoteRoot = remoteRoot
        self.workFolder = workFolder
        self.allowsNonPersistentState = allowsNonPersistentState
    }
}

extension Int64 {
    /// `self + other`, or `Int64.max` past it: byte counts add sizes a station states, which may be anything.
    func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}
