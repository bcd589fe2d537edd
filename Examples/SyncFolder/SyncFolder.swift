import DriveSync
import Foundation
import Manifest
import StationClient

// Keeping a folder in sync: two devices of one owner, each with a folder, and the namespace between
// them (DriveSync, what `cipher sync DIR` runs).
//
//   swift run cipher-examples sync-folder                  # against an embedded StationEmulator
//   swift run cipher-examples sync-folder --station URL    # a real station (a namespace of its own)
//
// The folders are temporary; against a station the example syncs the namespace "sync-example" (not
// your drive) and removes the posts it made at the end.

enum SyncFolder {
    static let usage = ExampleUsage(name: "sync-folder", summary: """
        Two devices keep a folder each in sync with one namespace (DriveSync): the plan, an edit on
        one device and a deletion on the other, until both folders hold the same files.
        """)

    static func run(_ arguments: [String]) async {
        await runExample(usage, arguments) { station in
            let laptop = try await station.pair(deviceName: "sync-laptop", namespace: "sync-example")
            let phone = try await station.pair(deviceName: "sync-phone", namespace: "sync-example")
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("sync-folder-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: root) }
            let laptopFolder = root.appendingPathComponent("laptop"), phoneFolder = root.appendingPathComponent("phone")
            for folder in [laptopFolder, phoneFolder] {
                try FileManager.default.createDirectory(at: folder.appendingPathComponent("notes"), withIntermediateDirectories: true)
            }
            try Data("buy milk\n".utf8).write(to: laptopFolder.appendingPathComponent("notes/todo.txt"))
            try Data(repeating: 0xFF, count: 2048).write(to: laptopFolder.appendingPathComponent("photo.jpg"))
            try Data("an idea\n".utf8).write(to: laptopFolder.appendingPathComponent("notes/ideas.txt"))
            try Data("shared notes\n".utf8).write(to: laptopFolder.appendingPathComponent("readme.txt"))

            // One DriveSync per device and folder; its state (what was synced last) lives in the
            // client's cache store, so every decision compares local, remote and last synced. These
            // clients keep it in memory (temporary folders, one run): an app passes a cache store that
            // survives a relaunch (EncryptedFileCacheStore), or DriveSync refuses to run.
            let laptopSync = DriveSync(client: laptop, folder: laptopFolder,
                                       options: SyncOptions(deviceName: "laptop", allowsNonPersistentState: true))
            let phoneSync = DriveSync(client: phone, folder: phoneFolder,
                                      options: SyncOptions(deviceName: "phone", allowsNonPersistentState: true))
            func sync(_ name: String, _ drive: DriveSync) async throws {
                let plan = try await drive.plan()
                for action in plan.actions { print("\(name): \(action.kind) \(action.path)") }
                let report = try await drive.run(plan)
                print("\(name): \(report.completed.count) done, in sync: \(report.isInSync)")
            }

            try await sync("laptop", laptopSync)     // uploads the four files
            try await sync("phone", phoneSync)       // downloads them
            // The phone edits the list, the laptop deletes the photo.
            try Data("buy milk\ncall Ana\n".utf8).write(to: phoneFolder.appendingPathComponent("notes/todo.txt"))
            try FileManager.default.removeItem(at: laptopFolder.appendingPathComponent("photo.jpg"))
            try await sync("phone", phoneSync)       // publishes the new version, then removes the old post
            // Downloads the edit (the laptop's old version goes to its sync trash first) and removes
            // the photo's post: a replacement and a deletion, within the default limit of half the
            // most files the folder had in sync (two of four; more would stop and ask).
            try await sync("laptop", laptopSync)
            try await sync("phone", phoneSync)       // the photo goes to the phone's sync trash

            let todo = "notes/todo.txt"
            let same = try Data(contentsOf: laptopFolder.appendingPathComponent(todo)) == Data(contentsOf: phoneFolder.appendingPathComponent(todo))
            let photoGone = !FileManager.default.fileExists(atPath: phoneFolder.appendingPathComponent("photo.jpg").path)
            print("folders match: \(same && photoGone)")

            // What the sync left on the station is this example's to remove.
            for post in try await laptop.listPosts(as: DriveFileMetadata.self).posts {
                station.removeAtEnd(postCID: post.postCID, publishedBy: laptop, name: post.metadata?.filename ?? post.postCID)
            }
            station.noteLeftBehind("namespace sync-example, empty (the protocol has no call to remove a namespace)")
        }
    }
}
