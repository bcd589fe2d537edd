import DriveSync
#if canImport(CCurl)
import CurlTransport
#endif
import BenchmarkSupport
import Envelope
import Foundation
import Manifest
import PQCrypto
import Signing
import ClassicalCrypto
import SHA2
import StationClient
import Transport
import URLSessionTransport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OrderedJSON
import ContentAddressing

// station-client-bench: the StationClient against `cipher-station-emulator` in its own process on
// loopback, reached over TLS as a real station is: through `scripts/tls-front.py` with a
// certificate made exactly as upstream's run.py makes it (self-signed, CN=cipherstation), whose
// public key the client pins after learning it on first use.
//
//   swift build -c release --product cipher-station-emulator
//   swift build -c release --product station-client-bench
//   .build/release/station-client-bench [--emulator PATH] [--posts 500] [--reference-posts 500] [--cold-runs 11] [--large-file yes|no] [--width 8]
//                                       [--scheme https|http] [--transport curl|urlsession] [--tls-front scripts/tls-front.py]
//                                       [--attach station-URL,gateway-URL,log-file] [--sync-files 1000 [--sync-megabytes 200] [--sync-scenario all|relaunch|transfers]
//                                        [--transfers 1,2,4,8]] [--latency SECONDS]
//
// `--scheme http` talks to the emulator directly (for comparison). `--transport urlsession` uses
// URLSessionTransport, which cannot pin on Linux (FoundationNetworking has no server-trust hook)
// nor trust a test CA there, so on Linux it runs with `--scheme http` only. Prints the cold listing (rewrap + open + metadata decrypt) and the warm listing (cached keys) in
// posts per second with this process's CPU time per post, the baseline (one ML-DSA-65 sign + one
// envelope open + one metadata open) measured in the same run, and a publish and a download of the
// largest file the station accepts with throughput and peak resident memory measured after the key
// store is unlocked (and, for the publish, the bytes read per byte published, the peak of what it
// wrote in the client's temporary directory, its wchar and write_bytes, and its CPU time), and a followed
// station's listing of 500 posts sharing 5 envelope sets with the number of sets fetched. Exits 1
// when a required figure fails: the warm listing's CPU, the transfers' peak memory, the publish's
// reads, or the followed listing's 5 fetches (the cold ratios are for information).
//
// Environment: BENCH_DIAGNOSE=1 adds the cost of each stage of a listed post measured alone;
// BENCH_LOOP_COLD=N only runs N cold listings (for `perf record -p`); BENCH_MEMORY_PARTS=1 adds the
// peak memory of the download's stages. `--attach` uses an emulator started by hand (valgrind and
// some profilers cannot follow a spawned child). `--sync-files N` runs the DriveSync benchmark
// instead of the others (SyncBenchmark.swift; use it with `--posts 0 --reference-posts 0`).

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

/// Reports `message` and exits 2, stopping `emulator` first when one was started (a spawned
/// emulator would outlive the benchmark otherwise).
func fail(_ message: String, stopping emulator: EmulatorProcess? = nil) -> Never {
    FileHandle.standardError.write(Data("station-client-bench: \(message)\n".utf8))
    emulator?.stop()
    exit(2)
}

/// This process's read counters (`/proc/self/io`): `rchar`, the bytes its read-family system calls
/// returned, page-cache hits included (every byte the SDK reads, whether or not the disk was
/// touched), and `read_bytes`, the bytes it made the kernel fetch from storage. `nil` where there
/// is no `/proc`.
func readCounters() -> (rchar: Int64, readBytes: Int64)? {
    let values = ioCounters()
    guard let rchar = values["rchar"], let readBytes = values["read_bytes"] else { return nil }
    return (rchar, readBytes)
}

/// This process's write counters (`/proc/self/io`): `wchar`, the bytes its `write`-family system
/// calls took (files, pipes and sockets alike; not `send(2)`, which is how libcurl writes to its
/// socket), and `write_bytes`, the bytes it dirtied in files to go to storage. `nil` where there is
/// no `/proc`.
func writeCounters() -> (wchar: Int64, writeBytes: Int64)? {
    let values = ioCounters()
    guard let wchar = values["wchar"], let writeBytes = values["write_bytes"] else { return nil }
    return (wchar, writeBytes)
}

/// The lines of `/proc/self/io` by name (empty where there is no `/proc`).
func ioCounters() -> [Substring: Int64] {
    #if os(Linux)
    guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return [:] }
    var values: [Substring: Int64] = [:]
    for line in io.split(separator: "\n") {
        let parts = line.split(separator: ":")
        if parts.count == 2 { values[parts[0]] = Int64(parts[1].trimmingCharacters(in: .whitespaces)) }
    }
    return values
    #else
    return [:]
    #endif
}

/// The peak total size of the files under a directory, sampled every 5 ms on a thread of its own
/// from creation until `stop()`, with that thread's own CPU time (for leaving it out of the
/// process's).
final class DirectoryPeak: @unchecked Sendable {
    private let lock = NSLock()
    private var running = true
    private var peak: Int64 = 0
    private var samplerCPU = 0.0

    init(of directory: URL) {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let size = Self.totalSize(of: directory)
                var now = timespec()
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
                lock.withLock {
                    peak = max(peak, size)
                    samplerCPU = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
                }
                usleep(5_000)
            }
        }
    }

    /// Stops sampling; the peak in bytes and the sampler's CPU seconds so far.
    func stop() -> (peak: Int64, samplerCPU: Double) {
        lock.withLock {
            running = false
            return (peak, samplerCPU)
        }
    }

    static func totalSize(of directory: URL) -> Int64 {
        guard let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.fileSizeKey]) else { return 0 }
        var total: Int64 = 0
        for case let file as URL in files {
            total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        return total
    }
}

/// This process's user + system CPU time in seconds.
func cpuSeconds() -> Double {
    let split = cpuSplit()
    return split.user + split.system
}

/// This process's user and system CPU time in seconds, separately.
func cpuSplit() -> (user: Double, system: Double) { ResourceUsage.cpuSeconds() }

