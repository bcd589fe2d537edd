@testable import CurlTransport
import Foundation
import TestSupport
import Testing
import Transport

/// The incremental HTTP/1.1 response reader of direct exchanges, fed whole and one byte at a time.
@Suite("CurlTransport: HTTP/1.1 response reader")
struct HTTP1ResponseReaderTests {
    typealias Reader = HTTP1ResponseReader

    /// Feeds `text` in pieces of `step` bytes; returns the outcome after the last piece.
    static func feed(_ reader: inout Reader, _ text: String, step: Int) throws(Reader.Failure) -> Reader.Outcome {
        let bytes = Array(text.utf8)
        var outcome = Reader.Outcome.needMore
        var start = 0
        while start < bytes.count {
            let piece = Array(bytes[start..<min(bytes.count, start + step)])
            outcome = try consume(&reader, piece)
            start += piece.count
        }
        return outcome
    }

    static func consume(_ reader: inout Reader, _ piece: [UInt8]) throws(Reader.Failure) -> Reader.Outcome {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, piece.count), alignment: 1)
        defer { buffer.deallocate() }
        buffer.copyBytes(from: piece)
        return try reader.consume(UnsafeRawBufferPointer(rebasing: buffer[0..<piece.count]))
    }

    static func reader(head: Bool = false, headLimit: Int = 1 << 20, bodyLimit: Int = 1 << 20) -> Reader {
        Reader(isHeadRequest: head, headLimit: headLimit, bodyLimit: bodyLimit)
    }

    @Test(arguments: [1, 3, 1000])
    func lengthDelimited(step: Int) throws {
        var reader = Self.reader()
        let text = "HTTP/1.1 201 Created\r\nX-A: one\r\n  folded\r\nContent-Length: 5\r\n\r\nhello"
        #expect(try Self.feed(&reader, text, step: step) == .complete(reusable: true))
        #expect(reader.status == 201)
        #expect(reader.headers["X-A"] == "one folded")
        #expect(reader.body == Array("hello".utf8))
    }

    @Test(arguments: [1, 4, 1000])
    func chunkedWithExtensionsAndTrailers(step: Int) throws {
        var reader = Self.reader()
        let text = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n"
        #expect(try Self.feed(&reader, text, step: step) == .complete(reusable: true))
        #expect(reader.body == Array("hello, world".utf8))
        #expect(reader.headers["X-Trailer"] == nil)
    }

    @Test func informationalHeadsAreSkipped() throws {
        var reader = Self.reader()
        let text = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        #expect(try Self.feed(&reader, text, step: 7) == .complete(reusable: true))
        #expect(reader.status == 200)
        #expect(reader.headers["Link"] == nil)
    }

    @Test func connectionEndingAnswers() throws {
        var old = Self.reader()
        #expect(try Self.feed(&old, "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", step: 100) == .complete(reusable: false))
        var kept = Self.reader()
        #expect(try Self.feed(&kept, "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx", step: 100)
            == .complete(reusable: true))
        var closing = Self.reader()
        #expect(try Self.feed(&closing, "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", step: 100)
            == .complete(reusable: false))
        var extra = Self.reader()
        #expect(try Self.feed(&extra, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxy", step: 100) == .complete(reusable: false))
    }

    @Test func closeDelimitedBody() throws {
        var reader = Self.reader()
        #expect(try Self.feed(&reader, "HTTP/1.1 200 OK\r\n\r\nuntil ", step: 3) == .needMore)
        #expect(try Self.feed(&reader, "close", step: 3) == .needMore)
        #expect(try reader.consumeEnd() == .complete(reusable: false))
        #expect(reader.body == Array("until close".utf8))
    }

    @Test func noBodyForHeadAnd204() throws {
        var head = Self.reader(head: true)
        #expect(try Self.feed(&head, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", step: 100) == .complete(reusable: true))
        var empty = Self.reader()
        #expect(try Self.feed(&empty, "HTTP/1.1 204 No Content\r\n\r\n", step: 100) == .complete(reusable: true))
        #expect(empty.body.isEmpty)
    }

    @Test(arguments: [
        ("THIS IS NOT HTTP\r\n\r\n", Reader.Failure.malformed("the reply is not HTTP")),
        ("HTTP/2 200\r\n\r\n", .malformed("the reply is not HTTP/1.x")),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", .malformed("the server switched protocols")),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .malformed("the Content-Length is not one number")),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", .malformed("the Content-Length is not one number")),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .malformed("a chunk size is not hexadecimal")),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc\r\n", .malformed("a chunk does not end with CR LF")),
    ])
    func malformedAnswers(text: String, failure: Reader.Failure) {
        var reader = Self.reader()
        #expect(throws: failure) { _ = try Self.feed(&reader, text, step: 1000) }
    }

    @Test func limits() {
        var head = Self.reader(headLimit: 64)
        #expect(throws: Reader.Failure.headTooLarge(64)) {
            _ = try Self.feed(&head, "HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 100) + "\r\n\r\n", step: 10)
        }
        var announced = Self.reader(bodyLimit: 4)
        #expect(throws: Reader.Failure.bodyTooLarge(4)) {
            _ = try Self.feed(&announced, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", step: 100)
        }
        var chunked = Self.reader(bodyLimit: 4)
        #expect(throws: Reader.Failure.bodyTooLarge(4)) {
            _ = try Self.feed(&chunked, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", step: 2)
        }
    }

    @Test func endOfStreamBeforeTheAnswer() throws {
        var nothing = Self.reader()
        #expect(throws: Reader.Failure.malformed("the server closed the connection without a reply")) { _ = try nothing.consumeEnd() }
        #expect(!nothing.receivedAnything)
        var partial = Self.reader()
        #expect(try Self.feed(&partial, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe", step: 100) == .needMore)
        #expect(partial.receivedAnything)
        #expect(throws: Reader.Failure.malformed("the connection closed before the response was complete")) { _ = try partial.consumeEnd() }
    }

    /// Mutated and truncated answers, fed in random pieces, end in a result or a typed failure:
    /// never a trap, never a body over the limit, never more bytes read than given.
    @Test func mutatedAnswersNeverTrap() throws {
        let seeds = [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: t\r\n\r\n",
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n",
            "HTTP/1.1 200 OK\r\n\r\nuntil close",
        ].map { Array($0.utf8) }
        var random = SplitMix64(seed: 0x5EED_4E4D)
        var outcomes = (complete: 0, failed: 0, needMore: 0)
        for round in 0..<3000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<Int(random.next() % 4) {
                let position = Int(random.next() % UInt64(bytes.count + 1))
                switch random.next() % 3 {
                case 0 where position < bytes.count: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.insert(contentsOf: random.bytes(Int(random.next() % 6)), at: position)
                default: bytes.removeSubrange(position..<min(bytes.count, position + Int(random.next() % 6)))
                }
            }
            // Every other round also cuts the answer short.
            if round.isMultiple(of: 2) { bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count + 1)))) }
            var reader = Self.reader(headLimit: 96, bodyLimit: 8)
            var outcome: Reader.Outcome = .needMore
            do {
                var start = 0
                while start < bytes.count, outcome == .needMore {
                    let step = 1 + Int(random.next() % 7)
                    outcome = try Self.consume(&reader, Array(bytes[start..<min(bytes.count, start + step)]))
                    start += step
                }
                if outcome == .needMore { outcome = try reader.consumeEnd() }
                outcomes.complete += 1
            } catch {
                outcomes.failed += 1
            }
            #expect(reader.body.count <= 8)
        }
        // The seeds and their mutations reach both ends.
        #expect(outcomes.complete > 100)
        #expect(outcomes.failed > 100)
    }
}
