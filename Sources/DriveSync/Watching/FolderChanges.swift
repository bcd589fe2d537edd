import Foundation
import Transport

/// What changed in the folder since it was last asked: paths, or everything (a notification
/// queue overflowed, a folder appeared or moved, too many paths to keep).
struct ChangedPaths: Sendable, Equatable {
    /// The most paths kept; past it the change is ``isEverything``.
    static let limit = 4096

    private(set) var paths: Set<SyncPath> = []
    private(set) var isEverything = false

    /// Everything may have changed.
    static var everything: ChangedPaths {
        var changes = ChangedPaths()
        changes.isEverything = true
        return changes
    }

    var isEmpty: Bool { !isEverything && paths.isEmpty }

    mutating func insert(_ path: SyncPath) {
        guard !isEverything else { return }
        guard paths.count < Self.limit else { return markEverything() }
        paths.insert(path)
    }

    mutating func formUnion(_ other: ChangedPaths) {
        if other.isEverything { return markEverything() }
        for path in other.paths { insert(path) }
    }

    mutating func markEverything() {
        isEverything = true
        paths = []
    }

    /// The files that differ between two scans: added, removed, or with another stamp.
    static func between(_ old: LocalFolder.Scan, _ new: LocalFolder.Scan) -> ChangedPaths {
        var changes = ChangedPaths()
        for (path, stamp) in new.files where !(old.files[path].map { $0.matches(stamp) } ?? false) { changes.insert(path) }
        for path in old.files.keys where new.files[path] == nil { changes.insert(path) }
        if Set(old.unread) != Set(new.unread) { changes.markEverything() }
        return changes
    }
}

/// Where a folder watcher puts what it noticed, and how it wakes the watch: changes are merged
/// under a lock, and one wake-up is queued however many arrive before the watch takes them.
final class ChangeInbox: Sendable {
    enum Signal: Sendable {
        /// The folder changed (take the paths with ``ChangeInbox/take()``).
        case local
        /// The station's manifest changed.
        case station
        /// A deadline (debounce, retry) may have passed.
        case timer
        /// Notifications stopped working (too many folders, the system's limit): poll from now on.
        case needsPolling
    }

    let signals: AsyncStream<Signal>
    private let continuation: AsyncStream<Signal>.Continuation
    private let pending = Locked((changes: ChangedPaths(), woken: false))

    init() {
        (signals, continuation) = AsyncStream.makeStream(of: Signal.self, bufferingPolicy: .unbounded)
    }

    /// Records `changes` and wakes the watch (once until it takes them).
    func report(_ changes: ChangedPaths) {
        guard !changes.isEmpty else { return }
        let wake = pending.withLock { pending -> Bool in
            pending.changes.formUnion(changes)
            defer { pending.woken = true }
            return !pending.woken
        }
        if wake { continuation.yield(.local) }
    }

    func send(_ signal: Signal) { continuation.yield(signal) }

    /// The changes reported since the last call.
    func take() -> ChangedPaths {
        pending.withLock { pending in
            defer { pending = (ChangedPaths(), false) }
            return pending.changes
        }
    }

    func finish() { continuation.finish() }
}
