import Foundation
import Manifest
import SHA2
import StationClient
import StationEmulator
import Testing
@testable import DriveSync

/// An in-process station and two devices of its owner, each syncing a folder of its own with the
/// `drive` namespace: the setup of the scenario tests.
struct SyncRig {
    let emulator: StationEmulator
    let station: URL
    let laptop: Device
    let phone: Device

    /// One device: its client (post keys persisted in its own cache store) and its folder.
    struct Device {
        let client: StationClient
        let folder: URL
        let cacheStore: InMemoryCacheStore
        let name: String

        /// A sync of the device's folder; its state is in the device's in-memory cache store, which
        /// these options allow whatever the test passes.
        func sync(_ options: SyncOptions? = nil) -> DriveSync {
            var options = options ?? SyncOptions(maximumDeletions: 100, deviceName: name)
            options.allowsNonPersistentState = true
            return DriveSync(client: client, folder: folder, options: options)
        }

        /// Syncs and expects every action to succeed.
        @discardableResult
        func syncExpectingSuccess(_ options: SyncOptions? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws
            -> SyncReport {
            let report = try await sync(options).sync()
            #expect(report.failures.isEmpty, "\(report.failures)", sourceLocation: sourceLocation)
            return report
        }

        /// Syncs with the run stopped right after its `count`-th state write, as a kill there
        /// would; `true` when the sync finished with fewer writes (nothing was stopped).
        func syncStopping(afterStateWrite count: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
            struct Stop: Error {}
            var options = SyncOptions(maximumDeletions: 100, deviceName: name)
            options.afterStateWrite = { written in if written == count { throw Stop() } }
            do throws(DriveSyncError) {
                _ = try await sync(options).sync()
                return true
            } catch {
                #expect(error.kind == .cancelled, sourceLocation: sourceLocation)
                return false
            }
        }

        func write(_ path: String, _ text: String) throws {
            let url = folder.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }

        func remove(_ path: String) throws { try FileManager.default.removeItem(at: folder.appendingPathComponent(path)) }

        func read(_ path: String) throws -> String {
            String(decoding: try Data(contentsOf: folder.appendingPathComponent(path)), as: UTF8.self)
        }

        /// Every synced file's SHA-256 (hex) by relative path (`.cipher-sync` left out).
        func tree() throws -> [String: String] {
            var tree: [String: String] = [:]
            let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
            while let url = enumerator?.nextObject() as? URL {
                let relative = String(url.standardizedFileURL.path.dropFirst(folder.standardizedFileURL.path.count + 1))
                if relative.hasPrefix(SyncPath.reservedDirectory) { continue }
                guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
                tree[relative] = SHA2.SHA256.hash(data: try Data(contentsOf: url)).map { String(format: "%02x", $0) }.joined()
            }
            return tree
        }

        /// The texts of every file in the folder and in its trash: a version is lost when its text is in neither.
        func keptTexts() throws -> Set<String> {
            Set(try tree().keys.map { try read($0) }).union(try trashedTexts())
        }

        /// The texts of the files in the trash.
        func trashedTexts() throws -> Set<String> {
            let trash = folder.appendingPathComponent(".cipher-sync/trash")
            return Set(try trashed(withFolders: true).map {
                String(decoding: try Data(contentsOf: trash.appendingPathComponent($0)), as: UTF8.self)
            })
        }

        /// Runs `body` while the folder `relative` cannot be read: mode 000, and where the tests
        /// run as root (whom permissions do not stop), with the process's effective user
        /// `nobody`, owner of the device's folder for that time.
        func whileUnreadable<Value>(_ relative: String, _ body: () async throws -> Value) async throws -> Value {
            let directory = folder.appendingPathComponent(relative)
            let asRoot = geteuid() == 0
            let nobody: uid_t = 65534
            if asRoot { try SyncRig.changeOwner(of: folder, to: nobody) }
            #expect(chmod(directory.path, 0) == 0)
            if asRoot { #expect(seteuid(nobody) == 0) }
            defer {
                if asRoot { _ = seteuid(0) }
                _ = chmod(directory.path, 0o755)
                if asRoot { try? SyncRig.changeOwner(of: folder, to: 0) }
            }
            return try await body()
        }

        /// What is in the trash, by relative path inside the sync's trash folder.
        func trashed(withFolders: Bool = false) -> [String] {
            let trash = folder.appendingPathComponent(".cipher-sync/trash")
            let enumerator = FileManager.default.enumerator(atPath: trash.path)
            var names: [String] = []
            while let name = enumerator?.nextObject() as? String {
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: trash.appendingPathComponent(name).path, isDirectory: &isDirectory),
                   !isDirectory.boolValue {
                    names.append(withFolders ? name : String(name.split(separator: "/", maxSplits: 1).last ?? ""))
                }
            }
            return names.sorted()
        }
    }