/// Resets the kernel's peak-RSS mark for this process (Linux `clear_refs` 5; elsewhere the peak
/// is the process's).
func resetPeakRSS() {
    #if os(Linux)
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    #else
    // Darwin has no way to reset the peak; it stays the process's.
    #endif
}

/// Hands the heap's free memory back to the system (glibc keeps freed pages of large listings;
/// Darwin's allocator returns them itself), so a later peak measures what comes after.
func releaseFreeHeap() {
    #if canImport(Glibc)
    // `malloc_trim` is in <malloc.h>, which the Glibc module does not import; look it up.
    typealias Trim = @convention(c) (Int) -> Int32
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }
    #elseif canImport(Darwin)
    // Nothing to do: libmalloc returns free pages by itself.
    #endif
}

/// A size line of `/proc/self/status` (`VmRSS:`, `VmHWM:`) in bytes; nil where there is none.
func procStatusBytes(_ field: String) -> Int? {
    #if os(Linux)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    return status.split(separator: "\n").first { $0.hasPrefix(field) }.map { (Int($0.filter(\.isNumber)) ?? 0) * 1024 }
    #else
    return nil
    #endif
}

/// This process's resident set now, in bytes (`VmRSS`; 0 where not available).
func currentRSS() -> Int { procStatusBytes("VmRSS:") ?? 0 }

/// The peak resident set since the last reset, in bytes (`VmHWM`; the process's peak where there is
/// no `/proc`).
func peakRSS() -> Int { procStatusBytes("VmHWM:") ?? ResourceUsage.peakResidentBytes() }

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// Runs `cipher-station-emulator` on ephemeral loopback ports and reads its URLs and PINs, or
/// attaches to one started by hand (`--attach`, for profilers that cannot spawn processes).
final class EmulatorProcess: @unchecked Sendable {
    let process = Process()
    let station: URL
    let gateway: URL
    let logFile: URL
    let attached: Bool

    init(attachingTo station: URL, gateway: URL, logFile: URL) {
        self.station = station
        self.gateway = gateway
        self.logFile = logFile
        attached = true
    }

