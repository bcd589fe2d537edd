import Foundation
import PQCrypto

/// The entry point of the `sync-planner` libFuzzer harness (`Fuzz/FuzzSyncPlanner.swift`) into the
/// planner, which decides from a station's listing (untrusted: names, dates, sizes, digests and
/// ancestry are the station's word) and a local tree. Not API: reached only with
/// `@_spi(Fuzzing) import DriveSync`.
@_spi(Fuzzing)
public enum SyncPlannerFuzzing {
    /// What one plan came to, and the properties it broke.
    public struct Outcome: Sendable {
        /// The plan's actions.
        public var actionCount = 0
        /// The most actions the scenario allows (a bounded plan).
        public var actionBound = 0
        /// Every property the plan broke, described; empty when it held them all.
        public var violations: [String] = []
    }

    /// Reads a scenario from `bytes` (a sync state and its journal, a scanned tree with unread and
    /// skipped places, versions on the station with any sizes, digests, ancestry and dates, a
    /// deletion limit), plans it with contents read from `bytes` too, and checks the plan.
    public static func plan(_ bytes: [UInt8]) async -> Outcome {
        var input = ScenarioBytes(bytes)
        var state = SyncState()
        for _ in 0..<input.next(8) {
            guard let path = input.path() else { continue }
            state.files[path] = SyncState.Entry(postCID: input.postCID(), stamp: input.stamp(), sha256: input.digest() ?? ScenarioBytes.digests[0])
        }
        for _ in 0..<input.next(4) {
            guard let path = input.path() else { continue }
            let actions: [SyncState.Pending.Action] = [.upload, .place, .trash, .deleteRemote, .conflictRename]
            state.pending.append(SyncState.Pending(action: actions[input.next(actions.count)], path: path, sha256: input.digest(),
                                                   stamp: input.next(2) == 0 ? nil : input.stamp(),
                                                   postCIDs: (0..<input.next(3)).map { _ in input.postCID() }))
        }
        state.highWaterMark = input.next(16)
        var scan = LocalFolder.Scan()
        for _ in 0..<input.next(8) {
            guard let path = input.path() else { continue }
            scan.files[path] = input.stamp()
        }
        for _ in 0..<input.next(3) {
            guard let path = input.path() else { continue }
            if input.next(2) == 0 {
                scan.markUnread(path)
            } else {
                scan.skipped.append(SkippedItem(path: path.description, reason: .symbolicLink))
            }
        }
        var versions: [RemoteVersion] = []
        for _ in 0..<input.next(10) {
            guard let path = input.path() else { continue }
            let sizes: [Int64?] = [nil, 0, 1, 2, 3, Int64.max]
            let dates: [Int?] = [nil, 0, 1_700_000_000, Int.max, Int.min, -62_135_596_801, 253_402_300_800]
            versions.append(RemoteVersion(postCID: input.postCID(), path: path, statedSize: sizes[input.next(sizes.count)],
                                          sha256: input.digest(), replaces: input.next(3) == 0 ? nil : input.postCID(),
                                          createdAt: dates[input.next(dates.count)]))
        }
        var options = SyncOptions(maximumDeletions: input.next(2) == 0 ? nil : input.next(8), deviceName: "fuzz")
        options.waitsForOtherSyncs = false
        let reading = ScenarioReading(seed: input.next(256))
        let blocked = Set(scan.skipped.compactMap { try? SyncPath(relative: $0.path) })
        var planner = Planner(options: options, reading: reading, state: state, scan: scan, versions: versions, skipped: [],
                              date: Date(timeIntervalSince1970: 1_796_537_702))
        let plan = await planner.plan()

        var outcome = Outcome()
        outcome.actionCount = plan.actions.count
        let paths = Set(state.files.keys).union(scan.files.keys).union(versions.map(\.path)).count
        outcome.actionBound = 3 * versions.count + 2 * paths + 1
        if outcome.actionCount > outcome.actionBound { outcome.violations.append("\(outcome.actionCount) actions over \(outcome.actionBound)") }
        var copies: Set<String> = []
        let existing = Set((Array(state.files.keys) + Array(scan.files.keys) + versions.map(\.path)).map { SyncPath.fold($0.description) })
        for action in plan.actions {
            guard let path = try? SyncPath(relative: action.path) else {
                outcome.violations.append("an action on a path that is not one: \(action.path)")
                continue
            }
            if scan.isUnread(path) || blocked.contains(path) { outcome.violations.append("\(action) decides what was not read") }
            switch action.step {
            case let .trash(_, stamp), let .conflict(_, stamp, _, _, _), let .download(_, _, stamp?, _):
                if scan.files[path] != stamp { outcome.violations.append("\(action) touches a file the scan did not see as such") }
            case .upload(_, let stamp, _, _, _), .publishMove(_, _, let stamp, _, _):
                if scan.files[path] != stamp { outcome.violations.append("\(action) uploads a file the scan did not see") }
            case let .renameLocal(_, old, stamp, _):
                if scan.files[old] != stamp { outcome.violations.append("\(action) renames a file the scan did not see as such") }
            default:
                break
            }
            // A move's `conflictCopyPath` is where the file was: only copies need a free name.
            if action.kind != .move, let copy = action.conflictCopyPath {
                let folded = SyncPath.fold(copy)
                if !copies.insert(folded).inserted || existing.contains(folded) {
                    outcome.violations.append("\(action) names a copy that is taken")
                }
                // Every copy's name reads back as the copy it is.
                let read = ConflictCopy(parsing: copy)
                if read == nil || read?.device != action.conflict?.device || read?.date != action.conflict?.date {
                    outcome.violations.append("\(action) names a copy that does not read back")
                }
            }
        }
        if plan.deletionCount > plan.actions.count { outcome.violations.append("more deletions than actions") }
        return outcome
    }
}

