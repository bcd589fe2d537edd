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
    /// size or modification time changed), lists the namespace, and resolves what an interrupted
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

/// The three-way decisions of one plan.
struct Planner {
    let sync: DriveSync
    var state: SyncState
    let scan: LocalFolder.Scan
    let listing: PostListing<DriveFileMetadata>
    var skipped: [SkippedItem] = []
    var actions: [SyncAction] = []
    /// Posts a journalled replacement left behind: removed, and not counted as deletions.
    var superseded: Set<String> = []
    /// Every name taken, folded: conflict copies get a free one.
    var taken: Set<String> = []
    let date = Date()

    /// The state as loaded.
    let original: SyncState
    /// Whether the loaded state was all in the checkpoint item (an empty journal).
    var isCheckpointed = false

    init(sync: DriveSync, state: SyncState, scan: LocalFolder.Scan, listing: PostListing<DriveFileMetadata>) {
        self.sync = sync
        self.state = state
        original = state
        self.scan = scan
        self.listing = listing
        skipped = scan.skipped
    }

    enum LocalSide { case none, unchanged, changed(sha: [UInt8]), deleted }

    mutating func plan() async throws(DriveSyncError) -> SyncPlan {
        var posts: [String: ListedPost<DriveFileMetadata>] = [:]
        var remote: [SyncPath: [ListedPost<DriveFileMetadata>]] = [:]
        var remoteOrder: [SyncPath] = []
        for post in listing.posts {
            guard let metadata = post.metadata else {
                skipped.append(SkippedItem(path: post.postCID, isRemote: true, reason: .notADriveFile))
                continue
            }
            guard !post.isPublic else {
                skipped.append(SkippedItem(path: metadata.filename, isRemote: true, reason: .publicPost))
                continue
            }
            do {
                let path = try SyncPath(remotePath: metadata.path, filename: metadata.filename)
                if remote[path] == nil { remoteOrder.append(path) }
                remote[path, default: []].append(post)
                posts[post.postCID] = post
            } catch {
                skipped.append(SkippedItem(path: (metadata.path ?? "/") + metadata.filename, isRemote: true,
                                           reason: .invalidName(error.reason)))
            }
        }
        for post in listing.skipped {
            skipped.append(SkippedItem(path: post.postCID, isRemote: true, reason: .unreadablePost(post.error.message)))
        }
        let resumed = state.pending.count
        await resolveJournal(remote: remote)

        // Names as a case-insensitive file system sees them: synced files first, then local, then remote.
        var claims = NameClaims()
        var localFiles = scan.files
        let statePaths = state.files.keys.compactMap { try? SyncPath(relative: $0) }.sorted()
        for path in statePaths { _ = claims.claim(path) }
        for path in scan.files.keys.sorted() where state.files[path.description] == nil {
            if let other = claims.claim(path) {
                skipped.append(SkippedItem(path: path.description, reason: .nameCollision(with: other)))
                localFiles.removeValue(forKey: path)
            }
        }
        for path in remoteOrder where state.files[path.description] == nil && scan.files[path] == nil {
            if let other = claims.claim(path) {
                skipped.append(SkippedItem(path: path.description, isRemote: true, reason: .nameCollision(with: other)))
                remote.removeValue(forKey: path)
            }
        }
        taken = Set((statePaths + Array(localFiles.keys) + Array(remote.keys)).map { SyncPath.fold($0.description) })

        let all = Set(statePaths).union(localFiles.keys).union(remote.keys).sorted()
        for path in all {
            try await decide(path, local: localFiles[path], remote: remote[path] ?? [], posts: posts)
        }
        let synced = state.files.count
        let limit = sync.options.maximumDeletions ?? max(1, synced / 2)
        return SyncPlan(actions: actions, skipped: skipped, resumedActionCount: resumed, deletionLimit: limit, date: date,
                        state: state, needsCheckpoint: state != original || !isCheckpointed, posts: posts)
    }

