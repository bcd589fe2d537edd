import Foundation
import Manifest
import PQCrypto
import StationClient
import Transport

/// Runs a plan's actions in order, journalling each in the sync state before and after.
struct Runner {
    let sync: DriveSync
    let plan: SyncPlan
    /// The actions this run does, in order, and the deletions it holds back.
    let actions: [SyncAction]
    let held: [SyncAction]
    let store: SyncStateStore
    let progress: (@Sendable (SyncProgress) -> Void)?
    var state: SyncState
    /// Results recorded in the journal since the last checkpoint.
    var results: [SyncChange] = []
    var completed: [SyncAction] = []
    var failures: [SyncFailure] = []
    var stateWrites = 0
    var finishedBytes: Int64 = 0
    var finishedActions = 0
    let start = ContinuousClock.now
    /// The trash folder of this run (`.cipher-sync/trash/<its start>`).
    let trash: String

    /// Whether the user approved every deletion of the plan (``DriveSync/run(_:approvingDeletions:progress:)``).
    let approvedAll: Bool

    init(sync: DriveSync, plan: SyncPlan, approved: Set<SyncAction> = [], store: SyncStateStore,
         progress: (@Sendable (SyncProgress) -> Void)?) {
        self.sync = sync
        self.plan = plan
        // Over the deletion limit, the deletions the user did not approve wait and the rest goes through.
        let waiting = { (action: SyncAction) in plan.exceedsDeletionLimit && action.isDeletion && !approved.contains(action) }
        held = plan.actions.filter(waiting)
        actions = plan.actions.filter { !waiting($0) }
        approvedAll = !approved.isEmpty && plan.actions.allSatisfy { !$0.isDeletion || approved.contains($0) }
        self.store = store
        self.progress = progress
        state = plan.state
        trash = LocalFolder.stamp(plan.date)
    }

    /// A step stopped by the station, the file system or the folder changing under it.
    struct StepFailure: Error {
        let message: String
        var underlying: (any Error)?
    }

    mutating func run() async throws(DriveSyncError) -> SyncReport {
        // In sync and nothing learned: nothing to write, not even locally.
        guard !plan.actions.isEmpty || plan.needsCheckpoint else {
            return SyncReport(completed: [], failures: [], heldDeletions: [], skipped: plan.skipped, byteCount: 0,
                              duration: ContinuousClock.now - start)
        }
        sync.local.removeIncoming()
        // What planning resolved (the journal, adopted files, new stamps) is recorded first; the
        // journal's results are folded into a checkpoint before the run's own replace them.
        if plan.needsCheckpoint { try await save(checkpoint: true) }
        let total = actions.reduce(Int64(0)) { $0.addingSaturated($1.byteCount) }
        for action in actions {
            guard !Task.isCancelled else { throw DriveSyncError(.cancelled, "cancelled before \(action.kind) \(action.path)") }
            report(total: total, current: action, bytes: 0)
            do {
                try await perform(action, total: total)
                completed.append(action)
            } catch let failure as StepFailure {
                failures.append(SyncFailure(path: action.path, action: action.kind, message: failure.message, underlying: failure.underlying))
            } catch let error as DriveSyncError {
                throw error
            } catch {
                throw DriveSyncError(.cancelled, "stopped during \(action.kind) \(action.path)", underlying: error)
            }
            finishedActions += 1
            finishedBytes = finishedBytes.addingSaturated(action.byteCount)
            report(total: total, current: nil, bytes: 0)
        }
        // An explicit limit that let every deletion through is the user's word on them: the mark
        // starts again from here.
        let approved = (sync.options.maximumDeletions != nil || approvedAll) && held.isEmpty
        state.highWaterMark = approved ? state.files.count : max(state.highWaterMark, state.files.count)
        try await save(checkpoint: true)
        sync.local.removeIncoming()
        return SyncReport(completed: completed, failures: failures, heldDeletions: held, skipped: plan.skipped, byteCount: finishedBytes,
                          duration: ContinuousClock.now - start)
    }

    func report(total: Int64, current: SyncAction?, bytes: Int64) {
        progress?(SyncProgress(completedActions: finishedActions, totalActions: actions.count, completedBytes: finishedBytes.addingSaturated(bytes),
                               totalBytes: total, currentAction: current, elapsed: ContinuousClock.now - start))
    }

    /// The bytes one action has moved across its transfers (a conflict fetches one file, then
    /// sends another; each transfer's progress starts from 0): never backwards, at most the
    /// action's ``SyncAction/byteCount``.
    final class ActionBytes: Sendable {
        private let counts = Locked((earlier: Int64(0), current: Int64(0), reported: Int64(0)))
        private let limit: Int64

