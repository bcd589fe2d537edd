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

        // Three of four deleted: over the default limit (half), so nothing changes and the exit code says it waits.
        for name in ["a.txt", "b.txt", "docs/c.md"] { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        let (held, heldDocument) = try await paired.cipherJSON("sync", folder.path)
        #expect(held.status == 6 && heldDocument["waiting_for_decision"] as? Bool == true, "\(held.stderr)")
        #expect(held.stderr.contains("--max-delete 3"))
        #expect(paired.emulator.manifest.allPosts.count == 4)
        let allowed = try await paired.cipher("sync", folder.path, "--max-delete", "3")
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 1)
        // --yes goes over the limit too (2 of 3 synced files deleted; the limit is 1).
        for name in ["d.txt", "e.txt"] { try Data(name.utf8).write(to: folder.appendingPathComponent(name)) }
        #expect(try await paired.cipher("sync", folder.path).status == 0)
        for name in ["d.txt", "e.txt"] { try FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        let (yes, yesDocument) = try await paired.cipherJSON("sync", folder.path, "--yes")
        #expect(yes.status == 0 && (yesDocument["plan"] as? [String: Any])?["deletions"] as? Int == 2, "\(yes.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 1)

        // A skipped file (a symbolic link): synced otherwise, exit 5.
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("link"), withDestinationURL: paired.home.url)
        let skipped = try await paired.cipher("sync", folder.path)
        #expect(skipped.status == 5 && skipped.stderr.contains("link") && skipped.stderr.contains("symbolic link"), "\(skipped.stderr)")
        #expect(try await paired.cipher("sync", folder.path, "--max-delete", "x").status == 2)

        // Another sync of the folder running (its lock held, as that sync would): exit 7, nothing changed.
        let lock = open(folder.appendingPathComponent(".cipher-sync/lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
        let (busy, busyDocument) = try await paired.cipherJSON("sync", folder.path)
        #expect(busy.status == 7 && busy.stderr.contains("another sync"), "\(busy.stderr)")
        #expect(busyDocument["error"] != nil || busy.stdout.contains("busy"), "\(busy.stdout)")
        close(lock)
        #expect(try await paired.cipher("sync", folder.path, "--wait").status == 5)
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
        let gone = try await paired.cipher("sync", folder.path)
        #expect(gone.status == 4, "\(gone.status) \(gone.stderr)")
        // The first upload's own attempts only: no other file was tried.
        #expect(paired.emulator.requests.count(post) <= 2)
        paired.emulator.faults.reset()
        let again = try await paired.cipher("sync", folder.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(paired.emulator.manifest.allPosts.count == 3)
    }
}
