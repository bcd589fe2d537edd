import Foundation
import LoopbackHTTP
import Transport
import Testing
import TransportTestSupport
@testable import CurlTransport

/// The bounded pipe between the curl thread and a streamed response's reader, driven the way the
/// write callback drives it, on one task so that the interleaving is the same on every run.
@Suite("CurlTransport: response pipe")
struct ResponsePipeTests {
    /// What libcurl hands the write callback at most (`CURL_MAX_WRITE_SIZE`).
    static let curlChunk = 16 * 1024

    /// A reader just behind a fast producer: curl refills the queue whenever the reader has drained
    /// it to half, so the queue never runs dry until the end. Over 100 MiB, the pipe must never
    /// reference more than its high water plus one curl chunk, taken chunks included (they used to
    /// stay referenced until the queue ran dry, which under load held most of the body).
    @Test func slowReaderOverAFastBodyStaysWithinHighWater() async throws {
        let highWater = 1024 * 1024
        let total = 100 * 1024 * 1024
        let pattern = PatternBytes(seed: 0x5EED)
        let pipe = ResponsePipe(highWater: highWater)
        let paused = Locked(false)
        let resumes = Locked(0)
        pipe.attach(resume: {
            paused.withLock { $0 = false }
            resumes.withLock { $0 += 1 }
        }, cancel: {})

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
                    return pipe.offer(UnsafeRawBufferPointer(raw))
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
    @Test func readerThatCatchesUpGetsEveryByteInOrder() async throws {
        let pattern = PatternBytes(seed: 0xFA57)
        let pipe = ResponsePipe(highWater: 64 * 1024)
        pipe.attach(resume: {}, cancel: {})
        var offset = 0
        var read = 0
        for round in 0..<50 {
            // Uneven chunk sizes, as curl delivers them after a short socket read.
            for size in [1, 999, Self.curlChunk, 4096 + round] {
                let bytes = pattern.bytes(offset: Int64(offset), count: size)
                #expect(bytes.withUnsafeBytes { pipe.offer($0) })
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
