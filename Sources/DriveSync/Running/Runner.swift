import Foundation
import Manifest
import PQCrypto
import StationClient
import Transport

/// Runs a plan's actions, up to ``SyncOptions/transfers`` at a time, journalling each in the sync
/// state before and after.
///
/// The actions start in plan order. Their station calls (publish, download, delete) run
/// concurrently, in a task group of at most `transfers` children; every change to the sync state,
/// every journal write and every local file operation goes through one ``RunJournal``, in order.
/// An action does not start while one whose paths overlap it (its file, a move's old path, a
/// conflict's copy, or a folder of one of them) is in flight, so actions on one file keep the
/// plan's order; within an action the steps stay sequential (a move publishes, then removes the
/// old post; a conflict renames, downloads, then uploads). The first error that stops the run
/// (cancellation, the station out of reach, a state write failing) starts no new action and
/// cancels those in flight; what finished is journalled, and the next sync resumes the rest.
struct Runner {
    let sync: DriveSync
    let plan: SyncPlan
    /// The actions this run does, in order, and the deletions it holds back.
    let actions: [SyncAction]
    let held: [SyncAction]
    let progress: (@Sendable (SyncProgress) -> Void)?
    /// The sync state, its writes and the local file operations, one at a time.
    let journal: RunJournal
    /// The figures of the progress reports, shared by the actions in flight.
    let figures: TransferFigures
    var completed: [SyncAction] = []
    var failures: [SyncFailure] = []
    let start = ContinuousClock.now
    /// The trash folder of this run (`.cipher-sync/trash/<its start>`).
    let trash: String

    /// Whether the user approved every deletion of the plan (``DriveSync/run(_:approvingDeletions:progress:)``).
    let approvedAll: Bool

    /// The run's progress watchdog, told of the client's own work between transfers.
    let watchdog: ProgressWatchdog?

    init(sync: DriveSync, plan: SyncPlan, approved: Set<SyncAction> = [], store: SyncStateStore,
         progress: (@Sendable (SyncProgress) -> Void)?, watchdog: ProgressWatchdog? = nil) {
        self.watchdog = watchdog
        self.sync = sync
        self.plan = plan
        // Over the deletion limit, the deletions the user did not approve wait and the rest goes through.
        let waiting = { (action: SyncAction) in plan.exceedsDeletionLimit && action.isDeletion && !approved.contains(action) }
        held = plan.actions.filter(waiting)
        actions = plan.actions.filter { !waiting($0) }
        approvedAll = !approved.isEmpty && plan.actions.allSatisfy { !$0.isDeletion || approved.contains($0) }
        self.progress = progress
        journal = RunJournal(state: plan.state, store: store, afterStateWrite: sync.options.afterStateWrite)
        figures = TransferFigures(totalActions: actions.count, totalBytes: actions.reduce(Int64(0)) { $0.addingSaturated($1.byteCount) })
        trash = LocalFolder.stamp(plan.date)
    }

    /// A step stopped by the station, the file system or the folder changing under it.
    struct StepFailure: Error {
        let message: String
        var underlying: (any Error)?
    }

    /// How one action ended, as its task tells the run.
    enum Outcome: Sendable {
        case done
        /// This action failed; the run goes on.
        case failed(message: String, underlying: (any Error)?)
        /// The run stops.
        case stopped(DriveSyncError)
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
        if plan.needsCheckpoint { try await journal.write(checkpoint: true) { _, _ in } }
        if let stop = await runActions() { throw stop }
        // An explicit limit that let every deletion through is the user's word on them: the mark
        // starts again from here.
        let approved = (sync.options.maximumDeletions != nil || approvedAll) && held.isEmpty
        try await journal.write(checkpoint: true) { state, _ in
            state.highWaterMark = approved ? state.files.count : max(state.highWaterMark, state.files.count)
        }
        sync.local.removeIncoming()
        return SyncReport(completed: completed, failures: failures, heldDeletions: held, skipped: plan.skipped,
                          byteCount: figures.finishedBytes, duration: ContinuousClock.now - start)
    }

