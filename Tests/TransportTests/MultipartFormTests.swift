import Foundation
import TestSupport
import Testing
@testable import Transport
import SHA2

@Suite("Transport: multipart/form-data")
struct MultipartFormTests {
    /// The exact bytes, written out by hand from RFC 7578 and the layout Python `requests`
    /// (urllib3) produces for the same form.
    @Test func exactBytes() throws {
        var form = try MultipartForm(boundary: "XyZ123")
        try form.addField("metadata", value: "a1b2")
        try form.addField("audience_mode", value: "self")
        try form.addFile("file", filename: "blob.bin", data: Data([0x00, 0xFF, 0x0D, 0x0A]))
        let expected = Data("--XyZ123\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\na1b2\r\n".utf8)
            + Data("--XyZ123\r\nContent-Disposition: form-data; name=\"audience_mode\"\r\n\r\nself\r\n".utf8)
            + Data("--XyZ123\r\nContent-Disposition: form-data; name=\"file\"; filename=\"blob.bin\"\r\n".utf8)
            + Data("Content-Type: application/octet-stream\r\n\r\n".utf8) + Data([0x00, 0xFF, 0x0D, 0x0A])
            + Data("\r\n--XyZ123--\r\n".utf8)
        #expect(try form.encoded() == expected)
        #expect(form.contentLength == Int64(expected.count))
        #expect(form.contentType == "multipart/form-data; boundary=XyZ123")
        guard case .bytes(let body) = form.requestBody() else {
            Issue.record("an in-memory form is sent as bytes")
            return
        }
        #expect(body == expected)
    }

