import Foundation
import Manifest
import StationClient
import Testing
@testable import DriveSync

/// Ignored files travel in neither direction and are never deleted, and a rule added later only
/// stops the sync deciding about what it hides (`rclone bisync`'s trap: deleting it).
@Suite("Ignored files")
struct IgnoreSyncTests {
    @Test func ignoredFilesAreNeitherUploadedNorDownloadedNorDeleted() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write(".cipherignore", "*.log\nbuild/\n!keep.log\n")
            try rig.laptop.write("notes.txt", "notes")
            try rig.laptop.write(".DS_Store", "finder litter")
            try rig.laptop.write("run.log", "a log")
            try rig.laptop.write("keep.log", "a log to keep")
            try rig.laptop.write("build/app.o", "object code")
            let plan = try await rig.laptop.sync().plan()
            #expect(plan.ignoreRules.patterns == IgnoreRules.defaultPatterns + ["*.log", "build/", "!keep.log"])
            #expect(plan.skipped.isEmpty, "ignored files are not reported: \(plan.skipped)")
            try await rig.laptop.syncExpectingSuccess()
            #expect(try await rig.remotePaths() == ["/.cipherignore", "/keep.log", "/notes.txt"])

            // The phone has its own ignored files, and the station one at an ignored path (from
            // a client that does not follow the rules): none moves, none is deleted.
            try await rig.phone.syncExpectingSuccess()
            try rig.phone.write("phone.log", "the phone's log")
            let stray = DriveFileMetadata(filename: "stray.log", mimeType: "text/plain", sizeBytes: 5, createdAt: 1, modifiedAt: 1, path: "/")
            _ = try await rig.laptop.client.publish(data: Data("stray".utf8), metadata: stray)
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess()
            #expect(try rig.phone.tree().keys.sorted() == [".cipherignore", "keep.log", "notes.txt", "phone.log"])
            #expect(try await rig.remotePaths() == ["/.cipherignore", "/keep.log", "/notes.txt", "/stray.log"])
            #expect(try rig.laptop.read("run.log") == "a log" && rig.laptop.trashed().isEmpty && rig.phone.trashed().isEmpty)
        }
    }

    @Test func aRuleAddedLaterNeverDeletesWhatItHides() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("data/big.bin", "synced before the rule")
            try rig.laptop.write("notes.txt", "notes")
            _ = try await rig.converge()
            // The rule arrives on both devices; then the laptop removes the file it now hides.
            try rig.laptop.write(".cipherignore", "data/\n")
            _ = try await rig.converge()
            try rig.laptop.remove("data/big.bin")
            try await rig.laptop.syncExpectingSuccess()
            try await rig.phone.syncExpectingSuccess()
            #expect(try rig.phone.read("data/big.bin") == "synced before the rule")
            #expect(try await rig.remotePaths().contains("/data/big.bin"))
            // The phone edits it: that does not travel either.
            try rig.phone.write("data/big.bin", "edited while ignored")
            let plan = try await rig.phone.sync().plan()
            #expect(plan.isInSync, "\(plan.actions)")
            #expect(rig.laptop.trashed().isEmpty && rig.phone.trashed().isEmpty)

            // The rule removed: the phone's edit travels as a new version (the laptop follows the
            // rules it read when its sync began, so it takes the file in its next one).
            try rig.phone.write(".cipherignore", "")
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess()
            #expect(!FileManager.default.fileExists(atPath: rig.laptop.folder.appendingPathComponent("data/big.bin").path))
            try await rig.laptop.syncExpectingSuccess()
            #expect(try rig.laptop.read("data/big.bin") == "edited while ignored")
        }
    }

    /// A watch that knows only that something changed (every event on Apple platforms, a new
    /// folder on Linux) starts no run for a change the rules ignore.
    @Test func aWatchStartsNoRunForIgnoredChangesItCannotPlace() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("notes.txt", "notes")
            try await rig.laptop.syncExpectingSuccess()
            let loop = WatchLoop(sync: rig.laptop.sync(), options: WatchOptions(), inbox: ChangeInbox())
            #expect(await !loop.changed(.everything))
            try rig.laptop.write(".DS_Store", "finder litter")
            try rig.laptop.write("build/.DS_Store", "more litter")
            #expect(await !loop.changed(.everything))
            try rig.laptop.write("notes.txt", "edited")
            #expect(await loop.changed(.everything))
        }
    }

    @Test func anUnreadableRulesFileStopsPlanning() async throws {
        try await SyncRig.with { rig in
            try FileManager.default.createDirectory(at: rig.laptop.folder.appendingPathComponent(".cipherignore"),
                                                    withIntermediateDirectories: true)
            do throws(DriveSyncError) {
                _ = try await rig.laptop.sync().plan()
                Issue.record("planned without the rules")
            } catch {
                #expect(error.kind == .folder && error.message.contains(".cipherignore"), "\(error)")
            }
        }
    }
}
