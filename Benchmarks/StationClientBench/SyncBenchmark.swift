import DriveSync
import Foundation
import Manifest
import StationClient
import Transport

// `station-client-bench --sync-files N [--sync-megabytes M]`: DriveSync against the station the
// benchmark set up (the emulator behind the TLS front unless `--scheme http`): an initial sync of N
// files (M MB in all) up, then a sync with nothing changed, then one with one file changed. For
// each: wall time, requests sent (by route), bytes read (`rchar`: every read(2), files and sockets
// alike; `read_bytes`: what reached the storage device). Then two scenarios, each with a PASS/FAIL
// line for its goal (SyncScenarios below): a lost sync state over the N files (`forgetState()`,
// then plan and run: nothing downloaded, nothing to do), and a folder of N files renamed on one
// device (A: one `/post` and one `/post/delete` per file; B: renamed in place, nothing downloaded
// or trashed; both trees equal), and the relaunch of an app with its own key store over N unchanged
// files (RelaunchBenchmark.swift: 0 `/content`, 0 `/rewrap`).

/// Tallies the requests a client sends by method and path (the CID of `/content/<cid>` left out),
/// where main.swift's `CountingTransport` counts the ones a predicate picks.
final class RouteTally: WrappingTransport {
    let base: any HTTPTransport
    private let counts = Locked([String: Int]())
    /// The CIDs of the `GET /content/<cid>` and `GET /ipfs/<cid>` requests so far (the manifest's
    /// among them), for telling content downloads from manifest fetches.
    private let contentCIDs = Locked([String]())

    init(_ base: any HTTPTransport) { self.base = base }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        var path = request.url.path
        for prefix in ["/content/", "/ipfs/"] where path.hasPrefix(prefix) {
            let cid = String(path.dropFirst(prefix.count))
            contentCIDs.withLock { $0.append(cid) }
            path = prefix + "*"
        }
        counts.withLock { $0["\(request.method.rawValue) \(path)", default: 0] += 1 }
        return try await base.send(request, body: body, options: options)
    }

    /// The counts so far, and zero them.
    func take() -> [String: Int] { counts.withLock { counts in defer { counts = [:] }; return counts } }

    /// The content CIDs requested so far, and forget them.
    func takeContentCIDs() -> [String] { contentCIDs.withLock { cids in defer { cids = [] }; return cids } }
}