    /// The length from the framing alone equals the built form's, in any order of parts, for
    /// escaped and multi-byte names, and for a fresh form's boundary.
    @Test func lengthFromFramingMatchesBuiltForm() throws {
        #expect(MultipartForm().boundary.utf8.count == MultipartForm.freshBoundaryByteCount)
        #expect(try MultipartForm.contentLength(parts: []) == MultipartForm().contentLength)
        for fileFirst in [true, false] {
            var form = MultipartForm()
            var parts: [MultipartForm.PartLayout] = []
            func addFile() throws {
                try form.addFile("file", filename: "bl\"ob.bin", data: Data(count: 1234))
                parts.append(.file("file", filename: "bl\"ob.bin", byteCount: 1234))
            }
            if fileFirst { try addFile() }
            for (name, value) in [("metadata", "a1b2"), ("client", "née"), ("audience_uids", "[\"u\"]")] {
                try form.addField(name, value: value)
                parts.append(.field(name, value: value))
            }
            if !fileFirst { try addFile() }
            #expect(try MultipartForm.contentLength(parts: parts) == form.contentLength)
            #expect(try MultipartForm.contentLength(parts: parts) == Int64(try form.encoded().count))
        }
        #expect(throws: MultipartForm.Error.invalidName("a\nb")) {
            try MultipartForm.contentLength(parts: [.field("a\nb", value: "")])
        }
    }

    @Test func emptyFormIsJustTheClosingDelimiter() throws {
        let form = try MultipartForm(boundary: "b")
        #expect(try form.encoded() == Data("--b--\r\n".utf8))
        #expect(form.contentLength == 7)
    }

    /// A file part streamed from disk yields the same bytes as the whole body in memory, with the
    /// length known before reading, whatever the chunk size.
    @Test func streamedFilePartMatchesEncodedBytes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var rng = SplitMix64(seed: 9)
        let content = Data(rng.bytes(300_001))
        let file = directory.appendingPathComponent("photo.jpg")
        try content.write(to: file)

        var form = MultipartForm()
        try form.addField("client", value: "drive")
        try form.addFile("file", filename: "photo.jpg", contentType: "image/jpeg", contentsOf: file)
        try form.addField("self_envelope", value: String(repeating: "ab", count: 600))
        #expect(form.boundary.hasPrefix("cipher-"))
        #expect(form.boundary.count == 39)

        let whole = try form.encoded()
        #expect(Int64(whole.count) == form.contentLength)
        #expect(whole.range(of: content) != nil)
        for chunkSize in [7, 1000, 65_536, 10_000_000] {
            let stream = form.stream(chunkSize: chunkSize)
            #expect(stream.length == form.contentLength)
            var streamed = Data()
            for try await chunk in stream {
                #expect(chunk.count <= max(chunkSize, 2000))  // file chunks obey it; header runs are short
                streamed.append(chunk)
            }
            #expect(streamed == whole, "chunk size \(chunkSize)")
            var synchronous = Data()
            try form.forEachChunk(chunkSize: chunkSize) { synchronous.append($0) }
            #expect(synchronous == whole)
        }
        guard case .stream(let body) = form.requestBody() else {
            Issue.record("a form with a file part is streamed")
            return
        }
        #expect(body.length == form.contentLength)
        #expect(try await body.collect(upTo: 400_000) == whole)
    }

    /// A produced part is read anew at every reading of the form (encoding, each stream and each
    /// restart of one), giving the bytes of the same content added from memory; a reading that
    /// yields other than its declared count fails with `contentChanged`.
    @Test func producedPartsAreReadAgainAtEveryReading() async throws {
        let content = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        let readings = Locked(0)
        var form = try MultipartForm(boundary: "produced-boundary")
        try form.addFile("file", filename: "f.bin", byteCount: Int64(content.count)) {
            readings.withLock { $0 += 1 }
            var offset = 0
            return {
                guard offset < content.count else { return nil }
                defer { offset += 3000 }
                return content.subdata(in: offset..<min(offset + 3000, content.count))
            }
        }
        try form.addField("client", value: "drive")
        var reference = try MultipartForm(boundary: "produced-boundary")
        try reference.addFile("file", filename: "f.bin", data: content)
        try reference.addField("client", value: "drive")
        let expected = try reference.encoded()

        #expect(form.contentLength == reference.contentLength)
        #expect(try form.encoded() == expected)
        let stream = form.stream(chunkSize: 1000)
        #expect(stream.isRestartable)
        #expect(try await stream.collect(upTo: 1 << 20) == expected)
        #expect(try await stream.restarted()?.collect(upTo: 1 << 20) == expected)
        #expect(readings.value == 3)

        for (declared, yielded) in [(5, 0), (5, 6)] {
            var wrong = MultipartForm()
            try wrong.addFile("file", filename: "f", byteCount: Int64(declared)) {
                var sent = false
                return {
                    defer { sent = true }
                    return sent ? nil : Data(count: yielded)
                }
            }
            #expect(throws: MultipartForm.Error.contentChanged(part: "file"), "declared \(declared), yielded \(yielded)") {
                try wrong.encoded()
            }
        }
        // What a produced part throws passes through unchanged.
        struct Unreadable: Error, Equatable {}
        var failing = MultipartForm()
        try failing.addFile("file", filename: "f", byteCount: 1) { { throw Unreadable() } }
        #expect(throws: Unreadable()) { try failing.encoded() }
    }

    /// The body's length and hash are fixed when the file is added; a file that changes afterwards
    /// fails reading instead of sending different bytes.
    @Test func changedFilesAreDetected() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("data.bin")
        try Data(count: 5000).write(to: file)
        var form = MultipartForm()
        try form.addFile("file", filename: "data.bin", contentsOf: file)

        try Data(count: 6000).write(to: file)
        #expect(throws: MultipartForm.Error.fileChanged(path: file.path)) { _ = try form.encoded() }
        await #expect(throws: MultipartForm.Error.fileChanged(path: file.path)) {
            _ = try await form.stream().collect(upTo: 100_000)
        }
        try FileManager.default.removeItem(at: file)
        #expect(throws: MultipartForm.Error.self) { _ = try form.encoded() }
        #expect(throws: MultipartForm.Error.self) {
            try form.addFile("file", filename: "x", contentsOf: directory.appendingPathComponent("absent"))
        }
        #expect(throws: MultipartForm.Error.self) { try form.addFile("file", filename: "x", contentsOf: directory) }
    }

    @Test func namesAreEscapedAndLineBreaksRejected() throws {
        var form = try MultipartForm(boundary: "B")
        try form.addField("we\"ird\\name", value: "v")
        #expect(try form.encoded() == Data("--B\r\nContent-Disposition: form-data; name=\"we\\\"ird\\\\name\"\r\n\r\nv\r\n--B--\r\n".utf8))
        #expect(throws: MultipartForm.Error.invalidName("a\r\nb")) { try form.addField("a\r\nb", value: "") }
        #expect(throws: MultipartForm.Error.invalidName("f\n")) { try form.addFile("x", filename: "f\n", data: Data()) }
        #expect(throws: MultipartForm.Error.invalidName("text/plain\r\nX: y")) {
            try form.addFile("x", filename: "f", contentType: "text/plain\r\nX: y", data: Data())
        }
    }

    @Test func boundaryRules() throws {
        for valid in ["a", String(repeating: "z", count: 70), "with space-and'()+_,./:=?"] {
            #expect(try MultipartForm(boundary: valid).boundary == valid)
        }
        for invalid in ["", String(repeating: "z", count: 71), "ends with space ", "semi;colon", "quote\"", "ünicode"] {
            #expect(throws: MultipartForm.Error.invalidBoundary(invalid)) { _ = try MultipartForm(boundary: invalid) }
        }
        var form = try MultipartForm(boundary: "fixed")
        #expect(throws: MultipartForm.Error.boundaryInContent(part: "f")) { try form.addField("f", value: "x--fixed") }
        #expect(throws: MultipartForm.Error.boundaryInContent(part: "g")) {
            try form.addFile("g", filename: "g", data: Data("\r\n--fixed--".utf8))
        }
        #expect(try form.encoded() == Data("--fixed--\r\n".utf8))  // the rejected parts left nothing behind
    }

    // MARK: The station's parser

    struct ParseRequest: Encodable {
        let content_type: String
        let body_path: String
    }

    struct Parsed: Decodable {
        struct Item: Decodable, Equatable {
            let name: String
            let value: String?
            let filename: String?
            let content_type: String?
            let size: Int?
            let sha256: String?
        }
        let items: [Item]
        let error: String?
    }

    /// Runs the station's multipart parser (Starlette over python-multipart, FastAPI's limits) on
    /// the streamed body.
    func parseAsStation(_ form: MultipartForm) async throws -> Parsed {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString).body")
        defer { try? FileManager.default.removeItem(at: path) }
        var body = Data()
        for try await chunk in form.stream(chunkSize: 100_000) { body.append(chunk) }
        try body.write(to: path)
        return try InteropPython.call("starlette_multipart.py",
                                      ParseRequest(content_type: form.contentType, body_path: path.path), as: Parsed.self)
    }

    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func stationParsesAPostForm() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("multipart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var rng = SplitMix64(seed: 2024)
        let ciphertext = rng.bytes(1024 * 1024 + 17)
        let file = directory.appendingPathComponent("post.bin")
        try Data(ciphertext).write(to: file)
        let metadata = rng.bytes(200).hex
        let envelope = rng.bytes(1200).hex

        var form = MultipartForm()
        try form.addFile("file", filename: "blob.bin", contentsOf: file)
        try form.addField("metadata", value: metadata)
        try form.addField("client", value: "drive")
        try form.addField("audience_mode", value: "self")
        try form.addField("audience_uids", value: "[\"a\",\"b\"]")
        try form.addField("self_envelope", value: envelope)
        try form.addField("empty", value: "")
        let parsed = try await parseAsStation(form)
        #expect(parsed.error == nil)
        #expect(parsed.items == [
            .init(name: "file", value: nil, filename: "blob.bin", content_type: "application/octet-stream",
                  size: ciphertext.count, sha256: sha256Hex(ciphertext)),
            .init(name: "metadata", value: metadata, filename: nil, content_type: nil, size: nil, sha256: nil),
            .init(name: "client", value: "drive", filename: nil, content_type: nil, size: nil, sha256: nil),
            .init(name: "audience_mode", value: "self", filename: nil, content_type: nil, size: nil, sha256: nil),
            .init(name: "audience_uids", value: "[\"a\",\"b\"]", filename: nil, content_type: nil, size: nil, sha256: nil),
            .init(name: "self_envelope", value: envelope, filename: nil, content_type: nil, size: nil, sha256: nil),
            .init(name: "empty", value: "", filename: nil, content_type: nil, size: nil, sha256: nil),
        ])
    }

    /// Quotes, backslashes and non-ASCII text in names and filenames reach the station unchanged,
    /// and content that looks like a delimiter without the boundary is just content.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func stationReadsEscapedAndUnicodeNames() async throws {
        var form = MultipartForm()
        let tricky = "résumé \"final\" \\ v2 ✓.pdf"
        let content = Data("--not-the-boundary\r\n\r\n--\r\n".utf8)
        try form.addFile("upload \"1\"", filename: tricky, contentType: "application/pdf", data: content)
        try form.addField("naïve\\key", value: "välue ✓\r\nsecond line")
        let parsed = try await parseAsStation(form)
        #expect(parsed.error == nil)
        #expect(parsed.items == [
            .init(name: "upload \"1\"", value: nil, filename: tricky, content_type: "application/pdf",
                  size: content.count, sha256: sha256Hex([UInt8](content))),
            .init(name: "naïve\\key", value: "välue ✓\r\nsecond line", filename: nil, content_type: nil, size: nil, sha256: nil),
        ])
    }

    /// SHA-256 through the fingerprint digest, itself checked against hashlib in
    /// `PublicKeyFingerprintTests`.
    func sha256Hex(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).hex }
}
