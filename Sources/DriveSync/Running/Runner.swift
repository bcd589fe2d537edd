import Foundation
import Manifest
import PQCrypto
import StationClient

/// Runs a plan's actions in order, journalling each in the sync state before and after.
struct Runner {
    let sync: DriveSync
    let plan: SyncPlan
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
    /// This run's folder in the trash (`2026-12-06T061502Z`).
    let trashFolder: String

    init(sync: DriveSync, plan: SyncPlan, store: SyncStateStore, progress: (@Sendable (SyncProgress) -> Void)?) {
        self.sync = sync
        self.plan = plan
        self.store = store
        self.progress = progress
        state = plan.state
        trashFolder = LocalFolder.stamp(plan.date)
    }

    /// A step stopped by the station, the file system or the folder changing under it.
    struct StepFailure: Error {
        let message: String
        var underlying: (any Error)?
    }

    mutating func run() async throws(DriveSyncError) -> SyncReport {
        // In sync and nothing learned: nothing to write, not even locally.
        guard !plan.actions.isEmpty || plan.needsCheckpoint else {
            return SyncReport(completed: [], failures: [], skipped: plan.skipped, byteCount: 0, duration: ContinuousClock.now - start)
        }
        sync.local.removeIncoming()
        // What planning resolved (the journal, adopted files, new stamps) is recorded first; the
        // journal's results are folded into a checkpoint before the run's own replace them.
        if plan.needsCheckpoint { try await save(checkpoint: true) }
        let total = plan.actions.reduce(0) { $0 + $1.byteCount }
        for action in plan.actions {
            guard !Task.isCancelled else { throw DriveSyncError(.cancelled, "cancelled before \(action.kind) \(action.path)") }
            report(total: total, current: action.path, bytes: 0)
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
            finishedBytes += action.byteCount
            report(total: total, current: nil, bytes: 0)
        }
        try await save(checkpoint: true)
        sync.local.removeIncoming()
        return SyncReport(completed: completed, failures: failures, skipped: plan.skipped, byteCount: finishedBytes,
                          duration: ContinuousClock.now - start)
    }

    func report(total: Int64, current: String?, bytes: Int64) {
        progress?(SyncProgress(completedActions: finishedActions, totalActions: plan.actions.count, completedBytes: finishedBytes + bytes,
                               totalBytes: total, currentPath: current, elapsed: ContinuousClock.now - start))
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
    mutating func finish(_ entry: SyncState.Pending, then: [SyncState.Pending] = [],
                         _ change: (inout SyncState) -> Void) async throws(DriveSyncError) {
        state.pending.removeAll { $0.id == entry.id }
        state.pending += then
        change(&state)
        results.append(SyncChange(path: entry.path, entry: state.files[entry.path]))
        try await save()
    }

    mutating func perform(_ action: SyncAction, total: Int64) async throws {
        let progress = self.progress.map { handler in
            let (done, finished, count, start) = (finishedBytes, finishedActions, plan.actions.count, start)
            return { @Sendable (bytes: ByteProgress) in
                handler(SyncProgress(completedActions: finished, totalActions: count, completedBytes: done + bytes.completed,
                                     totalBytes: total, currentPath: action.path, elapsed: ContinuousClock.now - start))
            } as ProgressHandler
        }
        switch action.step {
        case let .upload(path, stamp, replacing, audience):
            try await upload(path, stamp: stamp, replacing: replacing, audience: audience, progress: progress)
        case let .download(path, postCID, replacing, supersedes):
            try await download(postCID, to: path, replacing: replacing, supersedes: supersedes, progress: progress)
        case let .trash(path, stamp):
            let entry = SyncState.Pending(action: .trash, path: path.description, stamp: stamp)
            try await begin(entry)
            try attempt { () throws(SyncPathRefusal) in
                _ = try sync.local.moveToTrash(path, expected: stamp, trashFolder: trashFolder)
            }
            try await finish(entry) { $0.files.removeValue(forKey: path.description) }
        case let .deleteRemote(path, postCID):
            try await deleteRemote(postCID, at: path)
        case let .conflict(path, stamp, copy, postCID, supersedes):
            let entry = SyncState.Pending(action: .conflictRename, path: path.description, stamp: stamp)
            try await begin(entry)
            try attempt { () throws(SyncPathRefusal) in try sync.local.move(path, expected: stamp, to: copy) }
            try await finish(entry) { _ in }
            try await download(postCID, to: path, replacing: nil, supersedes: supersedes, progress: progress)
            guard let moved = sync.local.stamp(of: copy) else { throw StepFailure(message: "the conflict copy is gone") }
            try await upload(copy, stamp: moved, replacing: nil, audience: sync.options.audience, progress: progress)
        case let .duplicate(_, copy, postCID):
            try await download(postCID, to: copy, replacing: nil, supersedes: [], progress: progress)
            guard let placed = sync.local.stamp(of: copy) else { throw StepFailure(message: "the copy is gone") }
            let audience = plan.posts[postCID]?.audience ?? sync.options.audience
            try await upload(copy, stamp: placed, replacing: postCID, audience: audience, progress: progress)
        }
    }

    /// Runs a local file operation; a refusal is this action's failure.
    func attempt<Value>(_ body: () throws(SyncPathRefusal) -> Value) throws(StepFailure) -> Value {
        do { return try body() } catch { throw StepFailure(message: error.reason) }
    }

    /// Runs a station call; its error is this action's failure, except cancellation, which stops the run.
    func station<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch let error as StationClientError where error.kind == .cancelled {
            throw error
        } catch {
            throw StepFailure(message: "\(error)", underlying: error)
        }
    }

