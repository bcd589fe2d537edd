import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Server behaviours the conformance cases, the transport tests and the benchmarks share: one
/// copy of each, so a case and a test that serve the same thing serve it the same way.
package enum TestHandlers {
    /// Reads and drops the request body, then answers 200 with `body`.
    package static func ok(body: [UInt8] = []) -> LoopbackHTTPServer.Handler {
        { request, response in
            try request.consumeBody()
            try response.send(status: 200, body: body)
        }
    }

    /// Reads the request body, adding each piece's size to `bytes`, then answers 200; `closed`
    /// turns true when the client leaves before the body ends.
    package static func countingUpload(into bytes: Locked<Int64>, closed: Locked<Bool>) -> LoopbackHTTPServer.Handler {
        { request, response in
            do {
                try request.consumeBody { piece, _ in bytes.withLock { $0 += Int64(piece.count) } }
                try response.send(status: 200)
            } catch {
                closed.withLock { $0 = true }
                throw error
            }
        }
    }

    /// Declares a 1 MiB body, sends 100 000 bytes of `byte`, then closes the connection.
    package static func cutMidBody(_ byte: UInt8) -> LoopbackHTTPServer.Handler {
        { _, response in
            try response.writeHead(status: 200, headers: [("Content-Length", "1048576")])
            try response.write([UInt8](repeating: byte, count: 100_000))
            response.abortConnection()
        }
    }

    /// Records the request's header fields in `seen` and answers 200 with the fields `answer`.
    package static func recordingHeaders(into seen: Locked<[(name: String, value: String)]>,
                                         answer: [(String, String)]) -> LoopbackHTTPServer.Handler {
        { request, response in
            seen.withLock { $0 = request.headers }
            try response.send(status: 200, headers: answer)
        }
    }

    /// Sends `count` bytes of `pattern` with a `Content-Length`, calling `wrote` with the running
    /// total after each write.
    package static func patternDownload(_ pattern: PatternBytes, count: Int64,
                                        wrote: @escaping @Sendable (Int64) -> Void = { _ in }) -> LoopbackHTTPServer.Handler {
        { _, response in
            try response.writeHead(status: 200, headers: [("Content-Length", "\(count)")])
            var buffer = [UInt8](repeating: 0, count: 256 * 1024)
            var offset: Int64 = 0
            while offset < count {
                let piece = Int(min(Int64(buffer.count), count - offset))
                try buffer.withUnsafeMutableBytes { raw in
                    let slice = UnsafeMutableRawBufferPointer(rebasing: raw[0..<piece])
                    pattern.fill(slice, offset: offset)
                    try response.write(UnsafeRawBufferPointer(slice))
                }
                offset += Int64(piece)
                wrote(offset)
            }
        }
    }

    /// Checks an uploaded body against `pattern` as it arrives (calling `read` with the running
    /// total) and answers `<bytes> <ok|bad> <framing>` (see ``verifiedUploadReply(_:)``).
    package static func verifyingUpload(_ pattern: PatternBytes,
                                        read: @escaping @Sendable (Int64) -> Void = { _ in }) -> LoopbackHTTPServer.Handler {
        { request, response in
            var matches = true
            try request.consumeBody { bytes, offset in
                if matches, !pattern.matches(bytes, offset: offset) { matches = false }
                read(offset + Int64(bytes.count))
            }
            let framing = request.isChunked ? "chunked" : "length=\(request.header("Content-Length") ?? "none")"
            try response.send(status: 200, body: Array("\(request.bodyBytesRead) \(matches ? "ok" : "bad") \(framing)".utf8))
        }
    }

    /// The answer ``verifyingUpload(_:read:)`` gives for a correct upload of `count` bytes with a
    /// `Content-Length`.
    package static func verifiedUploadReply(_ count: Int64) -> String { "\(count) ok length=\(count)" }

    /// Sends the head and `prefix` bytes of a 1 MB body, then waits for the client to give up;
    /// `closed` turns true when it has.
    package static func stalling(prefix: Int = 1, closed: Locked<Bool>) -> LoopbackHTTPServer.Handler {
        { request, response in
            try request.consumeBody()
            try response.writeHead(status: 200, headers: [("Content-Length", "1000000")])
            try response.write([UInt8](repeating: 0x41, count: prefix))
            if response.waitForClientToClose(timeout: 60) { closed.withLock { $0 = true } }
        }
    }

    /// Declares `declared` body bytes, then sends `count` bytes of `byte`, one every 100 ms: a
    /// body that never trips an idle limit but takes `count` / 10 seconds.
    package static func trickle(_ byte: UInt8, count: Int, declared: Int) -> LoopbackHTTPServer.Handler {
        { _, response in
            try response.writeHead(status: 200, headers: [("Content-Length", "\(declared)")])
            for _ in 0..<count {
                try response.write([byte])
                usleep(100_000)
            }
        }
    }

    /// Serves `size` bytes of `pattern` with single-range support (closed, open-ended and suffix
    /// ranges; 416 past the end), parsed here independently of `ByteRange`.
    package static func ranges(_ pattern: PatternBytes, size: Int64) -> LoopbackHTTPServer.Handler {
        { request, response in
            guard let range = request.header("Range") else {
                try response.send(status: 200, headers: [("Accept-Ranges", "bytes")],
                                  body: pattern.bytes(offset: 0, count: Int(size)))
                return
            }
            let spec = range.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
            var first = size, last: Int64 = -1
            if spec.count == 2, spec[0].isEmpty, let suffix = Int64(spec[1]) {
                first = max(0, size - suffix)
                last = size - 1
            } else if spec.count == 2, let start = Int64(spec[0]) {
                first = start
                last = spec[1].isEmpty ? size - 1 : min(size - 1, Int64(spec[1]) ?? -1)
            }
            guard first < size, first <= last else {
                try response.send(status: 416, headers: [("Content-Range", "bytes */\(size)")])
                return
            }
            try response.send(status: 206, headers: [("Content-Range", "bytes \(first)-\(last)/\(size)")],
                              body: pattern.bytes(offset: first, count: Int(last - first + 1)))
        }
    }
}
