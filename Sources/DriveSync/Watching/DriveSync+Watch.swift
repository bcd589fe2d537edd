import Foundation
import StationClient
import Transport

extension DriveSync {
    /// Keeps the folder in sync until the task is cancelled: syncs once, then again whenever
    /// something changes, locally or on the station.
    ///
    /// - Local changes come from the system's notifications (inotify on Linux, one
    ///   `DispatchSource` per folder on Apple platforms, with a scan beside it for files rewritten
    ///   in place), or from a scan of the folder's stamps every ``WatchOptions/folderPollInterval``
    ///   (``WatchOptions/pollsFolder``, no notifications, or more folders than
    ///   ``WatchOptions/maximumWatchedDirectories``). A change to a file the rules ignore
    ///   (``IgnoreRules/defaults`` and the folder's `.cipherignore`), or that leaves every changed
    ///   file as the last sync recorded it (the sync's own downloads), starts no run.
    /// - Station changes: the profile's manifest CID, read every
    ///   ``WatchOptions/stationPollInterval`` (one `GET /profile`). A run that published
    ///   changes the manifest too, so the next read after it plans once more (finding nothing to
    ///   do, unless another device changed something meanwhile).
    /// - Debounce: a run starts once nothing changed for ``WatchOptions/debounce`` (at most ten
    ///   times that after the first change), so a burst of saves is one run. Changes during a
    ///   run make one more run after it.
    /// - A failed run (it threw, or some actions failed) is tried again after
    ///   ``WatchOptions/minimumRetryDelay``, doubled for each failure in a row up to
    ///   ``WatchOptions/maximumRetryDelay``; changes meanwhile wait for it.
    ///
    /// Each run is ``plan()`` then ``run(_:progress:)``, with their lock, deletion limit and
    /// journal: a plan over the deletion limit holds its deletions back in every run until the
    /// user allows them. Cancelling the task stops the run in flight as cancelling
    /// ``run(_:progress:)`` does (what was done is recorded, the next sync resumes), stops the
    /// notifications (their descriptors and thread are released before this returns) and returns.
    ///
    ///     func keepInSync(_ sync: DriveSync) async throws {
    ///         try await sync.watch(options: WatchOptions(debounce: .seconds(2))) { run in
    ///             print("run \(run.number) (\(run.trigger)): \(run.report?.completed.count ?? 0) actions")
    ///         }
    ///     }
    ///
    /// - Parameters:
    ///   - options: how changes are noticed and when runs start.
    ///   - progress: each run's progress, as ``run(_:progress:)`` reports it.
    ///   - onRun: called after each run (the watch waits for it before it goes on).
    /// - Throws: ``DriveSyncError`` `.folder` when the first run finds no readable folder (and
    ///   `.cacheStoreNotPersistent`, `.workFolder` for a set-up no retry mends); every
    ///   later failure is reported to `onRun` and tried again.
    public func watch(options: WatchOptions = WatchOptions(), progress: (@Sendable (SyncProgress) -> Void)? = nil,
                      onRun: @escaping @Sendable (WatchRun) async -> Void) async throws(DriveSyncError) {
        let loop = WatchLoop(sync: self, options: options, inbox: ChangeInbox())
        if let error = await loop.run(progress: progress, onRun: onRun) { throw error }
    }
}

/// The manifest CID the station had when last read: `known` is false until a read succeeded.
struct StationMark: Sendable {
    var known = false
    var manifestCID: String?

    /// Records `manifestCID`; whether it differs from what was known (or nothing was).
    mutating func update(_ manifestCID: String?) -> Bool {
        defer { (known, self.manifestCID) = (true, manifestCID) }
        return !known || manifestCID != self.manifestCID
    }
}

/// When the next run is due: what is waiting for it, the quiet time after the last change, and
/// the back-off after a failure. Pure, so the timing rules are tested without a clock.
struct WatchSchedule: Sendable {
    typealias Instant = ContinuousClock.Instant

