import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// What a user sees of a folder's sync (its status), what forgetting it drops (the sync state
/// only), and a trash that does not grow forever.
@Suite("Sync status, forgetting, trash retention")
struct SyncStatusTests {
    @Test func theStatusShowsTheLastRunWhatWaitsAndTheTrash() async throws {
        try await SyncRig.with { rig in
            let before = try await rig.laptop.sync().status()
            #expect(before.lastRun == nil && before.trackedFileCount == 0 && before.trashFileCount == 0)
            for index in 0..<4 { try rig.laptop.write("f\(index).txt", "file \(index)") }
            try FileManager.default.createSymbolicLink(atPath: rig.laptop.folder.appendingPathComponent("link").path, withDestinationPath: "/etc")
            _ = try await rig.converge()
            // The phone deletes three of four: over the laptop's default limit (half), held there.
            for index in 0..<3 { try rig.phone.remove("f\(index).txt") }
            _ = try await rig.phone.sync(SyncOptions(maximumDeletions: 10, deviceName: "phone")).sync()
            try rig.laptop.write("f3.txt", "changed on the laptop")
            let defaults = SyncOptions(deviceName: "laptop", allowsNonPersistentState: true)
            let report = try await rig.laptop.sync(defaults).sync()
            #expect(report.heldDeletions.count == 3)

            let status = try await rig.laptop.sync(defaults).status()
            let last = try #require(status.lastRun)
            #expect(last.completedActionCount == report.completed.count && last.failureCount == 0)
            #expect(last.heldDeletionCount == 3 && Set(last.heldDeletions) == ["f0.txt", "f1.txt", "f2.txt"])
            #expect(last.skippedCount == 1 && last.skipped.first?.path == "link" && last.skipped.first?.reason == .symbolicLink)
            #expect(status.trackedFileCount == 4 && status.highWaterMark == 4 && status.interruptedActionCount == 0)
            // The phone's trash holds nothing; the laptop's none either until a file is replaced or deleted.
            _ = try await rig.laptop.sync(SyncOptions(maximumDeletions: 10, deviceName: "laptop")).sync()
            let after = try await rig.laptop.sync().status()
            #expect(after.trackedFileCount == 1 && after.trashFileCount == 3 && after.trashByteCount == 18)
            #expect(after.lastRun?.heldDeletionCount == 0)
        }
    }

    @Test func forgettingKeepsThePostKeysSoNoRewrapFollows() async throws {
        try await SyncRig.with { rig in
            // Files from the phone: the laptop needs /rewrap for their keys the first time.
            for index in 0..<3 { try rig.phone.write("p\(index).txt", "from the phone \(index)") }
            try await rig.phone.syncExpectingSuccess()
            try await rig.laptop.syncExpectingSuccess()
            #expect(rig.emulator.requests.entries.contains { $0.path == "/rewrap" })

            try await rig.laptop.sync().forgetState()
            let status = try await rig.laptop.sync().status()
            #expect(status.lastRun == nil && status.trackedFileCount == 0)
            rig.emulator.requests.removeAll()
            let plan = try await rig.laptop.sync().plan()
            #expect(plan.isInSync, "the files are recognised by their stated digests: \(plan.actions)")
            let requests = rig.emulator.requests.entries
            #expect(!requests.contains { $0.path == "/rewrap" }, "\(requests.map(\.path))")
            #expect(rig.laptop.trashed().isEmpty)
        }
    }

    @Test func aRunRemovesWhatTheTrashKeptPastItsRetention() async throws {
        try await SyncRig.with { rig in
            let trash = rig.laptop.folder.appendingPathComponent(".cipher-sync/trash")
            for (name, text) in [("2001-01-01T000000Z/docs/old.txt", "old"), ("2999-01-01T000000Z/new.txt", "newer"), ("mine/kept.txt", "k")] {
                let url = trash.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(text.utf8).write(to: url)
            }
            let status = try await rig.laptop.sync().status()
            #expect(status.trashFileCount == 3 && status.trashByteCount == 9)
            var keepAll = SyncOptions(maximumDeletions: 100, deviceName: "laptop")
            keepAll.trashRetention = nil
            #expect(try await rig.laptop.sync(keepAll).sync().emptiedTrash == EmptiedTrash())
            let report = try await rig.laptop.sync().sync()
            #expect(report.emptiedTrash.fileCount == 1 && report.emptiedTrash.byteCount == 3 && report.emptiedTrash.folderCount == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: trash.path).sorted() == ["2999-01-01T000000Z", "mine"])
        }
    }
}