    /// Resolves the journal of an interrupted sync into the state: an upload whose post is listed
    /// (same path and plaintext) is recorded as done and the posts it replaced are removed; a
    /// download renamed into place is recorded. Every other entry needs nothing: the three-way
    /// decisions see its effect.
    mutating func resolveJournal(remote: [SyncPath: [ListedPost<DriveFileMetadata>]]) async {
        for entry in state.pending {
            guard let path = try? SyncPath(relative: entry.path) else { continue }
            let url = sync.local.url(of: path)
            switch entry.action {
            case .upload:
                guard let sha = entry.sha256, let stamp = entry.stamp else { continue }
                let known = Set(entry.postCIDs + [state.files[entry.path]?.postCID].compactMap { $0 })
                for post in remote[path] ?? [] where !known.contains(post.postCID) && post.statedSize == stamp.size {
                    if await contentHash(of: post) == sha {
                        state.files[entry.path] = SyncState.Entry(postCID: post.postCID, envelopesCID: post.envelopesCID, stamp: stamp,
                                                                  sha256: sha)
                        superseded.formUnion(entry.postCIDs)
                        break
                    }
                }
            case .place:
                guard let sha = entry.sha256, let postCID = entry.postCIDs.first,
                      let post = remote[path]?.first(where: { $0.postCID == postCID }), let current = FileStamp.of(url).stamp,
                      let hash = try? LocalFolder.sha256(of: url), Hex.encode(hash) == sha else { continue }
                state.files[entry.path] = SyncState.Entry(postCID: postCID, envelopesCID: post.envelopesCID, stamp: current, sha256: sha)
                superseded.formUnion(entry.postCIDs.dropFirst())
            case .deleteRemote:
                // A replaced version (not the post the path's entry names) is removed; a removal
                // of the current post (a local deletion) is decided again.
                superseded.formUnion(entry.postCIDs.filter { $0 != state.files[entry.path]?.postCID })
            case .trash, .conflictRename:
                continue
            }
        }
        state.pending = []
    }

    /// The SHA-256 (hex) of a post's plaintext, downloaded to a temporary file; `nil` when it cannot be fetched.
    func contentHash(of post: ListedPost<DriveFileMetadata>) async -> String? {
        let temporary = sync.client.configuration.temporaryDirectory
            .appendingPathComponent("cipher-sync-compare-" + UUID().uuidString.lowercased())
        defer { try? FileManager.default.removeItem(at: temporary) }
        do {
            try await sync.client.download(post, to: temporary)
            return Hex.encode(try LocalFolder.sha256(of: temporary))
        } catch {
            return nil
        }
    }

    /// The decision for one path.
    mutating func decide(
        _ path: SyncPath, local stamp: FileStamp?, remote: [ListedPost<DriveFileMetadata>], posts: [String: ListedPost<DriveFileMetadata>]
    ) async throws(DriveSyncError) {
        let entry = state.files[path.description]
        // Posts a finished replacement left: removed, silently.
        for post in remote where superseded.contains(post.postCID) {
            add(.deleteRemote, path, 0, reason: "finishing an interrupted replacement", step: .deleteRemote(path, postCID: post.postCID))
        }
        let live = remote.filter { !superseded.contains($0.postCID) }
        let known = entry.flatMap { entry in live.first { $0.postCID == entry.postCID } }
        let others = live.filter { $0.postCID != entry?.postCID }

        // The local side: unchanged by stamp, or by content when only the stamp moved.
        var side = LocalSide.none
        if let entry {
            if let stamp {
                if stamp.matches(entry.stamp) {
                    side = .unchanged
                } else {
                    guard let sha = try? LocalFolder.sha256(of: sync.local.url(of: path)) else {
                        skipped.append(SkippedItem(path: path.description, reason: .unreadable))
                        return
                    }
                    if Hex.encode(sha) == entry.sha256 {
                        state.files[path.description]?.stamp = stamp
                        side = .unchanged
                    } else {
                        side = .changed(sha: sha)
                    }
                }
            } else {
                side = .deleted
            }
        } else if stamp != nil {
            // New here: read now only to compare with a post at the same path (the upload reads it anyway).
            var sha: [UInt8] = []
            if !others.isEmpty {
                guard let read = try? LocalFolder.sha256(of: sync.local.url(of: path)) else {
                    skipped.append(SkippedItem(path: path.description, reason: .unreadable))
                    return
                }
                sha = read
            }
            side = .changed(sha: sha)
        }

        let audience = known?.audience ?? sync.options.audience
        switch side {
        case .none:
            // New on the station only.
            guard let main = others.last else { return }
            add(.download, path, main.statedSize ?? 0, reason: "new on the station",
                step: .download(path, postCID: main.postCID, replacing: nil, supersedes: []))
            duplicates(path, others.dropLast())
        case .unchanged:
            if let main = others.last {
                add(.download, path, main.statedSize ?? 0, reason: "changed on the station",
                    step: .download(path, postCID: main.postCID, replacing: stamp, supersedes: known.map { [$0.postCID] } ?? []))
                duplicates(path, others.dropLast())
            } else if known == nil, let stamp {
                add(.deleteLocal, path, 0, reason: "deleted on the station", step: .trash(path, stamp), isDeletion: true)
            }
        case .deleted:
            guard entry != nil else { return }
            if let main = others.last {
                add(.download, path, main.statedSize ?? 0, reason: "changed on the station (deleted here)",
                    step: .download(path, postCID: main.postCID, replacing: nil, supersedes: known.map { [$0.postCID] } ?? []))
                duplicates(path, others.dropLast())
            } else if let known {
                add(.deleteRemote, path, 0, reason: "deleted here", step: .deleteRemote(path, postCID: known.postCID), isDeletion: true)
            } else {
                state.files.removeValue(forKey: path.description)
            }
        case .changed(let sha):
            guard let stamp else { return }
            if others.isEmpty {
                add(.upload, path, stamp.size, reason: entry == nil ? "new here" : "changed here",
                    step: .upload(path, stamp, replacing: known?.postCID, audience: audience))
                return
            }
            // Both sides have a version the state does not explain: the same content is adopted.
            var rest = others
            for (index, post) in others.enumerated().reversed() where post.statedSize == stamp.size {
                if await contentHash(of: post) == Hex.encode(sha) {
                    state.files[path.description] = SyncState.Entry(postCID: post.postCID, envelopesCID: post.envelopesCID,
                                                                    stamp: stamp, sha256: Hex.encode(sha))
                    rest.remove(at: index)
                    if let known {
                        add(.deleteRemote, path, 0, reason: "replaced by the same version", step: .deleteRemote(path, postCID: known.postCID))
                    }
                    duplicates(path, rest[...])
                    return
                }
            }
            guard let main = others.last, let copy = freeName(for: path, label: "conflict from \(sync.options.deviceName)", date: date) else {
                skipped.append(SkippedItem(path: path.description, reason: .invalidName("no conflict copy name fits")))
                return
            }
            add(.conflict, path, stamp.size + (main.statedSize ?? 0), reason: "changed on both sides", copy: copy,
                step: .conflict(path, stamp, copy: copy, postCID: main.postCID, supersedes: known.map { [$0.postCID] } ?? []))
            duplicates(path, others.dropLast())
        }
    }

