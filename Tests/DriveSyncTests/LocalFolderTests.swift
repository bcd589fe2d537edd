#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import SHA2
import Testing
@testable import DriveSync

/// The folder layer: what the scan reports, and every change refused when the folder changed
/// under the plan (a link swapped in, a file replaced) instead of touching anything outside it.
@Suite("The local folder")
struct LocalFolderTests {
    // MARK: Scanning

    @Test func linksSpecialFilesAndNamesThatAreNotUTF8AreSkipped() throws {
        try FolderFixture.with { fixture in
            try fixture.write("good.txt", "good")
            try fixture.write("secret.txt", "outside", in: fixture.outside)
            try FileManager.default.createSymbolicLink(at: fixture.url("link.txt"),
                                                       withDestinationURL: fixture.url("secret.txt", in: fixture.outside))
            try FileManager.default.createSymbolicLink(at: fixture.url("linked"), withDestinationURL: fixture.outside)
            #expect(mkfifo(fixture.url("pipe").path, 0o600) == 0)
            try FolderFixture.createFile(named: Array("bad".utf8) + [0xFF] + Array(".txt".utf8), in: fixture.root)
            try FileManager.default.createDirectory(at: fixture.url("dir"), withIntermediateDirectories: true)
            try FolderFixture.createFile(named: [0xC3, 0x28], in: fixture.url("dir"))
            try fixture.write(".cipher-sync/trash/t/old.txt", "trashed")

            let scan = try fixture.folder.scan()
            #expect(scan.files.keys.map(\.description) == ["good.txt"])
            #expect(scan.unread.isEmpty)
            let reasons = Dictionary(uniqueKeysWithValues: scan.skipped.map { ($0.path, $0.reason.kind) })
            #expect(reasons == ["link.txt": "symbolicLink", "linked": "symbolicLink", "pipe": "specialFile",
                                "bad\u{FFFD}.txt": "invalidName", "dir/\u{FFFD}(": "invalidName"])
        }
    }

    @Test func anUnreadableFolderIsUnreadNotAbsent() throws {
        try FolderFixture.with { fixture in
            try fixture.write("a.txt", "a")
            try fixture.write("sub/b.txt", "b")
            try fixture.write("sub/deeper/c.txt", "c")
            let sub = fixture.url("sub"), away = fixture.url("sub-away")
            let isRoot = geteuid() == 0
            if isRoot {
                // Root reads through chmod 000: the folder fails to open another way, taken away
                // just before the scan opens it (and put back after).
                fixture.folder.willOpenDirectory = { path in
                    if path.description == "sub" { _ = rename(sub.path, away.path) }
                }
            } else {
                #expect(chmod(sub.path, 0) == 0)
            }
            let scan = try fixture.folder.scan()
            if isRoot { #expect(rename(away.path, sub.path) == 0) } else { #expect(chmod(sub.path, 0o755) == 0) }

            #expect(scan.files.keys.map(\.description) == ["a.txt"])
            #expect(scan.unread.map(\.description) == ["sub"])
            #expect(scan.skipped.map(\.path) == ["sub"] && scan.skipped.first?.reason == .unreadable)
            #expect(try scan.isUnread(SyncPath(relative: "sub/b.txt")) && scan.isUnread(SyncPath(relative: "sub/deeper/c.txt")))
            #expect(try scan.isUnread(SyncPath(relative: "sub")))
            #expect(try !scan.isUnread(SyncPath(relative: "a.txt")) && !scan.isUnread(SyncPath(relative: "subway.txt")))
            // Unknown to the scan, not gone.
            #expect(try fixture.read("sub/b.txt") == "b" && fixture.read("sub/deeper/c.txt") == "c")
        }
    }

    @Test func aFolderVanishingMidScanIsUnread() throws {
        try FolderFixture.with { fixture in
            try fixture.write("keep/a.txt", "a")
            try fixture.write("keep/gone/b.txt", "b")
            let gone = fixture.url("keep/gone"), away = fixture.url("away")
            fixture.folder.willOpenDirectory = { path in
                if path.description == "keep/gone" { _ = rename(gone.path, away.path) }
            }
            let scan = try fixture.folder.scan()
            #expect(scan.files.keys.map(\.description) == ["keep/a.txt"])
            #expect(scan.unread.map(\.description) == ["keep/gone"])
            #expect(try scan.isUnread(SyncPath(relative: "keep/gone/b.txt")) && !scan.isUnread(SyncPath(relative: "keep/a.txt")))
            #expect(try fixture.read("b.txt", in: away) == "b")
        }
    }

    @Test func theFolderItselfMustBeAReadableFolder() throws {
        try FolderFixture.with { fixture in
            let missing = LocalFolder(root: fixture.url("missing"))
            #expect(throws: DriveSyncError.self) { try missing.scan() }
            try fixture.write("file", "not a folder")
            let file = LocalFolder(root: fixture.url("file"))
            let error = #expect(throws: DriveSyncError.self) { try file.scan() }
            #expect(error?.kind == .folder)
        }
    }

    // MARK: Opening

    @Test func aFileReplacedByAFIFOIsRefusedWithoutWaiting() throws {
        try FolderFixture.with { fixture in
            try fixture.write("f.txt", "content")
            let path = try SyncPath(relative: "f.txt")
            let stamp = try #require(try fixture.folder.scan().files[path])
            let opened = try fixture.folder.open(path, expecting: stamp)
            #expect(opened.stamp == stamp && opened.unchanged())
            #expect(try opened.sha256() == SHA2.SHA256.hash(data: Data("content".utf8)))
            #expect(unlink(fixture.url("f.txt").path) == 0 && mkfifo(fixture.url("f.txt").path, 0o600) == 0)
            let folder = fixture.folder
            #expect(try refusesWithoutHanging(fifo: fixture.url("f.txt")) { try folder.open(path, expecting: stamp) })
            #expect(try refusesWithoutHanging(fifo: fixture.url("f.txt")) { try folder.open(path, expecting: nil) })
            // The file opened before still reads as it was.
            #expect(try opened.sha256() == SHA2.SHA256.hash(data: Data("content".utf8)))
        }
    }

    /// Runs `body` on a thread of its own; true when it threw a refusal. A body stuck in `open`
    /// (the bug this guards against) fails the test instead of hanging it: the FIFO is then opened
    /// for writing, which lets it go.
    func refusesWithoutHanging(fifo: URL, _ body: @escaping @Sendable () throws -> OpenedFile) throws -> Bool {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        DispatchQueue.global().async {
            do {
                _ = try body()
                outcome.set(false)
            } catch {
                outcome.set(error is SyncPathRefusal)
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 60) == .timedOut {
            Issue.record("open(_:expecting:) blocked on a FIFO")
            let writer = open(fifo.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { _ = close(writer) }
            done.wait()
        }
        return outcome.value ?? false
    }

    // MARK: Stamps

    @Test func aSameSizeRewriteWithItsTimeSetBackNoLongerMatches() throws {
        try FolderFixture.with { fixture in
            try fixture.write("a.txt", "aaaa")
            let path = try SyncPath(relative: "a.txt")
            let before = try #require(fixture.folder.stamp(of: path))
            try FolderFixture.waitForTheNextFileTime(in: fixture.root)
            // Rewritten in place (same file number), then its modification time set back exactly.
            let handle = try FileHandle(forWritingTo: fixture.url("a.txt"))
            try handle.write(contentsOf: Data("bbbb".utf8))
            try handle.close()
            var times = [timespec(tv_sec: Int(before.modified / 1_000_000), tv_nsec: Int(before.modified % 1_000_000) * 1000),
                         timespec(tv_sec: Int(before.modified / 1_000_000), tv_nsec: Int(before.modified % 1_000_000) * 1000)]
            #expect(utimensat(AT_FDCWD, fixture.url("a.txt").path, &times, 0) == 0)
            let after = try #require(fixture.folder.stamp(of: path))
            #expect(after.size == before.size && after.modified == before.modified)
            #expect(after.fileNumber == before.fileNumber && after.device == before.device)
            #expect(after.changed > before.changed)
            #expect(!after.matches(before))
            #expect(throws: SyncPathRefusal.self) { try fixture.folder.open(path, expecting: before) }
        }
    }

    @Test func aStampStoredBeforeDeviceAndChangeTimeMatchesNoFile() throws {
        let old = try JSONDecoder().decode(FileStamp.self, from: Data(#"{"size":4,"modified":1700000000000000,"fileNumber":12}"#.utf8))
        #expect(old == FileStamp(size: 4, modified: 1_700_000_000_000_000, fileNumber: 12, device: 0, changed: 0))
        let live = FileStamp(size: 4, modified: 1_700_000_000_000_000, fileNumber: 12, device: 2049, changed: 1_700_000_000_000_001)
        #expect(!old.matches(live) && live.matches(live))
        #expect(try JSONDecoder().decode(FileStamp.self, from: JSONEncoder().encode(live)) == live)
        // Times out of range saturate instead of trapping.
        #expect(FileStamp.microseconds(seconds: .max, nanoseconds: 999_999_999) == .max)
        #expect(FileStamp.microseconds(seconds: .min, nanoseconds: 0) == .min)
    }

    // MARK: Links swapped in

    /// `sub` is swapped for a link to the outside folder after the plan; the outside folder holds a
    /// hard link to the very file (same device, inode and stamp), so only the link on the way
    /// tells them apart.
    @Test func aFolderSwappedForALinkOutsideIsNeverFollowed() throws {
        try FolderFixture.with { fixture in
            try fixture.write("sub/a.txt", "inside")
            #expect(link(fixture.url("sub/a.txt").path, fixture.url("a.txt", in: fixture.outside).path) == 0)
            let folder = fixture.folder
            let path = try SyncPath(relative: "sub/a.txt")
            let stamp = try #require(folder.stamp(of: path))
            #expect(rename(fixture.url("sub").path, fixture.url("sub-moved").path) == 0)
            try FileManager.default.createSymbolicLink(at: fixture.url("sub"), withDestinationURL: fixture.outside)
            let outsideBefore = fixture.tree(of: fixture.outside)

            #expect(folder.stamp(of: path) == nil)
            #expect(throws: SyncPathRefusal.self) { try folder.open(path, expecting: stamp) }
            #expect(throws: SyncPathRefusal.self) { try folder.moveToTrash(path, expected: stamp, trashFolder: "2026-01-01T000000Z") }
            #expect(throws: SyncPathRefusal.self) { try folder.move(path, expected: stamp, to: SyncPath(relative: "copy.txt")) }
            try fixture.write("here.txt", "here")
            let here = try #require(folder.stamp(of: SyncPath(relative: "here.txt")))
            #expect(throws: SyncPathRefusal.self) {
                try folder.move(SyncPath(relative: "here.txt"), expected: here, to: SyncPath(relative: "sub/here.txt"))
            }
            let incoming = try folder.createIncoming()
            try incoming.handle.write(contentsOf: Data("downloaded".utf8))
            #expect(throws: SyncPathRefusal.self) { try folder.place(incoming, at: path, replacing: stamp, modified: nil) }
            #expect(throws: SyncPathRefusal.self) {
                try folder.place(incoming, at: SyncPath(relative: "sub/new.txt"), replacing: nil, modified: nil)
            }

            #expect(fixture.tree(of: fixture.outside) == outsideBefore)
            #expect(try fixture.read("a.txt", in: fixture.outside) == "inside")
            #expect(try fixture.read("here.txt") == "here")
            #expect(!FileManager.default.fileExists(atPath: fixture.url("copy.txt").path))
        }
    }

    @Test func aDataDirectoryThatIsALinkIsNeverUsed() async throws {
        try await FolderFixture.with { fixture in
            try fixture.write("incoming/leftover", "keep me", in: fixture.outside)
            try fixture.write("trash/t/old.txt", "keep me", in: fixture.outside)
            try FileManager.default.createSymbolicLink(at: fixture.url(".cipher-sync"), withDestinationURL: fixture.outside)
            try fixture.write("a.txt", "a")
            let folder = fixture.folder
            let path = try SyncPath(relative: "a.txt")
            let stamp = try #require(folder.stamp(of: path))
            let before = fixture.tree(of: fixture.outside)

            #expect(throws: SyncPathRefusal.self) { try folder.createIncoming() }
            folder.removeIncoming()
            #expect(throws: SyncPathRefusal.self) { try folder.moveToTrash(path, expected: stamp, trashFolder: "t") }
            let error = await #expect(throws: DriveSyncError.self) { try await FolderLock.acquire(folder, waiting: false) }
            #expect(error?.kind == .folder)
            // The scan leaves `.cipher-sync` out, link or not.
            #expect(try folder.scan().skipped.isEmpty)

            #expect(fixture.tree(of: fixture.outside) == before)
            #expect(try fixture.read("incoming/leftover", in: fixture.outside) == "keep me")
            #expect(try fixture.read("a.txt") == "a")
        }
    }

    // MARK: Placing, moving, trashing

    @Test func placeReplacesOnlyTheExpectedFile() throws {
        try FolderFixture.with { fixture in
            let folder = fixture.folder
            try fixture.write("a.txt", "old")
            let path = try SyncPath(relative: "a.txt")
            let planned = try #require(folder.stamp(of: path))
            // Replaced meanwhile by another file (another inode) of the same size.
            try Data("new".utf8).write(to: fixture.url("a.txt"), options: .atomic)
            let incoming = try folder.createIncoming()
            try incoming.handle.write(contentsOf: Data("downloaded".utf8))
            #expect(throws: SyncPathRefusal.self) { try folder.place(incoming, at: path, replacing: planned, modified: nil) }
            #expect(try fixture.read("a.txt") == "new")

            let current = try #require(folder.stamp(of: path))
            let modified = Date(timeIntervalSince1970: 1_700_000_000)
            let placed = try folder.place(incoming, at: path, replacing: current, modified: modified)
            #expect(try fixture.read("a.txt") == "downloaded")
            #expect(placed == folder.stamp(of: path))
            #expect(placed.modified == 1_700_000_000_000_000)
            #expect(try incoming.sha256() == SHA2.SHA256.hash(data: Data("downloaded".utf8)))
            #expect(fixture.tree(of: fixture.url(".cipher-sync/incoming")).isEmpty)
        }
    }

    @Test func placeWithoutExpectationNeverReplaces() throws {
        try FolderFixture.with { fixture in
            let folder = fixture.folder
            do {
                let incoming = try folder.createIncoming()
                try incoming.handle.write(contentsOf: Data("downloaded".utf8))
                try fixture.write("b.txt", "appeared")
                #expect(throws: SyncPathRefusal.self) {
                    try folder.place(incoming, at: SyncPath(relative: "b.txt"), replacing: nil, modified: nil)
                }
                #expect(try fixture.read("b.txt") == "appeared")
                #expect(fixture.tree(of: fixture.url(".cipher-sync/incoming")).count == 1)
            }
            // Dropped unplaced: its name is gone.
            #expect(fixture.tree(of: fixture.url(".cipher-sync/incoming")).isEmpty)

            let incoming = try folder.createIncoming()
            try incoming.handle.write(contentsOf: Data("new".utf8))
            let path = try SyncPath(relative: "new/folders/c.txt")
            let placed = try folder.place(incoming, at: path, replacing: nil, modified: nil)
            #expect(try fixture.read("new/folders/c.txt") == "new")
            #expect(placed == folder.stamp(of: path))
            #expect(fixture.tree(of: fixture.url(".cipher-sync/incoming")).isEmpty)
        }
    }

    @Test func moveAndTrashTakeOnlyTheExpectedFileAndNeverReplace() throws {
        try FolderFixture.with { fixture in
            let folder = fixture.folder
            try fixture.write("a.txt", "a")
            try fixture.write("taken.txt", "taken")
            let path = try SyncPath(relative: "a.txt")
            let stamp = try #require(folder.stamp(of: path))
            #expect(throws: SyncPathRefusal.self) { try folder.move(path, expected: stamp, to: SyncPath(relative: "taken.txt")) }
            #expect(try fixture.read("taken.txt") == "taken" && fixture.read("a.txt") == "a")
            try folder.move(path, expected: stamp, to: SyncPath(relative: "copies/a (conflict).txt"))
            #expect(try fixture.read("copies/a (conflict).txt") == "a")

            // Edited after the plan: left as it is.
            let copy = try SyncPath(relative: "copies/a (conflict).txt")
            let planned = try #require(folder.stamp(of: copy))
            try FolderFixture.waitForTheNextFileTime(in: fixture.root)
            try fixture.write("copies/a (conflict).txt", "b")
            #expect(throws: SyncPathRefusal.self) { try folder.moveToTrash(copy, expected: planned, trashFolder: "t") }
            let current = try #require(folder.stamp(of: copy))
            #expect(try folder.moveToTrash(copy, expected: current, trashFolder: "t") == ".cipher-sync/trash/t/copies/a (conflict).txt")
            #expect(try fixture.read(".cipher-sync/trash/t/copies/a (conflict).txt") == "b")
        }
    }

    @Test func aTrashPlaceBlockedByAFileTakesTheNextFolder() throws {
        try FolderFixture.with { fixture in
            let folder = fixture.folder
            try fixture.write("docs", "a file named docs")
            let docs = try SyncPath(relative: "docs")
            _ = try folder.moveToTrash(docs, expected: try #require(folder.stamp(of: docs)), trashFolder: "t")
            try fixture.write("docs/a.txt", "a")
            let path = try SyncPath(relative: "docs/a.txt")
            #expect(try folder.moveToTrash(path, expected: try #require(folder.stamp(of: path)), trashFolder: "t")
                == ".cipher-sync/trash/t-2/docs/a.txt")
        }
    }

    @Test func removeIncomingRemovesLeftoversByNameOnly() throws {
        try FolderFixture.with { fixture in
            let incoming = fixture.url(".cipher-sync/incoming")
            try fixture.write("leftover", "part", in: incoming)
            try FolderFixture.createFile(named: [0x78, 0xFF], in: incoming)
            #expect(mkfifo(incoming.appendingPathComponent("pipe").path, 0o600) == 0)
            try fixture.write("secret.txt", "outside", in: fixture.outside)
            try FileManager.default.createSymbolicLink(at: incoming.appendingPathComponent("link"),
                                                       withDestinationURL: fixture.url("secret.txt", in: fixture.outside))
            try fixture.write("folder/inside.txt", "kept", in: incoming)
            fixture.folder.removeIncoming()
            #expect(fixture.tree(of: incoming) == ["folder", "folder/inside.txt"])
            #expect(try fixture.read("secret.txt", in: fixture.outside) == "outside")
        }
    }

    @Test func aTrashFolderNameIsMadeForAnyDate() {
        #expect(LocalFolder.stamp(Date(timeIntervalSince1970: 9.3e18)) == "9999-12-31T235959Z")
        #expect(LocalFolder.stamp(Date(timeIntervalSince1970: -9.3e18)) == "0001-01-01T000000Z")
        #expect(LocalFolder.stamp(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T235959Z")
        #expect(LocalFolder.stamp(Date(timeIntervalSince1970: .nan)) == "0001-01-01T000000Z")
    }
}

/// What a thread reports to the test waiting for it.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Bool?
    var value: Bool? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ value: Bool) {
        lock.lock()
        defer { lock.unlock() }
        stored = value
    }
}
