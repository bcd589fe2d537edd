import Foundation
import Manifest
import SHA2
@testable import StationClient
import StationEmulator
import Testing
import Transport

/// A publish's body is encrypted again from the file each time it is read, never staged: a
/// transport that asks for it again gets the same bytes from the first one, a file changed while
/// it is sent is refused before the body is whole, and nothing the size of the file is written.
@Suite("Publishing: a body sent again, nothing staged", .serialized)
struct RestartedBodyTests {
    /// Reads a publish's body up to `fraction` of its length, then asks for it again
    /// (``HTTPBodyStream/restarted()``) and sends that reading to the station, hashing what it
    /// sends: what URLSession's `needNewBodyStream` and libcurl's rewind do.
    final class RestartingTransport: WrappingTransport, Sendable {
        let base: any HTTPTransport
        let fraction: Double
        /// The SHA-256 of what went to the station, and the signed header's value.
        let sent = Locked<[(sha256: String, signed: String?)]>([])
        /// The SHA-256 of the first reading when it was read whole (at 100 %).
        let firstWhole = Locked<String?>(nil)
        /// How far the first reading got before the body was asked for again.
        let readBeforeRestart = Locked<Int64>(-1)

        init(base: any HTTPTransport, fraction: Double) {
            self.base = base
            self.fraction = fraction
        }

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            guard let (stream, length) = RestartedBodyTests.postBody(request, body) else {
                return try await base.send(request, body: body, options: options)
            }
            // The first reading is left where it stopped (mid-pass, its reader alive) while the
            // second starts; at 100 % it is read to its end.
            let cut = Int64(Double(length) * fraction)
            var first = SHA256(), read: Int64 = 0
            var reading = stream.makeAsyncIterator()
            while read < cut, let chunk = try await reading.next() {
                first.update(data: chunk)
                read += Int64(chunk.count)
            }
            if read == length, try await reading.next() != nil { throw StationClientError(.invalidResponse, operation: "test", message: "longer than its length") }
            readBeforeRestart.withLock { $0 = read }
            if read == length { firstWhole.withLock { $0 = Self.hex(first.finalize()) } }
            let again = try #require(stream.restarted())
            let hasher = Locked(SHA256())
            let recorded = RestartedBodyTests.tapped(again) { chunk in hasher.withLock { $0.update(data: chunk) } }
            let response = try await base.send(request, body: .stream(recorded), options: options)
            sent.withLock { $0.append((Self.hex(hasher.value.finalize()), request.headers["x-cipher-body-sha256"])) }
            return response
        }

