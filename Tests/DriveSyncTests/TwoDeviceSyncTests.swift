import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// Two devices of one owner syncing their folders with one namespace: every change on either
/// side reaches the other, conflicts keep both versions, deletions go to the trash.
@Suite("Two devices in sync")
struct TwoDeviceSyncTests {
    @Test func editsRenamesDeletionsAndConflictsConverge() async throws {
        try await SyncRig.with { rig in
            let (laptop, phone) = (rig.laptop, rig.phone)

            // New files on both sides, nested folders included.
            try laptop.write("notes.txt", "first notes")
            try laptop.write("documents/work/plan.md", "# plan")
            try phone.write("photos/cat.jpg", String(repeating: "c", count: 3000))
            var tree = try await rig.converge()
            #expect(tree.keys.sorted() == ["documents/work/plan.md", "notes.txt", "photos/cat.jpg"])
            // CipherVault's shape: path plus filename, the size and a MIME type.
            let posts = try await laptop.client.listPosts(as: DriveFileMetadata.self).posts.compactMap(\.metadata)
            let plan = try #require(posts.first { $0.filename == "plan.md" })
            #expect(plan.path == "/documents/work/" && plan.sizeBytes == 6 && plan.mimeType == "text/markdown")

            // An edit on each side, a rename (delete + add) and a deletion.
            try laptop.write("notes.txt", "second notes")
            try phone.write("documents/work/plan.md", "# plan, v2")
            try phone.remove("photos/cat.jpg")
            try phone.write("photos/kitten.jpg", String(repeating: "c", count: 3000))
            tree = try await rig.converge()
            #expect(tree.keys.sorted() == ["documents/work/plan.md", "notes.txt", "photos/kitten.jpg"])
            #expect(try laptop.read("notes.txt") == "second notes" && (try phone.read("notes.txt")) == "second notes")
            #expect(try laptop.read("documents/work/plan.md") == "# plan, v2")
            // The laptop's version of the plan that the phone's edit replaced; the rename of the
            // cat to the kitten (same content) travelled as a move, so nothing of it is trashed.
            #expect(laptop.trashed() == ["documents/work/plan.md"])

            // The same file changed on both sides: both versions kept, the laptop's under a conflict name.
            try laptop.write("notes.txt", "laptop's notes")
            try phone.write("notes.txt", "phone's notes")
            try await phone.syncExpectingSuccess()
            let conflictReport = try await laptop.syncExpectingSuccess()
            let conflict = try #require(conflictReport.completed.first { $0.kind == .conflict })
            let copy = try #require(conflict.conflictCopyPath)
            #expect(copy.hasPrefix("notes (conflict from laptop ") && copy.hasSuffix(").txt"))
            tree = try await rig.converge()
            #expect(try laptop.read("notes.txt") == "phone's notes" && (try phone.read(copy)) == "laptop's notes")
            #expect(tree.count == 4)

            // Deleted on one side while the other is unchanged: gone on both, in the other's trash.
            try laptop.remove(copy)
            tree = try await rig.converge()
            #expect(tree[copy] == nil && phone.trashed().contains(copy))

            // An edit against a deletion: the edit wins, nothing is lost.
            try laptop.remove("photos/kitten.jpg")
            try phone.write("photos/kitten.jpg", "a new kitten")
            try await laptop.syncExpectingSuccess()
            tree = try await rig.converge()
            #expect(try laptop.read("photos/kitten.jpg") == "a new kitten")
        }
    }

    @Test func aNoChangeSyncWritesNothingAndNeedsNoRewrap() async throws {
        try await SyncRig.with { rig in
            for index in 0..<5 { try rig.phone.write("file\(index).txt", "content \(index)") }
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess()
            // A fresh client of the laptop (as after a relaunch), with its persisted post keys.
            var configuration = rig.laptop.client.configuration
            let cacheStore = WriteCountingCacheStore(base: rig.laptop.cacheStore)
            configuration.cacheStore = cacheStore
            let relaunched = try await StationClient(credentials: await rig.laptop.client.credentials, configuration: configuration)
            rig.emulator.requests.removeAll()
            let plan = try await DriveSync(client: relaunched, folder: rig.laptop.folder, options: SyncOptions(deviceName: "laptop")).plan()
            #expect(plan.isInSync)
            let report = try await DriveSync(client: relaunched, folder: rig.laptop.folder).run(plan)
            #expect(report.completed.isEmpty && report.isInSync)
            let writes = rig.emulator.requests.entries.filter { $0.method == "POST" }
            #expect(writes.isEmpty, "\(writes)")
            // Nor is the sync state written again.
            let written = await cacheStore.written.filter { $0.hasPrefix("drive-sync") }
            #expect(written.isEmpty, "\(written)")
        }
    }

