import Foundation
import StationClient
import StationEmulator
import Testing
import Transport
@testable import DriveSync

/// What an app builds its sync UI from: progress that names the action and moves inside a file,
/// the deletions a user approved running as the plan showed them, and a station out of reach told
/// apart (`.offline`) with what waits locally still shown.
@Suite("Sync for apps")
struct AppFacingSyncTests {
    // MARK: Progress

    @Test func progressNamesTheActionAndMovesInsideAFile() async throws {
        try await SyncRig.with { rig in
            let size = 3_000_000
            let url = rig.laptop.folder.appendingPathComponent("big.bin")
            try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: url)
            let reports = Locked<[SyncProgress]>([])
            _ = try await rig.laptop.sync().sync { progress in reports.withLock { $0.append(progress) } }
            let all = reports.value
            let upload = all.filter { $0.currentAction?.kind == .upload && $0.currentAction?.path == "big.bin" }
            #expect(upload.allSatisfy { $0.currentPath == "big.bin" })
            // Figures between none and all of the file, as its bytes go out (not 0, then all of it).
            let between = Set(upload.map(\.currentFileBytes).filter { $0 > 0 && $0 < Int64(size) })
            #expect(between.count >= 8, "\(upload.map(\.currentFileBytes))")
            #expect(upload.contains { $0.currentFileBytes == Int64(size) && $0.currentFileByteCount == Int64(size) })
            let completed = all.map(\.completedBytes)
            #expect(zip(completed, completed.dropFirst()).allSatisfy { $0 <= $1 }, "\(completed)")
            // Between actions, no action.
            #expect(all.last?.currentAction == nil && all.last?.completedBytes == Int64(size))
        }
    }

    // MARK: Approving deletions

    /// Options with the default deletion limit (half the folder).
    static func defaultLimit(_ device: SyncRig.Device) -> SyncOptions { SyncOptions(deviceName: device.name) }

    @Test func theApprovedPlanRunsAsItIsWithItsDeletionsOnly() async throws {
        try await SyncRig.with { rig in
            let laptop = rig.laptop
            for index in 0..<6 { try laptop.write("f\(index).txt", "file \(index)") }
            try await laptop.syncExpectingSuccess()
            let sync = laptop.sync(Self.defaultLimit(laptop))

            // Four of six deleted: over the limit of three. Approving the plan's deletions runs them
            // as planned, with no new plan and no other limit.
            for index in 0..<4 { try laptop.remove("f\(index).txt") }
            let plan = try await sync.plan()
            #expect(plan.exceedsDeletionLimit && plan.deletions.count == 4)
            let report = try await sync.run(plan, approvingDeletions: plan.deletions)
            #expect(report.heldDeletions.isEmpty && report.failures.isEmpty && report.completed.count == 4)
            #expect(try await rig.remotePaths() == ["/f4.txt", "/f5.txt"])
        }
    }

    @Test func heldDeletionsApprovedLaterRunButNoneTheUserNeverSaw() async throws {
        try await SyncRig.with { rig in
            let laptop = rig.laptop
            for index in 0..<6 { try laptop.write("f\(index).txt", "file \(index)") }
            try await laptop.syncExpectingSuccess()
            let sync = laptop.sync(Self.defaultLimit(laptop))
            for index in 0..<4 { try laptop.remove("f\(index).txt") }
            try laptop.write("new.txt", "new")
            let first = try await sync.run(try await sync.plan())
            #expect(first.heldDeletions.count == 4 && first.completed.map(\.path) == ["new.txt"])

            // The user approves the four held deletions; meanwhile a fifth file is deleted. The run
            // of a new plan with that approval removes the four, and holds the one never shown.
            try laptop.remove("f4.txt")
            let plan = try await sync.plan()
            #expect(plan.deletions.count == 5 && plan.exceedsDeletionLimit)
            let report = try await sync.run(plan, approvingDeletions: first.heldDeletions)
            #expect(Set(report.completed.map(\.path)) == ["f0.txt", "f1.txt", "f2.txt", "f3.txt"])
            #expect(report.heldDeletions.map(\.path) == ["f4.txt"])
            #expect(try await rig.remotePaths() == ["/f4.txt", "/f5.txt", "/new.txt"])
        }
    }

    @Test func anApprovedDeletionOfAFileEditedSinceThePlanDoesNotRun() async throws {
        try await SyncRig.with { rig in
            for index in 0..<4 { try rig.laptop.write("f\(index).txt", "file \(index)") }
            _ = try await rig.converge()
            // Deleted on the phone: the laptop's plan trashes three of four (over its limit of two).
            for index in 0..<3 { try rig.phone.remove("f\(index).txt") }
            try await rig.phone.syncExpectingSuccess()
            let sync = rig.laptop.sync(Self.defaultLimit(rig.laptop))
            let plan = try await sync.plan()
            #expect(plan.deletions.map(\.kind) == [.deleteLocal, .deleteLocal, .deleteLocal] && plan.exceedsDeletionLimit)
            // The user edits one of them before approving: that one is not trashed.
            try rig.laptop.write("f1.txt", "edited after the plan")
            let report = try await sync.run(plan, approvingDeletions: plan.deletions)
            #expect(Set(report.completed.map(\.path)) == ["f0.txt", "f2.txt"] && report.failures.map(\.path) == ["f1.txt"])
            #expect(try rig.laptop.read("f1.txt") == "edited after the plan")
            #expect(rig.laptop.trashed() == ["f0.txt", "f2.txt"])
        }
    }

    // MARK: Offline

    @Test func anUnreachableStationIsOfflineAndTheLocalPlanShowsWhatWaits() async throws {
        try await SyncRig.with { rig in
            let laptop = rig.laptop
            for name in ["a.txt", "b.txt", "c.txt", "d.txt"] { try laptop.write(name, "text of \(name)") }
            try await laptop.syncExpectingSuccess()
            try laptop.write("new.txt", "new")
            try laptop.write("a.txt", "edited")
            try laptop.remove("b.txt")
            try FileManager.default.createDirectory(at: laptop.folder.appendingPathComponent("moved"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: laptop.folder.appendingPathComponent("c.txt"),
                                            to: laptop.folder.appendingPathComponent("moved/c.txt"))

            // No station behind the tunnel: `.offline`, the client's unreachable error inside.
            rig.emulator.faults.failNextRequests(Int.max, status: 502)
            do throws(DriveSyncError) {
                _ = try await laptop.sync().plan()
                Issue.record("planned without the station")
            } catch {
                #expect(error.kind == .offline, "\(error)")
                #expect((error.underlying as? StationClientError)?.kind == .unreachable, "\(error)")
            }

            // What waits locally, decided without a request.
            let requests = rig.emulator.requests.entries.count
            let plan = try await laptop.sync().planLocalChanges()
            #expect(rig.emulator.requests.entries.count == requests)
            #expect(plan.isLocalOnly)
            // The station's side it decided from: the files as the last sync left them there.
            #expect(Set(plan.remoteFiles.map(\.path)) == ["a.txt", "b.txt", "c.txt", "d.txt"], "\(plan.remoteFiles)")
            let decided = Set(plan.actions.map { "\($0.kind) \($0.path)" })
            #expect(decided == ["upload a.txt", "deleteRemote b.txt", "move moved/c.txt", "upload new.txt"], "\(plan.actions)")
            do throws(DriveSyncError) {
                _ = try await laptop.sync().run(plan)
                Issue.record("a local-only plan ran")
            } catch {
                #expect(error.kind == .planOutdated, "\(error)")
            }

            // Back online: the plan is the same, and runs.
            rig.emulator.faults.reset()
            let online = try await laptop.sync().plan()
            #expect(Set(online.actions.map { "\($0.kind) \($0.path)" }) == decided)
            try await laptop.syncExpectingSuccess()
        }
    }

    @Test func offlineIsAKnownKind() {
        #expect(DriveSyncError.Kind.knownValues.contains(.offline))
        #expect(DriveSyncError.Kind.offline != .station)
    }
}
