import ClassicalCrypto
import Foundation
import Manifest
import PQCrypto
@testable import StationClient
import StationEmulator
import Testing
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
            #expect(Self.descriptors(on: source) == 1, "the client's duplicate is closed")
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
                    guard stage == .staging, let writer = try? FileHandle(forWritingTo: source) else { return }
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
            #expect(Self.descriptors(on: source) == 1)
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
}
