import Foundation
import Manifest
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// A folder mapped to a folder of the namespace (`/Work/`): only its subtree is the sync's.
@Suite("Remote root")
struct RemoteRootTests {
    @Test func rootsAreCheckedAndMapPathsBothWays() throws {
        for refused in ["Work/", "", "/Work//x/", "//", "/../", "/Work/./", "/a\u{0}b/", "/a\\b/", "/a\u{7}/",
                        "/" + String(repeating: "x", count: 256) + "/", String(repeating: "/d", count: 65) + "/"] {
            #expect(throws: DriveSyncError.self, "\(refused)") { try RemoteRoot(refused) }
            do { _ = try RemoteRoot(refused) } catch { #expect(error.kind == .invalidRoot) }
        }
        let work = try RemoteRoot("/Work")
        #expect(work == (try RemoteRoot("/Work/")) && work.path == "/Work/" && !work.isNamespace)
        #expect(try RemoteRoot("/") == .namespace && RemoteRoot.namespace.path == "/")

        #expect(work.folderPath(directory: "/Work/notes/", filename: "a.txt") == "notes/a.txt")
        #expect(work.folderPath(directory: "/Work", filename: "a.txt") == "a.txt")
        #expect(work.folderPath(forRemotePath: "/Work/notes/a.txt") == "notes/a.txt")
        for outside in ["/Workshop/", "/work/", "/", "", "Work/", "//Work/"] {
            #expect(work.folderPath(directory: outside, filename: "a.txt") == nil, "\(outside)")
        }
        #expect(work.folderPath(directory: nil, filename: "a.txt") == nil)
        // Inside the root but not a name the folder can hold.
        #expect(work.folderPath(directory: "/Work/../", filename: "a.txt") == nil)
        #expect(work.folderPath(directory: "/Work/.cipher-sync/", filename: "a.txt") == nil)
        #expect(work.remotePath(forFolderPath: "notes/a.txt") == "/Work/notes/a.txt")
        #expect(work.remoteDirectory(forFolderPath: "a.txt") == "/Work/")
        #expect(work.remotePath(forFolderPath: "../a.txt") == nil)
        #expect(RemoteRoot.namespace.folderPath(forRemotePath: "/notes/a.txt") == "notes/a.txt")
        #expect(RemoteRoot.namespace.remotePath(forFolderPath: "a.txt") == "/a.txt")
    }

    /// Two folders of one client, at `/Work/` and `/Home/` of one namespace; a second device's
    /// folder at `/Work/`: each sees its subtree only, and nothing outside is ever touched.
    @Test func twoFoldersWithTwoRootsOfOneNamespace() async throws {
        try await SyncRig.with { rig in
            let client = rig.laptop.client
            let home = rig.laptop.folder.deletingLastPathComponent().appendingPathComponent("home", isDirectory: true)
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
            let workRoot = try RemoteRoot("/Work/"), homeRoot = try RemoteRoot("/Home/")
            let work = DriveSync(client: client, folder: rig.laptop.folder,
                                 options: SyncOptions(maximumDeletions: 100, deviceName: "laptop", remoteRoot: workRoot, allowsNonPersistentState: true))
            let homeSync = DriveSync(client: client, folder: home,
                                     options: SyncOptions(maximumDeletions: 100, deviceName: "laptop", remoteRoot: homeRoot, allowsNonPersistentState: true))
            // Posts outside both roots: at the top, in another folder, one without drive metadata.
            _ = try await client.publish(data: Data("top".utf8), metadata: DriveFileMetadata(filename: "top.txt", sizeBytes: 3, path: "/"))
            _ = try await client.publish(data: Data("keep".utf8),
                                         metadata: DriveFileMetadata(filename: "keep.txt", sizeBytes: 4, path: "/Workshop/"))
            _ = try await client.publish(data: Data("x".utf8), metadata: nil as DriveFileMetadata?)
            try rig.laptop.write("plan.md", "# plan")
            try rig.laptop.write("docs/a.txt", "a")
            try Data("b".utf8).write(to: home.appendingPathComponent("b.txt"))

            let plan = try await work.plan()
            #expect(Set(plan.actions.map { "\($0.kind) \($0.path)" }) == ["upload plan.md", "upload docs/a.txt"])
            #expect(plan.skipped.isEmpty, "\(plan.skipped)")
            _ = try await work.run(plan)
            _ = try await homeSync.sync()
            #expect(try await rig.remotePaths() == ["/?", "/Home/b.txt", "/Work/docs/a.txt", "/Work/plan.md", "/Workshop/keep.txt", "/top.txt"])
            // CipherVault's shape: the root is in the posts' path.
            let posts = try await client.listPosts(as: DriveFileMetadata.self).posts.compactMap(\.metadata)
            #expect(posts.first { $0.filename == "a.txt" }?.path == "/Work/docs/")

            // The plan's listing, as values: the root's files only, both paths of each.
            let listed = try await work.plan()
            #expect(listed.isInSync && listed.skipped.isEmpty)
            #expect(Set(listed.remoteFiles.map { "\($0.remotePath) \($0.path)" }) == ["/Work/plan.md plan.md", "/Work/docs/a.txt docs/a.txt"])
            let a = try #require(listed.remoteFiles.first { $0.path == "docs/a.txt" })
            #expect(a.size == 1 && a.sha256 == SyncRig.sha256("a") && a.modified != nil && a.conflict == nil && !listed.isLocalOnly)

            // Another device at /Work/ gets the subtree at its top.
            let phone = rig.phone.sync(SyncOptions(maximumDeletions: 100, deviceName: "phone", remoteRoot: workRoot))
            _ = try await phone.sync()
            #expect(try rig.phone.tree().keys.sorted() == ["docs/a.txt", "plan.md"])

            // The same folder with another root has a state of its own: /Work/'s files are new
            // there (uploaded), not taken for files deleted on the station.
            let moved = DriveSync(client: client, folder: rig.laptop.folder,
                                  options: SyncOptions(maximumDeletions: 100, deviceName: "laptop", remoteRoot: try RemoteRoot("/Elsewhere/"), allowsNonPersistentState: true))
            #expect(try await moved.plan().actions.map(\.kind) == [.upload, .upload])

            // Everything deleted in the /Work/ folder: only /Work/'s posts go, within its own limit.
            try rig.laptop.remove("plan.md")
            try rig.laptop.remove("docs")
            let emptied = try await DriveSync(client: client, folder: rig.laptop.folder,
                                              options: SyncOptions(deviceName: "laptop", remoteRoot: workRoot, allowsNonPersistentState: true)).plan()
            #expect(emptied.deletionCount == 2 && emptied.highWaterMark == 2)
            _ = try await work.sync()
            #expect(try await rig.remotePaths() == ["/?", "/Home/b.txt", "/Workshop/keep.txt", "/top.txt"])
            #expect(try await homeSync.plan().isInSync)
        }
    }

    /// What may run at once over one key store and cache store: syncs of two folders (two roots)
    /// through one client, and through two clients sharing the key store and the cache store.
    @Test func syncsOfTwoFoldersRunAtOnceOverOneKeyStoreAndCache() async throws {
        try await SyncRig.with { rig in
            let base = rig.laptop.folder.deletingLastPathComponent()
            var folders: [URL] = []
            for name in ["one", "two", "three", "four"] {
                let folder = base.appendingPathComponent(name, isDirectory: true)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for index in 0..<3 { try Data("\(name) \(index)".utf8).write(to: folder.appendingPathComponent("f\(index).txt")) }
                folders.append(folder)
            }
            // One encrypted file cache store, shared by two clients of the same credentials and key store.
            var configuration = rig.laptop.client.configuration
            configuration.cacheStore = EncryptedFileCacheStore(directory: base.appendingPathComponent("cache", isDirectory: true),
                                                               keyStore: configuration.keyStore)
            let credentials = await rig.laptop.client.credentials
            let first = try await StationClient(credentials: credentials, configuration: configuration)
            let second = try await StationClient(credentials: credentials, configuration: configuration)
            let roots = try (0..<4).map { try RemoteRoot("/F\($0)/") }
            let syncs = [first, first, second, second].enumerated().map { index, client in
                DriveSync(client: client, folder: folders[index], options: SyncOptions(deviceName: "laptop", remoteRoot: roots[index], allowsNonPersistentState: true))
            }
            // Two folders through one client, and one through each of two clients, at once.
            async let a = syncs[0].sync()
            async let b = syncs[1].sync()
            async let c = syncs[2].sync()
            async let d = syncs[3].sync()
            let reports = try await [a, b, c, d]
            #expect(reports.allSatisfy { $0.isInSync && $0.completed.count == 3 })
            #expect(try await rig.remotePaths().count == 12)
            // Each state intact: nothing left to do, whichever client plans.
            for index in 0..<4 {
                let other = DriveSync(client: index < 2 ? second : first, folder: folders[index],
                                      options: SyncOptions(deviceName: "laptop", remoteRoot: roots[index], allowsNonPersistentState: true))
                let plan = try await other.plan()
                #expect(plan.isInSync && plan.remoteFiles.count == 3, "\(index): \(plan.actions)")
            }
        }
    }
}
