import Foundation
import Manifest
import StationClient
import Testing
@testable import DriveSync

/// Where a sync keeps what it needs between runs: its state (in the client's cache store, which
/// must survive a relaunch), and its work folder (lock, trash, incoming), which the trash call empties.
@Suite struct SyncStorageTests {
    /// An app's own key store, as the Keychain is: it outlives the client (and, for the Keychain,
    /// the process); here it is simply kept across the "relaunch" of the test.
    actor AppKeyStore: KeyStore {
        private var items: [String: [UInt8]] = [:]
        func load(_ name: String) -> [UInt8]? { items[name] }
        func save(_ secret: [UInt8], as name: String) { items[name] = secret }
        func delete(_ name: String) { items.removeValue(forKey: name) }
    }

    @Test func aCacheStoreThatDiesWithTheProcessIsRefused() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("a.txt", "a")
            // The rig's clients keep their caches in memory: without the options' consent, nothing runs.
            let sync = DriveSync(client: rig.laptop.client, folder: rig.laptop.folder, options: SyncOptions(deviceName: "laptop"))
            let error = await #expect(throws: DriveSyncError.self) { try await sync.plan() }
            #expect(error?.kind == .cacheStoreNotPersistent)
            #expect(error?.message.contains("EncryptedFileCacheStore(directory:keyStore:)") == true, "\(String(describing: error))")
            await #expect(throws: DriveSyncError.self) { try await sync.sync() }
            #expect(!FileManager.default.fileExists(atPath: rig.laptop.folder.appendingPathComponent(".cipher-sync").path))
            #expect(rig.emulator.requests.entries.filter { $0.method == "POST" && $0.path == "/post" }.isEmpty)

