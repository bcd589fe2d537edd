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
        let options = SyncOptions(deviceName: "relaunch")
        let first = try await launch(keyStore: keyStore, caches: caches)
        let setupStart = ContinuousClock.now
        let up = try await DriveSync(client: first.client, folder: folder, options: options).sync()
        say(String(format: "relaunch: %d files of %d bytes synced up (%d actions) in %.1f s, app key store + EncryptedFileCacheStore",
                   files, size, up.completed.count, Self.seconds(since: setupStart)))

        let persistent = try await measureRelaunch("(EncryptedFileCacheStore)", keyStore: keyStore, caches: caches, folder: folder,
                                                   options: options)
        // The default cache store of an app's key store: refused, so nothing silently re-downloads.
        let inMemory = try await launch(keyStore: keyStore, caches: nil)
        let refusal = await Self.refusal(of: DriveSync(client: inMemory.client, folder: folder, options: options))
        let refused = refusal?.kind == .cacheStoreNotPersistent
        say("relaunch with the default (in-memory) cache store: \(refused ? "refused (.cacheStoreNotPersistent)" : "NOT refused")")
        var allowing = options
        allowing.allowsNonPersistentState = true
        _ = try await measureRelaunch("(in memory, allowed)", keyStore: keyStore, caches: nil, folder: folder, options: allowing)

        let passed = persistent.content == 0 && persistent.rewrap == 0 && persistent.ok && refused
        say("relaunch: \(passed ? "PASS" : "FAIL") (goal: 0 /content, 0 /rewrap after a relaunch; the in-memory default refused)")
        return passed
    }

    /// A launch of the app: a client loaded from `keyStore`, with a counting transport, and an
    /// `EncryptedFileCacheStore` in `caches` (`nil`: the key store's default, in memory).
    private func launch(keyStore: AppKeyStore, caches: URL?) async throws -> (client: StationClient, counting: RouteTally) {
        let counting = RouteTally(transport)
        // The benchmark client's settings (pins, timeouts), with the app's stores.
        var configuration = client.configuration
        configuration.namespace = "bench-relaunch"
        configuration.keyStore = keyStore
        configuration.transport = counting
        configuration.gateway = IPFSGateway(baseURL: gateway, transport: counting)
        configuration.persistsPostKeys = true
        configuration.cacheStore = caches.map { EncryptedFileCacheStore(directory: $0, keyStore: keyStore) }
            ?? StationClientConfiguration.defaultCacheStore(for: keyStore)
        return (try await StationClient.load(configuration: configuration), counting)
    }

    /// A relaunch and a sync of the unchanged folder: its `/content` and `/rewrap` counts.
    private func measureRelaunch(_ label: String, keyStore: AppKeyStore, caches: URL?, folder: URL, options: SyncOptions) async throws
        -> (content: Int, rewrap: Int, ok: Bool) {
        let launched = try await launch(keyStore: keyStore, caches: caches)
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

    /// The error `sync`'s plan throws, or `nil`.
    private static func refusal(of sync: DriveSync) async -> DriveSyncError? {
        do throws(DriveSyncError) {
            _ = try await sync.plan()
            return nil
        } catch {
            return error
        }
    }
}
