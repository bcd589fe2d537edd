import Foundation
import LoopbackHTTP
import Testing
import Transport
import TransportTestSupport

/// The one response collector between an HTTP library's callbacks and a streamed body's reader:
/// libcurl's refusing mode (driven the way its write callback drives it, on one task so that the
/// interleaving is the same on every run), URLSession's suspending mode on Darwin and spilling mode
/// on Linux.
@Suite("Transport: response buffer")
struct ResponseBufferTests {
    static let request = HTTPRequest(method: .get, url: URL(fileURLWithPath: "/"))
    /// What libcurl hands the write callback at most (`CURL_MAX_WRITE_SIZE`).
    static let curlChunk = 16 * 1024

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

    /// A reader just behind a fast producer: curl refills the queue whenever the reader has drained
    /// it to half, so the queue never runs dry until the end. Over 100 MiB, the pipe must never
    /// reference more than its high water plus one curl chunk, taken chunks included (they used to
    /// stay referenced until the queue ran dry, which under load held most of the body).
    @Test func refusingSlowReaderOverAFastBodyStaysWithinHighWater() async throws {
        let highWater = 1024 * 1024
        let total = 100 * 1024 * 1024
        let pattern = PatternBytes(seed: 0x5EED)
        let pipe = ResponseBuffer(highWater: highWater, backpressure: .refuseWhenFull, request: Self.request)
        let paused = Locked(false)
        let resumes = Locked(0)
        pipe.attach(resume: {
            paused.withLock { $0 = false }
            resumes.withLock { $0 += 1 }
        }, abandon: {})

        var chunk = [UInt8](repeating: 0, count: Self.curlChunk)
        var offered = 0
        var finished = false
        var read = 0
        var mostHeld = 0
        var queueRanDry = false
        while read < total {
            // The curl side: offer until refused (the transfer pauses) or the body is all out.
            while offered < total, !paused.value {
                let accepted = chunk.withUnsafeMutableBytes { raw in
                    pattern.fill(raw, offset: Int64(offered))
                    return pipe.offer(Data(raw))
                }
                if accepted { offered += Self.curlChunk } else { paused.withLock { $0 = true } }
            }
            if offered == total, !finished {
                pipe.finish(nil)
                finished = true
            }
            // The reader: one chunk at a time, checked byte for byte.
            let data = try #require(try await pipe.next())
            #expect(pattern.matches(data, offset: Int64(read)), "chunk at \(read) is corrupt")
            read += data.count
            let held = pipe.heldBytes
            mostHeld = max(mostHeld, held)
            if held == 0, read < total - highWater { queueRanDry = true }
        }
        #expect(try await pipe.next() == nil)
        #expect(read == total)
        // The scenario did happen: many pause/resume rounds, and the reader never caught up.
        #expect(resumes.value > 50)
        #expect(!queueRanDry)
        #expect(mostHeld <= highWater + Self.curlChunk, "the pipe held \(mostHeld) bytes")
    }

    /// A reader that empties the queue before each refill gets every byte in order, and the pipe
    /// holds nothing once the reader has taken everything.
    @Test func refusingReaderThatCatchesUpGetsEveryByteInOrder() async throws {
        let pattern = PatternBytes(seed: 0xFA57)
        let pipe = ResponseBuffer(highWater: 64 * 1024, backpressure: .refuseWhenFull, request: Self.request)
        pipe.attach(resume: {}, abandon: {})
        var offset = 0
        var read = 0
        for round in 0..<50 {
            // Uneven chunk sizes, as curl delivers them after a short socket read.
            for size in [1, 999, Self.curlChunk, 4096 + round] {
                let bytes = pattern.bytes(offset: Int64(offset), count: size)
                #expect(pipe.offer(Data(bytes)))
                offset += size
            }
            while pipe.heldBytes > 0 {
                let data = try #require(try await pipe.next())
                #expect(pattern.matches(data, offset: Int64(read)))
                read += data.count
            }
        }
        pipe.finish(nil)
        #expect(try await pipe.next() == nil)
        #expect(read == offset)
    }
}
