import DriveSync
import Foundation
import Manifest
import StationClient
import Transport

// `station-client-bench --sync-files N [--sync-megabytes M]`: DriveSync against the station the
// benchmark set up (the emulator behind the TLS front unless `--scheme http`): an initial sync of N
// files (M MB in all) up, then a sync with nothing changed, then one with one file changed. For
// each: wall time, requests sent (by route), bytes read (`rchar`: every read(2), files and sockets
// alike; `read_bytes`: what reached the storage device).

/// Tallies the requests a client sends by method and path (the CID of `/content/<cid>` left out),
/// where main.swift's `CountingTransport` counts the ones a predicate picks.
final class RouteTally: WrappingTransport {
    let base: any HTTPTransport
    private let counts = Locked([String: Int]())

    init(_ base: any HTTPTransport) { self.base = base }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        var path = request.url.path
        if path.hasPrefix("/content/") { path = "/content/*" }
        if path.hasPrefix("/ipfs/") { path = "/ipfs/*" }
        counts.withLock { $0["\(request.method.rawValue) \(path)", default: 0] += 1 }
        return try await base.send(request, body: body, options: options)
    }

    /// The counts so far, and zero them.
    func take() -> [String: Int] { counts.withLock { counts in defer { counts = [:] }; return counts } }
}

/// Runs the three syncs; `client` is the paired benchmark client, whose credentials a second
/// client with a counting transport and persisted post keys uses.
func runSyncBenchmark(client: StationClient, transport: any HTTPTransport, files: Int, megabytes: Int, directory: URL,
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
    let sync = DriveSync(client: syncClient, folder: folder, options: SyncOptions(deviceName: "bench"))

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
    return initial.report.failures.isEmpty && initial.report.completed.count == files && unchanged.report.completed.isEmpty && noWrites
        && one.report.completed.count == 1
}
