import Foundation
import Manifest
import PQCrypto
import StationClient

/// A version of a file on the station, as the planner reads it from a listed post's metadata.
struct RemoteVersion: Sendable, Hashable {
    let postCID: String
    let path: SyncPath
    /// The plaintext size the metadata states (the station's word: it sizes the plan and bounds the download).
    let statedSize: Int64?
    /// The plaintext's SHA-256 the metadata states (lowercase hex), for versions `DriveSync` published.
    let sha256: String?
    /// The post the version replaces, as its publisher said.
    let replaces: String?
    /// When it was made (Unix seconds, checked when the metadata was read).
    let createdAt: Int?

    /// The version a listed drive post describes; `nil` when it has no drive metadata.
    init(_ post: ListedPost<DriveFileMetadata>, path: SyncPath) {
        postCID = post.postCID
        self.path = path
        statedSize = post.metadata?.sizeBytes.map { Int64($0) }
        sha256 = post.metadata?.sha256
        replaces = post.metadata?.replaces
        createdAt = post.metadata?.createdAt ?? post.createdAt
    }

    init(postCID: String, path: SyncPath, statedSize: Int64?, sha256: String?, replaces: String?, createdAt: Int?) {
        self.postCID = postCID
        self.path = path
        self.statedSize = statedSize
        self.sha256 = sha256
        self.replaces = replaces
        self.createdAt = createdAt
    }
}

/// What the planner reads besides the scan and the listing: file contents, each read only when a
/// decision needs it.
protocol PlannerReading: Sendable {
    /// The SHA-256 of the local file at `path`, which must still be the file of `stamp` (`nil`
    /// when it cannot be read as that file: it then gets no decision).
    func localDigest(of path: SyncPath, stamp: FileStamp) -> (digest: [UInt8], stamp: FileStamp)?
    /// The SHA-256 (hex) of a version's plaintext when its metadata states none: downloaded into
    /// the sync's `incoming` folder and hashed; `nil` when it cannot be fetched.
    func remoteDigest(of version: RemoteVersion) async -> String?
}

/// The three-way decisions of one plan: the folder's scan, the namespace's versions and the
/// state the last sync left in; actions out. Reads contents only through ``PlannerReading``.
struct Planner {
    let options: SyncOptions
    let reading: any PlannerReading
    var state: SyncState
    let scan: LocalFolder.Scan
    let versions: [RemoteVersion]
    var skipped: [SkippedItem]
    var actions: [SyncAction] = []
    /// Posts a journalled replacement left behind: removed, and not counted as deletions.
    var superseded: Set<String> = []
    /// Every name taken, folded: conflict copies get a free one.
    var taken: Set<String> = []
    /// The paths synced once the plan has run, as far as planning can tell.
    var projected: Set<SyncPath> = []
    let date: Date

    /// The state as loaded.
    let original: SyncState
    /// Whether the loaded state was all in the checkpoint item (an empty journal).
    var isCheckpointed = false

    /// The longest `replaces` chain followed through the listed versions of one path.
    static let maximumAncestry = 64
    /// The most posts one plan downloads to compare with local files (those whose metadata
    /// states no digest); paths past it are decided by a later sync.
    static let maximumComparisons = 32
    /// The most versions at one path that one run keeps as copies; the rest wait for a later sync.
    static let maximumCopiesPerPath = 8
    /// Comparison downloads this plan has made room for.
    var comparisons = 0
    /// The largest local file an upload can carry (the station's request limit less the
    /// request's own bytes, for the longest metadata a synced file can have); `nil`: no limit.
    var largestUpload: Int64?
    /// What the sync leaves alone: no decision on either side, the state's entry kept.
    var ignoreRules = IgnoreRules.none

    init(options: SyncOptions, reading: any PlannerReading, state: SyncState, scan: LocalFolder.Scan, versions: [RemoteVersion],
         skipped remoteSkipped: [SkippedItem], date: Date) {
        self.options = options
        self.reading = reading
        self.state = state
        original = state
        self.scan = scan
        self.versions = versions
        self.date = date
        skipped = scan.skipped + remoteSkipped
    }

