// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
import StationEmulator
import TestSupport
import TransportTestSupport
import Testing

/// A `cipher` run that the test interrupts: started, signalled while it works, then awaited.
struct RunningCLI {
    let process: Process
    let stdout: PipeReader
    let stderr: PipeReader

    /// Starts `cipher arguments…` with `environment` added to a clean one.
    static func start(_ arguments: [String], environment: [String: String]) throws -> RunningCLI {
        let launched = try CLIProcess.launch(arguments, environment: environment)
        try? launched.stdin.fileHandleForWriting.close()
        return RunningCLI(process: launched.process, stdout: PipeReader(launched.stdout), stderr: PipeReader(launched.stderr))
    }

    /// Waits for the process to end and returns what it printed.
    func finish() async -> CLIResult {
        let out = await stdout.result()
        let err = await stderr.result()
        process.waitUntilExit()
        // A process killed by the signal (no handler) reports the signal number, not 128 + it.
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return CLIResult(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }
}

/// Ctrl-C in the middle of `cipher put` and `cipher get`: the command is cancelled, the SDK's
/// cleanup runs (nothing in `TMPDIR`: a publish stages nothing; no partial beside the target),
/// leftovers of a killed process of an earlier version are removed on the next run, and a post
/// whose body was sent before the interrupt shows in the next listing.
@Suite("cipher CLI: interrupts", .serialized)
struct InterruptTests {
    static let sigint: Int32 = 2
    static let sigterm: Int32 = 15

    static func names(in directory: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?.sorted() ?? []
    }

    /// The bytes `process` has read so far (`/proc/<pid>/io`'s `rchar`); `nil` where there is none.
    static func bytesRead(by process: Process) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("rchar:") {
            return Int64(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Waits until `process` has read at least `byteCount` bytes (a publish reads its file three
    /// times: for the tag, the body's digest, and the upload); where no `/proc` tells, waits 5 s.
    static func waitUntil(_ process: Process, hasRead byteCount: Int64) async -> Bool {
        guard bytesRead(by: process) != nil else {
            try? await Task.sleep(nanoseconds: 5_000_000_000)
            return true
        }
        return await eventually(timeout: 60) { (bytesRead(by: process) ?? 0) >= byteCount }
    }

    static func age(_ url: URL, days: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -days * 86_400)], ofItemAtPath: url.path)
    }

    @Test func anInterruptedPutLeavesNoStagingFileAndTheNextListingShowsThePost() async throws {
        let paired = try await CipherCLITests.pairedHome()
        defer { paired.cleanup() }
        let temporary = try TemporaryDirectory(prefix: "cipher-tmpdir")
        defer { temporary.cleanup() }
        var rng = SplitMix64(seed: 14)
        let file = paired.home.file("big.bin")
        try Data(rng.bytes(4 << 20)).write(to: file)
        // What killed processes left: one stale (two days old), one fresh (maybe a live upload), one not ours.
        let stale = temporary.file("cipher-upload-00112233445566ff"), fresh = temporary.file("cipher-upload-aabbccddeeff0011")
        let foreign = temporary.file("cipher-upload-notours")
        for url in [stale, fresh, foreign] { try Data("x".utf8).write(to: url) }
        try Self.age(stale, days: 2)
        try Self.age(foreign, days: 2)
        let fixtures = Set([fresh, foreign].map(\.lastPathComponent))

        // The station takes its time to answer, so the interrupt comes after the body was sent
        // and, even on a busy machine, before the answer.
        let post = RequestRoute("POST", path: "/post")
        paired.emulator.faults.inject(.delay(seconds: 15), route: post)
        let running = try RunningCLI.start(["put", file.path, "--home", paired.home.url.path],
                                           environment: paired.environment.merging(["TMPDIR": temporary.url.path]) { $1 })
        // The third pass over the file is the upload: once it is read, the body is on its way.
        #expect(await Self.waitUntil(running.process, hasRead: 3 * Int64(4 << 20)), "the upload never started")
        #expect(Self.names(in: temporary.url).allSatisfy { fixtures.contains($0) }, "a publish stages nothing")
        try await Task.sleep(nanoseconds: 1_000_000_000)
        running.process.interrupt()
        let result = await running.finish()
        #expect(result.status == 128 + Self.sigint, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("interrupted"))
        // The stale leftover was removed at start; the others stay, and nothing was added.
        #expect(Set(Self.names(in: temporary.url)) == fixtures)

        // The station finishes the request it received; the next listing shows what it holds.
        #expect(await eventually(timeout: 60) { paired.emulator.requests.count(post) == 1 })
        let accepted = paired.emulator.requests.entries.filter { $0.path == "/post" && $0.status == 200 }.count
        let (ls, listing) = try await paired.cipherJSON("ls")
        #expect(ls.status == 0, "\(ls.stderr)")
        let posts = try #require(listing["posts"] as? [[String: Any]])
        #expect(posts.count == accepted)
        #expect(posts.allSatisfy { $0["filename"] as? String == "big.bin" })
        #expect(accepted == 1)
    }

