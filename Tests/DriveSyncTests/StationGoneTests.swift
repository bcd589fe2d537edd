import Foundation
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// A station that goes away mid-run stops the run at the first failure that says so: the rest of
/// the plan is not tried file by file, and the next sync resumes from the journal.
@Suite("A station gone")
struct StationGoneTests {
    @Test func theRunStopsAtTheFirstUnreachableAnswerAndTheNextSyncResumes() async throws {
        try await SyncRig.with { rig in
            for index in 0..<4 { try rig.laptop.write("f\(index).txt", "file \(index)") }
            let emulator = rig.emulator
            let post = RequestRoute("POST", path: "/post")
            // Once the first upload is done, every request meets a tunnel's 502: no station behind
            // it. One file at a time: the second file's publish is the last request tried.
            var options = SyncOptions(maximumDeletions: 100, deviceName: "laptop")
            options.transfers = 1
            let sync = rig.laptop.sync(options)
            do throws(DriveSyncError) {
                _ = try await sync.sync { progress in
                    if progress.completedActions == 1, progress.currentPath == nil { emulator.faults.failNextRequests(Int.max, status: 502) }
                }
                Issue.record("the run went on without the station")
            } catch {
                // No answer at all (a tunnel's 502): offline, not a station's refusal.
                #expect(error.kind == .offline, "\(error)")
                #expect((error.underlying as? StationClientError)?.kind == .unreachable, "\(error)")
            }
            // One post made, and the second file's publish (its own attempts) the last one tried.
            #expect(emulator.manifest.allPosts.count == 1)
            #expect(emulator.requests.count(post) <= 3, "\(emulator.requests.entries)")

            emulator.faults.reset()
            let plan = try await rig.laptop.sync().plan()
            #expect(plan.resumedActionCount >= 1)
            let report = try await rig.laptop.syncExpectingSuccess()
            #expect(report.completed.count == 3)
            #expect(try await rig.converge().count == 4)
        }
    }

    @Test func aRefusalOfOneFileStaysThatFilesFailure() async throws {
        try await SyncRig.with { rig in
            for index in 0..<3 { try rig.laptop.write("f\(index).txt", "file \(index)") }
            // The first publish is refused (a 4xx for it); the others go through.
            rig.emulator.faults.failNextRequests(1, status: 400, route: RequestRoute("POST", path: "/post"))
            let report = try await rig.laptop.sync().sync()
            #expect(report.failures.count == 1 && report.completed.count == 2, "\(report.failures)")
            #expect(try await rig.converge().count == 3)
        }
    }
}