    /// The posts of a listing inside `root` as versions by path; the posts that are not synced,
    /// as skipped items. Posts outside the root are neither; posts whose place is unknown (no
    /// drive metadata, unreadable) are reported by the sync of the whole namespace only.
    static func versions(of listing: PostListing<DriveFileMetadata>, root: RemoteRoot = .namespace)
        -> (versions: [RemoteVersion], skipped: [SkippedItem]) {
        var versions: [RemoteVersion] = []
        var skipped: [SkippedItem] = []
        for post in listing.posts {
            guard let metadata = post.metadata else {
                if root.isNamespace { skipped.append(SkippedItem(path: post.postCID, isRemote: true, reason: .notADriveFile)) }
                continue
            }
            // Outside the root: not this sync's.
            guard root.contains(directory: metadata.path) else { continue }
            guard !post.isPublic else {
                skipped.append(SkippedItem(path: metadata.filename, isRemote: true, reason: .publicPost))
                continue
            }
            do {
                if let path = try root.relative(directory: metadata.path, filename: metadata.filename) {
                    versions.append(RemoteVersion(post, path: path))
                }
            } catch {
                skipped.append(SkippedItem(path: (metadata.path ?? "/") + metadata.filename, isRemote: true, reason: .invalidName(error.reason)))
            }
        }
        if root.isNamespace {
            for post in listing.skipped {
                skipped.append(SkippedItem(path: post.postCID, isRemote: true, reason: .unreadablePost(post.error.message)))
            }
        }
        return (versions, skipped)
    }

    mutating func plan() async -> SyncPlan {
        var remote: [SyncPath: [RemoteVersion]] = [:]
        var remoteOrder: [SyncPath] = []
        for version in versions {
            if remote[version.path] == nil { remoteOrder.append(version.path) }
            remote[version.path, default: []].append(version)
        }
        let resumed = state.pending.count
        await resolveJournal(remote: remote)

        // What could not be read, or is there but is no regular file, gets no decision: its state
        // entry stays, nothing is downloaded over it and nothing deleted for it, on either side.
        let blocked = Set(scan.skipped.filter { !$0.isRemote }.compactMap { try? SyncPath(relative: $0.path) })
        let scan = self.scan
        let ignoreRules = self.ignoreRules
        let isBlocked = { (path: SyncPath) -> Bool in
            ignoreRules.ignores(path.description) || scan.isUnread(path) || blocked.contains(path) || path.parents.contains { (try? SyncPath(relative: $0)).map(blocked.contains) ?? false }
        }

        // Posts a finished replacement left are removed first, wherever they are (but where the
        // folder was not read): a version at a path whose name another spelling claims must not
        // stay behind.
        for version in versions where superseded.contains(version.postCID) && !isBlocked(version.path) {
            add(.deleteRemote, version.path, 0, reason: "finishing an interrupted replacement",
                step: .deleteRemote(version.path, postCID: version.postCID), removing: version.statedSize)
        }
        for (path, here) in remote {
            let live = here.filter { !superseded.contains($0.postCID) }
            remote[path] = live.isEmpty ? nil : live
        }
        remoteOrder.removeAll { remote[$0] == nil }

        // Names as a case-insensitive file system sees them: synced files first, then local, then remote.
        var claims = NameClaims()
        var localFiles = scan.files
        let statePaths = state.files.keys.sorted()
        // A synced name whose file is gone while another spelling of it is new (on the same side)
        // was renamed to that spelling (`café` NFC to NFD, `Photos` to `photos`): the new spelling
        // claims the name, the old one is decided as a deletion.
        let newLocal = Set(scan.files.keys.filter { state.files[$0] == nil }.map { SyncPath.fold($0.description) })
        let newRemote = Set(remoteOrder.filter { state.files[$0] == nil && scan.files[$0] == nil }.map { SyncPath.fold($0.description) })
        let listed = Set(versions.map(\.postCID))
        for path in statePaths {
            let folded = SyncPath.fold(path.description)
            let renamedHere = scan.files[path] == nil && newLocal.contains(folded)
            let renamedThere = state.files[path].map { !listed.contains($0.postCID) } == true && newRemote.contains(folded)
            if !renamedHere && !renamedThere { _ = claims.claim(path) }
        }
        for path in scan.files.keys.sorted() where state.files[path] == nil {
            if let other = claims.claim(path) {
                skipped.append(SkippedItem(path: path.description, reason: .nameCollision(with: other)))
                localFiles.removeValue(forKey: path)
            }
        }
        for path in remoteOrder where state.files[path] == nil && scan.files[path] == nil && !isBlocked(path) {
            if let other = claims.claim(path) {
                skipped.append(SkippedItem(path: path.description, isRemote: true, reason: .nameCollision(with: other)))
                remote.removeValue(forKey: path)
            }
        }
        taken = Set((statePaths + Array(localFiles.keys) + Array(remote.keys)).map { SyncPath.fold($0.description) })
        projected = Set(statePaths)

        let moved = moves(local: localFiles, remote: remote, isBlocked: isBlocked)
        let all = Set(statePaths).union(localFiles.keys).union(remote.keys).sorted()
        for path in all where !isBlocked(path) && !moved.contains(path) {
            await decide(path, local: localFiles[path], remote: remote[path] ?? [])
        }
        state.highWaterMark = max(state.highWaterMark, original.files.count)
        let limit = options.maximumDeletions ?? max(1, state.folderSize / 2)
        return SyncPlan(actions: actions, skipped: skipped, resumedActionCount: resumed, deletionLimit: limit,
                        highWaterMark: state.folderSize, projectedFileCount: projected.count,
                        limitsShrinking: options.maximumDeletions == nil, date: date, state: state, original: original,
                        needsCheckpoint: state != original || !isCheckpointed, posts: [:])
    }