        init(limit: Int64) { self.limit = limit }

        /// The action's bytes after a transfer reported `completed` of its own.
        func update(_ completed: Int64) -> Int64 {
            counts.withLock { counts in
                // A figure below the last one is the next transfer starting.
                if completed < counts.current { counts.earlier = counts.earlier.addingSaturated(counts.current) }
                counts.current = completed
                counts.reported = max(counts.reported, min(limit, counts.earlier.addingSaturated(completed)))
                return counts.reported
            }
        }
    }

    /// Writes the journal, or with `checkpoint` (and every ``SyncStateStore/checkpointInterval``
    /// results) the whole state; the test hook may stop the run after each write, as a kill would.
    mutating func save(checkpoint: Bool = false) async throws(DriveSyncError) {
        if checkpoint || results.count >= SyncStateStore.checkpointInterval {
            try await store.saveCheckpoint(state)
            results = []
        } else {
            try await store.saveJournal(pending: state.pending, results: results)
        }
        stateWrites += 1
        do {
            try sync.options.afterStateWrite?(stateWrites)
        } catch {
            throw DriveSyncError(.cancelled, "stopped after state write \(stateWrites)", underlying: error)
        }
    }

    /// Journals `entry` (before the action).
    mutating func begin(_ entry: SyncState.Pending) async throws(DriveSyncError) {
        state.pending.append(entry)
        try await save()
    }

    /// Records the action of `entry` as done with `change` to its path's entry (after the action),
    /// journalling `then` (the removals of the posts it replaced) in the same write: a stop before
    /// they are done leaves them for the next sync, never a replaced post that looks like news.
    /// `other` is a second path the change touched (a move's old path), recorded too.
    mutating func finish(_ entry: SyncState.Pending, then: [SyncState.Pending] = [], also other: SyncPath? = nil,
                         _ change: (inout SyncState) -> Void) async throws(DriveSyncError) {
        state.pending.removeAll { $0.id == entry.id }
        state.pending += then
        change(&state)
        results.append(SyncChange(path: entry.path, entry: state.files[entry.path]))
        if let other { results.append(SyncChange(path: other, entry: state.files[other])) }
        try await save()
    }

    mutating func perform(_ action: SyncAction, total: Int64) async throws {
        // The client's byte progress of each transfer, passed on with the action and the file's own figures.
        let progress = self.progress.map { handler in
            let (done, finished, count, start) = (finishedBytes, finishedActions, actions.count, start)
            let actionBytes = ActionBytes(limit: action.byteCount)
            return { @Sendable (bytes: ByteProgress) in
                handler(SyncProgress(completedActions: finished, totalActions: count,
                                     completedBytes: done.addingSaturated(actionBytes.update(bytes.completed)), totalBytes: total,
                                     currentAction: action, currentFileBytes: bytes.completed, currentFileByteCount: bytes.total,
                                     elapsed: ContinuousClock.now - start))
            } as ProgressHandler
        }
        let local = sync.local
        switch action.step {
        case let .upload(path, stamp, replacing, ancestor, audience):
            try await upload(path, stamp: stamp, replacing: replacing, ancestor: ancestor, audience: audience, progress: progress)
        case let .download(path, postCID, replacing, supersedes):
            try await download(postCID, to: path, replacing: replacing, supersedes: supersedes, progress: progress)
        case let .trash(path, stamp):
            let entry = SyncState.Pending(action: .trash, path: path, stamp: stamp)
            try await begin(entry)
            let trash = self.trash
            try attempt { () throws(SyncPathRefusal) in _ = try local.moveToTrash(path, expected: stamp, trashFolder: trash) }
            try await finish(entry) { $0.files.removeValue(forKey: path) }
        case let .deleteRemote(path, postCID):
            try await deleteRemote(postCID, at: path)
        case let .conflict(path, stamp, copy, postCID, supersedes):
            let entry = SyncState.Pending(action: .conflictRename, path: path, stamp: stamp)
            try await begin(entry)
            try attempt { () throws(SyncPathRefusal) in try local.move(path, expected: stamp, to: copy) }
            try await finish(entry) { _ in }
            try await download(postCID, to: path, replacing: nil, supersedes: supersedes, progress: progress)
            guard let moved = local.stamp(of: copy) else { throw StepFailure(message: "the conflict copy is gone") }
            try await upload(copy, stamp: moved, replacing: nil, ancestor: nil, audience: sync.options.audience, progress: progress)
        case let .publishMove(path, old, stamp, ancestor, audience):
            try await upload(path, stamp: stamp, replacing: ancestor, ancestor: ancestor, audience: audience, progress: progress,
                             movedFrom: old)
        case let .renameLocal(path, old, stamp, postCID):
            guard let entry = state.files[old] else { throw StepFailure(message: "\(old) is no longer synced") }
            let pending = SyncState.Pending(action: .move, path: old, stamp: stamp, postCIDs: [postCID])
            try await begin(pending)
            try attempt { () throws(SyncPathRefusal) in try local.move(old, expected: stamp, to: path) }
            local.removeEmptyParents(of: old)
            guard let moved = local.stamp(of: path) else { throw StepFailure(message: "the moved file is gone") }
            try await finish(pending, also: path) { state in
                state.files.removeValue(forKey: old)
                state.files[path] = SyncState.Entry(postCID: postCID, stamp: moved, sha256: entry.sha256)
            }
        case let .duplicate(_, copy, postCID):
            try await download(postCID, to: copy, replacing: nil, supersedes: [], progress: progress)
            guard let placed = local.stamp(of: copy) else { throw StepFailure(message: "the copy is gone") }
            let audience = plan.posts[postCID]?.audience ?? sync.options.audience
            try await upload(copy, stamp: placed, replacing: postCID, ancestor: nil, audience: audience, progress: progress)
        }
    }