    /// Runs the actions, at most ``SyncOptions/transfers`` at a time; returns what stopped the run, if anything.
    mutating func runActions() async -> DriveSyncError? {
        let transfers = sync.options.transfers
        let runner = self
        let actions = self.actions
        return await withTaskGroup(of: (Int, Outcome).self) { group -> DriveSyncError? in
            var next = 0
            var inFlight: [Int: [[String]]] = [:]
            var stop: DriveSyncError?
            var done: [Int] = []
            var failed: [(index: Int, failure: SyncFailure)] = []
            while true {
                // Start what may start: in plan order, never beside an action on an overlapping path.
                while stop == nil, next < actions.count, inFlight.count < transfers {
                    let action = actions[next]
                    let paths = Self.pathKeys(of: action.step)
                    guard !inFlight.values.contains(where: { Self.overlap($0, paths) }) else { break }
                    guard !Task.isCancelled else {
                        stop = DriveSyncError(.cancelled, "cancelled before \(action.kind) \(action.path)")
                        break
                    }
                    inFlight[next] = paths
                    let index = next
                    next += 1
                    figures.started(index, action, report: progress)
                    watchdog?.heartbeat()
                    group.addTask { (index, await runner.outcome(of: action, index: index)) }
                }
                guard let (index, outcome) = await group.next() else { break }
                inFlight[index] = nil
                let action = actions[index]
                switch outcome {
                case .done:
                    done.append(index)
                case let .failed(message, underlying):
                    failed.append((index, SyncFailure(path: action.path, action: action.kind, message: message, underlying: underlying)))
                case let .stopped(error):
                    // The first reason stands; the others are the cancellation it caused. A stop
                    // by the test hook stands for a kill: what was sent is let finish, as a
                    // station finishes the requests it received, and nothing more is recorded.
                    if stop == nil {
                        stop = error
                        if await !journal.isKilled { group.cancelAll() }
                    }
                    continue
                }
                figures.finished(index, action, report: progress)
            }
            // The report lists them in the plan's order, whichever finished first.
            completed = done.sorted().map { actions[$0] }
            failures = failed.sorted { $0.index < $1.index }.map(\.failure)
            return stop
        }
    }

    /// Performs one action (in a task of the run's group) and tells how it ended.
    func outcome(of action: SyncAction, index: Int) async -> Outcome {
        do {
            try await perform(action, index: index)
            return .done
        } catch let failure as StepFailure {
            return .failed(message: failure.message, underlying: failure.underlying)
        } catch let error as DriveSyncError {
            return .stopped(error)
        } catch {
            return .stopped(DriveSyncError(.cancelled, "stopped during \(action.kind) \(action.path)", underlying: error))
        }
    }

    /// The paths `step` reads or writes, each as case- and normalization-folded components (two
    /// names one file system takes for one file count as one).
    static func pathKeys(of step: SyncStep) -> [[String]] {
        let paths: [SyncPath]
        switch step {
        case let .upload(path, _, _, _, _), let .download(path, _, _, _), let .trash(path, _), let .deleteRemote(path, _):
            paths = [path]
        case let .conflict(path, _, copy, _, _), let .duplicate(path, copy, _):
            paths = [path, copy]
        case let .publishMove(path, old, _, _, _), let .renameLocal(path, old, _, _):
            paths = [path, old]
        }
        return paths.map { $0.components.map(SyncPath.fold) }
    }