    /// Finds the files moved or renamed since the last sync and plans them as moves; returns every
    /// path they cover (old and new), which get no other decision.
    ///
    /// Moved here: a synced file gone from its path (its post still the only version there) and a
    /// new file, at a path the station does not have, with the same size and SHA-256. It is
    /// published at the new path as the successor of the old post, which is then removed.
    /// Moved elsewhere: a synced file, unchanged here, whose post is gone, and a single version at
    /// a path new to both sides that names that post in `replaces` and states the same SHA-256:
    /// the file is renamed, nothing downloaded, nothing trashed.
    mutating func moves(local: [SyncPath: FileStamp], remote: [SyncPath: [RemoteVersion]], isBlocked: (SyncPath) -> Bool) -> Set<SyncPath> {
        var covered: Set<SyncPath> = []
        let listed = Set(versions.map(\.postCID))
        // Synced files gone here whose post is the one version at their path, by size.
        var goneHere: [Int64: [SyncPath]] = [:]
        for (path, entry) in state.files.sorted(by: { $0.key < $1.key })
        where local[path] == nil && !isBlocked(path) && remote[path]?.map(\.postCID) == [entry.postCID] {
            goneHere[entry.stamp.size, default: []].append(path)
        }
        for path in local.keys.sorted() where state.files[path] == nil && remote[path] == nil && !isBlocked(path) {
            guard let stamp = local[path], let candidates = goneHere[stamp.size], !candidates.isEmpty,
                  let read = reading.localDigest(of: path, stamp: stamp) else { continue }
            let sha = Hex.encode(read.digest)
            let matches = candidates.filter { !covered.contains($0) && state.files[$0]?.sha256 == sha }
            // The same name in another folder first, then the first by path.
            guard let old = matches.first(where: { $0.filename.utf8.elementsEqual(path.filename.utf8) }) ?? matches.first,
                  let entry = state.files[old] else { continue }
            covered.formUnion([old, path])
            add(.move, path, read.stamp.size, reason: "moved here from \(old)", copy: old,
                step: .publishMove(path, from: old, read.stamp, ancestor: entry.postCID, audience: options.audience))
            projected.remove(old)
            projected.insert(path)
        }
        // Versions that moved on another device: by the post they replace.
        var synced: [String: SyncPath] = [:]
        for (path, entry) in state.files where !listed.contains(entry.postCID) { synced[entry.postCID] = path }
        for (path, here) in remote.sorted(by: { $0.key < $1.key })
        where here.count == 1 && state.files[path] == nil && local[path] == nil && !isBlocked(path) {
            guard let version = here.first, let ancestor = version.replaces, let old = synced[ancestor], !covered.contains(old),
                  let entry = state.files[old], version.sha256 == entry.sha256, let stamp = local[old], stamp.matches(entry.stamp),
                  remote[old] == nil, !isBlocked(old) else { continue }
            covered.formUnion([old, path])
            add(.move, path, 0, reason: "moved on the station from \(old)", copy: old,
                step: .renameLocal(path, from: old, stamp, postCID: version.postCID))
            projected.remove(old)
            projected.insert(path)
        }
        return covered
    }

