import Foundation
import Manifest
@testable import StationClient
import StationEmulator
import Testing

/// What a process killed mid-transfer leaves behind (it had no chance to clean up) is removed by
/// a later one: upload staging files no process holds a lock on when a client is created and
/// before each publish, day-old partials of a download's target before it downloads. Younger
/// files may belong to a live transfer and stay.
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

    @Test("A publish removes the upload staging files no process holds, and never a live upload's")
    func unlockedUploadsGoLockedOnesStay() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            // Files, not bytes: a publish from a file encrypts into a staging file.
            func publish(_ name: String) async throws -> PublishedPost {
                let file = directory.appendingPathComponent(name)
                try Data(name.utf8).write(to: file)
                return try await client.publish(fileAt: file, metadata: Fixture.drive(name, size: name.utf8.count))
            }
            // A killed process's staging file: its lock went with it. A younger one may be an
            // upload between its creation and its lock, and stays.
            let leftover = staging.appendingPathComponent("cipher-upload-0123456789abcdef")
            let young = staging.appendingPathComponent("cipher-upload-1123456789abcdef")
            for url in [leftover, young] { try Data("ciphertext".utf8).write(to: url) }
            try Self.age(leftover, days: 1 / 24.0 / 60 * 2)
            _ = try await publish("one.txt")
            #expect(try Self.names(staging) == [young.lastPathComponent], "\((try? Self.names(staging)) ?? [])")

            // A publish held at the station: its staging file, made to look old, is locked.
            try FileManager.default.removeItem(at: young)
            rig.emulator.faults.inject(.delay(seconds: 3), route: RequestRoute("POST", path: "/post"))
            let slow = Task { try await publish("two.txt") }
            var live: Set<String> = []
            for _ in 0..<200 where live.isEmpty {
                try await Task.sleep(nanoseconds: 10_000_000)
                live = try Self.names(staging)
            }
            let file = try #require(live.first)
            // Written by now (a few bytes, encrypted at once): the publish waits for the station.
            try await Task.sleep(nanoseconds: 500_000_000)
            try Self.age(staging.appendingPathComponent(file), days: 1)
            // Another publish meanwhile sweeps, as another process would (a lock of another open
            // file description holds against this process too).
            StagedFile.removeStaleUploads(in: staging)
            #expect(try Self.names(staging).contains(file), "\((try? Self.names(staging)) ?? [])")
            _ = try await publish("three.txt")
            #expect(try Self.names(staging).contains(file), "\((try? Self.names(staging)) ?? [])")
            _ = try await slow.value
            #expect(try Self.names(staging).isEmpty)
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
