/// How ``DriveSync/watch(options:progress:onRun:)`` notices changes and when it syncs.
public struct WatchOptions: Sendable {
    /// How long the folder (or the station) must stay quiet after a change before a run starts,
    /// so a burst of saves is one run; a folder that never goes quiet is synced at the latest
    /// ten times this after its first change. Default two seconds.
    public var debounce: Duration = .seconds(2)
    /// How often the station's profile is read (one `GET /profile`) to see whether its manifest
    /// changed, that is whether another device published or removed something. Default 30
    /// seconds; `nil`: the station is read only when the folder changes.
    public var stationPollInterval: Duration? = .seconds(30)
    /// How often the folder is scanned (sizes, times and file numbers only, nothing read) to find
    /// local changes, when the system's notifications are not used (``pollsFolder``, no inotify,
    /// or more folders than ``maximumWatchedDirectories``); on Apple platforms also to catch
    /// files rewritten in place, which a folder's own notifications do not show. Default five seconds.
    public var folderPollInterval: Duration = .seconds(5)
    /// Finds local changes by scanning every ``folderPollInterval`` instead of the system's
    /// notifications (a network file system, where they do not arrive). Default `false`.
    public var pollsFolder = false
    /// The most folders watched through notifications (one inotify watch or one open folder
    /// each); a folder with more is scanned every ``folderPollInterval`` instead. Default 8192.
    public var maximumWatchedDirectories = 8192
    /// The wait after the first failed run (thrown, or with failed actions); each failure in a
    /// row doubles it up to ``maximumRetryDelay``, and a run that succeeds resets it. Default five seconds.
    public var minimumRetryDelay: Duration = .seconds(5)
    /// The longest wait between failed runs. Default five minutes.
    public var maximumRetryDelay: Duration = .seconds(300)

    /// Options with the defaults: debounce 2 s, station read every 30 s, notifications where the
    /// system has them.
    ///
    /// - Parameters:
    ///   - debounce: the quiet time before a run.
    ///   - stationPollInterval: how often the station's manifest is checked; `nil`: never.
    ///   - pollsFolder: scan the folder instead of using the system's notifications.
    public init(debounce: Duration = .seconds(2), stationPollInterval: Duration? = .seconds(30), pollsFolder: Bool = false) {
        self.debounce = debounce
        self.stationPollInterval = stationPollInterval
        self.pollsFolder = pollsFolder
    }

    /// The wait after `failures` failed runs in a row (1 or more).
    func retryDelay(afterFailures failures: Int) -> Duration {
        var delay = max(minimumRetryDelay, .milliseconds(1))
        for _ in 1..<max(1, min(failures, 64)) where delay < maximumRetryDelay { delay *= 2 }
        return min(delay, maximumRetryDelay)
    }
}

/// One run of a watched sync, as ``DriveSync/watch(options:progress:onRun:)`` reports it.
public struct WatchRun: Sendable {
    /// Why a run started (a set: a station change and a local one can wait for the same run).
    public struct Trigger: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: Int
        /// Creates a trigger set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The first run, when watching starts.
        public static let start = Trigger(rawValue: 1 << 0)
        /// Something in the folder changed.
        public static let localChange = Trigger(rawValue: 1 << 1)
        /// The station's manifest changed (another device, or this one's last run).
        public static let stationChange = Trigger(rawValue: 1 << 2)
        /// A failed run is tried again.
        public static let retry = Trigger(rawValue: 1 << 3)

        /// `start`, `local change`, `station change`, `retry`, joined with `+`.
        public var description: String {
            let names: [(Trigger, String)] = [(.start, "start"), (.localChange, "local change"), (.stationChange, "station change"),
                                              (.retry, "retry")]
            return names.filter { contains($0.0) }.map(\.1).joined(separator: " + ")
        }
    }

    /// 1 for the first run, then counting up.
    public var number: Int
    /// Why it ran.
    public var trigger: Trigger
    /// The plan it ran; `nil` when planning failed (``error``).
    public var plan: SyncPlan?
    /// What it did; `nil` when it failed (``error``).
    public var report: SyncReport?
    /// Why it failed, when it did: planning or the run threw (`.station`, `.busy`, `.folder`, …).
    public var error: DriveSyncError?
    /// When the run failed (``error``, or failed actions in ``report``): how long the watch waits
    /// before trying again.
    public var retryDelay: Duration?

    /// Whether the run failed: it threw, or some of its actions failed.
    public var failed: Bool { error != nil || !(report?.failures.isEmpty ?? true) }
}
