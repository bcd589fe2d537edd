import Foundation
import StationClient

/// What the last sync left, per file: the three-way decisions compare each side with it. Kept
/// sealed in the app's ``CacheStore`` (``SyncStateStore``); losing it costs a comparison of every
/// file present on both sides (by the posts' digests; downloaded for older posts), never a file.
struct SyncState: Sendable, Equatable {
    /// The layout of the stored items (``SyncStateStore``). Version 1 (files keyed by `String`,
    /// which merges canonically equivalent names) is read and rewritten as 2; other versions read
    /// as no state.
    static let currentVersion = 2

    /// The files as last synced, by path: keyed by the exact bytes of the name (`SyncPath` compares
    /// bytes), so `café` spelled NFC and NFD are two files, as the file system keeps them.
    var files: [SyncPath: Entry] = [:]
    /// The journal: actions begun and not yet recorded as done. A sync killed mid-action leaves
    /// its entry here, and the next sync resolves it before deciding anything.
    var pending: [Pending] = []
    /// The most files the folder had in sync since the user last allowed deletions past the limit:
    /// the default deletion limit is measured against it, so a folder shrunk run by run still stops
    /// and asks before it loses more than half.
    var highWaterMark = 0

    /// A file as last synced: its post, and the local file it matched.
    struct Entry: Sendable, Codable, Equatable {
        var postCID: String
        var envelopesCID: String? = nil
        /// The local file's size, times, file number and device when it matched the post.
        var stamp: FileStamp
        /// The SHA-256 of the plaintext, lowercase hex.
        var sha256: String
    }

    /// One journalled action.
    struct Pending: Sendable, Codable, Equatable {
        enum Action: String, Sendable, Codable {
            /// Publishing the local file at ``path`` (``sha256``, ``stamp``); ``postCIDs`` are the
            /// posts it replaces.
            case upload
            /// Putting the post ``postCIDs``[0] in place at ``path``; once ``sha256`` is set the
            /// verified download is about to be renamed into place.
            case place
            /// Moving the local file at ``path`` to the trash.
            case trash
            /// Removing the post ``postCIDs``[0].
            case deleteRemote
            /// Renaming the local file at ``path`` to its conflict copy's name.
            case conflictRename
            /// Renaming the local file at ``path`` to where its version moved on another device.
            case move
        }

        var action: Action
        var path: SyncPath
        var sha256: String?
        var stamp: FileStamp?
        var postCIDs: [String] = []
        /// Tells apart two entries of one action and path.
        var id = UUID().uuidString
    }

    /// The number of files in sync, as the high-water mark counts them.
    var folderSize: Int { max(highWaterMark, files.count) }
}

/// One recorded result: the path's entry after an action (`nil`: the path is no longer synced).
struct SyncChange: Sendable, Codable, Equatable {
    var path: SyncPath
    var entry: SyncState.Entry?
}

extension SyncPath: Codable {
    /// The relative path as it is written (`a/b.txt`); JSON keeps its exact scalars.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(relative: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.reason))
        }
    }
}

/// Reads and writes a ``SyncState`` in a cache store, under names keyed by station, namespace,
/// remote root and folder: two folders, or one folder synced with two namespaces or roots, never
/// share a state.
///
/// Two items, so that journalling an action writes a few hundred bytes rather than the whole
/// state: a **checkpoint** (every file's entry) and the **journal** (the pending actions and the
/// results recorded since the checkpoint). The state is the checkpoint with the journal's results
/// applied in order; a checkpoint is written every ``checkpointInterval`` results and at the end
/// of a run, then the journal is emptied (a kill between the two leaves results that are already
/// in the checkpoint: applying them again changes nothing).
struct SyncStateStore: Sendable {
    let cacheStore: any CacheStore
    let name: String

    /// Results recorded in the journal before the next checkpoint.
    static let checkpointInterval = 16

    init(cacheStore: any CacheStore, station: String, namespace: String, folder: URL, root: RemoteRoot = .namespace) {
        self.cacheStore = cacheStore
        let folderPath = folder.path
        // Lengths first: no station, namespace and folder triple names the item of another. A
        // root other than `/` comes before the folder, whose absolute path starts with `/`, not
        // `root-` (the whole namespace keeps the names earlier versions wrote).
        let rootPart = root.isNamespace ? "" : "root-\(root.path.utf8.count)-\(root.path)-"
        name = "drive-sync-station-\(station.utf8.count)-\(station)-\(namespace.utf8.count)-\(namespace)-\(rootPart)\(folderPath)"
    }