    /// Extra posts at one path: each kept as a copy named after the station and its date.
    mutating func duplicates(_ path: SyncPath, _ posts: ArraySlice<ListedPost<DriveFileMetadata>>) {
        for post in posts {
            let created = post.metadata?.createdAt ?? post.createdAt
            let date = created.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? self.date
            guard let copy = freeName(for: path, label: "conflict from the station", date: date) else {
                skipped.append(SkippedItem(path: path.description, isRemote: true, reason: .invalidName("no conflict copy name fits")))
                continue
            }
            add(.duplicate, path, post.statedSize ?? 0, reason: "two posts with this path", copy: copy,
                step: .duplicate(path, copy: copy, postCID: post.postCID))
        }
    }

    /// `notes (conflict from laptop 2026-12-06T061502Z).txt`, or with ` 2`, ` 3`… until the name is free.
    mutating func freeName(for path: SyncPath, label: String, date: Date) -> SyncPath? {
        let safeLabel = String(label.unicodeScalars.filter { $0.properties.generalCategory != .control && $0 != "/" && $0 != "\\" }
            .map(Character.init))
        for attempt in 1...100 {
            let suffix = " (\(safeLabel) \(LocalFolder.stamp(date))" + (attempt > 1 ? " \(attempt)" : "") + ")"
            guard let copy = path.inserting(suffix) else { return nil }
            if taken.insert(SyncPath.fold(copy.description)).inserted { return copy }
        }
        return nil
    }

    mutating func add(_ kind: SyncAction.Kind, _ path: SyncPath, _ bytes: Int64, reason: String, copy: SyncPath? = nil, step: SyncStep,
                      isDeletion: Bool = false) {
        actions.append(SyncAction(kind: kind, path: path.description, byteCount: bytes, conflictCopyPath: copy?.description,
                                  reason: reason, isDeletion: isDeletion, step: step))
    }
}

extension ListedPost where Metadata == DriveFileMetadata {
    /// The plaintext size the metadata states (the station's word: it picks which posts to compare
    /// and sizes the plan; the client bounds the download by it).
    var statedSize: Int64? { metadata?.sizeBytes.map { Int64($0) } }
}