    @Test func unchangedFilesAreRecognisedByTheirStamp() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("a.txt", "aaaa")
            // A whole second: set again below exactly (a file system's own times need not survive a Date).
            let url = rig.laptop.folder.appendingPathComponent("a.txt")
            let modified = Date(timeIntervalSince1970: 1_700_000_000)
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
            try await rig.laptop.syncExpectingSuccess()
            // Other bytes of the same size under the same modification time: the change time moved
            // (no process can set it back), so the file is read and the edit seen.
            try FolderFixture.waitForTheNextFileTime(in: rig.laptop.folder)
            try rig.laptop.write("a.txt", "bbbb")
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
            #expect(try await rig.laptop.sync().plan().actions.map(\.kind) == [.upload])
            // A new modification time with the same bytes: read, found unchanged, nothing to do.
            try rig.laptop.write("a.txt", "aaaa")
            let touched = try await rig.laptop.sync().plan()
            #expect(touched.isInSync)
            // Another size: changed.
            try rig.laptop.write("a.txt", "aaaaa")
            #expect(try await rig.laptop.sync().plan().actions.map(\.kind) == [.upload])
        }
    }

    @Test func aLostSyncStateCopiesNothingTwiceAndDeletesNothing() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("same.txt", "on both sides")
            try rig.laptop.write("docs/only-synced.txt", "synced once")
            try await rig.laptop.syncExpectingSuccess()
            try await rig.laptop.sync().forgetState()
            try rig.laptop.write("new.txt", "new after the loss")
            try rig.laptop.remove("docs/only-synced.txt")
            // Without a state: the same content is recognised, a missing file comes back, the new one goes up.
            let plan = try await rig.laptop.sync().plan()
            #expect(Set(plan.actions.map { "\($0.kind) \($0.path)" }) == ["upload new.txt", "download docs/only-synced.txt"])
            #expect(plan.deletionCount == 0)
            _ = try await rig.laptop.sync().run(plan)
            #expect(try await rig.remotePaths() == ["/docs/only-synced.txt", "/new.txt", "/same.txt"])
            #expect(try await rig.laptop.sync().plan().isInSync)
        }
    }

    @Test func aSecondTrashingInOneSecondGetsItsOwnPlace() throws {
        try FolderFixture.with { fixture in
            let folder = fixture.folder
            let trashFolder = LocalFolder.stamp(Date(timeIntervalSince1970: 1_796_537_702))
            let path = try SyncPath(relative: "docs/a.txt")
            try fixture.write("docs/a.txt", "first")
            let first = try folder.moveToTrash(path, expected: try #require(folder.stamp(of: path)), trashFolder: trashFolder)
            #expect(first == ".cipher-sync/trash/2026-12-06T061502Z/docs/a.txt")
            try fixture.write("docs/a.txt", "second")
            let second = try folder.moveToTrash(path, expected: try #require(folder.stamp(of: path)), trashFolder: trashFolder)
            #expect(second == ".cipher-sync/trash/2026-12-06T061502Z-2/docs/a.txt")
            #expect(try fixture.read(first) == "first" && fixture.read(second) == "second")
        }
    }

    /// Over the limit, the deletions are held back and listed; everything else goes through.
    @Test func tooManyDeletionsAreHeldBackAndTheRestRuns() async throws {
        try await SyncRig.with { rig in
            for index in 0..<4 { try rig.laptop.write("f\(index).txt", "\(index)") }
            try await rig.laptop.syncExpectingSuccess()
            for index in 0..<3 { try rig.laptop.remove("f\(index).txt") }
            try rig.laptop.write("new.txt", "new")
            // The default limit: half the most files the folder had.
            let sync = rig.laptop.sync(SyncOptions(deviceName: "laptop"))
            let plan = try await sync.plan()
            #expect(plan.deletionCount == 3 && plan.deletionLimit == 2 && plan.exceedsDeletionLimit)
            let report = try await sync.run(plan)
            #expect(Set(report.heldDeletions.map(\.path)) == ["f0.txt", "f1.txt", "f2.txt"] && !report.isInSync)
            #expect(report.completed.map(\.path) == ["new.txt"])
            #expect(try await rig.remotePaths() == ["/f0.txt", "/f1.txt", "/f2.txt", "/f3.txt", "/new.txt"])
            // Allowed explicitly.
            let allowed = try await rig.laptop.sync(SyncOptions(maximumDeletions: 3, deviceName: "laptop")).sync()
            #expect(allowed.completed.filter(\.isDeletion).count == 3 && allowed.isInSync)
            #expect(try await rig.remotePaths() == ["/f3.txt", "/new.txt"])
        }
    }

    @Test func symlinksAndSpecialFilesAreSkippedAndReported() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("real.txt", "real")
            let outside = rig.laptop.folder.deletingLastPathComponent().appendingPathComponent("outside.txt")
            try Data("secret".utf8).write(to: outside)
            try FileManager.default.createSymbolicLink(at: rig.laptop.folder.appendingPathComponent("link.txt"), withDestinationURL: outside)
            try FileManager.default.createSymbolicLink(at: rig.laptop.folder.appendingPathComponent("linked-folder"),
                                                       withDestinationURL: rig.laptop.folder.deletingLastPathComponent())
            #expect(mkfifo(rig.laptop.folder.appendingPathComponent("pipe").path, 0o600) == 0)
            let report = try await rig.laptop.syncExpectingSuccess()
            #expect(Set(report.skipped.map(\.path)) == ["link.txt", "linked-folder", "pipe"])
            #expect(report.skipped.first { $0.path == "pipe" }?.reason == .specialFile)
            #expect(try await rig.remotePaths() == ["/real.txt"])
            // A link the user chose as the folder itself is followed, to the same state.
            let alias = rig.laptop.folder.deletingLastPathComponent().appendingPathComponent("alias")
            try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: rig.laptop.folder)
            let throughAlias = DriveSync(client: rig.laptop.client, folder: alias,
                                         options: SyncOptions(deviceName: "laptop", allowsNonPersistentState: true))
            #expect(try await throughAlias.plan().isInSync)
        }
    }
}

/// A cache store that records the names it was asked to write.
actor WriteCountingCacheStore: CacheStore {
    let base: any CacheStore
    private(set) var written: [String] = []

    init(base: any CacheStore) { self.base = base }

    func load(_ name: String) async throws -> [UInt8]? { try await base.load(name) }

    func save(_ bytes: [UInt8], as name: String) async throws {
        written.append(name)
        try await base.save(bytes, as: name)
    }

    func delete(_ name: String) async throws { try await base.delete(name) }
}
