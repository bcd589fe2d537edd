import Foundation
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// A station that holds a transfer open within every per-request limit stops the run once the
/// run as a whole shows no progress for ``SyncOptions/progressTimeout``.
@Suite("Progress watchdog")
struct ProgressWatchdogTests {
    @Test func aRunThatStopsMovingStopsAndTheNextSyncResumes() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("a.txt", "from the laptop")
            try await rig.laptop.syncExpectingSuccess()
            // The phone's download meets a station that answers after ten minutes.
            let post = try #require(rig.emulator.manifest.allPosts.first?.entry.postCID)
            rig.emulator.faults.inject(.delay(seconds: 600), route: RequestRoute("GET", path: "/content/\(post)"))
            var options = SyncOptions(maximumDeletions: 100, deviceName: "phone")
            options.progressTimeout = .milliseconds(300)
            let started = ContinuousClock.now
            do throws(DriveSyncError) {
                _ = try await rig.phone.sync(options).sync()
                Issue.record("the stalled run went on")
            } catch {
                #expect(error.kind == .station, "\(error)")
                #expect((error.underlying as? StationClientError)?.kind == .tooSlow, "\(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(100), "stopped by the watchdog, not a request's own time limit")
            #expect(try rig.phone.tree().isEmpty)
            rig.emulator.faults.reset()
            try await rig.phone.syncExpectingSuccess()
            #expect(try rig.phone.read("a.txt") == "from the laptop")
        }
    }

    @Test func aCancelledRunIsCancelledNotAStall() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("a.txt", "from the laptop")
            try await rig.laptop.syncExpectingSuccess()
            let post = try #require(rig.emulator.manifest.allPosts.first?.entry.postCID)
            let route = RequestRoute("GET", path: "/content/\(post)")
            rig.emulator.faults.inject(.delay(seconds: 600), route: route)
            let phone = rig.phone.sync()
            let task = Task { try await phone.sync() }
            // Cancelled while the download waits for its answer.
            let deadline = ContinuousClock.now + .seconds(30)
            while rig.emulator.requests.count(route) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            task.cancel()
            do {
                _ = try await task.value
                Issue.record("the cancelled run went on")
            } catch let error as DriveSyncError {
                #expect(error.kind == .cancelled, "\(error)")
            }
        }
    }

    @Test func progressMovesTheMarkAndATrickleDoesNot() async throws {
        let watchdog = ProgressWatchdog(timeout: .seconds(3600))
        func update(actions: Int, bytes: Int64) -> SyncProgress {
            SyncProgress(completedActions: actions, totalActions: 10, completedBytes: bytes, totalBytes: 1 << 30, currentPath: nil,
                         elapsed: .zero)
        }
        let start = watchdog.markInstant
        try await Task.sleep(for: .milliseconds(5))
        watchdog.observe(update(actions: 0, bytes: 100))
        #expect(watchdog.markInstant == start, "a trickle is not progress")
        watchdog.observe(update(actions: 0, bytes: ProgressWatchdog.minimumProgressBytes + 100))
        let moved = watchdog.markInstant
        #expect(moved > start)
        try await Task.sleep(for: .milliseconds(5))
        watchdog.observe(update(actions: 1, bytes: ProgressWatchdog.minimumProgressBytes + 101))
        #expect(watchdog.markInstant > moved, "a finished action is progress")
    }
}
