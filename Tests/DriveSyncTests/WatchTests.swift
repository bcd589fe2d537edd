#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// The runs a watch reported.
final class RunLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reported: [WatchRun] = []

    func append(_ run: WatchRun) {
        lock.lock()
        defer { lock.unlock() }
        reported.append(run)
    }

    var runs: [WatchRun] {
        lock.lock()
        defer { lock.unlock() }
        return reported
    }
}

/// A watch running in a task of its own, and the runs it reported.
struct Watching {
    let task: Task<DriveSyncError?, Never>
    let log: RunLog

    var runs: [WatchRun] { log.runs }

    /// Starts watching `sync` with `options`.
    static func start(_ sync: DriveSync, _ options: WatchOptions) -> Watching {
        let log = RunLog()
        let task = Task { () -> DriveSyncError? in
            do throws(DriveSyncError) {
                try await sync.watch(options: options) { run in log.append(run) }
                return nil
            } catch {
                return error
            }
        }
        return Watching(task: task, log: log)
    }

    /// Waits (at most `timeout` seconds) until a reported run satisfies `condition`.
    ///
    /// Call it in a statement of its own, never inside `#expect(await …)`: with Swift 6.3 a
    /// closure given there was seen again by the next `waitForRun` of the same test.
    func waitForRun(timeout: TimeInterval = 60, where condition: @escaping @Sendable (WatchRun) -> Bool) async -> WatchRun? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            for run in runs where condition(run) { return run }
            guard Date() < deadline else { return nil }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    /// Cancels the watch and returns what it threw.
    func stop() async -> DriveSyncError? {
        task.cancel()
        return await task.value
    }
}

extension WatchRun {
    /// The paths of the uploads the run completed.
    func uploaded(_ path: String) -> Bool { report?.completed.contains { $0.kind == .upload && $0.path == path } ?? false }

    var uploadCount: Int { report?.completed.filter { $0.kind == .upload }.count ?? 0 }
}

/// Watch mode (`DriveSync.watch`): local edits through inotify and the poll fallback, other
/// devices' changes through the station's manifest, debounced bursts, back-off, clean stops.
@Suite("Watching a folder", .serialized)
struct WatchTests {
    /// Quick settings for a test: the station is not read unless asked.
    static func options(debounce: Duration = .milliseconds(200), station: Duration? = nil, polling: Bool = false) -> WatchOptions {
        var options = WatchOptions(debounce: debounce, stationPollInterval: station, pollsFolder: polling)
        options.folderPollInterval = .milliseconds(200)
        options.minimumRetryDelay = .milliseconds(200)
        options.maximumRetryDelay = .milliseconds(400)
        return options
    }

    @Test func aLocalEditIsSyncedWithinTheDebounce() async throws {
        try await SyncRig.with { rig in
            let watching = Watching.start(rig.laptop.sync(), Self.options())
            let reached1 = await watching.waitForRun { $0.trigger == .start && $0.error == nil }
            #expect(reached1 != nil)
            let started = ContinuousClock.now
            try rig.laptop.write("notes.txt", "first words")
            let run = await watching.waitForRun { $0.uploaded("notes.txt") }
            #expect(run?.trigger == .localChange, "\(watching.runs.map { ($0.number, $0.trigger.description, $0.report?.completed.map { "\($0.kind) \($0.path)" } ?? []) })")
            #expect(ContinuousClock.now - started < .seconds(30))
            #expect(rig.emulator.manifest.allPosts.count == 1)
            #expect(await watching.stop() == nil)
        }
    }

    @Test func aFileInAFolderCreatedWhileWatchingIsSynced() async throws {
        try await SyncRig.with { rig in
            let watching = Watching.start(rig.laptop.sync(), Self.options())
            let reached2 = await watching.waitForRun { $0.trigger == .start }
            #expect(reached2 != nil)
            try FileManager.default.createDirectory(at: rig.laptop.folder.appendingPathComponent("new/deeper"), withIntermediateDirectories: true)
            // The new folders are watched from their event on; a file written before its folder's
            // watch is in place is found by the scan that answers the folders' event (after the
            // debounce). Empty folders alone start no run: there is nothing to sync.
            try rig.laptop.write("new/deeper/inside.txt", "deep")
            let run = await watching.waitForRun { $0.uploaded("new/deeper/inside.txt") }
            #expect(run?.trigger == .localChange)
            #expect(await watching.stop() == nil)
        }
    }

