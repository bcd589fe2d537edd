import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// Renames and moves travel as moves: published once at the new path on the device where they
/// happened, renamed in place on the other, with nothing downloaded and nothing trashed.
@Suite("Moves and renames")
struct MoveTests {
    @Test func aRenamedFolderMovesOnBothDevices() async throws {
        try await SyncRig.with { rig in
            for index in 0..<12 { try rig.laptop.write("photos/img-\(index).jpg", "photo \(index)") }
            try rig.laptop.write("photos/2025/old.jpg", "an old photo")
            _ = try await rig.converge()
            try FileManager.default.moveItem(at: rig.laptop.folder.appendingPathComponent("photos"),
                                             to: rig.laptop.folder.appendingPathComponent("pictures"))

            // The default limit: moves are not deletions. One /post and one /post/delete per file.
            rig.emulator.requests.removeAll()
            let laptop = try await rig.laptop.sync(SyncOptions(deviceName: "laptop")).sync()
            #expect(laptop.isInSync && laptop.completed.count == 13 && laptop.completed.allSatisfy { $0.kind == .move })
            let writes = rig.emulator.requests.entries.filter { $0.method == "POST" }
            #expect(writes.filter { $0.path == "/post" }.count == 13 && writes.filter { $0.path == "/post/delete" }.count == 13)

            // The other device renames: nothing downloaded, nothing in its trash, the old folder gone.
            rig.emulator.requests.removeAll()
            let phone = try await rig.phone.sync(SyncOptions(deviceName: "phone")).sync()
            #expect(phone.isInSync && phone.completed.count == 13 && phone.completed.allSatisfy { $0.kind == .move })
            let manifest = try #require(try await rig.phone.client.listPosts(as: DriveFileMetadata.self).manifestCID)
            let contents = rig.emulator.requests.entries.filter { $0.path.hasPrefix("/content/") || $0.path.hasPrefix("/ipfs/") }
            #expect(contents.filter { !$0.path.hasSuffix(manifest) }.isEmpty, "\(contents)")
            #expect(phone.byteCount == 0)
            #expect(rig.phone.trashed().isEmpty)
            #expect(!FileManager.default.fileExists(atPath: rig.phone.folder.appendingPathComponent("photos").path))
            let tree = try await rig.expectSameTree()
            #expect(tree.count == 13 && tree.keys.allSatisfy { $0.hasPrefix("pictures/") })
            #expect(try rig.phone.read("pictures/2025/old.jpg") == "an old photo")
        }
    }

    @Test func aCaseOnlyRenameIsAMove() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("Photos/a.jpg", "a")
            try rig.laptop.write("Photos/b.jpg", "b")
            _ = try await rig.converge()
            try FileManager.default.moveItem(at: rig.laptop.folder.appendingPathComponent("Photos"),
                                             to: rig.laptop.folder.appendingPathComponent("photos"))
            let laptop = try await rig.laptop.sync().sync()
            #expect(laptop.completed.map(\.kind) == [.move, .move] && laptop.skipped.isEmpty, "\(laptop.completed) \(laptop.skipped)")
            let phone = try await rig.phone.sync().sync()
            #expect(phone.completed.map(\.kind) == [.move, .move] && phone.skipped.isEmpty, "\(phone.completed) \(phone.skipped)")
            #expect(rig.phone.trashed().isEmpty)
            let tree = try await rig.expectSameTree()
            #expect(tree.keys.sorted() == ["photos/a.jpg", "photos/b.jpg"])
            #expect(try await rig.laptop.sync().plan().isInSync)
            #expect(try await rig.phone.sync().plan().isInSync)
        }
    }

    /// A folder renamed by case only (`album/` to `Album/` and back), stopped after any state
    /// write (as a kill there would): at every stop, every file is on a device and on the station
    /// or in a trash; the next syncs converge on the new names.
    @Test func aRenameStoppedAnywhereLosesNoFile() async throws {
        try await SyncRig.with { rig in
            let texts = (0..<3).map { "file \($0)" }
            for (index, text) in texts.enumerated() { try rig.laptop.write("album/f\(index).txt", text) }
            _ = try await rig.converge()
            var (from, to) = ("album", "Album")
            var stopAt = 1
            while stopAt < 60 {
                try FileManager.default.moveItem(at: rig.laptop.folder.appendingPathComponent(from),
                                                 to: rig.laptop.folder.appendingPathComponent(to))
                if await rig.laptop.syncStopping(afterStateWrite: stopAt) { break }
                // Every file on a device, and on the station (by its stated digest) or in a trash.
                let onStation = Set(try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts.compactMap(\.metadata?.sha256))
                let inTrash = try rig.laptop.trashedTexts().union(try rig.phone.trashedTexts())
                for text in texts {
                    #expect(onStation.contains(SyncRig.sha256(text)) || inTrash.contains(text), "stop \(stopAt): \(text)")
                }
                try await rig.phone.syncExpectingSuccess()
                let kept = try rig.laptop.keptTexts().union(try rig.phone.keptTexts())
                #expect(kept.isSuperset(of: texts), "stop \(stopAt): \(kept)")
                let tree = try await rig.converge()
                #expect(tree.keys.sorted() == (0..<3).map { "\(to)/f\($0).txt" }, "stop \(stopAt): \(tree.keys.sorted())")
                (from, to) = (to, from)
                stopAt += 1
            }
            #expect(stopAt > 5 && stopAt < 60, "\(stopAt)")
        }
    }
}

