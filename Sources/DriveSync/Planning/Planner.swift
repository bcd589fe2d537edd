import Foundation
import ClassicalCrypto
import Manifest
import PQCrypto
import SHA2
import StationClient

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
                      let post = remote[path]?.first(where: { $0.postCID == postCID }),
                      let file = try? sync.local.open(path, expecting: nil), let hash = try? file.sha256(), Hex.encode(hash) == sha
                else { continue }
                state.files[entry.path] = SyncState.Entry(postCID: postCID, envelopesCID: post.envelopesCID, stamp: file.stamp, sha256: sha)
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
            return Hex.encode(try SHA2.SHA256.hash(fileAt: temporary))
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
                    guard let sha = try? sync.local.open(path, expecting: stamp).sha256() else {
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
                guard let read = try? sync.local.open(path, expecting: stamp).sha256() else {
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
