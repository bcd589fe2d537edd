import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One scenario per way a sync was seen to lose files (issue "Sync never loses a file"). Each ends
/// with every version that existed in a folder or a trash, nothing outside the folders touched,
/// the devices converged, and each file once on the station.
@Suite("No file lost")
struct NoFileLostTests {
    /// 1. A plans an edit, B's edit of the same file lands first, A publishes after it: both
    /// versions stay, one at the name and one as a conflict copy, on both devices.
    @Test func twoDevicesEditingOneFileKeepBothEdits() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("notes.txt", "first")
            _ = try await rig.converge()
            try rig.laptop.write("notes.txt", "the laptop's edit")
            let laptop = rig.laptop.sync()
            let plan = try await laptop.plan()
            #expect(plan.actions.map(\.kind) == [.upload])
            try rig.phone.write("notes.txt", "the phone's edit")
            try await rig.phone.syncExpectingSuccess()
            #expect(try await laptop.run(plan).isInSync)

            let tree = try await rig.converge()
            #expect(tree.count == 2, "\(tree.keys)")
            for device in [rig.laptop, rig.phone] {
                let texts = Set(try tree.keys.map { try device.read($0) })
                #expect(texts == ["the laptop's edit", "the phone's edit"], "\(device.name)")
                #expect(try device.keptTexts().isSuperset(of: ["the laptop's edit", "the phone's edit"]))
            }
            // Published versions name their content and the version they follow.
            let posts = try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts.compactMap(\.metadata)
            #expect(posts.allSatisfy { $0.sha256?.count == 64 })
        }
    }

    /// 2. A compromised station can publish posts an owner's device accepts. A version beside
    /// every file is kept as a copy and replaces nothing; versions claiming to follow every file
    /// are replacements, which count against the deletion limit and go to the trash when allowed.
    @Test func aHostileStationsVersionsReplaceNothingUnasked() async throws {
        try await SyncRig.with { rig in
            let defaults = SyncOptions(deviceName: "laptop")
            for index in 0..<10 { try rig.laptop.write("file-\(index).txt", "original \(index)") }
            _ = try await rig.laptop.sync(defaults).sync()
            let originals = try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts
            #expect(originals.count == 10)

            // Versions claiming to follow each original: ten replacements, over the limit of five.
            for post in originals {
                let name = try #require(post.metadata?.filename)
                _ = try await rig.phone.client.publish(
                    data: Data("forged \(name)".utf8),
                    metadata: DriveFileMetadata(filename: name, sizeBytes: 7 + name.utf8.count, path: "/", replaces: post.postCID))
            }
            let plan = try await rig.laptop.sync(defaults).plan()
            #expect(plan.deletionCount == 10 && plan.deletionLimit == 10 / 2 && plan.exceedsDeletionLimit)
            let held = try await rig.laptop.sync(defaults).run(plan)
            #expect(held.heldDeletions.count == 10 && held.completed.isEmpty && !held.isInSync)
            for index in 0..<10 { #expect(try rig.laptop.read("file-\(index).txt") == "original \(index)") }

            // Allowed: each original goes to the trash before its replacement takes the name.
            let allowed = try await rig.laptop.sync(SyncOptions(maximumDeletions: 10, deviceName: "laptop")).sync()
            #expect(allowed.isInSync)
            for index in 0..<10 { #expect(try rig.laptop.read("file-\(index).txt") == "forged file-\(index).txt") }
            let kept = try rig.laptop.keptTexts()
            for index in 0..<10 { #expect(kept.contains("original \(index)")) }

            // Versions beside each file (no ancestry): copies, the files untouched, nothing counted as deleted.
            for post in try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts {
                let name = try #require(post.metadata?.filename)
                _ = try await rig.phone.client.publish(data: Data("beside \(name)".utf8),
                                                       metadata: DriveFileMetadata(filename: name, sizeBytes: 7 + name.utf8.count, path: "/"))
            }
            let beside = try await rig.laptop.sync(defaults).sync()
            #expect(beside.isInSync && beside.completed.filter { $0.kind == .duplicate }.count == 10)
            #expect(beside.completed.filter(\.isDeletion).isEmpty)
            for index in 0..<10 { #expect(try rig.laptop.read("file-\(index).txt") == "forged file-\(index).txt") }
            #expect(try await rig.remotePaths().count == 20)
            #expect(try rig.laptop.keptTexts().isSuperset(of: (0..<10).map { "beside file-\($0).txt" }))
        }
    }

    /// 3. A subfolder that cannot be read for one run gets no decision: nothing deleted on the
    /// station, nothing downloaded over it, reported as not read.
    @Test func aFolderThatCannotBeReadIsNeitherDeletedNorReplaced() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("private/a.txt", "a")
            try rig.laptop.write("private/b.txt", "b")
            try rig.laptop.write("top.txt", "top")
            _ = try await rig.converge()
            try rig.phone.write("private/a.txt", "a, edited on the phone")
            try await rig.phone.syncExpectingSuccess()

            let report = try await rig.laptop.whileUnreadable("private") {
                try await rig.laptop.sync().sync()
            }
            #expect(report.skipped.contains { $0.path == "private" && $0.reason == .unreadable }, "\(report.skipped)")
            #expect(report.completed.isEmpty, "\(report.completed)")
            #expect(try await rig.remotePaths() == ["/private/a.txt", "/private/b.txt", "/top.txt"])
            try await rig.phone.syncExpectingSuccess()
            #expect(try rig.phone.read("private/b.txt") == "b")

            // Readable again: the phone's edit arrives, nothing was lost on either side.
            let tree = try await rig.converge()
            #expect(tree.count == 3)
            #expect(try rig.laptop.read("private/a.txt") == "a, edited on the phone")
            #expect(rig.laptop.trashed() == ["private/a.txt"] && rig.phone.trashed().isEmpty)
        }
    }

    /// 4. Names are their bytes: a file renamed from its NFC to its NFD spelling is a rename, and
    /// a folder holding both spellings syncs one and reports the other, with no download loop.
    @Test func namesAreTheirBytes() async throws {
        try await SyncRig.with { rig in
            let nfc = "caf\u{e9}.txt", nfd = "cafe\u{301}.txt"
            try rig.laptop.write(nfc, "coffee")
            _ = try await rig.converge()
            try FileManager.default.moveItem(at: rig.laptop.folder.appendingPathComponent(nfc),
                                             to: rig.laptop.folder.appendingPathComponent(nfd))
            let tree = try await rig.converge()
            #expect(tree.keys.map { Array($0.utf8) } == [Array(nfd.utf8)])
            #expect(try rig.phone.read(nfd) == "coffee")
            #expect(try rig.phone.keptTexts().contains("coffee"))

            // Both spellings in one folder: one is synced, the other a lasting skip; no plan alternates.
            try rig.laptop.write(nfc, "tea")
            for _ in 0..<3 {
                let report = try await rig.laptop.sync().sync()
                #expect(report.skipped.contains { $0.reason.kind == "nameCollision" })
                try await rig.phone.syncExpectingSuccess()
            }
            #expect(try await rig.laptop.sync().plan().isInSync)
            #expect(try await rig.phone.sync().plan().isInSync)
            #expect(try rig.phone.read(nfd) == "coffee")
        }
    }

    /// 5. File operations cannot leave the folder: `.cipher-sync` as a link to another folder, and
    /// a subfolder swapped for a link between plan and run, touch nothing outside.
    @Test func linksCannotLeadTheSyncOutOfTheFolder() async throws {
        try await SyncRig.with { rig in
            let elsewhere = rig.laptop.folder.deletingLastPathComponent().appendingPathComponent("elsewhere", isDirectory: true)
            for name in ["incoming/keep.txt", "trash/keep.txt", "file.txt"] {
                let url = elsewhere.appendingPathComponent(name)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data("outside".utf8).write(to: url)
            }
            let outsideBefore = try SyncRig.listing(of: elsewhere)

            // A subfolder swapped for a link after the plan: the file the plan would trash is elsewhere.
            try rig.laptop.write("sub/file.txt", "inside")
            _ = try await rig.converge()
            try rig.phone.remove("sub/file.txt")
            try await rig.phone.syncExpectingSuccess()
            let plan = try await rig.laptop.sync().plan()
            #expect(plan.actions.map(\.kind) == [.deleteLocal])
            let sub = rig.laptop.folder.appendingPathComponent("sub")
            try FileManager.default.moveItem(at: sub, to: rig.laptop.folder.appendingPathComponent("sub-moved"))
            try FileManager.default.createSymbolicLink(at: sub, withDestinationURL: elsewhere)
            let report = try await rig.laptop.sync().run(plan)
            #expect(report.failures.map(\.path) == ["sub/file.txt"])
            #expect(try SyncRig.listing(of: elsewhere) == outsideBefore)

            // `.cipher-sync` a link to that folder: refused before anything is written there.
            try FileManager.default.removeItem(at: sub)
            let data = rig.laptop.folder.appendingPathComponent(".cipher-sync")
            try FileManager.default.removeItem(at: data)
            try FileManager.default.createSymbolicLink(at: data, withDestinationURL: elsewhere)
            try rig.phone.write("new-on-phone.txt", "new")
            try await rig.phone.syncExpectingSuccess()
            do throws(DriveSyncError) {
                let report = try await rig.laptop.sync().sync()
                #expect(!report.isInSync)
            } catch {
                #expect(error.kind == .folder, "\(error)")
            }
            #expect(try SyncRig.listing(of: elsewhere) == outsideBefore)
            #expect(try rig.phone.read("new-on-phone.txt") == "new")
        }
    }

    /// 6. Dates from posts cannot trap: two posts at one path dated `Int64.max` and `Int64.min`.
    @Test func extremeDatesInPostsAreRefusedNotFatal() async throws {
        try await SyncRig.with { rig in
            for (text, date) in [("the end of time", Int.max), ("the start of time", Int.min)] {
                _ = try await rig.phone.client.publish(
                    data: Data(text.utf8),
                    metadata: DriveFileMetadata(filename: "when.txt", sizeBytes: text.utf8.count, createdAt: date, modifiedAt: date, path: "/"))
            }
            #expect(try await rig.laptop.sync().plan().actions.count == 2)
            let tree = try await rig.converge()
            #expect(tree.count == 2)
            #expect(Set(try tree.keys.map { try rig.laptop.read($0) }) == ["the end of time", "the start of time"])
        }
    }

    /// 7. A file replaced by a FIFO after the scan: the action fails at once (no hang), and a
    /// synced file that is now a FIFO gets no decision (its post stays).
    @Test func aFIFOInPlaceOfAFileNeitherHangsNorDeletes() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("synced.txt", "synced")
            _ = try await rig.converge()
            try rig.laptop.write("new.txt", "new")
            let plan = try await rig.laptop.sync().plan()
            #expect(plan.actions.map(\.kind) == [.upload])
            for name in ["new.txt", "synced.txt"] {
                let url = rig.laptop.folder.appendingPathComponent(name)
                try FileManager.default.removeItem(at: url)
                #expect(mkfifo(url.path, 0o600) == 0)
            }
            let report = try await rig.laptop.sync().run(plan)
            #expect(report.failures.map(\.path) == ["new.txt"])
            let next = try await rig.laptop.sync().plan()
            #expect(next.isInSync, "\(next.actions)")
            #expect(Set(next.skipped.map(\.path)) == ["new.txt", "synced.txt"])
            #expect(try await rig.remotePaths() == ["/synced.txt"])
        }
    }

    /// 8. One run per folder: a second sync of a folder being synced says so (or waits), and
    /// identical versions at one path are one file, not conflict copies.
    @Test func oneSyncPerFolderAtATime() async throws {
        try await SyncRig.with { rig in
            for index in 0..<8 { try rig.laptop.write("f\(index).txt", "content \(index)") }
            do {
                let lock = try await FolderLock.acquire(rig.laptop.sync().local, waiting: false)
                defer { withExtendedLifetime(lock) {} }
                do throws(DriveSyncError) {
                    _ = try await rig.laptop.sync().sync()
                    Issue.record("a second sync ran beside a held lock")
                } catch {
                    #expect(error.kind == .busy)
                }
            }

            // Two at once: each one either ran or was told another was running.
            let (laptop, options) = (rig.laptop, SyncOptions(maximumDeletions: 100, deviceName: "laptop"))
            async let first = Self.outcome { try await laptop.sync(options).sync() }
            async let second = Self.outcome { try await laptop.sync(options).sync() }
            let outcomes = await [first, second]
            #expect(outcomes.allSatisfy { $0 == "done" || $0 == "busy" }, "\(outcomes)")
            #expect(outcomes.contains("done"))
            // Waiting, both run, one after the other.
            try laptop.write("f0.txt", "edited")
            let waiting = SyncOptions(maximumDeletions: 100, deviceName: "laptop", waitsForOtherSyncs: true)
            async let third = Self.outcome { try await laptop.sync(waiting).sync() }
            async let fourth = Self.outcome { try await laptop.sync(waiting).sync() }
            #expect(await [third, fourth] == ["done", "done"])
            _ = try await rig.converge()

            // The same content published twice at one path (two runs that each thought it new):
            // one post stays, no copy is made.
            for _ in 0..<2 {
                _ = try await rig.phone.client.publish(
                    data: Data("twice".utf8),
                    metadata: DriveFileMetadata(filename: "twice.txt", sizeBytes: 5, path: "/",
                                                sha256: SyncRig.sha256("twice")))
            }
            let tree = try await rig.converge()
            #expect(tree.keys.filter { $0.hasPrefix("twice") } == ["twice.txt"])
        }
    }

    static func outcome(_ body: () async throws -> SyncReport) async -> String {
        do {
            let report = try await body()
            return report.isInSync ? "done" : "failed: \(report.failures)"
        } catch let error as DriveSyncError where error.kind == .busy {
            return "busy"
        } catch {
            return "\(error)"
        }
    }

    /// 9. The deletion limit cannot be stepped around: a station that drops 40 % of the posts a
    /// run stops the second run, before the folder has lost more than half its files.
    @Test func aShrinkingListingStopsBeforeHalfTheFolderIsGone() async throws {
        try await SyncRig.with { rig in
            let defaults = SyncOptions(deviceName: "laptop")
            for index in 0..<10 { try rig.laptop.write("f\(index).txt", "file \(index)") }
            _ = try await rig.laptop.sync(defaults).sync()
            var posts = try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts
            for round in 0..<2 {
                for post in posts.prefix(posts.count * 4 / 10) { _ = try await rig.phone.client.delete(postCID: post.postCID) }
                posts = try await rig.laptop.client.listPosts(as: DriveFileMetadata.self).posts
                let plan = try await rig.laptop.sync(defaults).plan()
                if round == 0 {
                    #expect(!plan.exceedsDeletionLimit && plan.deletionCount == 4)
                    _ = try await rig.laptop.sync(defaults).run(plan)
                } else {
                    // Two more would leave 4 of the 10 the folder had: held back.
                    #expect(plan.deletionCount == 2 && plan.highWaterMark == 10 && plan.exceedsDeletionLimit)
                    let report = try await rig.laptop.sync(defaults).run(plan)
                    #expect(report.heldDeletions.count == 2 && report.completed.isEmpty)
                }
            }
            #expect(try rig.laptop.tree().count == 6 && rig.laptop.trashed().count == 4)
            let kept = try rig.laptop.keptTexts()
            for index in 0..<10 { #expect(kept.contains("file \(index)")) }
        }
    }

    /// 10. Plaintext a plan reads lands in the folder's `.cipher-sync/incoming`, which every plan
    /// and run empties; a same-size rewrite with its modification time restored is still seen.
    @Test func comparisonsStayInTheFolderAndRestoredTimesDoNotHideEdits() async throws {
        try await SyncRig.with { rig in
            let incoming = rig.laptop.folder.appendingPathComponent(".cipher-sync/incoming", isDirectory: true)
            try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
            try Data("a killed plan's plaintext".utf8).write(to: incoming.appendingPathComponent("left-over"))
            // Another client's post (no digest) and the same file here: compared by downloading it.
            _ = try await rig.phone.client.publish(data: Data("same on both".utf8),
                                                   metadata: DriveFileMetadata(filename: "same.txt", sizeBytes: 12, path: "/"))
            try rig.laptop.write("same.txt", "same on both")
            let temporary = rig.laptop.client.configuration.temporaryDirectory
            let before = try SyncRig.listing(of: temporary)
            let plan = try await rig.laptop.sync().plan()
            #expect(plan.actions.isEmpty, "\(plan.actions)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: incoming.path).isEmpty)
            #expect(try SyncRig.listing(of: temporary).subtracting(before).filter { !$0.hasPrefix("drive-sync-") }.isEmpty)
            _ = try await rig.laptop.sync().run(plan)

            // Same size, other bytes, the old modification time put back: the change time moved.
            let url = rig.laptop.folder.appendingPathComponent("same.txt")
            let modified = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date)
            try rig.laptop.write("same.txt", "SAME ON BOTH")
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
            #expect(try await rig.laptop.sync().plan().actions.map(\.kind) == [.upload])
            let tree = try await rig.converge()
            #expect(try rig.phone.read("same.txt") == "SAME ON BOTH" && tree.count == 1)
        }
    }
}