/// A hostile listing cannot make one plan download or publish without bound.
@Suite("Bounds a listing cannot move")
struct ListingBoundTests {
    @Test func comparisonsAndCopiesAreCappedPerPlan() async throws {
        try await SyncRig.with { rig in
            // Forty posts without a digest stating the size of a new local file: at most the cap is
            // downloaded to compare; the path is left for a later sync, not decided blind.
            try rig.laptop.write("same-size.txt", "0123456789")
            for index in 0..<40 {
                _ = try await rig.phone.client.publish(data: Data("other \(index)".utf8.prefix(10)),
                                                       metadata: DriveFileMetadata(filename: "same-size.txt", sizeBytes: 10, path: "/"))
            }
            // Twenty versions of one new path: copied at most eight a run.
            for index in 0..<20 {
                _ = try await rig.phone.client.publish(
                    data: Data("version \(index)".utf8),
                    metadata: DriveFileMetadata(filename: "crowded.txt", sizeBytes: "version \(index)".utf8.count, path: "/",
                                                sha256: SyncRig.sha256("version \(index)")))
            }
            rig.emulator.requests.removeAll()
            let plan = try await rig.laptop.sync().plan()
            let downloads = rig.emulator.requests.entries.filter { $0.path.hasPrefix("/content/") }.count
            #expect(downloads <= Planner.maximumComparisons + 1, "\(downloads)")
            #expect(plan.skipped.contains { $0.path == "same-size.txt" && $0.reason == .deferred })
            #expect(!plan.actions.contains { $0.path == "same-size.txt" })
            let crowded = plan.actions.filter { $0.path == "crowded.txt" }
            #expect(crowded.filter { $0.kind == .duplicate }.count == Planner.maximumCopiesPerPath)
            #expect(plan.skipped.contains { $0.path == "crowded.txt" && $0.reason == .deferred })
        }
    }

    /// A local file no upload can carry is a lasting skip naming the limit, not a failure every run.
    @Test func aFileLargerThanTheStationAcceptsIsSkipped() async throws {
        try await SyncRig.with { rig in
            let url = rig.laptop.folder.appendingPathComponent("huge.bin")
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(StationClient.maximumRequestByteCount))   // sparse: no disk used
            try handle.close()
            try rig.laptop.write("small.txt", "small")
            let report = try await rig.laptop.sync().sync()
            #expect(report.isInSync && report.completed.map(\.path) == ["small.txt"])
            let skipped = try #require(report.skipped.first { $0.path == "huge.bin" })
            #expect(skipped.reason.kind == "tooLarge" && skipped.reason.description.contains("bytes the station accepts"))
            #expect(try await rig.laptop.sync().plan().actions.isEmpty)
        }
    }
}
