import Foundation
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads an uploaded file from disk in pieces: the body never sits in memory whole. The size taken
/// when the transfer starts is the `Content-Length`; a file that shrinks below it fails the transfer
/// instead of sending less than announced.
final class FileBodySource: BlockingBodySource, @unchecked Sendable {
    let size: Int64
    private let path: String
    private let onFailure: @Sendable (TransportError.Kind, String, (any Error)?) -> Void
    private let state: Locked<(descriptor: Int32, offset: Int64)>

    /// Opens `url` for reading.
    ///
    /// - Throws: `TransportError` with kind `.requestBodyFailed` when it is missing or not a regular file.
    convenience init(url: URL, request: HTTPRequest, onFailure: @escaping @Sendable (TransportError.Kind, String, (any Error)?) -> Void) throws {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            let reason = descriptor >= 0 ? "not a regular file" : String(cString: strerror(errno))
            if descriptor >= 0 { _ = posixClose(descriptor) }
            throw TransportError(.requestBodyFailed, method: request.method, url: request.url,
                                 message: "cannot read \(url.path): \(reason)")
        }
        self.init(descriptor: descriptor, size: Int64(info.st_size), path: url.path, onFailure: onFailure)
    }

    /// Reads `size` bytes from an open descriptor, which it then owns.
    init(descriptor: Int32, size: Int64, path: String,
         onFailure: @escaping @Sendable (TransportError.Kind, String, (any Error)?) -> Void) {
        self.size = size
        self.path = path
        self.onFailure = onFailure
        state = Locked((descriptor, 0))
    }

    deinit { close() }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> BodyRead {
        enum Outcome { case read(Int), end, closed, shrank, failed(String) }
        let outcome: Outcome = state.withLock { state in
            guard state.descriptor >= 0 else { return .closed }
            let want = Int(min(Int64(buffer.count), size - state.offset))
            guard want > 0 else { return .end }
            // pread: the source's own offset, whatever a restarted copy (`restarted()`) has read.
            let got = posixPRead(state.descriptor, buffer.baseAddress, want, state.offset)
            if got > 0 {
                state.offset += Int64(got)
                return .read(got)
            }
            return got == 0 ? .shrank : .failed(String(cString: strerror(errno)))
        }
        switch outcome {
        case .read(let count): return .bytes(count)
        case .end: return .end
        case .closed: return .failed
        case .shrank:
            onFailure(.requestBodyFailed, "cannot read \(path): it shrank below \(size) bytes while sending", nil)
            return .failed
        case .failed(let reason):
            onFailure(.requestBodyFailed, "cannot read \(path): \(reason)", nil)
            return .failed
        }
    }

    /// A new source over the same file from its first byte, for URLSession resending the request
    /// (`needNewBodyStream`); it reads `size` bytes through a descriptor of its own. `nil` when
    /// this source is closed or no descriptor is left.
    func restarted() -> FileBodySource? {
        let copy = state.withLock { state -> Int32 in state.descriptor >= 0 ? dup(state.descriptor) : -1 }
        guard copy >= 0 else { return nil }
        return FileBodySource(descriptor: copy, size: size, path: path, onFailure: onFailure)
    }

    func close() {
        let descriptor = state.withLock { state -> Int32 in
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if descriptor >= 0 { _ = posixClose(descriptor) }
    }
}

// The libc calls under names of their own, at file scope: inside `FileBodySource`, `read` and
// `close` would name its methods.

/// POSIX `pread(2)`.
private func posixPRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ offset: Int64) -> Int {
    pread(descriptor, buffer, count, off_t(offset))
}

/// POSIX `close(2)`.
private func posixClose(_ descriptor: Int32) -> Int32 { close(descriptor) }
