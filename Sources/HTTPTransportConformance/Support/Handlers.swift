import Foundation
import Transport
import LoopbackHTTP

/// Server behaviours several cases share.
enum Handlers {
    /// Sends `count` bytes of `pattern` with a `Content-Length`, calling `wrote` with the running
    /// total after each write.
    static func patternDownload(_ pattern: PatternBytes, count: Int64,
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
    /// total) and answers `<bytes> <ok|bad> <framing>`.
    static func verifyingUpload(_ pattern: PatternBytes,
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

    /// Sends the head and `prefix` bytes of a 1 MB body, then waits for the client to give up;
    /// `closed` turns true when it has.
    static func stalling(prefix: Int = 1, closed: Locked<Bool>) -> LoopbackHTTPServer.Handler {
        { request, response in
            try request.consumeBody()
            try response.writeHead(status: 200, headers: [("Content-Length", "1000000")])
            try response.write([UInt8](repeating: 0x41, count: prefix))
            if response.waitForClientToClose(timeout: 60) { closed.withLock { $0 = true } }
        }
    }
}

/// The answer `Handlers.verifyingUpload` gives for a correct upload of `count` bytes with a
/// `Content-Length`.
func verifiedUploadReply(_ count: Int64) -> String { "\(count) ok length=\(count)" }