    init(executable: URL, directory: URL, latency: Double? = nil) throws {
        attached = false
        logFile = directory.appendingPathComponent("station.log")
        process.executableURL = executable
        process.arguments = ["--port", "0", "--gateway-port", "0", "--log", logFile.path,
                             "--data-dir", directory.appendingPathComponent("station").path]
            + (latency.map { ["--latency", String($0)] } ?? [])
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var station: URL?, gateway: URL?
        var buffer = Data()
        let handle = output.fileHandleForReading
        while station == nil || gateway == nil {
            let chunk = handle.availableData
            if chunk.isEmpty { fail("the emulator exited before printing its URLs") }
            buffer.append(chunk)
            for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") {
                if line.hasPrefix("station: ") { station = URL(string: String(line.dropFirst(9))) }
                if line.hasPrefix("gateway: ") { gateway = URL(string: String(line.dropFirst(9))) }
            }
        }
        self.station = station ?? URL(fileURLWithPath: "/")
        self.gateway = gateway ?? URL(fileURLWithPath: "/")
    }

    /// The newest PIN in the log that is not in `seen`.
    func nextPIN(after seen: Set<String>) async -> String? {
        for _ in 0..<100 {
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            let pins = text.split(separator: "\n").compactMap { line -> String? in
                guard let range = line.range(of: "PAIRING PIN:") else { return nil }
                let digits = line[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber }
                return (4...8).contains(digits.count) ? String(digits) : nil
            }
            if let pin = pins.last, !seen.contains(pin) { return pin }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return nil
    }

    func stop() {
        guard !attached else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

struct Options {
    var emulator: URL
    var posts = 500
    /// Posts of the reference station whose cold listing the main one's is compared with per post
    /// (only when fewer than `posts`; 0 for none).
    var referencePosts = 500
    var coldRuns = 11
    var largeFile = true
    var width = 8
    /// `https` (through the TLS front, pinned) or `http` (the emulator directly).
    var scheme = "https"
    /// `curl` (CurlTransport) or `urlsession` (URLSessionTransport).
    var transport = "curl"
    /// The TLS front script.
    var tlsFront = URL(fileURLWithPath: "scripts/tls-front.py")
    /// `station-URL,gateway-URL,log-file` of an emulator started by hand.
    var attach: (station: URL, gateway: URL, log: URL)?
    /// `--sync-files N`: run the DriveSync benchmark (SyncBenchmark.swift) with N files instead.
    var syncFiles: Int?
    var syncMegabytes = 200
    /// `--sync-scenario relaunch`: only that scenario of the DriveSync benchmark (`all` by default).
    var syncScenario = "all"
    /// `--transfers N[,N…]`: DriveSync's `SyncOptions.transfers` for the sync benchmark; with
    /// `--sync-scenario transfers`, each count of the list in turn (TransferBenchmark.swift).
    var transfers = [SyncOptions.defaultTransfers]
    /// `--latency SECONDS`: the spawned emulator delays every station answer by this much.
    var latency: Double?
}

func parseOptions() -> Options {
    var rest = Array(CommandLine.arguments.dropFirst())
    let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    var options = Options(emulator: here.appendingPathComponent("cipher-station-emulator"))
    while !rest.isEmpty {
        let name = rest.removeFirst()
        guard !rest.isEmpty else { fail("\(name) needs a value") }
        let value = rest.removeFirst()
        switch name {
        case "--emulator": options.emulator = URL(fileURLWithPath: value)
        case "--posts": options.posts = Int(value) ?? options.posts
        case "--reference-posts": options.referencePosts = max(0, Int(value) ?? options.referencePosts)
        case "--cold-runs": options.coldRuns = max(1, Int(value) ?? options.coldRuns)
        case "--large-file": options.largeFile = value != "no"
        case "--width": options.width = max(1, Int(value) ?? options.width)
        case "--scheme":
            guard value == "https" || value == "http" else { fail("--scheme takes https or http") }
            options.scheme = value
        case "--tls-front": options.tlsFront = URL(fileURLWithPath: value)
        case "--sync-files": options.syncFiles = max(1, Int(value) ?? 1000)
        case "--sync-megabytes": options.syncMegabytes = max(1, Int(value) ?? 200)
        case "--sync-scenario":
            guard ["all", "relaunch", "transfers"].contains(value) else { fail("--sync-scenario takes all, relaunch or transfers") }
            options.syncScenario = value
        case "--transfers":
            let counts = value.split(separator: ",").compactMap { Int($0) }.filter { (1...16).contains($0) }
            guard !counts.isEmpty else { fail("--transfers takes counts from 1 to 16, comma-separated") }
            options.transfers = counts
        case "--latency":
            guard let seconds = Double(value), seconds >= 0 else { fail("--latency takes seconds") }
            options.latency = seconds
        case "--transport":
            guard value == "curl" || value == "urlsession" else { fail("--transport takes curl or urlsession") }
            options.transport = value
        case "--attach":
            let parts = value.split(separator: ",").map(String.init)
            guard parts.count == 3, let station = URL(string: parts[0]), let gateway = URL(string: parts[1]) else {
                fail("--attach takes station-URL,gateway-URL,log-file")
            }
            options.attach = (station, gateway, URL(fileURLWithPath: parts[2]))
        default: fail("unknown option \(name)")
        }
    }
    guard options.attach != nil || FileManager.default.isExecutableFile(atPath: options.emulator.path) else {
        fail("no emulator at \(options.emulator.path); build it with `swift build -c release --package-path Benchmarks --product cipher-station-emulator` or pass --emulator")
    }
    if options.scheme == "https", options.attach == nil, !FileManager.default.fileExists(atPath: options.tlsFront.path) {
        fail("no TLS front at \(options.tlsFront.path); run from the package root or pass --tls-front")
    }
    return options
}

/// `scripts/tls-front.py` in front of the emulator's station port, serving a certificate made as
/// run.py makes it; stops when this process closes its standard input (or exits).
final class TLSFrontProcess: @unchecked Sendable {
    let process = Process()
    let url: URL
    private let input = Pipe()

    init(script: URL, backend: URL, certificateDirectory: URL) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--backend-port", String(backend.port ?? 0),
                             "--make-self-signed", certificateDirectory.path, "--exit-on-stdin-eof"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var buffer = Data()
        var port: Int?
        while port == nil {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { fail("the TLS front exited before listening") }
            buffer.append(chunk)
            for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") where line.hasPrefix("LISTENING ") {
                port = Int(line.dropFirst("LISTENING ".count))
            }
        }
        url = URL(string: "https://127.0.0.1:\(port ?? 0)") ?? backend
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// A signer with the client's device identity, as the client signs its calls.
func requestSigner(for credentials: DeviceCredentials) -> RequestSigner {
    RequestSigner(identity: SigningIdentity(uid: credentials.stationUID, deviceUID: credentials.deviceUID,
                                            signingKey: credentials.signingPrivateKey))
}

/// The baseline as a block of the listing's size, timed the way a listing is: one ML-DSA-65 sign
/// of a `/rewrap` request + one envelope open + one metadata open per post, `count` times, and the
/// CPU time of the whole block per post. (Eight distinct envelopes and metadata blobs, cycled.)
struct BaselineBlock {
    let signer: RequestSigner
    let kemKey: any MLKEM768DecapsulationKey
    let items: [(envelope: String, metadata: [UInt8], key: SymmetricKey)]
    let body = Array(#"{"uid":"x","device_uid":"y","post_cid":"QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX","envelopes_cid":null}"#.utf8)

    init(client: StationClient) async throws {
        let credentials = await client.credentials
        signer = requestSigner(for: credentials)
        kemKey = credentials.kemPrivateKey
        var items: [(envelope: String, metadata: [UInt8], key: SymmetricKey)] = []
        for index in 0..<8 {
            let key = SymmetricKey(randomByteCount: 32)
            let metadata = try SecretBox.seal(WireJSON.encode(DriveFileMetadata(
                filename: "file-\(index).txt", mimeType: "text/plain", sizeBytes: 123, createdAt: 1_700_000_000,
                modifiedAt: 1_700_000_000, path: "/")), using: key)
            items.append((try Envelope.seal(key, to: credentials.kemPrivateKey.publicKey), [UInt8](metadata), key))
        }
        self.items = items
    }

    /// Each of the three operations timed alone on the first item, for the breakdown (median of
    /// five samples per operation).
    func parts() throws -> (sign: Double, envelope: Double, metadata: Double) {
        func time(_ iterations: Int, _ work: () throws -> Void) rethrows -> Double {
            var samples: [Double] = []
            for _ in 0..<5 {
                let start = cpuSeconds()
                for _ in 0..<iterations { try work() }
                samples.append((cpuSeconds() - start) / Double(iterations))
            }
            return median(samples)
        }
        let item = items[0]
        let sign = try time(100) { _ = try signer.sign(method: "POST", path: "/rewrap", body: body) }
        let envelope = try time(200) { _ = try Envelope.open(item.envelope, with: kemKey) }
        let metadata = try time(2000) { _ = try SecretBox.open(item.metadata, using: item.key) }
        return (sign, envelope, metadata)
    }

    /// CPU seconds per post for `count` posts.
    func secondsPerPost(count: Int) throws -> Double {
        let start = cpuSeconds()
        for index in 0..<count {
            let item = items[index % items.count]
            _ = try signer.sign(method: "POST", path: "/rewrap", body: body)
            let key = try Envelope.open(item.envelope, with: kemKey)
            _ = try SecretBox.open(item.metadata, using: key)
        }
        return (cpuSeconds() - start) / Double(max(1, count))
    }
}

let options = parseOptions()
let work = FileManager.default.temporaryDirectory.appendingPathComponent("station-client-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: work) }
/// The clients' temporary directory, the bench's own, so that what a publish writes there can be
/// measured (the system's is shared with other processes).
let clientTemporary = work.appendingPathComponent("client-temporary", isDirectory: true)
try FileManager.default.createDirectory(at: clientTemporary, withIntermediateDirectories: true)

/// Removes the work directory (a top-level `defer` does not run on `exit`; a 10,000-post run
/// leaves almost 2 GB there) and exits with `code`.
func finish(_ code: Int32) -> Never {
    try? FileManager.default.removeItem(at: work)
    exit(code)
}
#if canImport(CCurl)
let transport: any HTTPTransport = options.transport == "curl" ? CurlTransport() : URLSessionTransport()
/// Reads a station's key for trust on first use: libcurl can wherever it builds.
let prober: any HTTPTransport = CurlTransport()
#else
// libcurl is absent (iOS, tvOS, watchOS, visionOS): URLSession carries and probes.
let transport: any HTTPTransport = URLSessionTransport()
let prober: any HTTPTransport = transport
#endif

/// A station (an emulator, behind the TLS front unless `--scheme http`) with a paired client
/// and `posts` drive posts.
struct BenchStation {
    let emulator: EmulatorProcess
    let front: TLSFrontProcess?
    let url: URL
    let pins: [PublicKeyFingerprint]
    let client: StationClient
    let posts: Int

    func stop() {
        front?.stop()
        emulator.stop()
    }
}

/// Starts (or attaches to) an emulator in `directory`, pairs a client and publishes `posts` posts
/// four at a time, saying how long the posts took.
func makeStation(posts: Int, directory: URL, attach: (station: URL, gateway: URL, log: URL)?, label: String) async throws -> BenchStation {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let emulator = try attach.map { EmulatorProcess(attachingTo: $0.station, gateway: $0.gateway, logFile: $0.log) }
        ?? EmulatorProcess(executable: options.emulator, directory: directory, latency: options.latency)
    say("\(label)emulator: station \(emulator.station.absoluteString), gateway \(emulator.gateway.absoluteString)")
    // An attached emulator is reached at the URL given (which may be a TLS front started by hand).
    let front = try options.scheme == "https" && attach == nil
        ? TLSFrontProcess(script: options.tlsFront, backend: emulator.station, certificateDirectory: directory.appendingPathComponent("tls"))
        : nil
    let stationURL = front?.url ?? emulator.station
    // Trust on first use, as an app pairing with a self-signed station does: learn the key, pin it.
    var pins: [PublicKeyFingerprint] = []
    if stationURL.scheme == "https" { pins = [try await prober.presentedPublicKey(at: stationURL)] }
    say("\(label)station: \(stationURL.absoluteString) over \(options.transport)\(pins.first.map { ", pinned \($0)" } ?? " (plain http)")")
    let store = try FileKeyStore(directory: directory.appendingPathComponent("keys"), passphrase: "benchmark passphrase")
    let configuration = StationClientConfiguration(
        namespace: "drive", keyStore: store, transport: transport, gateway: IPFSGateway(baseURL: emulator.gateway, transport: transport),
        stationPublicKeyPins: pins, rewrapConcurrency: options.width, persistsOfflineListing: false,
        log: { event in if event.level >= .info { say("client log: \(event.message)") } }, temporaryDirectory: clientTemporary)
    let seenPINs = Set<String>()
    let client = try await StationClient.pair(endpoint: stationURL, deviceName: "bench", configuration: configuration) { _ in
        await emulator.nextPIN(after: seenPINs)
    }

    // Setup: posts with drive metadata, published four at a time.
    let setupStart = Date()
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<posts {
            if index >= 4 { try await group.next() }
            group.addTask {
                let data = Data("post \(index)".utf8)
                _ = try await client.publish(data: data, metadata: DriveFileMetadata(
                    filename: "file-\(index).txt", mimeType: "text/plain", sizeBytes: data.count, createdAt: 1_700_000_000,
                    modifiedAt: 1_700_000_000, path: "/"))
            }
        }
        try await group.waitForAll()
    }
    say(String(format: "\(label)setup: published %d posts in %.1f s", posts, Date().timeIntervalSince(setupStart)))
    return BenchStation(emulator: emulator, front: front, url: stationURL, pins: pins, client: client, posts: posts)
}

// The reference station for the cold listing's scale check (`--reference-posts`, 500 by default
// when --posts is larger): set up first, listed interleaved with the main station's cold runs.
let reference = options.referencePosts > 0 && options.referencePosts < options.posts && options.attach == nil
    ? try await makeStation(posts: options.referencePosts, directory: work.appendingPathComponent("reference"), attach: nil,
                            label: "reference ")
    : nil
defer { reference?.stop() }
let main = try await makeStation(posts: options.posts, directory: work, attach: options.attach, label: "")
let emulator = main.emulator
defer { main.stop() }
let stationURL = main.url
let pins = main.pins
let client = main.client

if let files = options.syncFiles {
    let passed = options.syncScenario == "transfers"
        ? try await runTransferBenchmark(client: client, files: files, megabytes: options.syncMegabytes, transfers: options.transfers,
                                         directory: work, say: say)
        : options.syncScenario == "relaunch"
        ? try await SyncScenarios(client: client, transport: transport, gateway: emulator.gateway, say: say)
            .relaunch(files: files, size: max(1, options.syncMegabytes * 1_000_000 / files), directory: work)
        : try await runSyncBenchmark(client: client, transport: transport, gateway: emulator.gateway, files: files,
                                     megabytes: options.syncMegabytes, transfers: options.transfers[0], directory: work, say: say)
    say(passed ? "station-client-bench --sync-files: PASS" : "station-client-bench --sync-files: FAIL")
    main.stop()
    finish(passed ? 0 : 1)
}

let block = try await BaselineBlock(client: client)
let parts = try block.parts()
say(String(format: "baseline: sign %.0f µs + envelope open %.0f µs + metadata open %.1f µs = %.0f µs CPU",
           parts.sign * 1e6, parts.envelope * 1e6, parts.metadata * 1e6, (parts.sign + parts.envelope + parts.metadata) * 1e6))

/// One listing of `station`: cold (the post keys dropped, so every post is rewrapped) or warm (the
/// keys cached). Either way the in-memory manifest is dropped first, as on a memory warning, so
/// the listing fetches the manifest, checks its CID and reads it.
func listing(cold: Bool, of station: BenchStation = main) async throws -> (cpuPerPost: Double, postsPerSecond: Double, cpu: Double) {
    if cold { await station.client.clearPostKeyCache() }
    await station.client.clearManifestCache()
    let wall = Date()
    let cpu = cpuSeconds()
    let split = cpuSplit()
    let result = try await station.client.listPosts(as: DriveFileMetadata.self)
    let cpuUsed = cpuSeconds() - cpu
    let after = cpuSplit()
    if cold {
        say(String(format: "  cold run of %d: user %.0f µs/post, system %.0f µs/post", station.posts,
                   (after.user - split.user) / Double(station.posts) * 1e6, (after.system - split.system) / Double(station.posts) * 1e6))
    }
    let elapsed = Date().timeIntervalSince(wall)
    guard result.posts.count == station.posts, result.skipped.isEmpty else {
        reference?.stop()
        fail("listing read \(result.posts.count) posts and skipped \(result.skipped.count)", stopping: emulator)
    }
    return (cpuUsed / Double(station.posts), Double(station.posts) / elapsed, cpuUsed)
}

// With BENCH_LOOP_WARM=N: N warm listings (manifest fetched and read each time) and nothing else,
// for a profiler attached to this process (`perf record -p`), then exit.
if let loops = ProcessInfo.processInfo.environment["BENCH_LOOP_WARM"].flatMap({ Int($0) }) {
    _ = try await listing(cold: false)
    say("looping")
    var samples: [Double] = []
    for _ in 0..<loops { samples.append(try await listing(cold: false).cpu) }
    say(String(format: "loop: warm listing of %d: median %.1f ms CPU (min %.1f, max %.1f)", options.posts,
               median(samples) * 1e3, (samples.min() ?? 0) * 1e3, (samples.max() ?? 0) * 1e3))
    reference?.stop()
    main.stop()
    finish(0)
}

// With BENCH_LOOP_COLD=N: N cold listings and nothing else, for a profiler attached to this
// process (`perf record -p`), then exit.
if let loops = ProcessInfo.processInfo.environment["BENCH_LOOP_COLD"].flatMap({ Int($0) }) {
    say("looping")
    let start = cpuSeconds()
    for _ in 0..<loops {
        await client.clearPostKeyCache()
        _ = try await client.listPosts(as: DriveFileMetadata.self)
    }
    say(String(format: "loop: %.0f µs per post in cold listings", (cpuSeconds() - start) / Double(loops * options.posts) * 1e6))
    reference?.stop()
    emulator.stop()
    finish(0)
}
// With BENCH_DIAGNOSE set: the cost of each stage of one listed post, measured alone, to see where
// the cold listing's time beyond the baseline goes.
if ProcessInfo.processInfo.environment["BENCH_DIAGNOSE"] != nil {
    func perCall(_ rounds: Int, _ work: () async throws -> Void) async rethrows -> Double {
        var samples: [Double] = []
        for _ in 0..<5 {
            let start = cpuSeconds()
            for _ in 0..<rounds { try await work() }
            samples.append((cpuSeconds() - start) / Double(rounds))
        }
        return samples.min() ?? 0
    }
    func parallelPerCall(_ rounds: Int, _ work: @escaping @Sendable () async throws -> Void) async throws -> Double {
        var samples: [Double] = []
        for _ in 0..<5 {
            let start = cpuSeconds()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<options.width { group.addTask { for _ in 0..<rounds { try await work() } } }
                try await group.waitForAll()
            }
            samples.append((cpuSeconds() - start) / Double(rounds * options.width))
        }
        return samples.min() ?? 0
    }
    let health = HTTPRequest(method: .get, url: stationURL.appendingPathComponent("health"))
    let pinned = TransferOptions(pinnedPublicKeys: pins)
    let unsigned = try await perCall(200) { _ = try await transport.send(health, body: .none, options: pinned) }
    let unsignedParallel = try await parallelPerCall(50) {
        _ = try await transport.send(health, body: .none, options: pinned)
    }
    let signedFollowers = try await perCall(100) { _ = try await client.followers() }
    let clientHealth = try await perCall(200) { _ = try await client.health() }
    let credentials = await client.credentials
    let signer = requestSigner(for: credentials)
    var heavy = health
    for field in try signer.sign(method: "GET", path: "/health", body: Data()).fields {
        heavy.headers.add(field.name, value: field.value)
    }
    let withHeaders = try await perCall(200) { _ = try await transport.send(heavy, body: .none, options: pinned) }
    say(String(format: "diagnose: GET /health through the client %.0f µs; through the transport with signature headers %.0f µs",
               clientHealth * 1e6, withHeaders * 1e6))
    let sign = try await perCall(100) { _ = try signer.sign(method: "GET", path: "/followers", body: Data()) }
    let parallelSign = try await parallelPerCall(25) { _ = try signer.sign(method: "GET", path: "/followers", body: Data()) }
    let postKey = SymmetricKey(randomByteCount: 32)
    let envelopeHex = try Envelope.seal(postKey, to: credentials.kemPrivateKey.publicKey)
    let rewrapBody = WireJSON.serialize(.object([
        "status": .string("ok"),
        "result": .object(["status": .string("rewrap_ok"), "uid": .string(credentials.stationUID),
                           "device_uid": .string(credentials.deviceUID),
                           "post_cid": .string("QmVwHkGaN7sKa3inX17LBc4W86tzijPVZbN3TTpwpfqXTX"),
                           "envelope": .string(envelopeHex)]),
    ]))
    let decode = try await perCall(2000) { _ = try RewrapResponse.read(rewrapBody) }
    let open = try await perCall(200) { _ = try Envelope.open(envelopeHex, with: credentials.kemPrivateKey) }
    say(String(format: "diagnose: unsigned GET /health %.0f µs sequential, %.0f µs with %d at once", unsigned * 1e6,
               unsignedParallel * 1e6, options.width))
    say(String(format: "diagnose: signed GET /followers %.0f µs; sign alone %.0f µs (%.0f µs with %d at once); so %.0f µs beyond the signature",
               signedFollowers * 1e6, sign * 1e6, parallelSign * 1e6, options.width, (signedFollowers - sign) * 1e6))
    say(String(format: "diagnose: decode a rewrap answer (%d bytes) %.1f µs; open its envelope from hex %.1f µs",
               rewrapBody.count, decode * 1e6, open * 1e6))
}

// The machine is shared and noisy (the baseline alone moves by 2× within a run), so the baseline
// is measured the way the listing is, as the CPU time of a block of as many posts, and the blocks
// are interleaved with the cold runs: block, run, block, run, …, block. Each run's ratio is taken
// against the mean of the blocks just before and after it; the median run is the verdict, and the
// pooled ratio (all runs' CPU over all blocks' CPU) is printed beside it.
var colds: [(cpuPerPost: Double, postsPerSecond: Double, cpu: Double)] = []
var ratios: [Double] = []
// With a reference station, one of its cold listings follows each of the main station's, and
// each main run is compared per post with the reference runs before and after it.
var referenceColds: [Double] = []
if let reference { referenceColds.append(try await listing(cold: true, of: reference).cpuPerPost) }
var scaleRatios: [Double] = []
var blocks: [Double] = [try block.secondsPerPost(count: options.posts)]
for run in 0..<options.coldRuns {
    let result = try await listing(cold: true)
    blocks.append(try block.secondsPerPost(count: options.posts))
    let bracket = (blocks[run] + blocks[run + 1]) / 2
    colds.append(result)
    ratios.append(result.cpuPerPost / bracket)
    say(String(format: "  run %d: baseline block %.0f µs/post before, %.0f µs/post after; cold %.0f µs/post; ratio %.2f", run + 1,
               blocks[run] * 1e6, blocks[run + 1] * 1e6, result.cpuPerPost * 1e6, result.cpuPerPost / bracket))
    if let reference {
        referenceColds.append(try await listing(cold: true, of: reference).cpuPerPost)
        let around = (referenceColds[run] + referenceColds[run + 1]) / 2
        scaleRatios.append(result.cpuPerPost / around)
        say(String(format: "  run %d: reference cold %.0f µs/post before, %.0f µs/post after; %d over %d per post %.2f", run + 1,
                   referenceColds[run] * 1e6, referenceColds[run + 1] * 1e6, options.posts, reference.posts,
                   result.cpuPerPost / around))
    }
}
let pooledRatio = (colds.map(\.cpuPerPost).reduce(0, +) / Double(colds.count))
    / ((blocks.reduce(0, +) - (blocks[0] + blocks[blocks.count - 1]) / 2) / Double(colds.count))
// Warm listings: the keys cached, the manifest fetched, checked and read each time.
var warms: [(cpuPerPost: Double, postsPerSecond: Double, cpu: Double)] = []
for _ in 0..<5 { warms.append(try await listing(cold: false)) }
let cold = colds.sorted { $0.cpuPerPost < $1.cpuPerPost }[colds.count / 2]
let warm = warms.sorted { $0.cpu < $1.cpu }[2]
let coldRatio = median(ratios)
say(String(format: "cold listing of %d: %.0f posts/s, %.0f µs CPU/post; median baseline block %.0f µs/post; median ratio %.2f × baseline (runs %.2f–%.2f; pooled %.2f; quietest run over quietest block %.2f; for information)",
           options.posts, cold.postsPerSecond, cold.cpuPerPost * 1e6, median(blocks) * 1e6, coldRatio,
           ratios.min() ?? 0, ratios.max() ?? 0, pooledRatio,
           (colds.map(\.cpuPerPost).min() ?? 0) / (blocks.min() ?? 1)))
// The scale check: the cold listing's CPU per post within 15% of the reference station's.
let scaleRatio = scaleRatios.isEmpty ? 1 : median(scaleRatios)
if let reference {
    say(String(format: "cold listing per post, %d over %d posts: median %.2f (runs %.2f–%.2f; reference median %.0f µs/post; for information)",
               options.posts, reference.posts, scaleRatio, scaleRatios.min() ?? 0, scaleRatios.max() ?? 0,
               median(referenceColds) * 1e6))
}
// 50 ms up to 5,000 posts, 10 µs per post beyond (100 ms at 10,000).
let warmLimit = max(0.050, Double(options.posts) * 10e-6)
say(String(format: "warm listing of %d (manifest fetched and read): %.0f posts/s, %.1f ms CPU in all (runs %.1f–%.1f; required ≤ %.0f ms)",
           options.posts, warm.postsPerSecond, warm.cpu * 1e3, (warms.map(\.cpu).min() ?? 0) * 1e3,
           (warms.map(\.cpu).max() ?? 0) * 1e3, warmLimit * 1e3))
reference?.stop()

/// Counts the requests whose path `counts` picks (a gateway's answers for given envelope sets,
/// a station's `/rewrap` calls), passing every request on.
struct CountingTransport: WrappingTransport {
    let base: any HTTPTransport
    let counts: @Sendable (_ path: String) -> Bool
    let count = Locked(0)

    /// Counts the gateway's answers for the envelope sets `watched`.
    init(base: any HTTPTransport, watched: Set<String>) {
        self.init(base: base) { path in path.hasPrefix("/ipfs/") && watched.contains(String(path.dropFirst("/ipfs/".count))) }
    }

    init(base: any HTTPTransport, counts: @escaping @Sendable (_ path: String) -> Bool) {
        self.base = base
        self.counts = counts
    }

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        if counts(request.url.path) { count.withLock { $0 += 1 } }
        return try await base.send(request, body: body, options: options)
    }
}

// Fast restarts: a relaunched app (a new StationClient over the same key store, with a new cache
// store over the same files) lists the posts it knows from its persisted keys, without a /rewrap.
// The relaunched client's first listing (its persisted keys read in it) against a warm listing
// of a running app's client, both with an app's default configuration (post keys and the offline
// listing persisted, the cache store beside the FileKeyStore), the manifest fetched and read in
// both, in wall time; runs alternate, medians compared. Loading the client (credentials, stale
// upload files) is timed apart.
let appConfiguration: StationClientConfiguration = {
    var configuration = client.configuration
    configuration.persistsOfflineListing = true
    configuration.cacheStore = StationClientConfiguration.defaultCacheStore(for: configuration.keyStore)
    return configuration
}()
let runningApp = try await StationClient.load(configuration: appConfiguration)
_ = try await runningApp.listPosts(as: DriveFileMetadata.self)
func relaunchedListing() async throws -> (load: Double, listing: Double, rewraps: Int) {
    var configuration = appConfiguration
    let rewraps = CountingTransport(base: configuration.transport) { $0 == "/rewrap" }
    configuration.transport = rewraps
    configuration.cacheStore = StationClientConfiguration.defaultCacheStore(for: configuration.keyStore)
    let start = Date()
    let relaunched = try await StationClient.load(configuration: configuration)
    let loaded = Date()
    let result = try await relaunched.listPosts(as: DriveFileMetadata.self)
    let listed = Date()
    guard result.posts.count == options.posts, result.skipped.isEmpty else {
        fail("the relaunched listing read \(result.posts.count) posts and skipped \(result.skipped.count)", stopping: emulator)
    }
    return (loaded.timeIntervalSince(start), listed.timeIntervalSince(loaded), rewraps.count.value)
}
var relaunchLoads: [Double] = [], relaunchWalls: [Double] = [], warmWalls: [Double] = []
var relaunchRewraps = 0
for _ in 0..<9 {
    let relaunch = try await relaunchedListing()
    relaunchLoads.append(relaunch.load)
    relaunchWalls.append(relaunch.listing)
    relaunchRewraps += relaunch.rewraps
    let warmStart = Date()
    _ = try await runningApp.listPosts(as: DriveFileMetadata.self)
    warmWalls.append(Date().timeIntervalSince(warmStart))
}
let relaunchRatio = median(relaunchWalls) / median(warmWalls)
say(String(format: "relaunched client's listing of %d known posts: %.1f ms wall (runs %.1f–%.1f), %d /rewrap calls; warm listing %.1f ms wall (runs %.1f–%.1f); ratio %.2f (goal ≤ 1.2); loading the client %.1f ms",
           options.posts, median(relaunchWalls) * 1e3, (relaunchWalls.min() ?? 0) * 1e3, (relaunchWalls.max() ?? 0) * 1e3, relaunchRewraps,
           median(warmWalls) * 1e3, (warmWalls.min() ?? 0) * 1e3, (warmWalls.max() ?? 0) * 1e3, relaunchRatio,
           median(relaunchLoads) * 1e3))

/// Gives the station's `/profile` with another `manifest_cid`, passing every other request on.
struct ManifestPointerTransport: WrappingTransport {
    let base: any HTTPTransport
    let manifestCID: String

    func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
        var response = try await base.send(request, body: body, options: options)
        guard request.url.path == "/profile", response.isSuccess, let data = response.body.data,
              case .object(var profile) = try WireJSON.parse(data) else { return response }
        profile["manifest_cid"] = .string(manifestCID)
        response.body = .data(Data(WireJSON.serialize(.object(profile))))
        response.headers.remove("Content-Length")
        return response
    }
}

