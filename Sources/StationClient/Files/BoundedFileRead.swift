#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Reads a small local file (a key-store item, a cache item) whole, with POSIX calls: bounded,
/// so a huge or growing file cannot take the memory, and without Foundation's
/// `Data(contentsOf:)`, which leaks its read buffer on an empty file.
package enum BoundedFileRead {
    /// Why a file could not be read.
    package enum Failure: Error, CustomStringConvertible {
        /// The file does not exist.
        case missing
        /// `open`, `fstat` or `read` failed with this `errno`.
        case system(call: String, errno: Int32)
        /// The file is larger than the limit.
        case tooLarge(limit: Int)

        package var description: String {
            switch self {
            case .missing: "no such file"
            case let .system(call, code): "\(call) failed: \(String(cString: strerror(code)))"
            case let .tooLarge(limit): "larger than \(limit) bytes"
            }
        }
    }

    /// The file's bytes, at most `limit` of them.
    ///
    /// - Throws: ``Failure``: `.missing` when there is no file, `.tooLarge` past `limit`,
    ///   `.system` for other failures.
    package static func bytes(of url: URL, limit: Int) throws(Failure) -> [UInt8] {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw errno == ENOENT ? .missing : .system(call: "open", errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .system(call: "fstat", errno: errno) }
        let expected = Int(status.st_size)
        guard expected <= limit else { throw .tooLarge(limit: limit) }
        // One byte past the size seen: a file that grew since fstat is read up to the limit, not cut.
        var bytes = [UInt8](repeating: 0, count: min(expected, limit) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard bytes.count <= limit else { throw .tooLarge(limit: limit) }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - bytes.count)))
            }
            let got = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress.map { $0 + count }, buffer.count - count)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw .system(call: "read", errno: errno)
            }
            if got == 0 { break }
            count += got
        }
        guard count <= limit else { throw .tooLarge(limit: limit) }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