    /// Runs a local file operation; a refusal is this action's failure.
    func attempt(_ body: () throws(SyncPathRefusal) -> Void) throws(StepFailure) {
        do { try body() } catch { throw StepFailure(message: error.reason) }
    }

    /// Runs a station call; its error is this action's failure, except cancellation and a station
    /// out of reach, which stop the run (``DriveSyncError/Kind/offline`` when it cannot be reached,
    /// ``DriveSyncError/Kind/station`` when it is too slow): every later file would fail the same
    /// way, after its own wait. What is done is in the journal; the next sync resumes.
    func station<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as StationClientError where error.kind == .cancelled {
            throw error
        } catch let error as StationClientError where Self.isOutOfReach(error) {
            throw DriveSyncError(error.kind == .unreachable ? .offline : .station,
                                 "the station is out of reach (\(error.message)); the next sync resumes", underlying: error)
        } catch {
            throw StepFailure(message: "\(error)", underlying: error)
        }
    }

    /// Whether `error` says the station or the network is gone (no answer, or one too slow), as
    /// `cipher` tells exit 4 from a refusal: not a verdict on one file.
    static func isOutOfReach(_ error: StationClientError) -> Bool {
        error.kind == .unreachable || error.kind == .tooSlow
    }

    /// Publishes the local file (journalled with its SHA-256 and stamp) as the successor of
    /// `ancestor`, then removes `replacing`. The file is hashed and encrypted through one
    /// descriptor, opened as the regular file of `stamp`; a file that changed meanwhile is left
    /// for the next sync (and a post made from it removed).
    mutating func upload(_ path: SyncPath, stamp: FileStamp, replacing: String?, ancestor: String?, audience: Audience,
                         progress: ProgressHandler?, movedFrom: SyncPath? = nil) async throws {
        let local = sync.local
        let file: OpenedFile
        do { file = try local.open(path, expecting: stamp) } catch { throw StepFailure(message: error.reason) }
        let sha: String
        do { sha = Hex.encode(try file.sha256()) } catch { throw StepFailure(message: "cannot read the file: \(error.reason)") }
        let entry = SyncState.Pending(action: .upload, path: path, sha256: sha, stamp: file.stamp, postCIDs: replacing.map { [$0] } ?? [])
        try await begin(entry)
        let metadata = sync.metadata(for: path, stamp: file.stamp, sha256: sha, replaces: ancestor ?? replacing,
                                     executable: file.isExecutable)
        let client = sync.client
        let published = try await station {
            try await client.publish(contentsOf: file.handle, metadata: metadata, audience: audience, progress: progress)
        }
        guard file.unchanged() else {
            // The post holds bytes its stated digest does not describe: it goes, the file stays for the next sync.
            state.pending.removeAll { $0.id == entry.id }
            try await deleteRemote(published.postCID, at: path)
            throw StepFailure(message: "the file changed during the upload; the next sync takes the new version")
        }
        let removals = Self.removals(of: replacing.map { [$0] } ?? [], at: path)
        let stamp = file.stamp
        try await finish(entry, then: removals, also: movedFrom) {
            $0.files[path] = SyncState.Entry(postCID: published.postCID, envelopesCID: published.envelopesCID, stamp: stamp, sha256: sha)
            if let movedFrom { $0.files.removeValue(forKey: movedFrom) }
        }
        for removal in removals { try await deleteRemote(journalled: removal) }
    }

    /// Journal entries removing `posts`, the versions a new one at `path` replaces.
    static func removals(of posts: [String], at path: SyncPath) -> [SyncState.Pending] {
        posts.map { SyncState.Pending(action: .deleteRemote, path: path, postCIDs: [$0]) }
    }

    /// Downloads the post into the folder's `incoming`, checks it against the digest its metadata
    /// states, journals its SHA-256 and puts it in place: where nothing is, or where the file of
    /// stamp `replacing` is, which goes to the trash first. Then removes `supersedes`.
    mutating func download(_ postCID: String, to path: SyncPath, replacing: FileStamp?, supersedes: [String],
                           progress: ProgressHandler?) async throws {
        guard let post = plan.posts[postCID] else { throw StepFailure(message: "the post \(postCID) is not in the listing") }
        var entry = SyncState.Pending(action: .place, path: path, postCIDs: [postCID] + supersedes)
        try await begin(entry)
        let local = sync.local
        let incoming: IncomingFile
        do { incoming = try local.createIncoming(executable: post.metadata?.executable == true) } catch { throw StepFailure(message: "cannot write in the folder: \(error.reason)") }
        let client = sync.client
        try await station { try await client.download(post, into: incoming.handle, progress: progress) }
        let sha: String
        do { sha = Hex.encode(try incoming.sha256()) } catch { throw StepFailure(message: "cannot read the download: \(error.reason)") }
        if let stated = post.metadata?.sha256, stated != sha {
            throw StepFailure(message: "the content does not match the SHA-256 its metadata states; left on the station")
        }
        // The verified file is about to go in place: from here the journal can recognise it.
        state.pending.removeAll { $0.id == entry.id }
        entry.sha256 = sha
        try await begin(entry)
        if let replacing {
            // An update keeps the permissions the local file was given here, whatever the new
            // file was created with.
            if let permissions = local.permissions(of: path) {
                do { try incoming.setPermissions(permissions) } catch { throw StepFailure(message: error.reason) }
            }
            // Nothing replaced without a copy: the local version goes to the trash first. The
            // state keeps the path's entry until the new file is in place, so a stop in between
            // downloads again (an edit elsewhere beats a deletion here).
            let trashEntry = SyncState.Pending(action: .trash, path: path, stamp: replacing)
            try await begin(trashEntry)
            let trash = self.trash
            try attempt { () throws(SyncPathRefusal) in _ = try local.moveToTrash(path, expected: replacing, trashFolder: trash) }
            state.pending.removeAll { $0.id == trashEntry.id }
        }
        let modified = post.metadata?.modifiedAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        var placed: FileStamp?
        try attempt { () throws(SyncPathRefusal) in placed = try local.place(incoming, at: path, replacing: nil, modified: modified) }
        guard let placed else { throw StepFailure(message: "the file is gone after placing it") }
        let removals = Self.removals(of: supersedes, at: path)
        try await finish(entry, then: removals) {
            $0.files[path] = SyncState.Entry(postCID: postCID, envelopesCID: post.envelopesCID, stamp: placed, sha256: sha)
        }
        for removal in removals { try await deleteRemote(journalled: removal) }
    }

    /// Removes a post (a post already gone counts as removed); the path's state entry goes too
    /// when it names that post.
    mutating func deleteRemote(_ postCID: String, at path: SyncPath) async throws {
        let entry = SyncState.Pending(action: .deleteRemote, path: path, postCIDs: [postCID])
        try await begin(entry)
        try await deleteRemote(journalled: entry)
    }

    /// Removes the post of a journalled `.deleteRemote` entry and records it done.
    mutating func deleteRemote(journalled entry: SyncState.Pending) async throws {
        guard let postCID = entry.postCIDs.first else { return }
        let client = sync.client
        do {
            _ = try await station { try await client.delete(postCID: postCID) }
        } catch let failure as StepFailure {
            guard (failure.underlying as? StationClientError)?.kind == .notFound else { throw failure }
        }
        try await finish(entry) { state in
            if state.files[entry.path]?.postCID == postCID { state.files.removeValue(forKey: entry.path) }
        }
    }
}