/// Runs the three syncs; `client` is the paired benchmark client, whose credentials a second
/// client with a counting transport and persisted post keys uses.
func runSyncBenchmark(client: StationClient, transport: any HTTPTransport, gateway: URL, files: Int, megabytes: Int, transfers: Int,
                      directory: URL,
                      say: @escaping @Sendable (String) -> Void) async throws -> Bool {
    let counting = RouteTally(transport)
    var configuration = client.configuration
    configuration.transport = counting
    configuration.persistsPostKeys = true
    // An app's default: encrypted files beside the key store (the sync state goes there too).
    configuration.cacheStore = StationClientConfiguration.defaultCacheStore(for: configuration.keyStore)
    let syncClient = try await StationClient(credentials: await client.credentials, configuration: configuration)
    let folder = directory.appendingPathComponent("sync-folder", isDirectory: true)
    let size = max(1, megabytes * 1_000_000 / max(1, files))
    var pattern = [UInt8](repeating: 0, count: size)
    for index in 0..<files {
        let subfolder = folder.appendingPathComponent("folder-\(index / 100)", isDirectory: true)
        try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
        for offset in stride(from: 0, to: size, by: 8) { pattern[offset] = UInt8(truncatingIfNeeded: index &+ offset) }
        try Data(pattern).write(to: subfolder.appendingPathComponent("file-\(index).bin"))
    }
    say("sync: \(files) files of \(size) bytes in \(folder.path)")
    var syncOptions = SyncOptions(deviceName: "bench")
    syncOptions.transfers = transfers
    let sync = DriveSync(client: syncClient, folder: folder, options: syncOptions)

    func measure(_ label: String) async throws -> (report: SyncReport, requests: [String: Int]) {
        _ = counting.take()
        let before = readCounters() ?? (0, 0)
        let start = ContinuousClock.now
        let progressStep = Locked(-1)
        let report = try await sync.sync { progress in
            // A line per 10 % of the actions: what the progress display shows, ETA included.
            let tenth = progress.totalActions > 0 ? progress.completedActions * 10 / progress.totalActions : 10
            guard progressStep.withLock({ step in defer { step = max(step, tenth) }; return tenth > step }), progress.currentPath == nil
            else { return }
            let rate = progress.bytesPerSecond.map { String(format: "%.1f MB/s", $0 / 1e6) } ?? "-"
            let left = progress.estimatedTimeRemaining.map { "\($0.components.seconds) s left" } ?? "-"
            say("  \(label): \(progress.completedActions)/\(progress.totalActions) actions, \(rate), \(left)")
        }
        let elapsed = ContinuousClock.now - start
        let after = readCounters() ?? (0, 0)
        let requests = counting.take()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let writes = requests.filter { $0.key.hasPrefix("POST") && $0.key != "POST /rewrap" }.values.reduce(0, +)
        say(String(format: "sync %@: %.2f s, %d actions (%d failed), %d requests (%d writes), rchar %.1f MB, read_bytes %.1f MB",
                   label, seconds, report.completed.count, report.failures.count, requests.values.reduce(0, +), writes,
                   Double(after.rchar - before.rchar) / 1e6, Double(after.readBytes - before.readBytes) / 1e6))
        say("  requests: " + requests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        return (report, requests)
    }

    let initial = try await measure("initial")
    let unchanged = try await measure("no change")
    var changed = pattern
    changed[0] ^= 0xff
    try Data(changed).write(to: folder.appendingPathComponent("folder-0/file-0.bin"))
    let one = try await measure("one file changed")
    let noWrites = unchanged.requests.filter { $0.key.hasPrefix("POST") }.isEmpty
    say("sync: no-change sync sent \(noWrites ? "no" : "SOME") write or /rewrap request; one changed file took "
        + "\(one.requests.values.reduce(0, +)) requests")
    let threeSyncs = initial.report.failures.isEmpty && initial.report.completed.count == files && unchanged.report.completed.isEmpty
        && noWrites && one.report.completed.count == 1

    let scenarios = SyncScenarios(client: client, transport: transport, gateway: gateway, say: say)
    let lostState = try await scenarios.lostState(sync: sync, counting: counting, files: files)
    let rename = try await scenarios.renameFolder(files: files, size: size, directory: directory)
    let relaunch = try await scenarios.relaunch(files: files, size: size, directory: directory)
    return threeSyncs && lostState && rename && relaunch
}

/// The lost-state and folder-rename scenarios of the sync benchmark.
struct SyncScenarios {
    let client: StationClient
    let transport: any HTTPTransport
    let gateway: URL
    let say: @Sendable (String) -> Void

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// The content downloads among the requests `counting` saw: `GET /content/<cid>` and gateway
    /// `GET /ipfs/<cid>` of any CID but the manifest's (the manifest CID a listing made now reads,
    /// the namespace being unchanged since).
    func contentDownloads(_ counting: RouteTally, client: StationClient) async throws -> Int {
        let cids = counting.takeContentCIDs()
        _ = counting.take()
        let manifest = try await client.listPosts(as: DriveFileMetadata.self).manifestCID
        _ = counting.take()
        _ = counting.takeContentCIDs()
        return cids.filter { $0 != manifest }.count
    }

    /// After a sync, the device forgets its sync state and plans and runs again: every file's
    /// post states its SHA-256, so each is recognised without downloading and nothing is to do.
    func lostState(sync: DriveSync, counting: RouteTally, files: Int) async throws -> Bool {
        try await sync.forgetState()
        _ = counting.take()
        _ = counting.takeContentCIDs()
        let start = ContinuousClock.now
        let plan = try await sync.plan()
        let planned = Self.seconds(since: start)
        let report = try await sync.run(plan)
        let elapsed = Self.seconds(since: start)
        let requests = counting.take()
        let downloads = try await contentDownloads(counting, client: sync.client)
        say(String(format: "lost state over %d files: %.2f s (plan %.2f s), %d actions planned, %d completed, %d content downloads",
                   files, elapsed, planned, plan.actions.count, report.completed.count, downloads))
        say("  requests: " + requests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let passed = downloads == 0 && plan.actions.isEmpty && report.completed.isEmpty && report.failures.isEmpty
        say("lost state: \(passed ? "PASS" : "FAIL") (goal: 0 downloads, 0 actions)")
        return passed
    }

    /// A device of its own: a client with the benchmark client's credentials and a counting
    /// transport (the gateway's requests counted too) over the namespace `bench-rename`, and a
    /// folder `rename-<name>`.
    func device(_ name: String, directory: URL) async throws -> (sync: DriveSync, counting: RouteTally) {
        let counting = RouteTally(transport)
        var configuration = client.configuration
        configuration.transport = counting
        configuration.gateway = IPFSGateway(baseURL: gateway, transport: counting)
        configuration.namespace = "bench-rename"
        configuration.persistsPostKeys = true
        configuration.cacheStore = StationClientConfiguration.defaultCacheStore(for: configuration.keyStore)
        let deviceClient = try await StationClient(credentials: await client.credentials, configuration: configuration)
        let folder = directory.appendingPathComponent("rename-\(name)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return (DriveSync(client: deviceClient, folder: folder, options: SyncOptions(deviceName: name)), counting)
    }

    /// The regular files under `root` by relative path, `.cipher-sync` left out.
    static func tree(_ root: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let base = root.standardizedFileURL.resolvingSymlinksInPath().path
        guard let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return files }
        for case let url as URL in walk {
            if url.lastPathComponent == ".cipher-sync" { walk.skipDescendants(); continue }
            guard try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else { continue }
            let path = url.standardizedFileURL.resolvingSymlinksInPath().path
            files[String(path.dropFirst(base.count + 1))] = try Data(contentsOf: url)
        }
        return files
    }

    /// The files under `.cipher-sync/trash` of `folder`.
    static func trashEntries(_ folder: URL) -> Int {
        let trash = folder.appendingPathComponent(".cipher-sync/trash")
        guard let walk = FileManager.default.enumerator(at: trash, includingPropertiesForKeys: [.isRegularFileKey]) else { return 0 }
        return walk.compactMap { ($0 as? URL).flatMap { try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile } }
            .filter { $0 }.count
    }

    /// Device A syncs `album/` of `files` files up, device B syncs them down; A renames the folder
    /// to `album-renamed/` and syncs, then B syncs.
    func renameFolder(files: Int, size: Int, directory: URL) async throws -> Bool {
        let a = try await device("device-a", directory: directory)
        let b = try await device("device-b", directory: directory)
        let album = a.sync.folder.appendingPathComponent("album", isDirectory: true)
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        var pattern = [UInt8](repeating: 0x5a, count: size)
        for index in 0..<files {
            for offset in stride(from: 0, to: size, by: 8) { pattern[offset] = UInt8(truncatingIfNeeded: index &+ offset &+ 1) }
            pattern[0] = UInt8(truncatingIfNeeded: index)
            pattern[size > 1 ? 1 : 0] = UInt8(truncatingIfNeeded: index >> 8)
            try Data(pattern).write(to: album.appendingPathComponent("photo-\(index).bin"))
        }
        let setupStart = ContinuousClock.now
        let upA = try await a.sync.sync()
        let downB = try await b.sync.sync()
        say(String(format: "rename: album/ of %d files of %d bytes, A synced up (%d actions) and B down (%d actions) in %.1f s",
                   files, size, upA.completed.count, downB.completed.count, Self.seconds(since: setupStart)))
        _ = a.counting.take()
        _ = b.counting.take()
        _ = b.counting.takeContentCIDs()

        try FileManager.default.moveItem(at: album, to: a.sync.folder.appendingPathComponent("album-renamed", isDirectory: true))
        var start = ContinuousClock.now
        let renamedA = try await a.sync.sync()
        let secondsA = Self.seconds(since: start)
        let requestsA = a.counting.take()
        let posts = requestsA["POST /post", default: 0], deletes = requestsA["POST /post/delete", default: 0]
        let movesA = renamedA.completed.filter { $0.kind == .move }.count
        say(String(format: "rename A (album/ → album-renamed/): %.2f s, %d actions (%d moves, %d failed), POST /post %d, POST /post/delete %d "
                   + "(%.2f and %.2f per file)", secondsA, renamedA.completed.count, movesA, renamedA.failures.count, posts, deletes,
                   Double(posts) / Double(files), Double(deletes) / Double(files)))
        say("  requests: " + requestsA.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))

        start = ContinuousClock.now
        let renamedB = try await b.sync.sync()
        let secondsB = Self.seconds(since: start)
        let requestsB = b.counting.take()
        let downloadsB = try await contentDownloads(b.counting, client: b.sync.client)
        let downloadActionsB = renamedB.completed.filter { $0.kind == .download }.count
        let movesB = renamedB.completed.filter { $0.kind == .move }.count
        let trashB = Self.trashEntries(b.sync.folder)
        say(String(format: "rename B: %.2f s, %d actions (%d moves, %d downloads, %d failed), %d content downloads, %d trash entries",
                   secondsB, renamedB.completed.count, movesB, downloadActionsB, renamedB.failures.count, downloadsB, trashB))
        say("  requests: " + requestsB.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        let treeA = try Self.tree(a.sync.folder), treeB = try Self.tree(b.sync.folder)
        let equal = treeA == treeB && treeA.count == files && treeA.keys.allSatisfy { $0.hasPrefix("album-renamed/") }
        say("rename: trees \(equal ? "equal" : "DIFFER") (A \(treeA.count) files, B \(treeB.count))")
        let passed = renamedA.failures.isEmpty && renamedB.failures.isEmpty && posts <= files && deletes <= files
            && downloadsB == 0 && downloadActionsB == 0 && trashB == 0 && equal
        say("rename: \(passed ? "PASS" : "FAIL") (goal: A ≤ 1 /post and ≤ 1 /post/delete per file; B 0 downloads, 0 trash entries; trees equal)")
        return passed
    }
}