    let debounce: Duration
    private(set) var trigger: WatchRun.Trigger = []
    private(set) var changes = ChangedPaths()
    private var firstChange: Instant?
    private var quietAt: Instant?
    private var retryAt: Instant?

    init(debounce: Duration) { self.debounce = max(debounce, .zero) }

    /// When the waiting run should start; `nil`: nothing waits.
    var due: Instant? {
        guard !trigger.isEmpty, let quietAt else { return nil }
        return max(quietAt, retryAt ?? quietAt)
    }

    /// A run as soon as possible (the first one).
    mutating func start(at now: Instant) {
        trigger.insert(.start)
        quietAt = now
    }

    /// A change at `now`: the run waits until `debounce` passes without another (at most ten
    /// times `debounce` after the first).
    mutating func note(_ trigger: WatchRun.Trigger, changes: ChangedPaths = ChangedPaths(), at now: Instant) {
        self.trigger.insert(trigger)
        self.changes.formUnion(changes)
        let first = firstChange ?? now
        firstChange = first
        quietAt = min(now + debounce, first + debounce * 10)
    }

    /// A failed run: the next waits until `instant`, whatever changes meanwhile.
    mutating func retry(at instant: Instant) {
        trigger.insert(.retry)
        retryAt = instant
        quietAt = quietAt ?? instant
    }

    /// Takes what waits for the run that starts now.
    mutating func take() -> (trigger: WatchRun.Trigger, changes: ChangedPaths) {
        defer { self = WatchSchedule(debounce: debounce) }
        return (trigger, changes)
    }
}

/// One ``DriveSync/watch(options:progress:onRun:)``.
struct WatchLoop: Sendable {
    let sync: DriveSync
    let options: WatchOptions
    let inbox: ChangeInbox
    let station = Locked(StationMark())

    var local: LocalFolder { sync.local }

    /// Runs until cancelled; the error of a first run that found no folder.
    func run(progress: (@Sendable (SyncProgress) -> Void)?, onRun: @escaping @Sendable (WatchRun) async -> Void) async -> DriveSyncError? {
        // Ignored folders are not watched (a `node_modules` would use up the watches).
        let notifier = options.pollsFolder ? nil : (try? local.scan(ignoring: currentRules())).flatMap {
            FolderNotifiers.start(local, scan: $0, limit: options.maximumWatchedDirectories, inbox: inbox)
        }
        // A task group of its own making reaps its timers (a discarding group needs iOS 17).
        let failure = await withTaskGroup(of: Void.self) { group -> DriveSyncError? in
            if let interval = options.stationPollInterval { group.addTask { await pollStation(every: interval) } }
            var polling = !(notifier?.catchesInPlaceWrites ?? false)
            if polling { group.addTask { await pollFolder() } }
            defer { group.cancelAll() }

            var schedule = WatchSchedule(debounce: options.debounce)
            schedule.start(at: .now)
            var (number, failures) = (0, 0)
            var armed: ContinuousClock.Instant?
            var signals = inbox.signals.makeAsyncIterator()
            while !Task.isCancelled {
                if let due = schedule.due, due <= .now {
                    armed = nil
                    let (trigger, changes) = schedule.take()
                    // Only the folder changed, and as far as the stamps tell, not from what the sync recorded.
                    if trigger == .localChange, !(await changed(changes)) { continue }
                    number += 1
                    var run = await runOnce(number: number, trigger: trigger, progress: progress)
                    if Task.isCancelled, run.error?.kind == .cancelled {
                        await onRun(run)
                        break
                    }
                    // What no retry can mend ends the watch: the folder or the set-up is wrong.
                    let lasting: [DriveSyncError.Kind] = [.folder, .cacheStoreNotPersistent, .workFolder, .invalidRoot]
                    if number == 1, let error = run.error, lasting.contains(error.kind) { return error }
                    if run.failed {
                        failures += 1
                        let delay = options.retryDelay(afterFailures: failures)
                        run.retryDelay = delay
                        schedule.retry(at: .now + delay)
                    } else {
                        failures = 0
                    }
                    await onRun(run)
                    continue
                }
                // One timer for the earliest deadline; a later one is armed when it fires.
                if let due = schedule.due, armed.map({ due < $0 }) ?? true {
                    armed = due
                    let inbox = inbox
                    group.addTask {
                        guard (try? await Task.sleep(until: due, clock: .continuous)) != nil else { return }
                        inbox.send(.timer)
                    }
                }
                guard let signal = await signals.next() else { break }
                switch signal {
                case .local: schedule.note(.localChange, changes: inbox.take(), at: .now)
                case .station: schedule.note(.stationChange, at: .now)
                case .timer:
                    // The timer sends, then ends: reaped here, so a long watch keeps no finished tasks.
                    await group.next()
                    if let deadline = armed, deadline <= .now { armed = nil }
                case .needsPolling:
                    guard !polling else { break }
                    polling = true
                    group.addTask { await pollFolder() }
                }
            }
            return nil
        }
        await notifier?.stop()
        inbox.finish()
        return failure
    }

