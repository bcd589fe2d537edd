import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a request body stream to an unlinked temporary file, so that FoundationNetworking can
/// send it as a file.
///
/// FoundationNetworking reads a body stream on a single serial queue that every URLSession in the process
/// shares, and takes a stream with no bytes available at that moment to have ended; waiting there
/// for the caller's stream would stall every session (and deadlock once Swift's cooperative threads
/// wait on that queue). A file's bytes are always available, so the stream is spooled first: memory
/// stays bounded, the disk holds the body until the transfer ends, and nothing is sent before the
/// stream has ended. The declared length is checked while spooling.
enum StreamSpool {
    static func spool(_ stream: HTTPBodyStream, for request: HTTPRequest,
                      onFailure: @escaping @Sendable (TransportError.Kind, String, (any Error)?) -> Void) async throws
        -> FileBodySource
    {
        func failure(_ kind: TransportError.Kind, _ message: String, _ underlying: (any Error)? = nil) -> TransportError {
            TransportError(kind, method: request.method, url: request.url, message: message, underlying: underlying)
        }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("urlsession-transport-\(UUID().uuidString).body").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw failure(.requestBodyFailed, "cannot create a spool file for the request body: \(String(cString: strerror(errno)))")
        }
        _ = unlink(path)  // the descriptor keeps it; nothing is left behind whatever happens
        var handedOver = false
        defer { if !handedOver { _ = close(descriptor) } }

        var written: Int64 = 0
        do {
            for try await chunk in stream {
                try Task.checkCancellation()
                if let declared = stream.length, Int64(chunk.count) > declared - written {
                    throw failure(.requestBodyFailed, "the request body stream yielded more than its declared \(declared) bytes")
                }
                if let reason = ResponseSink.writeAll(chunk, to: descriptor) {
                    throw failure(.requestBodyFailed, "cannot spool the request body: \(reason)")
                }
                written += Int64(chunk.count)
            }
        } catch let error as TransportError {
            throw error
        } catch is CancellationError {
            throw failure(.cancelled, "the calling task was cancelled")
        } catch {
            throw failure(.requestBodyFailed, "the request body stream failed: \(error)", error)
        }
        if let declared = stream.length, written != declared {
            throw failure(.requestBodyFailed, "the request body stream ended after \(written) of its declared \(declared) bytes")
        }
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw failure(.requestBodyFailed, "cannot rewind the spooled request body: \(String(cString: strerror(errno)))")
        }
        handedOver = true
        return FileBodySource(descriptor: descriptor, size: written, path: "the spooled request body", onFailure: onFailure)
    }
}