        static func hex(_ digest: [UInt8]) -> String { digest.map { String(format: "%02x", $0) }.joined() }
    }

    @Test("Asked for again at 0 %, 50 % and 100 % sent, the body is the same bytes and the post is published once",
          arguments: [0.0, 0.5, 1.0])
    func restartedAt(fraction: Double) async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (paired, staging) = try await rig.pair(stagingIn: directory)
            let restarting = RestartingTransport(base: rig.transport, fraction: fraction)
            let client = try await rig.client(for: paired) { configuration in
                configuration.temporaryDirectory = staging
                configuration.transport = restarting
            }
            let content = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            let source = directory.appendingPathComponent("video.bin")
            try content.write(to: source)
            let post = try await client.publish(fileAt: source, metadata: Fixture.drive("video.bin", size: content.count))

            let sent = restarting.sent.value
            #expect(sent.count == 1)
            #expect(sent.first?.sha256 == sent.first?.signed, "the restarted reading is the body the signature covers")
            if fraction == 1.0 { #expect(restarting.firstWhole.value == sent.first?.sha256) }
            let length = Int64(content.count)
            let stopped = restarting.readBeforeRestart.value
            #expect(fraction == 0 ? stopped == 0 : fraction == 1 ? stopped > length : (stopped > 0 && stopped < length),
                    "the first reading stopped at \(stopped)")
            #expect(rig.count("POST", "/post") == 1)
            #expect(try await client.download(postCID: post.postCID) == content)
            try Fixture.expectEmpty(staging)
        }
    }

    /// Changes the published file in place once half of the body has gone to the station.
    final class ChangingTransport: WrappingTransport, Sendable {
        let base: any HTTPTransport
        let file: URL
        /// The body bytes handed to the station, and the body's length.
        let sent = Locked<Int64>(0)
        let length = Locked<Int64>(0)

        init(base: any HTTPTransport, file: URL) {
            self.base = base
            self.file = file
        }

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            guard let (stream, length) = RestartedBodyTests.postBody(request, body) else {
                return try await base.send(request, body: body, options: options)
            }
            let file = file, sent = sent
            self.length.withLock { $0 = length }
            let changing = RestartedBodyTests.tapped(stream) { chunk in
                let total = sent.withLock { sent -> Int64 in
                    sent += Int64(chunk.count)
                    return sent
                }
                if total >= length / 2, total - Int64(chunk.count) < length / 2 {
                    let writer = try FileHandle(forWritingTo: file)
                    // In a chunk not yet read: its ciphertext differs from the first pass's.
                    try writer.seek(toOffset: 1_400_000)
                    try writer.write(contentsOf: Data([0xFF]))
                    try writer.close()
                }
            }
            return try await base.send(request, body: .stream(changing), options: options)
        }
    }

    @Test("A file changed in place while it is sent is refused with localFile, and nothing is published")
    func changedWhileSent() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (paired, staging) = try await rig.pair(stagingIn: directory)
            let source = directory.appendingPathComponent("draft.txt")
            try Data(repeating: 0x41, count: 1_500_000).write(to: source)
            let changing = ChangingTransport(base: rig.transport, file: source)
            let client = try await rig.client(for: paired) { configuration in
                configuration.temporaryDirectory = staging
                configuration.transport = changing
            }
            let error = await #expect(throws: StationClientError.self) {
                try await client.publish(fileAt: source, metadata: Fixture.drive("draft.txt", size: 1_500_000))
            }
            #expect(error?.kind == .localFile)
            #expect(error?.message.contains("changed") == true, "\(String(describing: error))")
            // The file changed once half the body had gone, and what went after is not the
            // changed file's: the body stopped at the chunk that changed, short of its length.
            let sent = changing.sent.value
            #expect(sent >= changing.length.value / 2 && sent < changing.length.value, "\(sent) of \(changing.length.value)")
            // Never stored, and not sent again (no retry can mend a changed file).
            #expect(rig.count("POST", "/post") <= 1)
            #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.isEmpty)
        }
    }

    /// A `POST /post`'s sized stream body and its length; `nil` for any other request.
    static func postBody(_ request: HTTPRequest, _ body: HTTPRequestBody) -> (HTTPBodyStream, Int64)? {
        guard request.url.path == "/post", case .stream(let stream) = body, let length = stream.length else { return nil }
        return (stream, length)
    }

    /// `stream` with `observe` told each chunk as it is read.
    static func tapped(_ stream: HTTPBodyStream, _ observe: @escaping @Sendable (Data) throws -> Void) -> HTTPBodyStream {
        let reading = Reading(stream.makeAsyncIterator())
        return HTTPBodyStream(length: stream.length, next: {
            let chunk = try await reading.next()
            if let chunk { try observe(chunk) }
            return chunk
        })
    }

    /// An iterator read by one reader at a time, as `HTTPBodyStream` promises: hence unchecked.
    private final class Reading: @unchecked Sendable {
        private var iterator: HTTPBodyStream.AsyncIterator

        init(_ iterator: HTTPBodyStream.AsyncIterator) { self.iterator = iterator }

        func next() async throws -> Data? {
            var current = iterator
            defer { iterator = current }
            return try await current.next()
        }
    }

    /// What this process has written so far through write(2) and its kin, in bytes
    /// (`/proc/self/io`'s `wchar`); `nil` where there is no such file.
    static func bytesWritten() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int64(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    @Test("A 96 MiB file is published, its body asked for again halfway, writing under 1 MiB in all and nothing in the temporary directory")
    func aLargeFileIsNeverStaged() async throws {
        let rig = try StationRig.inProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let (paired, staging) = try await rig.pair(stagingIn: directory)
            let restarting = RestartingTransport(base: rig.transport, fraction: 0.5)
            let peak = Locked(0)
            let client = try await rig.client(for: paired) { configuration in
                configuration.temporaryDirectory = staging
                configuration.transport = restarting
                configuration.publishStageObserver = { _ in
                    peak.withLock { $0 = max($0, (try? FileManager.default.contentsOfDirectory(atPath: staging.path).count) ?? 0) }
                }
            }
            let source = directory.appendingPathComponent("large.bin")
            let size = 96 * 1024 * 1024
            #expect(FileManager.default.createFile(atPath: source.path, contents: nil))
            let handle = try FileHandle(forWritingTo: source)
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()

            // The in-process station keeps what it receives in memory: what this process writes
            // meanwhile is the client's (the suite runs one test at a time).
            let before = Self.bytesWritten()
            let post = try await client.publish(fileAt: source, metadata: Fixture.drive("large.bin", size: size))
            let after = Self.bytesWritten()
            if let before, let after {
                #expect(after - before < 1024 * 1024, "\(after - before) bytes written")
            }
            #expect(restarting.sent.value.count == 1)
            #expect(restarting.sent.value.first?.sha256 == restarting.sent.value.first?.signed)
            #expect(rig.count("POST", "/post") == 1)
            #expect(!post.postCID.isEmpty)
            #expect(peak.value == 0)
            try Fixture.expectEmpty(staging)
        }
    }
}