/// The followed-station case: a follower of the main station lists a manifest of 500 posts
/// that share 5 envelope sets (five posts shared with all followers, each named by 100 entries);
/// the engine must fetch each set once. The manifest is published on the station as a public
/// file, and the follower's `/profile` names it.
func followedListing() async throws -> (posts: Int, skipped: Int, fetches: Int, cpu: Double) {
    let follower = FollowerIdentity.generate(name: "bench-follower")
    _ = try await follower.sendFollowRequest(to: stationURL, transport: transport, pins: pins)
    _ = try await client.approveFollower(uid: follower.uid)
    var shared: [PostEntry] = []
    for index in 0..<5 {
        let data = Data("shared \(index)".utf8)
        let post = try await client.publish(data: data, metadata: DriveFileMetadata(filename: "shared-\(index).txt", sizeBytes: data.count),
                                            namespace: "followed", audience: .allFollowers)
        let manifestCID = try await client.profile().manifestCID ?? ""
        guard let entry = try await client.fetchManifest(cid: manifestCID).posts(in: "followed").first(where: { $0.postCID == post.postCID })
        else { fail("the shared post is not in the manifest", stopping: emulator) }
        shared.append(entry)
    }
    var manifest = Manifest()
    manifest.clients["followed"] = ClientNamespace(posts: (0..<500).map { index in
        var entry = shared[index % 5]
        entry.postCID += "-\(index)"
        return entry
    })
    let crafted = try await client.publishPermanentlyPublic(data: Data(try WireJSON.encode(manifest)), metadata: nil as JSONValue?,
                                                            namespace: "store")
    let counting = CountingTransport(base: transport, watched: Set(shared.compactMap(\.envelopesCID)))
    let reader = FollowedStationReader(
        identity: follower, gateway: IPFSGateway(baseURL: emulator.gateway, transport: counting),
        transport: ManifestPointerTransport(base: transport, manifestCID: crafted.postCID), pins: pins,
        configuration: client.configuration)
    let cpu = cpuSeconds()
    let listing = try await reader.listPosts(of: .endpoint(stationURL), namespace: "followed", as: DriveFileMetadata.self)
    return (listing.posts.count, listing.skipped.count, counting.count.value, cpuSeconds() - cpu)
}
let followed = try await followedListing()
say(String(format: "followed station of 500 posts sharing 5 envelope sets: listed %d (skipped %d) with %d envelope-set fetches, %.1f ms CPU (required: 500 posts, 5 fetches)",
           followed.posts, followed.skipped, followed.fetches, followed.cpu * 1e3))

