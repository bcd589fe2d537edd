@testable import CipherStationEmulator
import Foundation
import LoopbackHTTP
import Transport
@testable import StationEmulator
import Testing

/// The emulator as a network service facing a hostile client (issue 14, item 7): linear multipart
/// parsing, bodies capped at `MAX_UPLOAD_SIZE`, a connection cap, and head and body deadlines.
@Suite("Emulator: hostile clients")
struct HostileClientTests {
    /// One unauthenticated `POST /post` of 1 MB with a boundary of 8,000 dashes used to take
    /// minutes of CPU: the search for the delimiter compared up to 8,000 bytes at every offset.
    /// The parser's searches are linear now: the steps they take stay within a small multiple of
    /// the body's length, whatever the boundary.
    @Test func multipartParsingIsLinearWhateverTheBoundary() throws {
        let boundary = String(repeating: "-", count: 8_000)
        let delimiterLength = boundary.utf8.count + 2
        // Runs of dashes one short of the delimiter: every offset is a near match.
        let run = [UInt8](repeating: UInt8(ascii: "-"), count: delimiterLength - 1) + [UInt8(ascii: "x")]
        var hostile: [UInt8] = []
        while hostile.count < 1_000_000 { hostile += run }
        var steps = 0
        #expect(throws: MultipartParser.Failure.self) {
            try MultipartParser.parse(Data(hostile), boundary: boundary, steps: &steps)
        }
        #expect(steps <= 2 * hostile.count + 6 * (delimiterLength + 2) + 16, "\(steps) steps for \(hostile.count) bytes")

        // A well-formed form with the same boundary whose file is full of near-delimiters
        // (CRLF and one dash too few) parses, in linear steps, to exactly its parts.
        var content: [UInt8] = []
        while content.count < 1_000_000 { content += [0x0D, 0x0A] + run }
        let form = Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"audience_mode\"\r\n\r\nall\r\n".utf8)
            + Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n".utf8)
            + content + Array("\r\n--\(boundary)--\r\n".utf8)
        steps = 0
        let parts = try MultipartParser.parse(Data(form), boundary: boundary, steps: &steps)
        #expect(parts.map(\.name) == ["audience_mode", "file"])
        #expect(parts.last?.data == Data(content) && parts.first?.text == "all")
        #expect(steps <= 2 * form.count + 6 * (delimiterLength + 2) + 16, "\(steps) steps for \(form.count) bytes")
    }

    /// A chunked body carries no length to check, so the station buffers all of it; the emulator
    /// answers 413 `{"error": …}` as soon as the body passes `MAX_UPLOAD_SIZE`, before the client
    /// has even finished sending (so it cannot have buffered it), and closes the connection.
    @Test func aChunkedBodyPastTheCapGets413BeforeItEnds() throws {
        let harness = try Harness(maximumUploadSize: 64 * 1024)
        let port = UInt16(try #require(harness.emulator.stationURL?.port))
        let client = RawHTTPClient(port: port)
        try client.writeRaw(Array("POST /rewrap HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n".utf8))
        // 128 KiB in 8 KiB chunks, and no last chunk: the body never ends.
        let chunk = Array(String(format: "%x\r\n", 8192).utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 8192) + [0x0D, 0x0A]
        for _ in 0..<16 { try client.writeRaw(chunk) }
        let response = try client.readRawResponse()
        #expect(response.status == 413)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":"Request too large (max 65536 bytes)"}"#)
        #expect(response.headers.contains { $0.0.lowercased() == "connection" && $0.1.lowercased() == "close" })
        #expect(harness.emulator.requests.entries.last?.status == 413)
    }

    /// A declared `Content-Length` over the cap is refused from the head alone on every path (the
    /// station checks its body-hashed paths; on the others it would buffer the body).
    @Test func aDeclaredLengthOverTheCapIsRefusedOnAnyPath() throws {
        let harness = try Harness(maximumUploadSize: 64 * 1024)
        let response = try harness.send("POST", "/delegate/start", headers: [("Content-Length", "65537")])
        #expect(response.status == 413 && response.text == #"{"error":"Request too large (max 65536 bytes)"}"#)
        // The refusal closed that connection; the server serves the next one.
        #expect(response.header("connection") == "close")
        let port = UInt16(try #require(harness.emulator.stationURL?.port))
        #expect(try RawHTTPClient(port: port).send(method: "GET", path: "/health").status == 200)
    }

    /// Past ``LoopbackHTTPServer/Limits/maximumConnections`` a connection is answered 503 and
    /// closed at once instead of getting a thread of its own; once one closes, a new one is served.
    @Test func connectionsPastTheCapGet503() throws {
        let server = try LoopbackHTTPServer(limits: .init(maximumConnections: 2)) { _, response in
            try response.send(status: 200, headers: [("Content-Length", "2")], body: Array("ok".utf8))
        }
        defer { server.stop() }
        let held = [RawHTTPClient(port: server.port), RawHTTPClient(port: server.port)]
        for client in held { #expect(try client.send(method: "GET", path: "/").status == 200) }
        let third = RawHTTPClient(port: server.port)
        try third.writeRaw([])
        let refused = try third.readRawResponse()
        #expect(refused.status == 503)
        #expect(server.statistics.connectionsRefused == 1 && server.statistics.connectionsAccepted == 2)
    }

    /// The 60 s limit applies to each read, so a client sending one byte every few seconds held a
    /// connection (and its thread) forever. The head must now arrive whole within its deadline.
    @Test func aTrickledHeadIsCutAtItsDeadline() throws {
        let server = try LoopbackHTTPServer(limits: .init(headDeadline: 0.5)) { _, response in
            try response.send(status: 200, headers: [("Content-Length", "0")])
        }
        defer { server.stop() }
        try Self.expectTrickleCut(after: "GET / HTTP/1.1\r\nX-Trickle: ", by: server)
        #expect(server.statistics.deadlinesMissed == 1 && server.statistics.requestsReceived == 0)
    }

    /// Likewise a body read by the handler must arrive whole within the body deadline.
    @Test func aTrickledBodyIsCutAtItsDeadline() throws {
        let failures = Locked<[String]>([])
        let server = try LoopbackHTTPServer(limits: .init(bodyDeadline: 0.5)) { request, response in
            do {
                _ = try request.readBody()
            } catch {
                failures.withLock { $0.append("\(error)") }
                throw error
            }
            try response.send(status: 200, headers: [("Content-Length", "0")])
        }
        defer { server.stop() }
        try Self.expectTrickleCut(after: "POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n", by: server)
        #expect(failures.withLock { $0 } == ["the request body did not arrive in time"])
        #expect(server.statistics.deadlinesMissed == 1)
    }

    /// Connects to `server`, sends `opening`, then writes one byte every 50 ms until 200 are sent
    /// or a write fails, and expects fewer than 100 to go out: 200 bytes take 10 s, a server with a
    /// 0.5 s deadline closes long before, and writes fail soon after.
    private static func expectTrickleCut(
        after opening: String, by server: LoopbackHTTPServer, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let client = RawHTTPClient(port: server.port)
        try client.writeRaw(Array(opening.utf8))
        var sent = 0
        while sent < 200, (try? client.writeRaw([UInt8(ascii: "a")])) != nil {
            sent += 1
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(sent < 100, "\(sent) bytes trickled in", sourceLocation: sourceLocation)
    }
}
