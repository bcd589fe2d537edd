import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// A sync stopped at any point, or failed by the station on any route, converges on the next run
/// with no duplicate post, no lost file and no half-written file.
@Suite("Interrupted syncs")
struct InterruptedSyncTests {
    /// Changes on both devices that exercise every action: uploads (new and replacing), downloads
    /// (new and replacing), deletions both ways, a conflict.
    static func makeChanges(_ rig: SyncRig, round: Int) throws {
        try rig.laptop.write("new-\(round).txt", "laptop new \(round)")
        try rig.laptop.write("shared.txt", "laptop edit \(round)")
        try rig.phone.write("shared.txt", "phone edit \(round)")
        try rig.phone.write("docs/phone-\(round).md", "phone new \(round)")
        if round > 0 {
            try rig.phone.remove("docs/phone-\(round - 1).md")
            try rig.laptop.write("new-\(round - 1).txt", "laptop edit of \(round - 1)")
        }
    }

    @Test func aStopAfterEveryStateWriteResumes() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("shared.txt", "start")
            try Self.makeChanges(rig, round: 0)
            _ = try await rig.converge()
            // At the default of four transfers, so the stops fall between actions in flight together.
            #expect(SyncOptions().transfers == 4)
            // Round k: the same kinds of change (an upload, a replacement, a conflict, a download, a
            // deletion to the trash), and the laptop's sync stopped right after its k-th state write,
            // as a kill there would; then rerun. Until a round's sync has fewer writes than k.
            var stopAt = 1
            while stopAt < 100 {
                try Self.makeChanges(rig, round: stopAt)
                try await rig.phone.syncExpectingSuccess()
                if await rig.laptop.syncStopping(afterStateWrite: stopAt) { break }
                // The rerun finishes the laptop's side; the phone's next sync takes it all.
                try await rig.laptop.syncExpectingSuccess()
                try await rig.phone.syncExpectingSuccess()
                let tree = try await rig.expectSameTree()
                #expect(tree.keys.contains("new-\(stopAt).txt") && tree.keys.contains("docs/phone-\(stopAt).md"))
                #expect(!tree.keys.contains("docs/phone-\(stopAt - 1).md"))
                let edited = try rig.laptop.read("new-\(stopAt - 1).txt"), listing = try rig.laptop.tree().keys.sorted()
                #expect(edited == "laptop edit of \(stopAt - 1)", "stop \(stopAt): \(edited) \(listing)")
                stopAt += 1
            }
            // Every write of a round's sync was a stop point once.
            #expect(stopAt > 10 && stopAt < 100, "\(stopAt)")
            #expect(try await rig.converge().keys.filter { $0.hasPrefix("shared (conflict from laptop") }.count >= stopAt - 1)
        }
    }

    @Test func cancellingTheTaskStopsAndTheNextSyncResumes() async throws {
        try await SyncRig.with { rig in
            for index in 0..<4 { try rig.laptop.write("f\(index).txt", String(repeating: "\(index)", count: 2000)) }
            // One file at a time, so the run is between actions when two are done.
            var options = SyncOptions(maximumDeletions: 100, deviceName: "laptop")
            options.transfers = 1
            let sync = rig.laptop.sync(options)
            // Cancelled from its own progress report once two actions are done.
            let task = Task {
                try await sync.sync { progress in
                    if progress.completedActions == 2, progress.currentPath == nil { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            await #expect(throws: DriveSyncError.self) { try await task.value }
            #expect(try await rig.remotePaths().count == 2)
            let report = try await rig.laptop.syncExpectingSuccess()
            #expect(report.completed.count == 2)
            #expect(try await rig.converge().count == 4)
        }
    }

    /// Every route a sync uses fails once (a 500, then an answer lost mid-body after the station
    /// acted); the rerun converges with each file once on the station.
    @Test func everyRouteFailingOnceConverges() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("shared.txt", "start")
            _ = try await rig.converge()
            // Routes seen in one sync with every action.
            try Self.makeChanges(rig, round: 0)
            _ = try await rig.converge()
            try Self.makeChanges(rig, round: 1)
            try await rig.phone.syncExpectingSuccess()
            rig.emulator.requests.removeAll()
            try await rig.laptop.syncExpectingSuccess()
            _ = try await rig.converge()
            let routes = Set(rig.emulator.requests.entries.map { entry in
                entry.path.hasPrefix("/content/") || entry.path.hasPrefix("/ipfs/")
                    ? RequestRoute(entry.method, pathPrefix: entry.path.hasPrefix("/content/") ? "/content/" : "/ipfs/")
                    : RequestRoute(entry.method, path: entry.path)
            })
            #expect(routes.contains(RequestRoute("POST", path: "/post")) && routes.contains(RequestRoute("POST", path: "/post/delete"))
                && routes.contains(RequestRoute("GET", pathPrefix: "/content/")), "\(routes)")
            var round = 2
            for route in routes.sorted(by: { $0.description < $1.description }) {
                for fault in 0..<2 {
                    try Self.makeChanges(rig, round: round)
                    round += 1
                    try await rig.phone.syncExpectingSuccess()
                    if fault == 0 {
                        rig.emulator.faults.failNextRequests(1, status: 500, route: route)
                    } else {
                        rig.emulator.faults.closeNextResponsesMidBody(1, route: route, afterBytes: 0)
                    }
                    do throws(DriveSyncError) {
                        _ = try await rig.laptop.sync().sync()
                    } catch {
                        // A 500 is the station's failure; a connection cut mid-answer may read as no station.
                        #expect(error.kind == .station || (fault == 1 && error.kind == .offline), "\(route): \(error)")
                    }
                    #expect(rig.emulator.faults.pendingFaultCount == 0, "\(route) was not used")
                    rig.emulator.faults.reset()
                    _ = try await rig.converge()
                }
            }
        }
    }
}