    var checkpointName: String { name + "-checkpoint" }
    var journalName: String { name + "-journal" }
    /// The last run's outcome, for ``DriveSync/status()``: apart from the state, so a run that
    /// changes nothing writes only this small item.
    var lastRunName: String { name + "-last-run" }

    /// A file's entry in the checkpoint: a list, not a JSON object, whose keys a decoder would
    /// merge when they are canonically equivalent.
    private struct FileRecord: Codable {
        var path: SyncPath
        var entry: SyncState.Entry
    }

    private struct Checkpoint: Codable {
        var version = SyncState.currentVersion
        var files: [FileRecord]
        var highWaterMark: Int
    }

    /// Version 1's checkpoint: files keyed by path in a JSON object.
    private struct CheckpointVersion1: Codable {
        var version: Int
        var files: [String: SyncState.Entry]
    }

    private struct Journal: Codable {
        var version = SyncState.currentVersion
        var pending: [SyncState.Pending]
        var results: [SyncChange]
    }

    private struct Version: Codable { var version: Int }

    /// The state, or an empty one when there is none (a first sync) or it does not read; and
    /// whether it is all in the checkpoint (the journal holds nothing), so a run that changes
    /// nothing before its first action need not write a checkpoint first.
    func load() async throws(DriveSyncError) -> (state: SyncState, isCheckpointed: Bool) {
        guard let version: Version = try await item(checkpointName) else { return (SyncState(), false) }
        var state = SyncState()
        switch version.version {
        case SyncState.currentVersion:
            guard let checkpoint: Checkpoint = try await item(checkpointName) else { return (SyncState(), false) }
            for record in checkpoint.files { state.files[record.path] = record.entry }
            state.highWaterMark = checkpoint.highWaterMark
        case 1:
            // The journal of version 1 is not read: the planner's comparisons redo what it held.
            guard let checkpoint: CheckpointVersion1 = try await item(checkpointName) else { return (SyncState(), false) }
            for (path, entry) in checkpoint.files {
                if let path = try? SyncPath(relative: path) { state.files[path] = entry }
            }
            state.highWaterMark = state.files.count
            return (state, false)
        default:
            return (SyncState(), false)
        }
        guard let journal: Journal = try await item(journalName), journal.version == SyncState.currentVersion else { return (state, false) }
        for result in journal.results { state.files[result.path] = result.entry }
        state.pending = journal.pending
        return (state, journal.results.isEmpty && journal.pending.isEmpty)
    }

    private func item<Value: Decodable>(_ name: String) async throws(DriveSyncError) -> Value? {
        let bytes: [UInt8]?
        do {
            bytes = try await cacheStore.load(name)
        } catch {
            throw DriveSyncError(.state, "cannot read the sync state", underlying: error)
        }
        return bytes.flatMap { try? JSONDecoder().decode(Value.self, from: Data($0)) }
    }

    private func write<Value: Encodable>(_ value: Value, as name: String) async throws(DriveSyncError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try await cacheStore.save([UInt8](try encoder.encode(value)), as: name)
        } catch {
            throw DriveSyncError(.state, "cannot write the sync state", underlying: error)
        }
    }

    /// Writes every entry of `state`, then a journal holding only its pending actions.
    func saveCheckpoint(_ state: SyncState) async throws(DriveSyncError) {
        let files = state.files.sorted { $0.key < $1.key }.map { FileRecord(path: $0.key, entry: $0.value) }
        try await write(Checkpoint(files: files, highWaterMark: state.highWaterMark), as: checkpointName)
        try await saveJournal(pending: state.pending, results: [])
    }

    /// Replaces the journal (each item is replaced atomically: the cache store's promise).
    func saveJournal(pending: [SyncState.Pending], results: [SyncChange]) async throws(DriveSyncError) {
        try await write(Journal(pending: pending, results: results), as: journalName)
    }

    /// The last run's outcome, `nil` before the first or when it does not read.
    func loadLastRun() async throws(DriveSyncError) -> LastRunRecord? {
        guard let record: LastRunRecord = try await item(lastRunName), record.version == 1 else { return nil }
        return record
    }

    func saveLastRun(_ record: LastRunRecord) async throws(DriveSyncError) {
        try await write(record, as: lastRunName)
    }

    /// Removes the state (the next sync starts over, comparing what both sides hold) and the
    /// last run's outcome; nothing else of the cache store.
    func delete() async throws(DriveSyncError) {
        do {
            try await cacheStore.delete(journalName)
            try await cacheStore.delete(lastRunName)
            try await cacheStore.delete(checkpointName)
        } catch {
            throw DriveSyncError(.state, "cannot remove the sync state", underlying: error)
        }
    }
}
