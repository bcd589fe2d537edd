import Foundation
import StationClient

/// What the last sync left, per file: the three-way decisions compare each side with it. Kept
/// sealed in the app's ``CacheStore`` (``SyncStateStore``); losing it costs a comparison of every
/// file present on both sides (same size: downloaded and compared), never a file.
struct SyncState: Sendable, Codable, Equatable {
    static let currentVersion = 1

    var version = SyncState.currentVersion
    /// The files as last synced, by relative path.
    var files: [String: Entry] = [:]
    /// The journal: actions begun and not yet recorded as done. A sync killed mid-action leaves
    /// its entry here, and the next sync resolves it before deciding anything.
    var pending: [Pending] = []

    /// A file as last synced: its post, and the local file it matched.
    struct Entry: Sendable, Codable, Equatable {
        var postCID: String
        var envelopesCID: String?
        /// The local file's size, modification time and file number when it matched the post.
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
        }

        var action: Action
        var path: String
        var sha256: String?
        var stamp: FileStamp?
        var postCIDs: [String] = []
        /// Tells apart two entries of one action and path.
        var id = UUID().uuidString
    }
}

/// Reads and writes a ``SyncState`` in a cache store, under a name keyed by station, namespace
/// and folder: two folders, or one folder synced with two namespaces, never share a state.
struct SyncStateStore: Sendable {
    let cacheStore: any CacheStore
    let name: String

    init(cacheStore: any CacheStore, station: String, namespace: String, folder: URL) {
        self.cacheStore = cacheStore
        let folderPath = folder.standardizedFileURL.resolvingSymlinksInPath().path
        // Lengths first: no station, namespace and folder triple names the item of another.
        name = "drive-sync-station-\(station.utf8.count)-\(station)-\(namespace.utf8.count)-\(namespace)-\(folderPath)"
    }

    /// The state, or an empty one when there is none (a first sync) or it does not read.
    func load() async throws(DriveSyncError) -> SyncState {
        let bytes: [UInt8]?
        do {
            bytes = try await cacheStore.load(name)
        } catch {
            throw DriveSyncError(.state, "cannot read the sync state", underlying: error)
        }
        guard let bytes, let state = try? JSONDecoder().decode(SyncState.self, from: Data(bytes)),
              state.version == SyncState.currentVersion else { return SyncState() }
        return state
    }

    /// Replaces the state atomically (the cache store's promise).
    func save(_ state: SyncState) async throws(DriveSyncError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            try await cacheStore.save([UInt8](try encoder.encode(state)), as: name)
        } catch {
            throw DriveSyncError(.state, "cannot write the sync state", underlying: error)
        }
    }

    /// Removes the state (the next sync starts over, comparing what both sides hold).
    func delete() async throws(DriveSyncError) {
        do {
            try await cacheStore.delete(name)
        } catch {
            throw DriveSyncError(.state, "cannot remove the sync state", underlying: error)
        }
    }
}