    @Test func anotherDevicesChangeArrivesThroughTheStationPoll() async throws {
        try await SyncRig.with { rig in
            let watching = Watching.start(rig.phone.sync(), Self.options(station: .milliseconds(300)))
            let reached4 = await watching.waitForRun { $0.trigger == .start && $0.error == nil }
            #expect(reached4 != nil)
            try rig.laptop.write("from laptop.txt", "hello phone")
            try await rig.laptop.syncExpectingSuccess()
            let run = await watching.waitForRun { $0.report?.completed.contains { $0.kind == .download } ?? false }
            #expect(run?.trigger.contains(.stationChange) == true, "\(String(describing: run))")
            #expect(try rig.phone.read("from laptop.txt") == "hello phone")
            // The download is the sync's own change: no run follows it for the folder.
            try await Task.sleep(for: .seconds(1))
            #expect(!watching.runs.contains { $0.trigger.contains(.localChange) }, "\(watching.runs.map(\.trigger))")
            #expect(await watching.stop() == nil)
        }
    }

    @Test func aBurstOfSavesWithinTheDebounceIsOneRun() async throws {
        try await SyncRig.with { rig in
            // A debounce far longer than the burst takes, so the burst is one run however slow the machine.
            let watching = Watching.start(rig.laptop.sync(), Self.options(debounce: .milliseconds(1500)))
            let reached5 = await watching.waitForRun { $0.trigger == .start }
            #expect(reached5 != nil)
            for round in 0..<3 {
                for index in 0..<10 { try rig.laptop.write("burst/file \(index).txt", "round \(round)") }
            }
            let run = await watching.waitForRun { $0.uploadCount > 0 }
            #expect(run?.uploadCount == 10)
            // Nothing more comes: the uploads change no stamp.
            try await Task.sleep(for: .seconds(2))
            #expect(watching.runs.count == 2, "\(watching.runs.map(\.trigger))")
            #expect(rig.emulator.manifest.allPosts.count == 10)
            #expect(await watching.stop() == nil)
        }
    }

    @Test func thePollFallbackFindsLocalChanges() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("kept.txt", "before")
            let watching = Watching.start(rig.laptop.sync(), Self.options(polling: true))
            let reached6 = await watching.waitForRun { $0.uploaded("kept.txt") }
            #expect(reached6 != nil)
            try rig.laptop.write("added.txt", "found by a scan")
            let run = await watching.waitForRun { $0.uploaded("added.txt") }
            #expect(run?.trigger == .localChange)
            try rig.laptop.remove("kept.txt")
            let removal = await watching.waitForRun { $0.report?.completed.contains { $0.kind == .deleteRemote } ?? false }
            #expect(removal?.trigger == .localChange)
            #expect(await watching.stop() == nil)
        }
    }

    @Test func aFailedRunBacksOffAndRecovers() async throws {
        try await SyncRig.with { rig in
            try rig.laptop.write("waiting.txt", "for the station")
            rig.emulator.faults.failNextRequests(Int.max, status: 502)
            let watching = Watching.start(rig.laptop.sync(), Self.options())
            let third = await watching.waitForRun { $0.number == 3 }
            let delays = watching.runs.prefix(3).map(\.retryDelay)
            #expect(delays == [.milliseconds(200), .milliseconds(400), .milliseconds(400)], "\(delays)")
            #expect(third?.trigger.contains(.retry) == true)
            #expect(watching.runs.prefix(3).allSatisfy { $0.error?.kind == .offline })
            rig.emulator.faults.reset()
            let recovered = await watching.waitForRun { $0.uploaded("waiting.txt") }
            #expect(recovered?.retryDelay == nil && recovered?.failed == false)
            #expect(await watching.stop() == nil)
        }
    }

    @Test func aMissingFolderFailsTheWatch() async throws {
        try await SyncRig.with { rig in
            let options = SyncOptions(deviceName: "laptop", allowsNonPersistentState: true)
            let sync = DriveSync(client: rig.laptop.client, folder: rig.laptop.folder.appendingPathComponent("not there"), options: options)
            let watching = Watching.start(sync, Self.options())
            #expect(await watching.task.value?.kind == .folder)
            // A set-up no retry mends ends the watch too.
            let unkept = Watching.start(DriveSync(client: rig.laptop.client, folder: rig.laptop.folder), Self.options())
            #expect(await unkept.task.value?.kind == .cacheStoreNotPersistent)
        }
    }

    #if os(Linux)
    /// The inotify descriptors this process has open.
    static func inotifyDescriptors() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == "anon_inode:inotify" }.count
    }

    @Test func stoppingReleasesTheInotifyDescriptor() async throws {
        try await SyncRig.with { rig in
            let before = Self.inotifyDescriptors()
            let watching = Watching.start(rig.laptop.sync(), Self.options())
            let reached7 = await watching.waitForRun { $0.trigger == .start }
            #expect(reached7 != nil)
            #expect(Self.inotifyDescriptors() == before + 1)
            #expect(await watching.stop() == nil)
            #expect(Self.inotifyDescriptors() == before)
        }
    }

    @Test func inotifyEventsAreReadAsPaths() throws {
        var watches: [Int32: [String]] = [1: [], 2: ["docs"]]
        var events = InotifyEvents()
        events.note(watch: 2, mask: UInt32(IN_CLOSE_WRITE), name: Array("a.txt".utf8), watches: &watches)
        events.note(watch: 1, mask: UInt32(IN_CREATE) | UInt32(IN_ISDIR), name: Array(".cipher-sync".utf8), watches: &watches)
        events.note(watch: 9, mask: UInt32(IN_DELETE), name: Array("unknown".utf8), watches: &watches)
        #expect(events.changes.paths == [try SyncPath(components: ["docs", "a.txt"])] && !events.refresh)
        events.note(watch: 1, mask: UInt32(IN_CREATE) | UInt32(IN_ISDIR), name: Array("new".utf8), watches: &watches)
        #expect(events.changes.isEverything && events.refresh)
        events.note(watch: 2, mask: UInt32(IN_IGNORED), name: [], watches: &watches)
        #expect(watches[2] == nil)
        var overflow = InotifyEvents()
        overflow.note(watch: -1, mask: UInt32(IN_Q_OVERFLOW), name: [], watches: &watches)
        #expect(overflow.changes.isEverything && overflow.refresh)
    }
    #endif
}