    /// Resolves the journal of an interrupted sync into the state: an upload whose post is listed
    /// (same path and plaintext) is recorded as done and the posts it replaced are removed; a
    /// download renamed into place is recorded. Every other entry needs nothing: the three-way
    /// decisions see its effect.
    mutating func resolveJournal(remote: [SyncPath: [RemoteVersion]]) async {
        for entry in state.pending {
            let path = entry.path
            switch entry.action {
            case .upload:
                guard let sha = entry.sha256, let stamp = entry.stamp else { continue }
                let known = Set(entry.postCIDs + [state.files[path]?.postCID].compactMap { $0 })
                for version in remote[path] ?? [] where !known.contains(version.postCID) {
                    if await digest(of: version, comparedWith: sha, size: stamp.size) == sha {
                        state.files[path] = SyncState.Entry(postCID: version.postCID, stamp: stamp, sha256: sha)
                        superseded.formUnion(entry.postCIDs)
                        break
                    }
                }
            case .place:
                guard let sha = entry.sha256, let postCID = entry.postCIDs.first,
                      remote[path]?.contains(where: { $0.postCID == postCID }) == true,
                      let stamp = scan.files[path], let read = reading.localDigest(of: path, stamp: stamp),
                      Hex.encode(read.digest) == sha else { continue }
                state.files[path] = SyncState.Entry(postCID: postCID, stamp: read.stamp, sha256: sha)
                superseded.formUnion(entry.postCIDs.dropFirst())
            case .deleteRemote:
                // A replaced version (not the post the path's entry names) is removed; a removal
                // of the current post (a local deletion) is decided again.
                superseded.formUnion(entry.postCIDs.filter { $0 != state.files[path]?.postCID })
            case .trash, .conflictRename, .move:
                continue
            }
        }
        state.pending = []
    }

    /// The SHA-256 (hex) of a version: the one its metadata states, or, when it states none and
    /// its size is `size`, read by downloading it (`nil` otherwise: it cannot be `expected`).
    func digest(of version: RemoteVersion, comparedWith expected: String, size: Int64) async -> String? {
        if let stated = version.sha256 { return stated }
        guard version.statedSize == size else { return nil }
        return await reading.remoteDigest(of: version)
    }

    enum LocalSide { case none, unchanged, changed(sha: String), deleted }

