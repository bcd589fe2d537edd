extension LocalFolder {
    /// What ``LocalFolder/scan()`` found.
    struct Scan: Sendable {
        /// Every regular file, by path.
        var files: [SyncPath: FileStamp] = [:]
        /// What is not synced, and why (symbolic links, special files, refused names, unread places).
        var skipped: [SkippedItem] = []
        /// Directories and files that could not be read (refused, failing, vanished mid-scan):
        /// what is under them is unknown, not absent, so nothing may be decided there.
        var unread: [SyncPath] = []
        /// Every directory read or tried (`.cipher-sync` left out), parents before their children:
        /// what a folder watcher watches.
        var directories: [SyncPath] = []

        /// Records `path` as unread, and reports it.
        mutating func markUnread(_ path: SyncPath) {
            unread.append(path)
            skipped.append(SkippedItem(path: path.description, reason: .unreadable))
        }

        /// Whether `path` is an unread entry or lies under one.
        func isUnread(_ path: SyncPath) -> Bool {
            unread.contains { unread in
                unread.components.count <= path.components.count
                    && zip(unread.components, path.components).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
            }
        }
    }
}
