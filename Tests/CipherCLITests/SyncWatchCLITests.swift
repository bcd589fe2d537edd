// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
import Foundation
import StationEmulator
import TestSupport
import TransportTestSupport
import Testing

/// `cipher sync DIR --watch`: syncs, syncs again on a local change, and stops cleanly (exit 0)
/// on SIGTERM and on SIGINT.
@Suite("cipher CLI: sync --watch", .serialized)
struct SyncWatchCLITests {
    /// Starts a watch of a folder holding one file, and waits for its first upload.
    static func startWatching(_ paired: CipherCLITests.Paired) async throws -> (RunningCLI, URL) {
        let folder = paired.home.url.appendingPathComponent("Drive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("first".utf8).write(to: folder.appendingPathComponent("a.txt"))
        let running = try RunningCLI.start(["sync", folder.path, "--watch", "--debounce", "0.2", "--poll", "1", "--home", paired.home.url.path],
                                           environment: paired.environment)
        let synced = await eventually(timeout: 60) { paired.emulator.manifest.allPosts.count == 1 }
        #expect(synced, "the first run never uploaded")
        return (running, folder)
    }

    @Test func aLocalChangeIsSyncedAndSIGTERMStopsCleanly() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let (running, folder) = try await Self.startWatching(paired)
        try Data("second".utf8).write(to: folder.appendingPathComponent("b.txt"))
        let again = await eventually(timeout: 60) { paired.emulator.manifest.allPosts.count == 2 }
        #expect(again, "the change was never synced")
        running.process.terminate()
        let result = await running.finish()
        #expect(result.status == 0, "\(result.status) \(result.stderr)")
        #expect(result.stderr.contains("stopped watching"), "\(result.stderr)")
        #expect(result.stdout.contains("run 1 (start)") && result.stdout.contains("(local change)"), "\(result.stdout)")
        #expect(result.stdout.contains("done: 1 of 1 actions"), "\(result.stdout)")
        // The lock is free: a plain sync runs at once.
        let after = try await paired.cipher("sync", folder.path)
        #expect(after.status == 0, "\(after.stderr)")
    }

    @Test func SIGINTStopsCleanlyToo() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        let (running, _) = try await Self.startWatching(paired)
        running.process.interrupt()
        let result = await running.finish()
        #expect(result.status == 0, "\(result.status) \(result.stderr)")
    }

    @Test func watchFlagsAreCheckedAndListed() async throws {
        #expect(try await CLIProcess.run(["sync", "dir", "--debounce", "1"]).status == 2)
        #expect(try await CLIProcess.run(["sync", "dir", "--watch", "--poll", "soon"]).status == 2)
        let help = try await CLIProcess.run(["sync", "--help"])
        for flag in ["--watch", "--debounce", "--poll"] { #expect(help.stdout.contains(flag), "\(flag)") }
    }
}
#endif
