import ClassicalCrypto
import Foundation
import Manifest
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
import TransportTestSupport
import Transport

/// DriveSync's calls: a file published from, and a download written into, a file the app opened
/// itself, read and written only through the app's descriptor (never a path a link could redirect).
@Suite("Publishing from and downloading into an open file")
struct OpenFileTests {
    /// How many descriptors this process holds on `file` (Linux: `/proc/self/fd`; 1 is the test's handle).
    static func descriptors(on file: URL) -> Int {
        AtomicFileTests.openFiles(under: file).count
    }

    @Test("A file published from an open handle (its offset mid-file) round-trips whole; the handle keeps its offset")
    func publishFromAHandle() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            let source = directory.appendingPathComponent("big.bin")
            let content = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
            try content.write(to: source)
            let handle = try FileHandle(forReadingFrom: source)
            defer { try? handle.close() }
            try handle.seek(toOffset: 4096)
            let uploaded = Locked<[ByteProgress]>([])
            let post = try await client.publish(contentsOf: handle, metadata: Fixture.drive("big.bin", size: content.count)) { progress in
                uploaded.withLock { $0.append(progress) }
            }
            #expect(uploaded.value.last == ByteProgress(completed: Int64(content.count), total: Int64(content.count)))
            #expect(try handle.offset() == 4096)
            #if os(Linux)
            // The client's duplicate closes once nothing holds the request's body: the transport
            // may let go of it just after the answer.
            #expect(await eventually(timeout: 60) { Self.descriptors(on: source) == 1 }, "the client's duplicate is closed")
            #endif
            try Fixture.expectEmpty(staging)
            #expect(try await client.download(postCID: post.postCID) == content)

            // The path form gives the same plaintext back (each post has its own key, so another CID).
            let byPath = try await client.publish(fileAt: source, metadata: Fixture.drive("big.bin", size: content.count))
            #expect(try await client.download(postCID: byPath.postCID) == content)
        }
    }

    @Test("A file that changes after it was measured fails the publish with localFile, by handle or by path; nothing is sent or left")
    func changedWhileSealed() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (paired, staging) = try await rig.pair(stagingIn: directory)
            let source = directory.appendingPathComponent("growing.bin")
            try Data(count: 300_000).write(to: source)
            let client = try await rig.client(for: paired) { configuration in
                configuration.temporaryDirectory = staging
                configuration.publishStageObserver = { stage in
                    // Opened and measured already: the file grows as its encryption starts.
                    guard stage == .sealing, let writer = try? FileHandle(forWritingTo: source) else { return }
                    _ = try? writer.seekToEnd()
                    try? writer.write(contentsOf: Data([1]))
                    try? writer.close()
                }
            }
            let handle = try FileHandle(forReadingFrom: source)
            defer { try? handle.close() }
            let byHandle = await #expect(throws: StationClientError.self) {
                try await client.publish(contentsOf: handle, metadata: Fixture.drive("growing.bin", size: 300_000))
            }
            #expect(byHandle?.kind == .localFile)
            let byPath = await #expect(throws: StationClientError.self) {
                try await client.publish(fileAt: source, metadata: Fixture.drive("growing.bin", size: 300_001))
            }
            #expect(byPath?.kind == .localFile)
            #expect(rig.count("POST", "/post") == 0)
            try Fixture.expectEmpty(staging)
            #if os(Linux)
            #expect(await eventually(timeout: 60) { Self.descriptors(on: source) == 1 })
            #endif
        }
    }

    @Test("A handle on something other than a regular file is refused before anything is staged")
    func notARegularFile() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            let device = try #require(FileHandle(forReadingAtPath: "/dev/null"))
            defer { try? device.close() }
            let error = await #expect(throws: StationClientError.self) {
                try await client.publish(contentsOf: device, metadata: Fixture.drive("null", size: 0))
            }
            #expect(error?.kind == .localFile)
            #expect(error?.message.contains("not a regular file") == true)
            #expect(rig.count("POST", "/post") == 0)
            try Fixture.expectEmpty(staging)
        }
    }

    @Test("A post downloads into an open file that held longer bytes: exactly the plaintext, the handle's offset kept; own and public posts")
    func downloadIntoAHandle() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            let sealed = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            _ = try await client.publish(data: sealed, metadata: Fixture.drive("sealed.bin", size: sealed.count))
            let clear = Data("in the clear".utf8)
            _ = try await client.publishPermanentlyPublic(data: clear, metadata: Fixture.drive("public.txt", size: clear.count))
            let posts = try await client.listPosts(as: DriveFileMetadata.self).posts
            for (name, expected) in [("sealed.bin", sealed), ("public.txt", clear)] {
                let post = try #require(posts.first { $0.metadata?.filename == name })
                #expect(post.isPublic == (name == "public.txt"))
                let target = directory.appendingPathComponent("incoming-\(name)")
                try Data(repeating: 0xEE, count: expected.count + 5000).write(to: target)
                let handle = try FileHandle(forUpdating: target)
                defer { try? handle.close() }
                try handle.seek(toOffset: 3)
                let downloaded = Locked<Int64>(0)
                try await client.download(post, into: handle) { progress in downloaded.withLock { $0 = progress.completed } }
                #expect(try Data(contentsOf: target) == expected, "\(name)")
                #expect(try handle.offset() == 3)
                #expect(downloaded.value == Int64(expected.count), "the plaintext's bytes")
                #if os(Linux)
                #expect(Self.descriptors(on: target) == 1, "the client's duplicate is closed")
                #endif
                try Fixture.expectEmpty(staging)
            }
        }
    }

    @Test("A post that does not open, or whose bytes do not match its CID, writes nothing into the open file and leaves nothing staged")
    func failedDownloadLeavesTheFileAlone() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (client, staging) = try await rig.pair(stagingIn: directory)
            let content = Data(repeating: 7, count: 100_000)
            let published = try await client.publish(data: content, metadata: Fixture.drive("x.bin", size: content.count))
            let post = try #require(try await client.listPosts(as: DriveFileMetadata.self).posts.first)
            let target = directory.appendingPathComponent("incoming")
            let previous = Data("the caller's bytes, untouched".utf8)
            try previous.write(to: target)
            let handle = try FileHandle(forUpdating: target)
            defer { try? handle.close() }

            // The CID's own bytes under a key they do not open with: the tag fails in the first pass.
            await client.postKeys.cache(SymmetricKey(randomByteCount: 32), for: published.postCID)
            let wrongKey = await #expect(throws: StationClientError.self) { try await client.download(post, into: handle) }
            #expect(wrongKey?.kind == .integrity)
            #expect((wrongKey?.underlying as? ClassicalCryptoError)?.kind == .authenticationFailed)
            #expect(try Data(contentsOf: target) == previous)
            try Fixture.expectEmpty(staging)

            // Altered ciphertext (the station's and the gateway's): it does not match the CID.
            var blob = try #require(rig.emulator.block(published.postCID))
            blob[100] ^= 1
            rig.emulator.faults.replaceContent(of: published.postCID, with: blob)
            let altered = await #expect(throws: StationClientError.self) { try await client.download(post, into: handle) }
            #expect(altered?.kind == .integrity)
            #expect(try Data(contentsOf: target) == previous)
            try Fixture.expectEmpty(staging)
            #if os(Linux)
            #expect(Self.descriptors(on: target) == 1)
            #endif
        }
    }
}
