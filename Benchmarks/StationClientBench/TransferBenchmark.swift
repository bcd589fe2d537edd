import DriveSync
import Foundation
import StationClient
import Transport

// `station-client-bench --sync-files N [--sync-megabytes M] --sync-scenario transfers [--transfers 1,2,4,8] [--latency S]`:
// the initial sync of N files (M MB in all) up, once per transfer count, each into a namespace and
// a folder of its own (`bench-transfers-<count>`), so every run publishes every file. Prints the
// wall time, the speed-up over the first count and the peak resident memory of the run (`VmHWM`,
// reset before it). `--latency` makes the spawned emulator wait that long before each answer, as
// the real station's own work per request does (about 0.18 s per file there).

func runTransferBenchmark(client: StationClient, files: Int, megabytes: Int, transfers: [Int], directory: URL,
                          say: @escaping @Sendable (String) -> Void) async throws -> Bool {
    let size = max(1, megabytes * 1_000_000 / max(1, files))
    var pattern = [UInt8](repeating: 0, count: size)
    var first: Double?
    var passed = true
    for count in transfers {
        let folder = directory.appendingPathComponent("transfers-\(count)", isDirectory: true)
        for index in 0..<files {
            let subfolder = folder.appendingPathComponent("folder-\(index / 100)", isDirectory: true)
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
            for offset in stride(from: 0, to: size, by: 8) { pattern[offset] = UInt8(truncatingIfNeeded: index &+ offset &+ count) }
            try Data(pattern).write(to: subfolder.appendingPathComponent("file-\(index).bin"))
        }
        var configuration = client.configuration
        configuration.namespace = "bench-transfers-\(count)"
        configuration.persistsPostKeys = true
        configuration.cacheStore = StationClientConfiguration.defaultCacheStore(for: configuration.keyStore)
        let syncClient = try await StationClient(credentials: await client.credentials, configuration: configuration)
        var options = SyncOptions(deviceName: "bench")
        options.transfers = count
        let sync = DriveSync(client: syncClient, folder: folder, options: options)
        releaseFreeHeap()
        resetPeakRSS()
        let start = ContinuousClock.now
        let report = try await sync.sync()
        let elapsed = ContinuousClock.now - start
        let peak = peakRSS()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        first = first ?? seconds
        let ok = report.failures.isEmpty && report.completed.count == files
        passed = passed && ok
        say(String(format: "transfers %d: %d files of %d bytes in %.2f s (%.2f × the first), %d actions (%d failed), peak RSS %.1f MB",
                   count, files, size, seconds, (first ?? seconds) / seconds, report.completed.count, report.failures.count,
                   Double(peak) / 1e6))
        try? FileManager.default.removeItem(at: folder)
    }
    return passed
}