// Required: the warm listing's CPU, the followed station's fetches and the relaunched listing's
// zero /rewrap calls. The cold ratios and the relaunch's wall-time ratio are
// printed for information (against a real station, the station's crypto sets the wall time).
let listingPassed = warm.cpu <= warmLimit && followed.fetches == 5 && followed.posts == 500 && relaunchRewraps == 0

guard options.largeFile else {
    emulator.stop()
    finish(listingPassed ? 0 : 1)
}

// The largest file the station accepts. The listings' memory (the manifest kept for the next
// listing, the post keys, freed heap pages glibc keeps) is given back first, as an app would on
// a memory warning, so the peaks below are the transfers' (plus what the process holds anyway).
await client.clearManifestCache()
await client.clearPostKeyCache()
// The reference station is stopped; its client's caches go too.
await reference?.client.clearManifestCache()
await reference?.client.clearPostKeyCache()
releaseFreeHeap()
say(String(format: "resident before the transfers: %.1f MiB", Double(currentRSS()) / 1_048_576))
// The metadata names the file's size, so the size is found with metadata of the same length.
let estimate = try client.largestPublishableFileSize(metadata: DriveFileMetadata(filename: "largest.bin", sizeBytes: 0))
let largest = try client.largestPublishableFileSize(metadata: DriveFileMetadata(filename: "largest.bin", sizeBytes: Int(estimate)))
guard String(largest).count == String(estimate).count else { fail("the size estimate changed length", stopping: emulator) }
let source = work.appendingPathComponent("largest.bin")
guard FileManager.default.createFile(atPath: source.path, contents: nil) else {
    fail("cannot create \(source.path)", stopping: emulator)
}
let writer = try FileHandle(forWritingTo: source)
var remaining = Int(largest)
var pattern = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
while remaining > 0 {
    let count = min(remaining, pattern.count)
    try writer.write(contentsOf: pattern.prefix(count))
    remaining -= count
}
try writer.close()
pattern = Data()

