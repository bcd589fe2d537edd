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
@Suite("Publishing: a body sent again, nothing staged")
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

        init(base: any HTTPTransport, fraction: Double) {
            self.base = base
            self.fraction = fraction
        }

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            guard request.url.path == "/post", case .stream(let stream) = body, let length = stream.length else {
                return try await base.send(request, body: body, options: options)
            }
            let cut = Int64(Double(length) * fraction)
            var first = SHA256(), read: Int64 = 0
            for try await chunk in stream where read < cut {
                let taken = chunk.prefix(Int(min(Int64(chunk.count), cut - read)))
                first.update(data: taken)
                read += Int64(taken.count)
            }
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
            #expect(rig.count("POST", "/post") == 1)
            #expect(try await client.download(postCID: post.postCID) == content)
            try Fixture.expectEmpty(staging)
        }
    }

    /// Changes the published file in place once half of the body has gone to the station.
    final class ChangingTransport: WrappingTransport, Sendable {
        let base: any HTTPTransport
        let file: URL

        init(base: any HTTPTransport, file: URL) {
            self.base = base
            self.file = file
        }

        func send(_ request: HTTPRequest, body: HTTPRequestBody, options: TransferOptions) async throws -> HTTPResponse {
            guard request.url.path == "/post", case .stream(let stream) = body, let length = stream.length else {
                return try await base.send(request, body: body, options: options)
            }
            let file = file
            let sent = Locked<Int64>(0)
            let changing = RestartedBodyTests.tapped(stream) { chunk in
                let total = sent.withLock { sent -> Int64 in
                    sent += Int64(chunk.count)
                    return sent
                }
                if total >= length / 2, total - Int64(chunk.count) < length / 2 {
                    let writer = try FileHandle(forWritingTo: file)
                    try writer.seek(toOffset: 1000)
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
            let client = try await rig.client(for: paired) { configuration in
                configuration.temporaryDirectory = staging
                configuration.transport = ChangingTransport(base: rig.transport, file: source)
            }
            let error = await #expect(throws: StationClientError.self) {
                try await client.publish(fileAt: source, metadata: Fixture.drive("draft.txt", size: 1_500_000))
            }
            #expect(error?.kind == .localFile)
            #expect(error?.message.contains("changed") == true, "\(String(describing: error))")
            // Sent once (no retry can mend a changed file) and never stored.
            #expect(rig.count("POST", "/post") <= 1)
            #expect(try await client.listPosts(as: DriveFileMetadata.self).posts.isEmpty)
        }
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

    @Test("A 96 MiB file is sealed, hashed and read for sending, and again, writing under 1 MiB in all")
    func aLargeFileIsNeverStaged() async throws {
        let (_, client) = try await StationRig.pairedInProcess()
        try await Fixture.withTemporaryDirectory { directory in
            let source = directory.appendingPathComponent("large.bin")
            let size = 96 * 1024 * 1024
            #expect(FileManager.default.createFile(atPath: source.path, contents: nil))
            let handle = try FileHandle(forWritingTo: source)
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()
            let metadata = try StationClient.encodeMetadata(Fixture.drive("large.bin", size: size))

            let before = Self.bytesWritten()
            let prepared = try await client.prepare(PostDraft(content: .file(source), metadataJSON: metadata, namespace: "drive",
                                                              audience: .selfOnly))
            let stream = prepared.form.stream()
            for (reading, body) in [("first", stream), ("restarted", try #require(stream.restarted()))] {
                var hasher = SHA256()
                var count: Int64 = 0
                for try await chunk in body {
                    hasher.update(data: chunk)
                    count += Int64(chunk.count)
                }
                #expect(hasher.finalize() == prepared.bodySHA256, "\(reading)")
                #expect(count == prepared.requestByteCount)
            }
            let after = Self.bytesWritten()
            #if os(Linux)
            let written = try #require(after) - (try #require(before))
            #expect(written < 1024 * 1024, "\(written) bytes written")
            #endif
            _ = (before, after)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["large.bin"])
        }
    }
}
