import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a process killed mid-transfer leaves behind (it had no chance to clean up) is removed by
/// a later one: an earlier version's upload staging files no process holds a lock on when a
/// client is created, day-old partials of a download's target before it downloads. Younger files
/// may belong to a live transfer and stay.
@Suite("Leftovers of killed processes")
struct StagingCleanupTests {
    static func age(_ url: URL, days: Double) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -days * 86_400)], ofItemAtPath: url.path)
    }

    static func names(_ directory: URL) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory.path))
    }

    @Test("A client's creation removes day-old cipher-upload-<hex> files and their partials, and only those")
    func staleUploads() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let kept = ["cipher-upload-aaaaaaaaaaaaaaaa", ".cipher-upload-aaaaaaaaaaaaaaaa.0123456789abcdef.partial", "cipher-upload-0123",
                        "cipher-upload-0123456789ABCDEF", ".cipher-upload-0123.0123456789abcdef.partial",
                        ".cipher-upload-0123456789abcdef.0123456789abcdef.sealed", "notes.txt"]
            // A killed process's staging file, and the partial ciphertext of one it was still encrypting.
            let killed = ["cipher-upload-0123456789abcdef", ".cipher-upload-1123456789abcdef.0123456789abcdef.partial"]
            for name in kept + killed {
                try Data("x".utf8).write(to: directory.appendingPathComponent(name))
            }
            for name in kept.dropFirst(2) + killed { try Self.age(directory.appendingPathComponent(name), days: 2) }
            let store = InMemoryKeyStore()
            _ = try await rig.pair(keyStore: store, temporaryDirectory: directory)
            #expect(try Self.names(directory) == Set(kept))
            // Loading from the store (an app's next start) sweeps too.
            let stale = directory.appendingPathComponent("cipher-upload-fedcba9876543210")
            try Data("x".utf8).write(to: stale)
            try Self.age(stale, days: 1.5)
            _ = try await StationClient.load(configuration: rig.configuration(keyStore: store, temporaryDirectory: directory))
            #expect(try Self.names(directory) == Set(kept))
        }
    }

    @Test("A client's creation removes an earlier version's upload staging file no process holds, never a locked one; a publish stages nothing")
    func unlockedUploadsGoLockedOnesStay() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let staging = directory.appendingPathComponent("staging")
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
            let store = InMemoryKeyStore()
            _ = try await rig.pair(keyStore: store, temporaryDirectory: staging)
            // A killed process's staging file (its lock went with it), and one a live process of
            // an earlier version holds locked; both older than a live upload leaves its file unlocked.
            let leftover = staging.appendingPathComponent("cipher-upload-0123456789abcdef")
            let live = staging.appendingPathComponent("cipher-upload-1123456789abcdef")
            for url in [leftover, live] {
                try Data("ciphertext".utf8).write(to: url)
                try Self.age(url, days: 1)
            }
            // Another open file description: its lock holds against this process too.
            let holder = open(live.path, O_RDONLY | O_CLOEXEC)
            #expect(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0)
            defer { _ = close(holder) }
            let client = try await StationClient.load(configuration: rig.configuration(keyStore: store, temporaryDirectory: staging))
            #expect(try Self.names(staging) == [live.lastPathComponent])

            // A file publish writes nothing to the temporary directory.
            let file = directory.appendingPathComponent("one.txt")
            try Data(count: 300_000).write(to: file)
            _ = try await client.publish(fileAt: file, metadata: Fixture.drive("one.txt", size: 300_000))
            #expect(try Self.names(staging) == [live.lastPathComponent])
        }
    }

    @Test("A download removes its target's day-old partials and leaves younger ones and other files")
    func stalePartials() async throws {
        let client = try await StationRig.pairedInProcess().client
        let post = try await client.publish(data: Data("content".utf8), metadata: Fixture.drive("t.bin", size: 7))
        try await Fixture.withTemporaryDirectory { directory in
            let destination = directory.appendingPathComponent("t.bin")
            let stale = [".t.bin.0123456789abcdef.sealed", ".t.bin.1123456789abcdef.part", ".t.bin.2123456789abcdef.gateway"]
            let kept = [".t.bin.3123456789abcdef.sealed", ".other.bin.0123456789abcdef.sealed", ".t.bin.0123456789abcdef.tmp"]
            for name in stale + kept { try Data("x".utf8).write(to: directory.appendingPathComponent(name)) }
            for name in stale + kept.dropFirst() { try Self.age(directory.appendingPathComponent(name), days: 3) }
            try await client.download(postCID: post.postCID, to: destination)
            #expect(try Data(contentsOf: destination) == Data("content".utf8))
            #expect(try Self.names(directory) == Set(kept + ["t.bin"]))
        }
    }
}