    /// The decision for one path.
    mutating func decide(_ path: SyncPath, local stamp: FileStamp?, remote: [RemoteVersion]) async {
        if let stamp, let largestUpload, stamp.size > largestUpload {
            // No upload can carry it: no decision for the path (its version elsewhere stays too).
            skipped.append(SkippedItem(path: path.description, reason: .tooLarge(limit: largestUpload)))
            return
        }
        let entry = state.files[path]
        let live = remote
        let known = entry.flatMap { entry in live.first { $0.postCID == entry.postCID } }
        var others = collapsingIdentical(path, live.filter { $0.postCID != entry?.postCID }, known: known != nil ? entry?.sha256 : nil)

        // The local side: unchanged by stamp, or by content when only the stamp moved.
        var side = LocalSide.none
        if let stamp {
            if let entry, stamp.matches(entry.stamp) {
                side = .unchanged
            } else if entry != nil || !others.isEmpty {
                guard let read = reading.localDigest(of: path, stamp: stamp) else {
                    skipped.append(SkippedItem(path: path.description, reason: .unreadable))
                    return
                }
                let sha = Hex.encode(read.digest)
                if let entry, sha == entry.sha256 {
                    state.files[path]?.stamp = read.stamp
                    side = .unchanged
                } else {
                    side = .changed(sha: sha)
                }
            } else {
                // New here, nothing to compare with: the upload reads it.
                side = .changed(sha: "")
            }
        } else if entry != nil {
            side = .deleted
        }

        // Which versions follow the synced one: those whose `replaces` chain reaches it. Any other
        // version at the path was made beside it (a sibling): a conflict, kept as a copy.
        let successors = entry.map { entry in others.filter { descends($0, from: entry.postCID, among: live) } } ?? []
        let audience = options.audience

        switch side {
        case .none:
            // New on the station only.
            guard let main = others.popLast() else { return }
            download(main, to: path, reason: "new on the station", replacing: nil, supersedes: [])
            copies(path, others)
        case .unchanged:
            guard let entry, let stamp else { return }
            // The newest successor; with the synced version gone, the newest version of any lineage.
            guard let main = successors.last ?? (known == nil ? others.last : nil) else {
                if known == nil {
                    add(.deleteLocal, path, 0, reason: "deleted on the station", step: .trash(path, stamp), isDeletion: true,
                        removing: stamp.size)
                    projected.remove(path)
                }
                copies(path, others)
                return
            }
            others.removeAll { $0.postCID == main.postCID }
            let supersedes = known.map { [$0.postCID] } ?? []
            if main.sha256 == entry.sha256 {
                // The same content under a new post: adopted, nothing transferred.
                state.files[path] = SyncState.Entry(postCID: main.postCID, stamp: stamp, sha256: entry.sha256)
                for post in supersedes {
                    add(.deleteRemote, path, 0, reason: "replaced by the same version", step: .deleteRemote(path, postCID: post),
                        removing: size(ofPost: post, at: path))
                }
            } else {
                let reason = successors.isEmpty ? "replaced on the station (the version synced here is gone)" : "changed on the station"
                download(main, to: path, reason: reason, replacing: stamp, supersedes: supersedes)
            }
            copies(path, others)
        case .deleted:
            guard entry != nil else { return }
            if let main = successors.last ?? others.last {
                // An edit elsewhere beats the deletion here.
                others.removeAll { $0.postCID == main.postCID }
                download(main, to: path, reason: "changed on the station (deleted here)", replacing: nil,
                         supersedes: known.map { [$0.postCID] } ?? [])
                projected.insert(path)
            } else if let known {
                add(.deleteRemote, path, 0, reason: "deleted here", step: .deleteRemote(path, postCID: known.postCID), isDeletion: true,
                    removing: size(ofPost: known.postCID, at: path))
                projected.remove(path)
            } else {
                state.files.removeValue(forKey: path)
                projected.remove(path)
            }
            copies(path, others)
        case .changed(let sha):
            guard let stamp else { return }
            // A version with this very content (an upload whose answer was lost, or the same edit
            // made twice) is adopted.
            // Each comparison without a stated digest is a download: a listing stating this size
            // for hundreds of posts must not make one plan download them all.
            let downloads = others.filter { $0.sha256 == nil && $0.statedSize == stamp.size }.count
            guard comparisons + downloads <= Self.maximumComparisons else {
                skipped.append(SkippedItem(path: path.description, reason: .deferred))
                return
            }
            comparisons += downloads
            for version in others.reversed() {
                guard await digest(of: version, comparedWith: sha, size: stamp.size) == sha else { continue }
                state.files[path] = SyncState.Entry(postCID: version.postCID, stamp: stamp, sha256: sha)
                projected.insert(path)
                others.removeAll { $0.postCID == version.postCID }
                if let known {
                    add(.deleteRemote, path, 0, reason: "replaced by the same version", step: .deleteRemote(path, postCID: known.postCID),
                        removing: size(ofPost: known.postCID, at: path))
                }
                copies(path, others)
                return
            }
            projected.insert(path)
            guard let main = entry == nil ? others.last : successors.last ?? (known == nil ? others.last : nil) else {
                // Nothing newer than the synced version: the edit is the next version; versions made
                // beside it are kept as copies.
                add(.upload, path, stamp.size, reason: entry == nil ? "new here" : "changed here",
                    step: .upload(path, stamp, replacing: known?.postCID, ancestor: entry?.postCID, audience: audience))
                copies(path, others)
                return
            }
            // Changed on both sides: the local version is kept under a copy's name, the station's takes the name.
            others.removeAll { $0.postCID == main.postCID }
            guard let (copy, made) = freeName(for: path, device: ConflictCopy.writtenDeviceName(options.deviceName), date: date) else {
                skipped.append(SkippedItem(path: path.description, reason: .invalidName("no conflict copy name fits")))
                return
            }
            projected.insert(copy)
            add(.conflict, path, stamp.size.addingSaturated(main.statedSize ?? 0), reason: "changed on both sides", copy: copy,
                step: .conflict(path, stamp, copy: copy, postCID: main.postCID, supersedes: known.map { [$0.postCID] } ?? []),
                made: made)
            copies(path, others)
        }
    }

    /// Whether `version`'s `replaces` chain, followed through the listed versions, reaches `ancestor`.
    func descends(_ version: RemoteVersion, from ancestor: String, among listed: [RemoteVersion]) -> Bool {
        var current = version
        var seen: Set<String> = [version.postCID]
        for _ in 0..<Self.maximumAncestry {
            guard let parent = current.replaces else { return false }
            if parent == ancestor { return true }
            guard seen.insert(parent).inserted, let next = listed.first(where: { $0.postCID == parent }) else { return false }
            current = next
        }
        return false
    }