    /// Plans and runs once, reading the station's manifest CID first (what later reads compare with).
    func runOnce(number: Int, trigger: WatchRun.Trigger, progress: (@Sendable (SyncProgress) -> Void)?) async -> WatchRun {
        var run = WatchRun(number: number, trigger: trigger)
        if options.stationPollInterval != nil, let profile = try? await sync.client.profile() {
            _ = station.withLock { $0.update(profile.manifestCID) }
        }
        do {
            let plan = try await sync.plan()
            run.plan = plan
            run.report = try await sync.run(plan, progress: progress)
        } catch {
            run.error = error
        }
        return run
    }

    /// Whether `changes` touch a file the rules do not ignore and that is not as the last sync
    /// recorded it (present on one side only, or with another stamp), or the journal holds
    /// unfinished actions.
    func changed(_ changes: ChangedPaths) async -> Bool {
        // Rules that cannot be read: a run, which reports why.
        guard let rules = try? sync.ignoreRules() else { return true }
        guard let state = try? await sync.stateStore().load().state, state.pending.isEmpty else { return true }
        if changes.isEverything {
            // Which paths is not known: the folder as a scan under the rules sees it, against the state.
            guard let scan = try? local.scan(ignoring: rules) else { return true }
            if scan.files.contains(where: { path, stamp in state.files[path].map { !stamp.matches($0.stamp) } ?? true }) { return true }
            return state.files.keys.contains { scan.files[$0] == nil && !scan.isUnread($0) && !rules.ignores($0.description) }
        }
        let paths = changes.paths.filter { $0.description == IgnoreRules.fileName || !rules.ignores($0.description) }
        guard !paths.isEmpty else { return false }
        return paths.contains { path in
            switch (local.stamp(of: path), state.files[path]?.stamp) {
            case (nil, nil): false
            case let (now?, synced?): !now.matches(synced)
            default: true
            }
        }
    }

    /// The rules in effect now (the options' alone while `.cipherignore` cannot be read).
    func currentRules() -> IgnoreRules {
        (try? sync.ignoreRules()) ?? sync.options.ignoreRules
    }

    /// Reads the station's profile every `interval`; a new manifest CID is a station change.
    func pollStation(every interval: Duration) async {
        while (try? await Task.sleep(for: interval)) != nil {
            guard let profile = try? await sync.client.profile() else { continue }
            if station.withLock({ $0.update(profile.manifestCID) }) { inbox.send(.station) }
        }
    }

    /// Scans the folder every ``WatchOptions/folderPollInterval``; files added, removed or with
    /// another stamp since the last scan are local changes.
    func pollFolder() async {
        var previous = try? local.scan(ignoring: currentRules())
        while (try? await Task.sleep(for: options.folderPollInterval)) != nil {
            guard let scan = try? local.scan(ignoring: currentRules()) else { continue }
            inbox.report(previous.map { ChangedPaths.between($0, scan) } ?? .everything)
            previous = scan
        }
    }
}