    /// Publishes the local file (journalled with its SHA-256 and stamp), then removes `replacing`.
    mutating func upload(_ path: SyncPath, stamp: FileStamp, replacing: String?, audience: Audience,
                         progress: ProgressHandler?) async throws {
        let file = try attempt { () throws(SyncPathRefusal) in try sync.local.open(path, expecting: stamp) }
        let sha: [UInt8]
        do { sha = try file.sha256() } catch { throw StepFailure(message: "cannot read the file: \(error.reason)", underlying: error) }
        guard file.unchanged() else {
            throw StepFailure(message: "the file changed during the sync; the next sync takes the new version")
        }
        // Until StationClient.publish(contentsOf:) lands, the file is published by its path.
        let url = path.components.reduce(sync.folder) { $0.appendingPathComponent($1) }
        let entry = SyncState.Pending(action: .upload, path: path.description, sha256: Hex.encode(sha), stamp: stamp,
                                      postCIDs: replacing.map { [$0] } ?? [])
        try await begin(entry)
        let metadata = sync.metadata(for: path, stamp: stamp)
        let client = sync.client
        let published = try await station {
            try await client.publish(fileAt: url, metadata: metadata, audience: audience, progress: progress)
        }
        let removals = Self.removals(of: replacing.map { [$0] } ?? [], at: path)
        try await finish(entry, then: removals) {
            $0.files[path.description] = SyncState.Entry(postCID: published.postCID, envelopesCID: published.envelopesCID, stamp: stamp,
                                                         sha256: Hex.encode(sha))
        }
        for removal in removals { try await deleteRemote(journalled: removal) }
    }

    /// Journal entries removing `posts`, the versions a new one at `path` replaces.
    static func removals(of posts: [String], at path: SyncPath) -> [SyncState.Pending] {
        posts.map { SyncState.Pending(action: .deleteRemote, path: path.description, postCIDs: [$0]) }
    }

    /// Downloads the post to `incoming`, verifies it, journals its SHA-256, renames it into place;
    /// then removes `supersedes`.
    mutating func download(_ postCID: String, to path: SyncPath, replacing: FileStamp?, supersedes: [String],
                           progress: ProgressHandler?) async throws {
        guard let post = plan.posts[postCID] else { throw StepFailure(message: "the post \(postCID) is not in the listing") }
        var entry = SyncState.Pending(action: .place, path: path.description, postCIDs: [postCID] + supersedes)
        try await begin(entry)
        let local = sync.local
        let incoming: IncomingFile
        do {
            incoming = try local.createIncoming()
        } catch {
            throw StepFailure(message: "cannot write in the folder: \(error.reason)", underlying: error)
        }
        let client = sync.client
        try await station { try await Self.download(post, with: client, into: incoming.handle, progress: progress) }
        let sha: [UInt8]
        do {
            sha = try incoming.sha256()
        } catch {
            throw StepFailure(message: "cannot read the download: \(error.reason)", underlying: error)
        }
        let modified = post.metadata?.modifiedAt.map { Date(timeIntervalSince1970: TimeInterval($0)) }
        // The verified file is about to go in place: from here the journal can recognise it.
        state.pending.removeAll { $0.id == entry.id }
        entry.sha256 = Hex.encode(sha)
        try await begin(entry)
        let placed = try attempt { () throws(SyncPathRefusal) in
            try local.place(incoming, at: path, replacing: replacing, modified: modified)
        }
        let removals = Self.removals(of: supersedes, at: path)
        try await finish(entry, then: removals) {
            $0.files[path.description] = SyncState.Entry(postCID: postCID, envelopesCID: post.envelopesCID, stamp: placed,
                                                         sha256: Hex.encode(sha))
        }
        for removal in removals { try await deleteRemote(journalled: removal) }
    }

    /// Downloads `post` into `handle` (an incoming file). Until StationClient.download(_:into:)
    /// lands: to a file in the client's temporary directory, copied through the handle.
    static func download(_ post: ListedPost<DriveFileMetadata>, with client: StationClient, into handle: FileHandle,
                         progress: ProgressHandler?) async throws {
        let temporary = client.configuration.temporaryDirectory
            .appendingPathComponent("cipher-sync-download-" + UUID().uuidString.lowercased())
        defer { try? FileManager.default.removeItem(at: temporary) }
        try await client.download(post, to: temporary, progress: progress)
        let source = try FileHandle(forReadingFrom: temporary)
        defer { try? source.close() }
        while let chunk = try source.read(upToCount: 256 * 1024), !chunk.isEmpty {
            try handle.write(contentsOf: chunk)
        }
    }

    /// Removes a post (a post already gone counts as removed); the path's state entry goes too
    /// when it names that post.
    mutating func deleteRemote(_ postCID: String, at path: SyncPath) async throws {
        let entry = SyncState.Pending(action: .deleteRemote, path: path.description, postCIDs: [postCID])
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