    /// Versions at one path with the same stated content as the synced version (`knownDigest`) or
    /// as a later version are one file: the extra posts are removed (not counted as deletions,
    /// nothing is lost), never copied.
    mutating func collapsingIdentical(_ path: SyncPath, _ versions: [RemoteVersion], known knownDigest: String?) -> [RemoteVersion] {
        var kept: [RemoteVersion] = []
        var digests: Set<String> = knownDigest.map { [$0] } ?? []
        // Newest first, so the newest of identical versions is the one kept.
        for version in versions.reversed() {
            if let digest = version.sha256, !digests.insert(digest).inserted {
                add(.deleteRemote, path, 0, reason: "the same content as another version", step: .deleteRemote(path, postCID: version.postCID),
                    removing: version.statedSize)
            } else {
                kept.insert(version, at: 0)
            }
        }
        return kept
    }

    /// A download of `version` to `path`. Replacing a local file is a deletion as the limit counts
    /// them: the file goes to the trash first.
    mutating func download(_ version: RemoteVersion, to path: SyncPath, reason: String, replacing: FileStamp?, supersedes: [String]) {
        projected.insert(path)
        add(.download, path, version.statedSize ?? 0, reason: reason,
            step: .download(path, postCID: version.postCID, replacing: replacing, supersedes: supersedes), isDeletion: replacing != nil,
            removing: replacing?.size)
    }

    /// Versions at a path that follow none of the others: each kept as a copy named after the
    /// station and its date, on both sides.
    mutating func copies(_ path: SyncPath, _ versions: [RemoteVersion]) {
        // The newest first few: a listing with hundreds of versions at one path is copied over
        // several syncs, not published in one.
        if versions.count > Self.maximumCopiesPerPath {
            skipped.append(SkippedItem(path: path.description, isRemote: true, reason: .deferred))
        }
        for version in versions.suffix(Self.maximumCopiesPerPath) {
            let date = version.createdAt.map { Date(timeIntervalSince1970: TimeInterval($0)) } ?? self.date
            guard let (copy, made) = freeName(for: path, device: nil, date: date) else {
                skipped.append(SkippedItem(path: path.description, isRemote: true, reason: .invalidName("no conflict copy name fits")))
                continue
            }
            projected.insert(copy)
            add(.duplicate, path, version.statedSize ?? 0, reason: "another version made beside this one", copy: copy,
                step: .duplicate(path, copy: copy, postCID: version.postCID), made: made)
        }
    }

    /// `notes (conflict from laptop 2026-12-06T061502Z).txt`, or with ` 2`, ` 3`… until the name is
    /// free (``ConflictCopy``'s grammar); `device` as ``ConflictCopy/writtenDeviceName(_:)`` writes
    /// it, `nil` for the station. The copy's path, and the copy as values.
    mutating func freeName(for path: SyncPath, device: String?, date: Date) -> (SyncPath, ConflictCopy)? {
        for attempt in 1...100 {
            guard let copy = path.inserting(ConflictCopy.suffix(origin: device, date: date, number: attempt)) else { return nil }
            if taken.insert(SyncPath.fold(copy.description)).inserted {
                let stamped = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
                let made = ConflictCopy(parsing: copy.description)
                    ?? ConflictCopy(originalPath: path.description, copyPath: copy.description, device: device, date: stamped, number: attempt)
                return (copy, ConflictCopy(originalPath: path.description, copyPath: copy.description, device: made.device,
                                           date: made.date, number: made.number))
            }
        }
        return nil
    }

    mutating func add(_ kind: SyncAction.Kind, _ path: SyncPath, _ bytes: Int64, reason: String, copy: SyncPath? = nil, step: SyncStep,
                      isDeletion: Bool = false, removing removed: Int64? = nil, made: ConflictCopy? = nil) {
        actions.append(SyncAction(kind: kind, path: path.description, byteCount: bytes, conflictCopyPath: copy?.description,
                                  reason: reason, isDeletion: isDeletion, removedByteCount: removed, step: step, madeCopy: made))
    }

    /// The size of the post `postCID` at `path` as far as the plan knows it: the synced file's,
    /// else the size a listed version states.
    func size(ofPost postCID: String, at path: SyncPath) -> Int64? {
        if let entry = state.files[path], entry.postCID == postCID { return entry.stamp.size }
        return versions.first { $0.postCID == postCID }?.statedSize
    }
}