/// A station that published again between a listing's profile and its manifest read, and dropped
/// the manifest the profile named (another device's publish, as a sync's parallel uploads race).
@Suite("Listing: a manifest gone before it is read")
struct ManifestGoneTests {
    /// Answers the first `GET /content/<gone>` with the station's 404, after publishing one more
    /// post through `other` (so the profile names a new manifest by then).
    final class GoneOnceTransport: WrappingTransport, Sendable {
        let base: any HTTPTransport
        let gone: String
        let other: StationClient
        let answered = Locked(false)

        init(base: any HTTPTransport, gone: String, other: StationClient) {
            self.base = base
            self.gone = gone
            self.other = other
        }

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            guard request.method == .get, request.url.path == "/content/\(gone)",
                  answered.withLock({ answered in defer { answered = true }; return !answered }) else {
                return try await base.send(request, body: body, options: options)
            }
            _ = try await other.publish(data: Data("two".utf8), metadata: Fixture.drive("two.txt", size: 3))
            return HTTPResponse(status: 404, body: .data(Data(#"{"detail":"content not found"}"#.utf8)))
        }
    }

    @Test("The listing reads the profile again once and lists the manifest it names now")
    func listingReadsTheSuccessor() async throws {
        let rig = try StationRig.inProcess()
        let paired = try await rig.pair()
        _ = try await paired.publish(data: Data("one".utf8), metadata: Fixture.drive("one.txt", size: 3))
        let named = try #require(try await paired.profile().manifestCID)
        let goneOnce = GoneOnceTransport(base: rig.transport, gone: named, other: paired)
        // No gateway to fall back to (it may still serve the dropped manifest, a consistent older view).
        let client = try await rig.client(for: paired) {
            $0.transport = goneOnce
            $0.gateway = nil
        }
        let listing = try await client.listPosts(as: DriveFileMetadata.self)
        #expect(goneOnce.answered.value)
        #expect(Set(listing.posts.compactMap(\.metadata?.filename)) == ["one.txt", "two.txt"])
        #expect(listing.manifestCID != named)
        // Through the sequence too (its manifest gone the same way, after a third post).
        let again = GoneOnceTransport(base: rig.transport, gone: try #require(listing.manifestCID), other: paired)
        let sequenceClient = try await rig.client(for: paired) {
            $0.transport = again
            $0.gateway = nil
        }
        var listed = 0
        for try await post in sequenceClient.posts(as: DriveFileMetadata.self) { if case .success = post { listed += 1 } }
        #expect(again.answered.value)
        #expect(listed == 3)
    }
}