/// A scenario's bytes, read front to back; past the end every read is 0.
private struct ScenarioBytes {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A number below `bound`.
    mutating func next(_ bound: Int) -> Int {
        guard bound > 1, index < bytes.count else { return 0 }
        defer { index += 1 }
        return Int(bytes[index]) % bound
    }

    /// Names that meet: case and normalization pairs, a file and a folder of one name, refused names.
    static let components = ["a", "A", "caf\u{e9}", "cafe\u{301}", "d", "D", "x.txt", "X.TXT", "..", ".cipher-sync", "e", ""]

    mutating func path() -> SyncPath? {
        let count = 1 + next(3)
        return try? SyncPath(components: (0..<count).map { _ in Self.components[next(Self.components.count)] })
    }

    mutating func postCID() -> String { "bafk\(next(8))" }

    /// Four contents' SHA-256s: 32 bytes of one value each, as hex.
    static let digestBytes = (0..<4).map { [UInt8](repeating: UInt8($0 * 17), count: 32) }
    static let digests = digestBytes.map(Hex.encode)

    mutating func digest() -> String? {
        let pick = next(Self.digests.count + 1)
        return pick == Self.digests.count ? nil : Self.digests[pick]
    }

    mutating func stamp() -> FileStamp {
        FileStamp(size: Int64(next(4)), modified: Int64(next(4)), fileNumber: UInt64(next(4)), device: 1, changed: Int64(next(2)))
    }
}

/// Contents as a scenario's seed says: a digest, or unreadable, for each file and version.
private struct ScenarioReading: PlannerReading {
    let seed: Int

    /// One of the four contents for `key`, or `nil` (unreadable) for one key in five.
    private func pick(_ key: String) -> Int? {
        let mixed = key.utf8.reduce(seed) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
        return mixed % 5 == 4 ? nil : mixed % 4
    }

    func localDigest(of path: SyncPath, stamp: FileStamp) -> (digest: [UInt8], stamp: FileStamp)? {
        pick(path.description + "\(stamp.size)").map { (ScenarioBytes.digestBytes[$0], stamp) }
    }

    func remoteDigest(of version: RemoteVersion) async -> String? { pick(version.postCID).map { ScenarioBytes.digests[$0] } }
}