    /// Whether a path of `one` is a path of `other`, or a folder of one of its paths (or holds one).
    static func overlap(_ one: [[String]], _ other: [[String]]) -> Bool {
        one.contains { first in
            other.contains { second in
                let shorter = min(first.count, second.count)
                return first.prefix(shorter) == second.prefix(shorter)
            }
        }
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

    /// Journals `entry` (before the action).
    func begin(_ entry: SyncState.Pending) async throws(DriveSyncError) {
        try await journal.write { state, _ in state.pending.append(entry) }
    }

    /// Records the action of `entry` as done with `change` to its path's entry (after the action),
    /// journalling `then` (the removals of the posts it replaced) in the same write: a stop before
    /// they are done leaves them for the next sync, never a replaced post that looks like news.
    /// `other` is a second path the change touched (a move's old path), recorded too; `done` are
    /// other entries of the action that end with it.
    func finish(_ entry: SyncState.Pending, then: [SyncState.Pending] = [], also other: SyncPath? = nil, done: [SyncState.Pending] = [],
                _ change: @escaping @Sendable (inout SyncState) -> Void) async throws(DriveSyncError) {
        try await journal.write { state, results in
            let ended = Set(([entry] + done).map(\.id))
            state.pending.removeAll { ended.contains($0.id) }
            state.pending += then
            change(&state)
            results.append(SyncChange(path: entry.path, entry: state.files[entry.path]))
            if let other { results.append(SyncChange(path: other, entry: state.files[other])) }
        }
    }

    /// Replaces the journal entry `old` by `new` in one write.
    func replace(_ old: SyncState.Pending, with new: SyncState.Pending) async throws(DriveSyncError) {
        try await journal.write { state, _ in
            state.pending.removeAll { $0.id == old.id }
            state.pending.append(new)
        }
    }

    func perform(_ action: SyncAction, index: Int) async throws {
        // The client's byte progress of each transfer, passed on with the action and the file's own figures.
        let progress = self.progress.map { handler in
            let (figures, actionBytes) = (figures, ActionBytes(limit: action.byteCount))
            return { @Sendable (bytes: ByteProgress) in
                figures.moved(index, action, actionBytes: actionBytes.update(bytes.completed), fileBytes: bytes.completed,
                              fileByteCount: bytes.total, report: handler)
            } as ProgressHandler
        }
        let local = sync.local
        let trash = self.trash
        switch action.step {
        case let .upload(path, stamp, replacing, ancestor, audience):
            try await upload(path, stamp: stamp, replacing: replacing, ancestor: ancestor, audience: audience, progress: progress)
        case let .download(path, postCID, replacing, supersedes):
            try await download(postCID, to: path, replacing: replacing, supersedes: supersedes, progress: progress)
        case let .trash(path, stamp):
            let entry = SyncState.Pending(action: .trash, path: path, stamp: stamp)
            try await begin(entry)
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
            guard let entry = await journal.state.files[old] else { throw StepFailure(message: "\(old) is no longer synced") }
            let pending = SyncState.Pending(action: .move, path: old, stamp: stamp, postCIDs: [postCID])
            try await begin(pending)
            try attempt { () throws(SyncPathRefusal) in
                try local.move(old, expected: stamp, to: path)
                local.removeEmptyParents(of: old)
            }
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

    /// Runs a local file operation (one at a time with the other actions' own, in the journal);
    /// a refusal is this action's failure.
    func attempt<Value>(_ body: () throws(SyncPathRefusal) -> Value) throws(StepFailure) -> Value {
        do { return try journal.local(body) } catch { throw StepFailure(message: error.reason) }
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
    func upload(_ path: SyncPath, stamp: FileStamp, replacing: String?, ancestor: String?, audience: Audience,
                         progress: ProgressHandler?, movedFrom: SyncPath? = nil) async throws {
        let local = sync.local
        let file: OpenedFile
        do { file = try local.open(path, expecting: stamp) } catch { throw StepFailure(message: error.reason) }
        let sha: String
        do { sha = Hex.encode(try file.sha256()) } catch { throw StepFailure(message: "cannot read the file: \(error.reason)") }
        watchdog?.heartbeat()
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
            let removal = SyncState.Pending(action: .deleteRemote, path: path, postCIDs: [published.postCID])
            try await replace(entry, with: removal)
            try await deleteRemote(journalled: removal)
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
    func download(_ postCID: String, to path: SyncPath, replacing: FileStamp?, supersedes: [String],
                           progress: ProgressHandler?) async throws {
        guard let post = plan.posts[postCID] else { throw StepFailure(message: "the post \(postCID) is not in the listing") }
        let entry = SyncState.Pending(action: .place, path: path, postCIDs: [postCID] + supersedes)
        try await begin(entry)
        let local = sync.local
        let incoming: IncomingFile
        do { incoming = try local.createIncoming(executable: post.metadata?.executable == true) } catch { throw StepFailure(message: "cannot write in the folder: \(error.reason)") }
        let client = sync.client
        try await station { try await client.download(post, into: incoming.handle, progress: progress) }
        let sha: String
        do { sha = Hex.encode(try incoming.sha256()) } catch { throw StepFailure(message: "cannot read the download: \(error.reason)") }
        watchdog?.heartbeat()
        if let stated = post.metadata?.sha256, stated != sha {
            throw StepFailure(message: "the content does not match the SHA-256 its metadata states; left on the station")
        }
        // The verified file is about to go in place: from here the journal can recognise it.
        let verified = SyncState.Pending(action: .place, path: path, sha256: sha, postCIDs: entry.postCIDs, id: entry.id)
        try await replace(entry, with: verified)
        var trashed: [SyncState.Pending] = []
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
            // Done: recorded with the placing (or dropped if that fails), in the same write.
            trashed = [trashEntry]
        }
        let modified = post.metadata?.modifiedAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        let placed: FileStamp
        do {
            placed = try attempt { () throws(SyncPathRefusal) in try local.place(incoming, at: path, replacing: nil, modified: modified) }
        } catch {
            let ended = Set(trashed.map(\.id))
            await journal.change { $0.pending.removeAll { ended.contains($0.id) } }
            throw error
        }
        let removals = Self.removals(of: supersedes, at: path)
        try await finish(verified, then: removals, done: trashed) {
            $0.files[path] = SyncState.Entry(postCID: postCID, envelopesCID: post.envelopesCID, stamp: placed, sha256: sha)
        }
        for removal in removals { try await deleteRemote(journalled: removal) }
    }

    /// Removes a post (a post already gone counts as removed); the path's state entry goes too
    /// when it names that post.
    func deleteRemote(_ postCID: String, at path: SyncPath) async throws {
        let entry = SyncState.Pending(action: .deleteRemote, path: path, postCIDs: [postCID])
        try await begin(entry)
        try await deleteRemote(journalled: entry)
    }

    /// Removes the post of a journalled `.deleteRemote` entry and records it done.
    func deleteRemote(journalled entry: SyncState.Pending) async throws {
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
