// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
import Manifest
import StationClient
import StationEmulator
import TestSupport
import Testing

/// `cipher sync DIR`: the plan, `--dry-run`, `--max-delete`, exit codes and `--json`.
@Suite("cipher sync", .serialized)
struct SyncCLITests {
    @Test func planDryRunSyncAndDeletionLimit() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("docs"), withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "docs/c.md"] { try Data("content of \(name)".utf8).write(to: folder.appendingPathComponent(name)) }
        // Another device's file, for a download.
        let other = try await paired.otherDevice()
        _ = try await other.publish(data: Data("from the phone".utf8),
                                    metadata: DriveFileMetadata(filename: "phone.txt", sizeBytes: 14, path: "/"))

        // --dry-run: the plan with sizes, nothing changed.
        let dry = try await paired.cipher("sync", folder.path, "--dry-run")
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("ACTION") && dry.stdout.contains("upload") && dry.stdout.contains("docs/c.md")
            && dry.stdout.contains("download") && dry.stdout.contains("phone.txt"), "\(dry.stdout)")
        #expect(dry.stdout.contains("plan: 3 uploads") && dry.stdout.contains("1 downloads") && dry.stdout.contains("dry run"))
        #expect(paired.emulator.manifest.allPosts.count == 1)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("phone.txt").path))

        // The sync, with --json: plan and outcome.
        let (run, document) = try await paired.cipherJSON("sync", folder.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(document["in_sync"] as? Bool == true && document["exit_code"] as? Int == 0 && document["dry_run"] as? Bool == false)
        let plan = try #require(document["plan"] as? [String: Any])
        let actions = try #require(plan["actions"] as? [[String: Any]])
        #expect(Set(actions.compactMap { $0["action"] as? String }) == ["upload", "download"])
        #expect(actions.first { $0["path"] as? String == "docs/c.md" }?["size_bytes"] as? Int == 20)
        let outcome = try #require(document["outcome"] as? [String: Any])
        #expect((outcome["completed"] as? [Any])?.count == 4 && (outcome["failures"] as? [Any])?.isEmpty == true)
        #expect(try String(contentsOf: folder.appendingPathComponent("phone.txt"), encoding: .utf8) == "from the phone")
        #expect(paired.emulator.manifest.allPosts.count == 4)

        // In sync: exit 0, nothing to do.
        let again = try await paired.cipher("sync", folder.path)
        #expect(again.status == 0 && again.stdout.contains("in sync"), "\(again.stdout)\(again.stderr)")

        // Three of four deleted and one new file: over the default limit (half), so the deletions
        // are held back, the new file goes up, and the exit code says the deletions wait.
        for name in ["a.txt", "b.txt", "docs/c.md"] { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        try Data("held-back run".utf8).write(to: folder.appendingPathComponent("g.txt"))
        let (held, heldDocument) = try await paired.cipherJSON("sync", folder.path)
        #expect(held.status == 6 && heldDocument["waiting_for_decision"] as? Bool == true, "\(held.stderr)")
        #expect(held.stderr.contains("--max-delete 3") && held.stderr.contains("held back"))
        // How to let exactly the deletions of a plan through: the plan printed runs as it is.
        #expect(held.stderr.contains("--yes") && held.stderr.contains("runs as it is"), "\(held.stderr)")
        let heldOutcome = try #require(heldDocument["outcome"] as? [String: Any])
        #expect((heldOutcome["held_deletions"] as? [Any])?.count == 3 && (heldOutcome["completed"] as? [Any])?.count == 1)
        #expect(paired.emulator.manifest.allPosts.count == 5)
        let allowed = try await paired.cipher("sync", folder.path, "--max-delete", "3")
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 2)
        // --yes goes over the limit too (3 of 5 synced files deleted; the limit is 2), without a
        // terminal (standard input is a pipe here), as its help says.
        for name in ["d.txt", "e.txt", "f.txt"] { try Data(name.utf8).write(to: folder.appendingPathComponent(name)) }
        #expect(try await paired.cipher("sync", folder.path).status == 0)
        for name in ["d.txt", "e.txt", "f.txt"] { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        let (yes, yesDocument) = try await paired.cipherJSON("sync", folder.path, "--yes")
        #expect(yes.status == 0 && (yesDocument["plan"] as? [String: Any])?["deletions"] as? Int == 3, "\(yes.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 2)

        // A skipped file (a symbolic link): synced otherwise, exit 8 (it waits for the user, a retry does not help).
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("link"), withDestinationURL: paired.home.url)
        let skipped = try await paired.cipher("sync", folder.path)
        #expect(skipped.status == 8 && skipped.stderr.contains("link") && skipped.stderr.contains("symbolic link"), "\(skipped.stderr)")
        let (skippedJSON, skippedDocument) = try await paired.cipherJSON("sync", folder.path, "--dry-run")
        #expect(skippedJSON.status == 8 && skippedDocument["exit_code"] as? Int == 8, "\(skippedJSON.stderr)")
        #expect(try await paired.cipher("sync", folder.path, "--max-delete", "x").status == 2)

        // Another sync of the folder running (its lock held, as that sync would): exit 7, nothing changed.
        let lock = open(folder.appendingPathComponent(".cipher-sync/lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
        let (busy, busyDocument) = try await paired.cipherJSON("sync", folder.path)
        #expect(busy.status == 7 && busy.stderr.contains("another sync"), "\(busy.stderr)")
        #expect(busyDocument["error"] != nil || busy.stdout.contains("busy"), "\(busy.stdout)")
        close(lock)
        #expect(try await paired.cipher("sync", folder.path, "--wait").status == 8)
    }

    /// `--empty-trash [--older-than DAYS]`: the trash folders of older syncs, or all; nothing else.
    @Test func emptyTrashRemovesOnlyTheTrash() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        let trash = folder.appendingPathComponent(".cipher-sync/trash")
        for (name, text) in [("2001-01-01T000000Z/docs/old.txt", "old"), ("2999-01-01T000000Z/new.txt", "newer")] {
            let url = trash.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try Data("kept".utf8).write(to: folder.appendingPathComponent("kept.txt"))

        let (older, document) = try await paired.cipherJSON("sync", folder.path, "--empty-trash", "--older-than", "30")
        #expect(older.status == 0, "\(older.stderr)")
        #expect(document["removed_files"] as? Int == 1 && document["removed_bytes"] as? Int == 3 && document["removed_folders"] as? Int == 1,
                "\(document)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path) == ["2999-01-01T000000Z"])
        let all = try await paired.cipher("sync", folder.path, "--empty-trash")
        #expect(all.status == 0 && all.stdout.contains("removed 1 files"), "\(all.stdout)\(all.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("kept.txt").path))
        #expect(paired.emulator.manifest.allPosts.isEmpty)
        // --older-than alone is a usage error, and a bad number too.
        #expect(try await paired.cipher("sync", folder.path, "--older-than", "3").status == 2)
        #expect(try await paired.cipher("sync", folder.path, "--empty-trash", "--older-than", "-1").status == 2)
    }

    /// `--status` shows the last sync and the trash; `--forget` drops the sync state only.
    @Test func statusAndForget() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent(".cipher-sync/trash/2999-01-01T000000Z"),
                                                withIntermediateDirectories: true)
        try Data("trashed".utf8).write(to: folder.appendingPathComponent(".cipher-sync/trash/2999-01-01T000000Z/old.txt"))
        let (never, empty) = try await paired.cipherJSON("sync", folder.path, "--status")
        #expect(never.status == 0 && empty["last_sync"] == nil && empty["tracked_files"] as? Int == 0, "\(never.stderr)\(empty)")
        for name in ["a.txt", "b.txt"] { try Data(name.utf8).write(to: folder.appendingPathComponent(name)) }
        #expect(try await paired.cipher("sync", folder.path).status == 0)

        let (shown, status) = try await paired.cipherJSON("sync", folder.path, "--status")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(status["tracked_files"] as? Int == 2 && status["last_sync_completed"] as? Int == 2 && status["last_sync"] is String, "\(status)")
        #expect(status["trash_files"] as? Int == 1 && status["trash_bytes"] as? Int == 7, "\(status)")
        let text = try await paired.cipher("sync", folder.path, "--status")
        #expect(text.stdout.contains("files tracked: 2") && text.stdout.contains("trash: 1 files"), "\(text.stdout)")

        let forgot = try await paired.cipher("sync", folder.path, "--forget")
        #expect(forgot.status == 0 && forgot.stdout.contains("post keys and other caches kept"), "\(forgot.stdout)\(forgot.stderr)")
        let (_, after) = try await paired.cipherJSON("sync", folder.path, "--status")
        #expect(after["tracked_files"] as? Int == 0 && after["last_sync"] == nil, "\(after)")
        // The next sync recognises both files: nothing to do, nothing deleted.
        let (again, document) = try await paired.cipherJSON("sync", folder.path)
        #expect(again.status == 0 && (document["outcome"] as? [String: Any])?["completed"] as? [Any] == nil
                    || ((document["outcome"] as? [String: Any])?["completed"] as? [Any])?.isEmpty == true, "\(document)")
        #expect(paired.emulator.manifest.allPosts.count == 2)
        #expect(try await paired.cipher("sync", folder.path, "--trash-days", "x").status == 2)
    }

    /// A failed action is exit 5 (the next sync retries it), and wins over a skipped item's 8.
    @Test func failuresExitFiveAndWinOverSkippedItems() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("here".utf8).write(to: folder.appendingPathComponent("here.txt"))
        // Another device's post whose content does not match the SHA-256 it states: its download fails.
        let other = try await paired.otherDevice()
        let wrong = String(repeating: "0", count: 64)
        let bad = try await other.publish(data: Data("not what it says".utf8),
                                          metadata: DriveFileMetadata(filename: "bad.txt", sizeBytes: 16, path: "/", sha256: wrong))
        let (failed, document) = try await paired.cipherJSON("sync", folder.path)
        #expect(failed.status == 5 && document["exit_code"] as? Int == 5, "\(failed.stderr)")
        let failures = try #require((document["outcome"] as? [String: Any])?["failures"] as? [[String: Any]])
        #expect(failures.map { $0["path"] as? String } == ["bad.txt"])
        #expect(failed.stderr.contains("bad.txt"))
        // With a skipped item too, the failure's 5 wins (a retry may clear it).
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("link"), withDestinationURL: paired.home.url)
        let both = try await paired.cipher("sync", folder.path)
        #expect(both.status == 5 && both.stderr.contains("symbolic link"), "\(both.stderr)")
        // The failing post gone, only the skipped link is left: 8.
        _ = try await other.delete(postCID: bad.postCID)
        #expect(try await paired.cipher("sync", folder.path).status == 8)
    }

    /// Deletion rows show the size they remove (not "0 B"): the local file's, or the synced file's for a post.
    @Test func deletionRowsShowWhatTheyRemove() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
            try Data(repeating: 65, count: 1500).write(to: folder.appendingPathComponent(name))
        }
        #expect(try await paired.cipher("sync", folder.path).status == 0)
        // Deleted here: a deleteRemote; deleted on the station: a deleteLocal of a 1.5 KB file.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("a.txt"))
        let other = try await paired.otherDevice()
        let listed = try await other.listPosts(as: DriveFileMetadata.self).posts
        let post = try #require(listed.first { $0.metadata?.filename == "b.txt" })
        _ = try await other.delete(postCID: post.postCID)
        let dry = try await paired.cipher("sync", folder.path, "--dry-run")
        #expect(dry.status == 0, "\(dry.stderr)")
        let rows = dry.stdout.split(separator: "\n").map(String.init)
        let remote = try #require(rows.first { $0.hasPrefix("deleteRemote") })
        let local = try #require(rows.first { $0.hasPrefix("deleteLocal") })
        #expect(remote.contains("1.5 KB") && !remote.contains("0 B") && remote.contains("a.txt"), "\(remote)")
        #expect(local.contains("1.5 KB") && local.contains("b.txt"), "\(local)")
        // Not a terminal: no planning lines.
        #expect(!dry.stderr.contains("planning"), "\(dry.stderr)")
    }

    @Test func aStationGoneMidRunExits4AndTheNextSyncFinishes() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["a.txt", "b.txt", "c.txt"] { try Data("content of \(name)".utf8).write(to: folder.appendingPathComponent(name)) }
        // The listing goes through; every upload meets a tunnel's 502, no station behind it.
        let post = RequestRoute("POST", path: "/post")
        paired.emulator.faults.failNextRequests(Int.max, status: 502, route: post)
        #expect(try await paired.cipher("sync", folder.path, "--transfers", "0").status == 2)
        #expect(try await paired.cipher("sync", folder.path, "--transfers", "17").status == 2)
        // One file at a time: the first upload's own attempts only, no other file was tried.
        let gone = try await paired.cipher("sync", folder.path, "--transfers", "1")
        #expect(gone.status == 4, "\(gone.status) \(gone.stderr)")
        #expect(paired.emulator.requests.count(post) <= 2)
        // Three at a time (the default four): each file's own attempts, and then the run stops.
        let parallel = try await paired.cipher("sync", folder.path)
        #expect(parallel.status == 4, "\(parallel.status) \(parallel.stderr)")
        #expect(paired.emulator.requests.count(post) <= 2 + 3 * 2)
        paired.emulator.faults.reset()
        let again = try await paired.cipher("sync", folder.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 3)
    }
}
#endif