    /// Two Ctrl-Cs in a row: the second exits at once, before the command's task can unwind,
    /// and nothing of the upload is left (nothing was staged).
    @Test func aSecondInterruptExitsAtOnceAndLeavesNothing() async throws {
        let paired = try await CipherCLITests.pairedHome()
        defer { paired.cleanup() }
        let temporary = try TemporaryDirectory(prefix: "cipher-tmpdir")
        defer { temporary.cleanup() }
        let file = paired.home.file("big.bin")
        // Large enough that encrypting and hashing it (which a cancellation does not cut short:
        // the task ends only after) is still under way when both signals arrive.
        try Data(count: 64 << 20).write(to: file)
        // And should it get that far, the station holds the upload's answer.
        paired.emulator.faults.inject(.delay(seconds: 30), route: RequestRoute("POST", path: "/post"))
        let running = try RunningCLI.start(["put", file.path, "--home", paired.home.url.path],
                                           environment: paired.environment.merging(["TMPDIR": temporary.url.path]) { $1 })
        // The encryption is under way.
        #expect(await Self.waitUntil(running.process, hasRead: 16 << 20), "the publish never started")
        // Back to back, while the task is still encrypting or hashing: SIGINT then SIGTERM (two
        // SIGINTs sent at once can reach the process as one, as a pending signal is not queued
        // twice). Whichever is handled second exits at once (and should the task have unwound
        // first, its own cleanup ran): either way nothing of the upload is left.
        running.process.interrupt()
        running.process.terminate()
        let result = await running.finish()
        #expect([128 + Self.sigint, 128 + Self.sigterm].contains(result.status), "\(result.status) \(result.stderr)")
        #expect(Self.names(in: temporary.url).isEmpty, "\(Self.names(in: temporary.url))")
    }

    @Test func anInterruptedGetLeavesNoPartialAndTheNextGetWorks() async throws {
        let paired = try await CipherCLITests.pairedHome()
        defer { paired.cleanup() }
        var rng = SplitMix64(seed: 15)
        let original = Data(rng.bytes(1 << 20))
        let file = paired.home.file("photo.bin")
        try original.write(to: file)
        let (put, posted) = try await paired.cipherJSON("put", file.path)
        #expect(put.status == 0, "\(put.stderr)")
        let cid = try #require(posted["post_cid"] as? String)

        let output = try TemporaryDirectory(prefix: "cipher-get")
        defer { output.cleanup() }
        let target = output.file("got.bin")
        // A killed process's partial for this target, two days old, and one of today.
        let stale = output.file(".got.bin.0123456789abcdef.sealed"), recent = output.file(".got.bin.fedcba9876543210.sealed")
        for url in [stale, recent] { try Data("partial".utf8).write(to: url) }
        try Self.age(stale, days: 2)

        // The station stalls before the content: the partial exists (empty) while the client waits.
        paired.emulator.faults.inject(.delay(seconds: 30), route: RequestRoute("GET", path: "/content/\(cid)"))
        let running = try RunningCLI.start(["get", cid, "-o", target.path, "--home", paired.home.url.path],
                                           environment: paired.environment)
        let partial = await eventually(timeout: 60) {
            Self.names(in: output.url).contains {
                $0.hasPrefix(".got.bin.") && $0.hasSuffix(".sealed") && ![recent, stale].map(\.lastPathComponent).contains($0)
            }
        }
        #expect(partial, "the download never started")
        running.process.interrupt()
        let result = await running.finish()
        #expect(result.status == 128 + Self.sigint, "\(result.status) \(result.stderr)")
        // Nothing but the recent leftover (it may belong to a live download) remains.
        #expect(Self.names(in: output.url) == [recent.lastPathComponent])

        paired.emulator.faults.reset()
        let again = try await paired.cipher("get", cid, "-o", target.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Data(contentsOf: target) == original)
        #expect(Self.names(in: output.url) == [recent.lastPathComponent, "got.bin"])
    }
}
#endif