resetPeakRSS()
// Reads around the publish: the file's bytes (`rchar`), counted whether the page cache held them or
// not, since every pass the SDK makes costs a read(2) of the whole file either way (on a device
// short of memory, from storage). libcurl's recv(2) of the answers is not counted.
// Writes around the publish: the peak of the client's temporary directory (a staging file would
// show there), and `wchar` and `write_bytes`; and the CPU time of the whole process (user + sys).
let readsBefore = readCounters()
let writesBefore = writeCounters()
let temporaryPeak = DirectoryPeak(of: clientTemporary)
let cpuBefore = cpuSeconds()
let publishStart = Date()
let big = try await client.publish(fileAt: source, metadata: DriveFileMetadata(filename: "largest.bin", sizeBytes: Int(largest)))
let publishSeconds = Date().timeIntervalSince(publishStart)
let publishCPU = cpuSeconds() - cpuBefore
let temporary = temporaryPeak.stop()
let readsAfter = readCounters()
let writesAfter = writeCounters()
let publishPeak = peakRSS()
let copy = work.appendingPathComponent("copy.bin")
resetPeakRSS()
let downloadStart = Date()
try await client.download(postCID: big.postCID, to: copy)
let downloadSeconds = Date().timeIntervalSince(downloadStart)
let downloadPeak = peakRSS()
if ProcessInfo.processInfo.environment["BENCH_MEMORY_PARTS"] != nil {
    let sealed = work.appendingPathComponent("sealed.bin")
    resetPeakRSS()
    try await IPFSGateway(baseURL: emulator.gateway, transport: transport).fetch(cid: big.postCID, to: sealed)
    say(String(format: "  part: gateway fetch to file (with CID check) peak %.1f MiB", Double(peakRSS()) / 1_048_576))
    resetPeakRSS()
    _ = try UnixFS.cid(ofFileAt: sealed)
    say(String(format: "  part: CID of the file peak %.1f MiB", Double(peakRSS()) / 1_048_576))
    resetPeakRSS()
    let opened = work.appendingPathComponent("opened.bin")
    do {
        try SecretBox.openFile(at: sealed, to: opened, using: SymmetricKey(randomByteCount: 32))
    } catch {
        say("  part: openFile with a wrong key refused (\(error))")
    }
    say(String(format: "  part: openFile (tag check only) peak %.1f MiB", Double(peakRSS()) / 1_048_576))
    resetPeakRSS()
    let plain = work.appendingPathComponent("plain.bin")
    try SecretBox.sealFile(at: source, to: plain, using: SymmetricKey(randomByteCount: 32))
    say(String(format: "  part: sealFile peak %.1f MiB", Double(peakRSS()) / 1_048_576))
}
let same = try SHA256.hash(fileAt: source) == SHA256.hash(fileAt: copy)
let mib = Double(largest) / 1_048_576
say(String(format: "publish of %lld bytes (the largest accepted): %.1f MiB/s, peak RSS %.1f MiB (required ≤ 64)",
           largest, mib / publishSeconds, Double(publishPeak) / 1_048_576))