    /// Runs `body` with a new rig whose folders (under one new temporary folder) are removed
    /// however `body` or the set-up ends.
    static func with(_ body: (SyncRig) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("drive-sync-" + UUID().uuidString.prefix(8))
        defer { try? FileManager.default.removeItem(at: root) }
        try await body(try await make(in: root))
    }

    private static func make(in root: URL) async throws -> SyncRig {
        let emulator = try StationEmulator()
        let station = try #require(URL(string: "http://station.test"))
        emulator.setEndpoint(station.absoluteString)
        func device(_ name: String) async throws -> Device {
            let folder = root.appendingPathComponent(name, isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let cacheStore = InMemoryCacheStore()
            var configuration = StationClientConfiguration(namespace: "drive", keyStore: InMemoryKeyStore(), transport: emulator.transport,
                                                           persistsPostKeys: true, cacheStore: cacheStore)
            // A temporary directory of the device's own, so a test can tell what the sync left there.
            configuration.temporaryDirectory = root.appendingPathComponent("tmp-\(name)", isDirectory: true)
            try FileManager.default.createDirectory(at: configuration.temporaryDirectory, withIntermediateDirectories: true)
            let log = emulator.log
            let client = try await StationClient.pair(endpoint: station, deviceName: name, configuration: configuration) { _ in
                log.latestPIN
            }
            return Device(client: client, folder: folder, cacheStore: cacheStore, name: name)
        }
        return SyncRig(emulator: emulator, station: station, laptop: try await device("laptop"), phone: try await device("phone"))
    }

    /// Every entry under `directory`, with its type and a regular file's content: equal listings
    /// mean nothing there was touched.
    static func listing(of directory: URL) throws -> Set<String> {
        var entries: Set<String> = []
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let name = enumerator?.nextObject() as? String {
            let url = directory.appendingPathComponent(name)
            let type = (try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType)?.rawValue ?? "?"
            let content = type == FileAttributeType.typeRegular.rawValue ? sha256(String(decoding: try Data(contentsOf: url), as: UTF8.self)) : ""
            entries.insert("\(name) \(type) \(content)")
        }
        return entries
    }

    /// The SHA-256 of `text`'s UTF-8, lowercase hex (as drive metadata states it).
    static func sha256(_ text: String) -> String {
        SHA2.SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// Gives `directory` and everything in it (links not followed) to `owner`.
    static func changeOwner(of directory: URL, to owner: uid_t) throws {
        #expect(lchown(directory.path, owner, gid_t(owner == 0 ? 0 : 65534)) == 0)
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let name = enumerator?.nextObject() as? String {
            #expect(lchown(directory.appendingPathComponent(name).path, owner, gid_t(owner == 0 ? 0 : 65534)) == 0, "\(name)")
        }
    }

    /// The posts of the namespace by remote path (`/dir/` + filename), as the station lists them.
    func remotePaths() async throws -> [String] {
        try await laptop.client.listPosts(as: DriveFileMetadata.self).posts
            .map { ($0.metadata?.path ?? "/") + ($0.metadata?.filename ?? "?") }.sorted()
    }

    /// Syncs both devices until neither has anything to do (at most three rounds each), then
    /// expects the same tree on both, each file once on the station.
    func converge(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: String] {
        for _ in 0..<3 {
            try await laptop.syncExpectingSuccess(sourceLocation: sourceLocation)
            try await phone.syncExpectingSuccess(sourceLocation: sourceLocation)
            let laptopPlan = try await laptop.sync().plan(), phonePlan = try await phone.sync().plan()
            if laptopPlan.isInSync && phonePlan.isInSync { break }
        }
        return try await expectSameTree(sourceLocation: sourceLocation)
    }

    /// Expects the same files on both devices, each once on the station; returns the tree.
    @discardableResult
    func expectSameTree(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [String: String] {
        let tree = try laptop.tree()
        #expect(try phone.tree() == tree, sourceLocation: sourceLocation)
        let remote = try await remotePaths()
        #expect(remote == tree.keys.map { "/" + $0 }.sorted(), "duplicate or missing posts", sourceLocation: sourceLocation)
        return tree
    }
}
