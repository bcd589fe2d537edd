import DriveSync
import Foundation
import Manifest
import StationClient

/// An app's own key store (not a `FileKeyStore`), as the Keychain is: its items outlive the
/// client, here by being kept across the benchmark's "relaunch".
actor AppKeyStore: KeyStore {
    private var items: [String: [UInt8]] = [:]
    func load(_ name: String) -> [UInt8]? { items[name] }
    func save(_ secret: [UInt8], as name: String) { items[name] = secret }
    func delete(_ name: String) { items.removeValue(forKey: name) }
}

extension SyncScenarios {
    /// The relaunch of an app with its own key store over `files` unchanged files (namespace
    /// `bench-relaunch`): the app passes an `EncryptedFileCacheStore` (its cache key in the app's
    /// key store), syncs the files up, then relaunches (a new client loaded from the key store, a
    /// new cache store over the same directory) and syncs again: the goal is 0 `/content` and 0
    /// `/rewrap`. For comparison, the same relaunch with the cache store such a key store gets by
    /// default (in memory): refused by DriveSync (`.cacheStoreNotPersistent`), and what it would
    /// cost when allowed (`allowsNonPersistentState`).
    func relaunch(files: Int, size: Int, directory: URL) async throws -> Bool {
        let keyStore = AppKeyStore()
        try await keyStore.saveSecret(await client.credentials.encoded(), as: KeyStoreItem.credentials)
        let caches = directory.appendingPathComponent("relaunch-caches", isDirectory: true)
        let folder = directory.appendingPathComponent("relaunch-folder", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var pattern = [UInt8](repeating: 0x33, count: size)
        for index in 0..<files {
            let subfolder = folder.appendingPathComponent("folder-\(index / 100)", isDirectory: true)
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
            pattern[0] = UInt8(truncatingIfNeeded: index)
            pattern[size > 1 ? 1 : 0] = UInt8(truncatingIfNeeded: index >> 8)
            try Data(pattern).write(to: subfolder.appendingPathComponent("file-\(index).bin"))
        }
        /// A launch of the app: a client loaded from the key store, with a counting transport.
        func launch(persistent: Bool) async throws -> (client: StationClient, counting: RouteTally) {
            let counting = RouteTally(transport)
            var configuration = StationClientConfiguration(
                namespace: "bench-relaunch", keyStore: keyStore, transport: counting,
                gateway: IPFSGateway(baseURL: gateway, transport: counting),
                cacheStore: persistent ? EncryptedFileCacheStore(directory: caches, keyStore: keyStore) : nil)
            configuration.temporaryDirectory = client.configuration.temporaryDirectory
            return (try await StationClient.load(configuration: configuration), counting)
        }
        let options = SyncOptions(deviceName: "relaunch")
        let first = try await launch(persistent: true)
        let setupStart = ContinuousClock.now
        let up = try await DriveSync(client: first.client, folder: folder, options: options).sync()
        say(String(format: "relaunch: %d files of %d bytes synced up (%d actions) in %.1f s, app key store + EncryptedFileCacheStore",
                   files, size, up.completed.count, Self.seconds(since: setupStart)))

        func measure(_ label: String, persistent: Bool, options: SyncOptions) async throws -> (content: Int, rewrap: Int, ok: Bool) {
            let launched = try await launch(persistent: persistent)
            let start = ContinuousClock.now
            let report = try await DriveSync(client: launched.client, folder: folder, options: options).sync()
            let elapsed = Self.seconds(since: start)
            let requests = launched.counting.take()
            let content = try await contentDownloads(launched.counting, client: launched.client)
            let rewrap = requests["POST /rewrap", default: 0]
            say(String(format: "relaunch %@: %.2f s, %d actions (%d failed), GET /content %d, POST /rewrap %d",
                       label, elapsed, report.completed.count, report.failures.count, content, rewrap))
            say("  requests: " + requests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            return (content, rewrap, report.completed.isEmpty && report.failures.isEmpty)
        }
        let persistent = try await measure("(EncryptedFileCacheStore)", persistent: true, options: options)

        // The default cache store of an app's key store: refused, so nothing silently re-downloads.
        let inMemory = try await launch(persistent: false)
        var refused = false
        do throws(DriveSyncError) {
            _ = try await DriveSync(client: inMemory.client, folder: folder, options: options).plan()
        } catch where error.kind == .cacheStoreNotPersistent {
            refused = true
        }
        say("relaunch with the default (in-memory) cache store: \(refused ? "refused (.cacheStoreNotPersistent)" : "NOT refused")")
        var allowing = options
        allowing.allowsNonPersistentState = true
        _ = try await measure("(in memory, allowed)", persistent: false, options: allowing)

        let passed = persistent.content == 0 && persistent.rewrap == 0 && persistent.ok && refused
        say("relaunch: \(passed ? "PASS" : "FAIL") (goal: 0 /content, 0 /rewrap after a relaunch; the in-memory default refused)")
        return passed
    }
}