/// The timing rules, without a clock.
@Suite("Watch schedule")
struct WatchScheduleTests {
    let now = ContinuousClock.now

    @Test func theFirstRunIsDueAtOnceAndChangesWaitForQuiet() {
        var schedule = WatchSchedule(debounce: .seconds(2))
        #expect(schedule.due == nil)
        schedule.start(at: now)
        #expect(schedule.due == now)
        _ = schedule.take()
        schedule.note(.localChange, at: now)
        schedule.note(.localChange, at: now + .seconds(1))
        #expect(schedule.due == now + .seconds(3))
        schedule.note(.stationChange, at: now + .seconds(2))
        #expect(schedule.due == now + .seconds(4))
        #expect(schedule.take().trigger == [.localChange, .stationChange])
        #expect(schedule.due == nil)
    }

    @Test func aFolderThatNeverGoesQuietIsSyncedAfterTenDebounces() {
        var schedule = WatchSchedule(debounce: .seconds(1))
        for second in 0..<30 { schedule.note(.localChange, at: now + .seconds(second)) }
        #expect(schedule.due == now + .seconds(10))
    }

    @Test func aRetryWaitsWhateverChanges() {
        var schedule = WatchSchedule(debounce: .seconds(1))
        schedule.retry(at: now + .seconds(8))
        schedule.note(.localChange, at: now + .seconds(1))
        #expect(schedule.due == now + .seconds(8))
        #expect(schedule.take().trigger == [.retry, .localChange])
    }

    @Test func retryDelaysDoubleUpToTheCap() {
        var options = WatchOptions()
        options.minimumRetryDelay = .seconds(5)
        options.maximumRetryDelay = .seconds(60)
        #expect((1...6).map(options.retryDelay(afterFailures:)) == [.seconds(5), .seconds(10), .seconds(20), .seconds(40), .seconds(60), .seconds(60)])
        #expect(options.retryDelay(afterFailures: 10_000) == .seconds(60))
    }

    @Test func theStationMarkSeesANewManifest() {
        var mark = StationMark()
        let seen = ["a", "a", "b", nil].map { mark.update($0) }
        #expect(seen == [true, false, true, true])
    }
}
