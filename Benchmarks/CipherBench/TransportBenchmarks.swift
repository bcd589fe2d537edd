// CurlTransport is empty where libcurl is absent (iOS, tvOS, watchOS, visionOS).
#if canImport(CCurl)
import CurlTransport
import Foundation
import Transport
import LoopbackHTTP

/// 100 MiB through `CurlTransport` against an in-process loopback server, reporting wall time and
/// the peak resident memory of the whole process during the transfer (`VmHWM`, reset before each
/// run through `/proc/self/clear_refs`). The server's own memory is included, so the figure is an
/// upper bound for the transport. The goal is under 64 MiB for every run.
///
///     swift run -c release cipher-bench --filter transport
func runTransportBenchmarks(options: BenchmarkOptions) {
    let size: Int64 = 100 * 1024 * 1024
    let pattern = PatternBytes(seed: 0xBE7C)
    let runs: [(name: String, run: @Sendable (CurlTransport, LoopbackHTTPServer, URL) async throws -> Void)] = [
        ("transport.upload_100MiB_file", { transport, server, file in
            let response = try await transport.send(HTTPRequest(method: .put, url: server.url("/upload")), body: .file(file))
            try expectUploadAccepted(response, size: size)
        }),
        ("transport.upload_100MiB_multipart", { transport, server, file in
            var form = MultipartForm()
            try form.addField("client", value: "drive")
            try form.addFile("file", filename: "blob.bin", contentsOf: file)
            var request = HTTPRequest(method: .post, url: server.url("/multipart"))
            request.headers["Content-Type"] = form.contentType
            let response = try await transport.send(request, body: form.requestBody())
            guard response.status == 200 else { throw BenchmarkFailure("multipart upload: status \(response.status)") }
        }),
        ("transport.download_100MiB_stream", { transport, server, _ in
            let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/download")), body: .none,
                                                    options: TransferOptions(response: .stream))
            guard case .stream(let stream) = response.body else { throw BenchmarkFailure("no stream") }
            var offset: Int64 = 0
            for try await chunk in stream {
                guard pattern.matches(chunk, offset: offset) else { throw BenchmarkFailure("corrupt download") }
                offset += Int64(chunk.count)
            }
            guard offset == size else { throw BenchmarkFailure("short download: \(offset)") }
        }),
        ("transport.download_100MiB_file", { transport, server, file in
            let target = file.deletingLastPathComponent().appendingPathComponent("download.bin")
            let response = try await transport.send(HTTPRequest(method: .get, url: server.url("/download")), body: .none,
                                                    options: TransferOptions(response: .file(target)))
            guard case .file(_, let count) = response.body, count == size else { throw BenchmarkFailure("short file") }
            try? FileManager.default.removeItem(at: target)
        }),
    ]
    let selected = runs.filter { run in options.filter.map { run.name.hasPrefix($0) } ?? true }
    guard !selected.isEmpty else { return }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cipher-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("upload.bin")
    do {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try pattern.writeFile(file, count: size)
    } catch {
        print("transport benchmarks: cannot prepare \(file.path): \(error)")
        return
    }

    for (name, run) in selected {
        let server: LoopbackHTTPServer
        do {
            let download = TestHandlers.patternDownload(pattern, count: size)
            server = try LoopbackHTTPServer { request, response in
                if request.path == "/download" {
                    try download(request, response)
                } else {
                    var received: Int64 = 0
                    try request.consumeBody { bytes, _ in received += Int64(bytes.count) }
                    try response.send(status: 200, body: Array("\(received)".utf8))
                }
            }
        } catch {
            print("\(name): cannot start the loopback server: \(error)")
            continue
        }
        let transport = CurlTransport()
        let baseline = residentMemory().current
        resetPeakResidentMemory()
        let start = monotonicNanoseconds()
        let outcome = blockingRun { try await run(transport, server, file) }
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let peak = residentMemory().peak
        server.stop()
        if let failure = outcome {
            print("\(name): FAILED: \(failure)")
            continue
        }
        let mebibyte = 1024.0 * 1024
        let throughput = Double(size) / seconds / 1e6
        let withinLimit = peak < 64 * 1024 * 1024
        if options.json {
            print("{\"op\":\"\(name)\",\"seconds\":\(String(format: "%.3f", seconds)),"
                + "\"mb_per_s\":\(String(format: "%.1f", throughput)),"
                + "\"peak_rss_mib\":\(String(format: "%.1f", Double(peak) / mebibyte)),"
                + "\"baseline_rss_mib\":\(String(format: "%.1f", Double(baseline) / mebibyte)),"
                + "\"limit_mib\":64,\"within_limit\":\(withinLimit)}")
        } else {
            print(name.padding(toLength: 36, withPad: " ", startingAt: 0)
                + String(format: "%7.2f s %8.1f MB/s   peak RSS %6.1f MiB (before %5.1f MiB)   %@",
                         seconds, throughput, Double(peak) / mebibyte, Double(baseline) / mebibyte,
                         withinLimit ? "under 64 MiB" : "OVER 64 MiB"))
        }
    }
}

private struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private func expectUploadAccepted(_ response: HTTPResponse, size: Int64) throws {
    guard response.status == 200, response.body.data == Data("\(size)".utf8) else {
        throw BenchmarkFailure("upload: status \(response.status)")
    }
}

/// Runs async work from this synchronous benchmark driver; returns the error it threw, if any.
private func blockingRun(_ work: @escaping @Sendable () async throws -> Void) -> String? {
    let done = DispatchSemaphore(value: 0)
    let failure = FailureBox()
    Task {
        do { try await work() } catch { failure.set("\(error)") }
        done.signal()
    }
    done.wait()
    return failure.get()
}

private final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: String?
    func set(_ text: String) { lock.lock(); value = text; lock.unlock() }
    func get() -> String? { lock.lock(); defer { lock.unlock() }; return value }
}

/// `VmRSS` and `VmHWM` from `/proc/self/status`, in bytes (0 where unavailable: not Linux).
private func residentMemory() -> (current: Int, peak: Int) {
    #if os(Linux)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    func field(_ name: String) -> Int {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
        let digits = line.split(separator: " ").dropFirst().first { Int($0) != nil }
        return (digits.flatMap { Int($0) } ?? 0) * 1024
    }
    return (field("VmRSS"), field("VmHWM"))
    #else
    return (0, 0)
    #endif
}

/// Resets `VmHWM` to the current resident size, so each run reports its own peak (Linux only).
private func resetPeakResidentMemory() {
    #if os(Linux)
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    #else
    // Darwin has no way to reset the peak; it stays the process's.
    #endif
}
#endif