// Three reads per byte are this protocol's floor (README, "The publish's reads"); 4 before issue 36.
var readsPerByte = Double.nan
if let readsBefore, let readsAfter {
    readsPerByte = Double(readsAfter.rchar - readsBefore.rchar) / Double(largest)
    say(String(format: "publish read %.3f bytes per byte published (rchar; required ≤ 3.05, the issue's goal of ≤ 2.05 is below what the body hash allows), %.3f from storage (read_bytes)",
               readsPerByte, Double(readsAfter.readBytes - readsBefore.readBytes) / Double(largest)))
}
say(String(format: "publish CPU %.2f s (user + sys of the process, the temporary-directory sampler's %.0f ms left out)",
           publishCPU - temporary.samplerCPU, temporary.samplerCPU * 1e3))
if let writesBefore, let writesAfter {
    // wchar would count the request's bytes if the transport wrote its socket with write(2) (as
    // OpenSSL's own socket BIO does); libcurl uses send(2), which is not counted.
    say(String(format: "publish wrote at most %lld bytes in the client's temporary directory (peak, sampled every 5 ms); wchar %.3f, write_bytes %.3f bytes per byte published",
               temporary.peak, Double(writesAfter.wchar - writesBefore.wchar) / Double(largest),
               Double(writesAfter.writeBytes - writesBefore.writeBytes) / Double(largest)))
}
say(String(format: "download of %lld bytes: %.1f MiB/s, peak RSS %.1f MiB (required ≤ 64), content %@",
           largest, mib / downloadSeconds, Double(downloadPeak) / 1_048_576, same ? "identical" : "DIFFERENT"))

let readsPassed = readsPerByte.isNaN || readsPerByte <= 3.05
let passed = listingPassed && publishPeak <= 64 << 20 && downloadPeak <= 64 << 20 && same && readsPassed
say(passed ? "station-client-bench: PASS" : "station-client-bench: FAIL")
emulator.stop()
finish(passed ? 0 : 1)
