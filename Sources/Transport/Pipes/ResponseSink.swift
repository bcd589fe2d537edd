import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a transport writes a response body, opened before the transfer starts: how
/// both transports translate a `ResponseDestination`.
package enum ResponseSink {
    /// Collect in memory, at most `limit` bytes.
    case memory(limit: Int)
    /// Write to the file at the URL, opened as `descriptor`.
    case file(URL, descriptor: Int32)
    /// Hand to the reader of a streamed body through the buffer.
    case stream(ResponseBuffer)

    /// Opens `destination` for `request`: a file is created (or replaced) with mode 0600, a stream
    /// gets a ``ResponseBuffer`` of `bufferSize` bytes with `backpressure`.
    /// - Throws: `TransportError` `.responseBodyFailed` when the file cannot be created.
    package static func make(_ destination: ResponseDestination, for request: HTTPRequest, bufferSize: Int,
                             backpressure: ResponseBuffer.Backpressure) throws -> ResponseSink {
        switch destination {
        case .memory(let limit): return .memory(limit: max(0, limit))
        case .stream: return .stream(ResponseBuffer(highWater: bufferSize, backpressure: backpressure, request: request))
        case .file(let fileURL):
            let descriptor = open(fileURL.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw TransportError(.responseBodyFailed, method: request.method, url: request.url,
                                     message: "cannot create \(fileURL.path): \(String(cString: strerror(errno)))")
            }
            // O_CREAT's mode applies only to a new file; an existing one is replaced, so set it too.
            _ = fchmod(descriptor, 0o600)
            return .file(fileURL, descriptor: descriptor)
        }
    }

    /// Writes every byte of `data` to the open file `descriptor` (a `.file` sink's, a transport's
    /// spool, a download's or a key store's file), retrying an interrupted write; the failure's
    /// text, or `nil`. Every write loop of the package is this one.
    package static func writeAll(_ data: some ContiguousBytes, to descriptor: Int32) -> String? {
        data.withUnsafeBytes { bytes -> String? in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return String(cString: strerror(errno)) }
                offset += count
            }
            return nil
        }
    }
}