            // An app's key store gets an in-memory cache by default: refused too, with what to pass.
            let app = AppKeyStore()
            let defaults = StationClientConfiguration(namespace: "drive", keyStore: app, transport: rig.emulator.transport)
            #expect(!defaults.cacheStore.persistsAcrossLaunches)
            #expect(EncryptedFileCacheStore(directory: rig.laptop.folder, keyStore: app).persistsAcrossLaunches)
            // Files sealed under a key that dies with the process do not outlive it either.
            #expect(!EncryptedFileCacheStore(directory: rig.laptop.folder, keyStore: InMemoryKeyStore()).persistsAcrossLaunches)
            #expect(AppKeyStore().persistsAcrossLaunches && !InMemoryKeyStore().persistsAcrossLaunches)
        }
    }

    @Test func aRelaunchWithAnAppKeyStoreSendsNoContentAndNoRewrap() async throws {
        try await SyncRig.with { rig in
            for index in 0..<5 { try rig.phone.write("file\(index).txt", "content \(index)") }
            try await rig.phone.syncExpectingSuccess()
            let root = rig.laptop.folder.deletingLastPathComponent()
            let folder = root.appendingPathComponent("desktop", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let keyStore = AppKeyStore()
            let caches = root.appendingPathComponent("desktop-caches", isDirectory: true)
            func configuration() -> StationClientConfiguration {
                StationClientConfiguration(namespace: "drive", keyStore: keyStore, transport: rig.emulator.transport,
                                           cacheStore: EncryptedFileCacheStore(directory: caches, keyStore: keyStore))
            }
            let log = rig.emulator.log
            let first = try await StationClient.pair(endpoint: rig.station, deviceName: "desktop", configuration: configuration()) { _ in
                log.latestPIN
            }
            let report = try await DriveSync(client: first, folder: folder, options: SyncOptions(deviceName: "desktop")).sync()
            #expect(report.completed.count == 5 && report.isInSync)

            // The app relaunches: a new client from the same key store and cache directory.
            let relaunched = try await StationClient.load(configuration: configuration())
            rig.emulator.requests.removeAll()
            let again = try await DriveSync(client: relaunched, folder: folder, options: SyncOptions(deviceName: "desktop")).sync()
            #expect(again.completed.isEmpty && again.isInSync)
            let manifest = try #require(try await relaunched.listPosts(as: DriveFileMetadata.self).manifestCID)
            let requests = rig.emulator.requests.entries
            let contents = requests.filter { ($0.path.hasPrefix("/content/") || $0.path.hasPrefix("/ipfs/")) && !$0.path.hasSuffix(manifest) }
            #expect(contents.isEmpty, "\(contents)")
            #expect(requests.filter { $0.path == "/rewrap" }.isEmpty, "\(requests)")
        }
    }

    // MARK: The work folder

    @Test func aWorkFolderOutsideTheFolderHoldsLockTrashAndIncoming() async throws {
        try await SyncRig.with { rig in
            let work = rig.laptop.folder.deletingLastPathComponent().appendingPathComponent("laptop-work", isDirectory: true)
            var options = SyncOptions(maximumDeletions: 100, deviceName: "laptop")
            options.workFolder = work
            try rig.phone.write("keep.txt", "kept")
            try rig.phone.write("old.txt", "to be deleted")
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess(options)
            try rig.phone.remove("old.txt")
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess(options)

            #expect(!FileManager.default.fileExists(atPath: rig.laptop.folder.appendingPathComponent(".cipher-sync").path))
            #expect(FileManager.default.fileExists(atPath: work.appendingPathComponent("lock").path))
            let trash = work.appendingPathComponent("trash")
            let trashed = try #require(FileManager.default.subpaths(atPath: trash.path)?.filter { $0.hasSuffix("old.txt") }.first)
            #expect(try String(contentsOf: trash.appendingPathComponent(trashed), encoding: .utf8) == "to be deleted")
            #expect(try rig.laptop.tree().keys.sorted() == ["keep.txt"])
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: work.path)[.posixPermissions] as? Int)
            #expect(mode & 0o077 == 0)
        }
    }

    @Test func aWorkFolderInsideTheFolderIsNeverSynced() async throws {
        try await SyncRig.with { rig in
            var options = SyncOptions(maximumDeletions: 100, deviceName: "laptop")
            options.workFolder = rig.laptop.folder.appendingPathComponent("sync-work", isDirectory: true)
            try rig.laptop.write("a.txt", "a")
            // The station's posts there are not put in it either.
            try rig.phone.write("sync-work/trash/planted.txt", "planted")
            try await rig.phone.syncExpectingSuccess()
            let plan = try await rig.laptop.sync(options).plan()
            #expect(plan.actions.map(\.path) == ["a.txt"])
            #expect(plan.skipped.contains { $0.path == "sync-work" && $0.reason == .workFolder })
            try await rig.laptop.syncExpectingSuccess(options)
            #expect(!FileManager.default.fileExists(atPath: rig.laptop.folder.appendingPathComponent("sync-work/trash/planted.txt").path))
            let names = try await rig.phone.client.listPosts(as: DriveFileMetadata.self).posts.compactMap(\.metadata)
                .map { ($0.path ?? "/") + $0.filename }
            #expect(names.sorted() == ["/a.txt", "/sync-work/trash/planted.txt"])
        }
    }

    @Test func anUnusableWorkFolderIsRefused() async throws {
        try await SyncRig.with { rig in
            let root = rig.laptop.folder.deletingLastPathComponent()
            let elsewhere = root.appendingPathComponent("elsewhere", isDirectory: true)
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let link = root.appendingPathComponent("link-to-elsewhere")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
            var candidates = [
                link,                                                   // a symbolic link: never followed
                rig.laptop.folder,                                      // the folder itself
                root,                                                   // a folder the synced folder lies in
                root.appendingPathComponent("missing/work"),            // its parent is missing
            ]
            // Another file system: a download could not be renamed from there into the folder.
            var shm = stat(), here = stat()
            if stat("/dev/shm", &shm) == 0, stat(root.path, &here) == 0, shm.st_dev != here.st_dev, access("/dev/shm", W_OK) == 0 {
                candidates.append(URL(fileURLWithPath: "/dev/shm/drive-sync-work-\(UUID().uuidString.prefix(8))"))
            }
            defer { if candidates.count == 5 { try? FileManager.default.removeItem(at: candidates[4]) } }
            for candidate in candidates {
                var options = SyncOptions(deviceName: "laptop")
                options.workFolder = candidate
                let error = await #expect(throws: DriveSyncError.self, "\(candidate.path)") { try await rig.laptop.sync(options).plan() }
                #expect(error?.kind == .workFolder, "\(candidate.path): \(String(describing: error))")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
            #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("trash").path))
        }
    }

    // MARK: Emptying the trash

    @Test func emptyingTheTrashRemovesOnlyWhatIsInIt() async throws {
        try await SyncRig.with { rig in
            for name in ["a.txt", "b.txt"] { try rig.phone.write(name, String(repeating: "x", count: 10)) }
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess()
            for name in ["a.txt", "b.txt"] { try rig.phone.remove(name) }
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess()
            #expect(rig.laptop.trashed() == ["a.txt", "b.txt"])

            // A link in the trash, to a file outside it: removed, never followed.
            let root = rig.laptop.folder.deletingLastPathComponent()
            let outside = root.appendingPathComponent("outside.txt")
            try Data("outside".utf8).write(to: outside)
            let trash = rig.laptop.folder.appendingPathComponent(".cipher-sync/trash")
            let folder = try #require(try FileManager.default.contentsOfDirectory(atPath: trash.path).first)
            try FileManager.default.createSymbolicLink(at: trash.appendingPathComponent(folder).appendingPathComponent("link"),
                                                       withDestinationURL: root)
            // An older sync's folder, and a folder named otherwise (kept by an emptying by date).
            try FileManager.default.createDirectory(at: trash.appendingPathComponent("2001-01-01T000000Z-2/d"),
                                                    withIntermediateDirectories: true)
            try Data("old".utf8).write(to: trash.appendingPathComponent("2001-01-01T000000Z-2/d/old.txt"))
            try FileManager.default.createDirectory(at: trash.appendingPathComponent("mine"), withIntermediateDirectories: true)

            let sync = rig.laptop.sync()
            let old = try await sync.emptyTrash(olderThan: Date(timeIntervalSince1970: 1_000_000_000))
            #expect(old == EmptiedTrash(fileCount: 1, byteCount: 3, folderCount: 1))
            #expect(rig.laptop.trashed() == ["a.txt", "b.txt"])

            let all = try await sync.emptyTrash()
            #expect(all == EmptiedTrash(fileCount: 3, byteCount: 20, folderCount: 2))
            #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).isEmpty)
            #expect(try String(contentsOf: outside, encoding: .utf8) == "outside")
            #expect(try rig.laptop.tree().isEmpty && FileManager.default.fileExists(atPath: rig.laptop.folder.path))
            #expect(try await sync.emptyTrash() == EmptiedTrash())
        }
    }

    @Test func emptyingTheTrashWaitsForTheFolderLock() async throws {
        try await SyncRig.with { rig in
            let sync = rig.laptop.sync()
            let lock = try await FolderLock.acquire(sync.local, waiting: false)
            let error = await #expect(throws: DriveSyncError.self) { try await sync.emptyTrash() }
            #expect(error?.kind == .busy)
            withExtendedLifetime(lock) {}
        }
    }

    @Test func trashFolderNamesGiveTheirSyncTime() {
        #expect(LocalFolder.trashDate("2026-12-06T061502Z") == Date(timeIntervalSince1970: 1_796_537_702))
        #expect(LocalFolder.trashDate("2026-12-06T061502Z-3") == Date(timeIntervalSince1970: 1_796_537_702))
        for name in ["mine", "2026-12-06T06:15:02Z", "2026-12-06T061502Z-", "2026-12-06T061502Z-x", "2026-12-06T061502", ""] {
            #expect(LocalFolder.trashDate(name) == nil, "\(name)")
        }
    }
}
