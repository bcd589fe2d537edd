#if os(Linux)
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Transport

/// The folder's changes through inotify: one watch per folder (the sync's own `.cipher-sync`
/// left out), added for folders that appear and dropped for those that go, read by a thread of
/// its own that sleeps in `poll(2)` on the inotify descriptor and a pipe until either has
/// something: no timer, no busy loop. ``stop()`` writes to the pipe and closes it; the thread then
/// closes both descriptors and ends.
///
/// Watches are added by path (the kernel has no `inotify_add_watch` relative to a directory
/// descriptor), the last component not followed (`IN_DONT_FOLLOW`, `IN_ONLYDIR`); a watch only
/// wakes the sync, which reaches files through directory descriptors as always.
///
/// `@unchecked Sendable`: `watches` is used by `init` and then only by the reader thread;
/// the rest is immutable or behind locks.
final class InotifyWatcher: FolderNotifier, @unchecked Sendable {
    static let mask = UInt32(IN_CLOSE_WRITE) | UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_MOVED_FROM)
        | UInt32(IN_MOVED_TO) | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)
        | UInt32(IN_ONLYDIR) | UInt32(IN_DONT_FOLLOW)
    /// The size of `struct inotify_event` before its name.
    static let headerSize = 16

    let catchesInPlaceWrites = true
    private let notifications: Int32
    private let wakeRead: Int32
    private let wakeWrite: Locked<Int32?>
    private let local: LocalFolder
    private let inbox: ChangeInbox
    private let limit: Int
    private var watches: [Int32: [String]] = [:]
    private let ended = Locked((done: false, waiters: [CheckedContinuation<Void, Never>]()))

    /// Watches every folder of `scan`, or returns `nil` (the watch then polls): inotify is not
    /// available, there are more than `limit` folders, or the system's watch limit is reached.
    static func start(_ local: LocalFolder, scan: LocalFolder.Scan, limit: Int, inbox: ChangeInbox) -> InotifyWatcher? {
        let notifications = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard notifications >= 0 else { return nil }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(notifications)
            return nil
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let watcher = InotifyWatcher(notifications: notifications, wakeRead: ends[0], wakeWrite: ends[1], local: local, inbox: inbox,
                                     limit: limit)
        guard watcher.refreshWatches(directories: scan.directories) else {
            close(ends[1])
            watcher.closeReadingEnds()
            return nil
        }
        let thread = Thread { watcher.readLoop() }
        thread.name = "DriveSync inotify"
        thread.start()
        return watcher
    }

    private init(notifications: Int32, wakeRead: Int32, wakeWrite: Int32, local: LocalFolder, inbox: ChangeInbox, limit: Int) {
        self.notifications = notifications
        self.wakeRead = wakeRead
        self.wakeWrite = Locked(wakeWrite)
        self.local = local
        self.inbox = inbox
        self.limit = limit
    }

    /// Wakes the reader thread and waits until it has closed its descriptors.
    func stop() async {
        // A byte wakes the thread even when a child process inherited the write end (no hang-up then).
        if let descriptor = wakeWrite.withLock({ descriptor in defer { descriptor = nil }; return descriptor }) {
            var byte: UInt8 = 1
            _ = write(descriptor, &byte, 1)
            close(descriptor)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = ended.withLock { ended in
                if !ended.done { ended.waiters.append(continuation) }
                return ended.done
            }
            if done { continuation.resume() }
        }
    }

    private func closeReadingEnds() {
        close(notifications)
        close(wakeRead)
        let waiters = ended.withLock { ended in
            ended.done = true
            defer { ended.waiters = [] }
            return ended.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// The thread: waits for events or the pipe, reads every queued event, reports them.
    private func readLoop() {
        defer { closeReadingEnds() }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var descriptors = [pollfd(fd: notifications, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        while true {
            for index in descriptors.indices { descriptors[index].revents = 0 }
            guard poll(&descriptors, 2, -1) >= 0 else {
                if errno == EINTR { continue }
                return inbox.send(.needsPolling)
            }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents & Int16(POLLERR | POLLNVAL) == 0 else { return inbox.send(.needsPolling) }
            var events = InotifyEvents()
            while true {
                let count = buffer.withUnsafeMutableBytes { read(notifications, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                buffer.withUnsafeBytes { events.parse(UnsafeRawBufferPointer(rebasing: $0.prefix(count)), watches: &watches) }
            }
            if events.refresh {
                guard refreshWatches(directories: (try? local.scan())?.directories) else {
                    inbox.report(.everything)
                    return inbox.send(.needsPolling)
                }
            }
            inbox.report(events.changes)
        }
    }

    /// Watches the folder and `directories` (`nil`: the folder could not be scanned; the watches
    /// stay), dropping watches of folders no longer there; `false` past the limit.
    private func refreshWatches(directories: [SyncPath]?) -> Bool {
        guard let directories else { return true }
        guard directories.count + 1 <= limit else { return false }
        var table: [Int32: [String]] = [:]
        for components in [[]] + directories.map(\.components) {
            let path = components.isEmpty ? local.root.path : local.root.appendingPathComponent(components.joined(separator: "/")).path
            let watch = inotify_add_watch(notifications, path, Self.mask)
            guard watch >= 0 else {
                if errno == ENOSPC || errno == ENOMEM { return false }
                continue  // gone or unreadable: the scan reports it
            }
            table[watch] = components
        }
        for watch in watches.keys where table[watch] == nil { inotify_rm_watch(notifications, watch) }
        watches = table
        return true
    }
}

/// What one read of the inotify descriptor told.
struct InotifyEvents {
    var changes = ChangedPaths()
    /// A folder appeared, moved or went, or the queue overflowed: the watches must be redone.
    var refresh = false

    /// Reads the events in `bytes` (whole `struct inotify_event`s, names padded with NULs).
    mutating func parse(_ bytes: UnsafeRawBufferPointer, watches: inout [Int32: [String]]) {
        var offset = 0
        while offset + InotifyWatcher.headerSize <= bytes.count {
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + InotifyWatcher.headerSize
            let nameEnd = min(bytes.count, nameStart + length)
            let name = Array(bytes[nameStart..<nameEnd].prefix { $0 != 0 })
            offset = nameEnd
            note(watch: watch, mask: mask, name: name, watches: &watches)
        }
    }

    mutating func note(watch: Int32, mask: UInt32, name: [UInt8], watches: inout [Int32: [String]]) {
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
            changes.markEverything()
            refresh = true
            return
        }
        guard let directory = watches[watch] else { return }
        if mask & UInt32(IN_IGNORED) != 0 {
            watches[watch] = nil
            return
        }
        if mask & (UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)) != 0 {
            refresh = true
            return
        }
        guard !name.isEmpty else { return }
        if directory.isEmpty && name.elementsEqual(SyncPath.reservedDirectory.utf8) { return }
        if mask & UInt32(IN_ISDIR) != 0 {
            // A folder came, went, moved or changed its permissions: what is under it is unknown.
            changes.markEverything()
            refresh = refresh || mask & (UInt32(IN_CREATE) | UInt32(IN_MOVED_TO) | UInt32(IN_MOVED_FROM)) != 0
            return
        }
        let text = String(decoding: name, as: UTF8.self)
        // A name no other device could store is skipped by the scan: changing it changes nothing.
        guard text.utf8.elementsEqual(name), let path = try? SyncPath(components: directory + [text]) else { return }
        changes.insert(path)
    }
}
#endif
