import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport
@testable import URLSessionTransport

/// The buffer between URLSession's delegate and a streamed body's reader.
@Suite("URLSessionTransport: response buffer")
struct ResponseBufferTests {
    static let request = HTTPRequest(method: .get, url: URL(fileURLWithPath: "/"))

    /// Linux: past the high-water mark chunks wait on disk, so memory stays bounded while a reader
    /// is stalled, and everything comes back in order.
    @Test func spillsPastTheHighWaterMarkAndKeepsOrder() async throws {
        let highWater = 1024 * 1024
        let buffer = ResponseBuffer(highWater: highWater, backpressure: .spillToDisk, request: Self.request)
        let pattern = PatternBytes(seed: 61)
        let chunk = 64 * 1024
        let total = 40 * chunk * 16  // 40 MiB, twenty times the high-water mark
        var offset: Int64 = 0
        var peak = 0
        while offset < Int64(total) {
            buffer.offer(Data(pattern.bytes(offset: offset, count: chunk)))
            offset += Int64(chunk)
            peak = max(peak, buffer.bufferedBytes)
        }
        buffer.finish(nil)
        #expect(peak <= highWater + chunk)
        #expect(buffer.spilledBytes > 0)
        var read: Int64 = 0
        var matches = true
        while let piece = try await buffer.next() {
            if matches, !pattern.matches(piece, offset: read) { matches = false }
            read += Int64(piece.count)
            #expect(piece.count <= ResponseBuffer.spillChunkSize)
        }
        #expect(read == Int64(total))
        #expect(matches)
        #expect(buffer.spilledBytes == 0)
    }

    /// Reading and writing interleaved, with spilling starting and stopping, keeps the order.
    @Test func interleavedSpillingKeepsOrder() async throws {
        let buffer = ResponseBuffer(highWater: 16 * 1024, backpressure: .spillToDisk, request: Self.request)
        let pattern = PatternBytes(seed: 62)
        var offered: Int64 = 0
        var read: Int64 = 0
        var matches = true
        for round in 0..<200 {
            for _ in 0..<(round % 7 + 1) {
                let count = 5000 + (round * 37) % 9000
                buffer.offer(Data(pattern.bytes(offset: offered, count: count)))
                offered += Int64(count)
            }
            for _ in 0..<(round % 5 + 1) where read < offered {
                guard let piece = try await buffer.next() else { break }
                if matches, !pattern.matches(piece, offset: read) { matches = false }
                read += Int64(piece.count)
            }
        }
        buffer.finish(nil)
        while let piece = try await buffer.next() {
            if matches, !pattern.matches(piece, offset: read) { matches = false }
            read += Int64(piece.count)
        }
        #expect(read == offered)
        #expect(matches)
    }

    /// A reader that falls too far behind fails the transfer instead of filling the disk.
    @Test func spillIsCapped() {
        let buffer = ResponseBuffer(highWater: 16 * 1024, backpressure: .spillToDisk, request: Self.request,
                                    maximumSpill: 1024 * 1024)
        let failures = Locked<[String]>([])
        buffer.attach(pause: {}, resume: {}, abandon: {}, fail: { reason in failures.withLock { $0.append(reason) } })
        for _ in 0..<40 { buffer.offer(Data(count: 64 * 1024)) }
        #expect(buffer.spilledBytes <= 1024 * 1024)
        #expect(failures.value.first?.contains("fell more than") == true)
    }

    /// Apple platforms: a full buffer pauses delivery (suspends the task); draining to half resumes it.
    @Test func suspendsWhenFullAndResumesAtHalf() async throws {
        let buffer = ResponseBuffer(highWater: 64 * 1024, backpressure: .suspendTask, request: Self.request)
        let events = Locked<[String]>([])
        buffer.attach(pause: { events.withLock { $0.append("pause") } }, resume: { events.withLock { $0.append("resume") } },
                      abandon: {}, fail: { _ in })
        for _ in 0..<4 { buffer.offer(Data(count: 16 * 1024)) }  // 64 KiB: full
        #expect(events.value == ["pause"])
        _ = try await buffer.next()  // 48 KiB left
        #expect(events.value == ["pause"])
        _ = try await buffer.next()  // 32 KiB: half
        #expect(events.value == ["pause", "resume"])
    }

    /// An ending after buffered bytes is reported once they are read; an error ends the reader.
    @Test func endingsComeAfterTheBufferedBytes() async throws {
        let buffer = ResponseBuffer(highWater: 64 * 1024, backpressure: .spillToDisk, request: Self.request)
        buffer.offer(Data("abc".utf8))
        buffer.finish(TransportError(.connectionLost, method: .get, url: Self.request.url, message: "cut"))
        #expect(try await buffer.next() == Data("abc".utf8))
        await #expect(throws: TransportError.self) { _ = try await buffer.next() }
    }
}
