// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
@testable import CipherCLI
import Foundation
import Manifest
import StationClient
import Testing

/// Issue 44's CLI: `ls` shows where files are, and every flag a user can pass is in some help.
@Suite("cipher ls paths and help", .serialized)
struct WhereFilesAreTests {
    @Test func lsShowsEachFilesFullPath() async throws {
        let paired = try await CipherCLITests.pairedHome(gateway: false)
        defer { paired.cleanup() }
        // Two files of one name in different folders, as another device's sync publishes them.
        let other = try await paired.otherDevice()
        let digest = String(repeating: "ab", count: 32)
        _ = try await other.publish(data: Data("docs".utf8), metadata: DriveFileMetadata(
            filename: "file-044.txt", sizeBytes: 4, createdAt: 1_700_000_000, modifiedAt: 1_700_000_100, path: "/docs/", sha256: digest))
        _ = try await other.publish(data: Data("music".utf8), metadata: DriveFileMetadata(
            filename: "file-044.txt", sizeBytes: 5, createdAt: 1_700_000_000, path: "/music"))
        _ = try await other.publish(data: Data("top".utf8), metadata: DriveFileMetadata(filename: "top.txt", sizeBytes: 3))

        let human = try await paired.cipher("ls")
        #expect(human.status == 0, "\(human.stderr)")
        for path in ["/docs/file-044.txt", "/music/file-044.txt", "/top.txt"] {
            #expect(human.stdout.contains(path), "\(path) in \(human.stdout)")
        }

        let (listed, document) = try await paired.cipherJSON("ls")
        #expect(listed.status == 0, "\(listed.stderr)")
        let posts = try #require(document["posts"] as? [[String: Any]])
        let docs = try #require(posts.first { $0["path"] as? String == "/docs/file-044.txt" })
        #expect(docs["filename"] as? String == "file-044.txt" && docs["size_bytes"] as? Int == 4)
        #expect(docs["modified_at"] as? Int == 1_700_000_100 && docs["sha256"] as? String == digest)
        #expect(docs["created_at"] as? Int == 1_700_000_000 && docs["post_cid"] is String && docs["audience_mode"] as? String == "self")
        let music = try #require(posts.first { $0["path"] as? String == "/music/file-044.txt" })
        #expect(music["sha256"] == nil && music["modified_at"] == nil && music["size_bytes"] as? Int == 5)
        #expect(posts.contains { $0["path"] as? String == "/top.txt" })
    }

    /// Every option of every command is in that command's --help, and the options every command
    /// takes are in the top-level help too.
    @Test func everyOptionIsInSomeHelp() async throws {
        for command in Commands.all {
            let help = command.spec.helpText
            for option in command.spec.options + CommandSpec.globalOptions {
                for name in option.names { #expect(help.contains(name), "\(name) in cipher \(command.spec.name) --help") }
            }
        }
        let overview = try await CLIProcess.run(["--help"])
        #expect(overview.status == 0)
        for option in CommandSpec.globalOptions {
            for name in option.names { #expect(overview.stdout.contains(name), "\(name) in cipher --help") }
        }
        // The process prints what the specs say.
        let sync = try await CLIProcess.run(["sync", "--help"])
        #expect(sync.stdout == SyncCommand.spec.helpText + "\n")
        #expect(sync.stdout.contains("--yes") && sync.stdout.contains("terminal or not"))
        // The exit codes, 8 included.
        #expect(overview.stdout.contains("8 (sync)") && overview.stdout.contains("--json"))
    }

    @Test func exitCodesOfASync() {
        #expect(ExitCode.needsAttention.rawValue == 8)
        #expect(SyncCommand.exitCode(failures: 0, skipped: 0) == .success)
        #expect(SyncCommand.exitCode(failures: 1, skipped: 0) == .incomplete)
        #expect(SyncCommand.exitCode(failures: 0, skipped: 2) == .needsAttention)
        #expect(SyncCommand.exitCode(failures: 1, skipped: 2) == .incomplete)
        #expect(SyncCommand.exitCode(failures: 0, held: 3, skipped: 2) == .waitingForDecision)
        #expect(SyncCommand.exitCode(failures: 1, held: 3, skipped: 0) == .incomplete)
    }

    @Test func timesLeftRead() {
        #expect(Format.duration(.milliseconds(300)) == "1 s")
        #expect(Format.duration(.seconds(7)) == "7 s")
        #expect(Format.duration(.seconds(125)) == "2 min 5 s")
        #expect(Format.duration(.seconds(7260)) == "2 h 1 min")
    }
}
#endif
