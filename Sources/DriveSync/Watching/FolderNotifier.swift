#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation

/// The system's notifications of a folder's changes, reported to a ``ChangeInbox``.
protocol FolderNotifier: Sendable {
    /// Whether a file rewritten in place (opened, written, closed) is reported; when not, the
    /// watch also scans every ``WatchOptions/folderPollInterval``.
    var catchesInPlaceWrites: Bool { get }
    /// Stops the notifications and releases what they hold (descriptors, threads).
    func stop() async
}

enum FolderNotifiers {
    /// The notifications of `local`'s folders (those of `scan`), or `nil` when the system has
    /// none to give (the watch then scans): inotify on Linux, a `DispatchSource` per folder on
    /// Apple platforms.
    static func start(_ local: LocalFolder, scan: LocalFolder.Scan, limit: Int, inbox: ChangeInbox) -> (any FolderNotifier)? {
        #if os(Linux)
        return InotifyWatcher.start(local, scan: scan, limit: limit, inbox: inbox)
        #elseif canImport(Darwin)
        return DispatchFolderNotifier.start(local, scan: scan, limit: limit, inbox: inbox)
        #else
        return nil
        #endif
    }
}

#if canImport(Darwin)
/// One `DispatchSource` per folder (opened `O_EVTONLY`): names added, removed or renamed in a
/// folder wake the watch at once; files rewritten in place are found by the scan that runs
/// beside it. Folders added later are watched from the next watch.
///
/// `@unchecked Sendable`: `sources` is set once; a source may be cancelled from any thread.
final class DispatchFolderNotifier: FolderNotifier, @unchecked Sendable {
    let catchesInPlaceWrites = false
    private let sources: [any DispatchSourceFileSystemObject]

    static func start(_ local: LocalFolder, scan: LocalFolder.Scan, limit: Int, inbox: ChangeInbox) -> DispatchFolderNotifier? {
        guard scan.directories.count + 1 <= limit else { return nil }
        var sources: [any DispatchSourceFileSystemObject] = []
        for components in [[]] + scan.directories.map(\.components) {
            let descriptor = open(local.root.appendingPathComponent(components.joined(separator: "/")).path, O_EVTONLY | O_DIRECTORY | O_NOFOLLOW)
            guard descriptor >= 0 else { continue }
            let source = DispatchSource.makeFileSystemObjectSource(fileDescriptor: descriptor, eventMask: [.write, .delete, .rename, .attrib],
                                                                   queue: .global())
            source.setEventHandler { inbox.report(.everything) }
            source.setCancelHandler { close(descriptor) }
            source.resume()
            sources.append(source)
        }
        return DispatchFolderNotifier(sources: sources)
    }

    private init(sources: [any DispatchSourceFileSystemObject]) { self.sources = sources }

    func stop() async {
        for source in sources { source.cancel() }
    }
}
#endif
