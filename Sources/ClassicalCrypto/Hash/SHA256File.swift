#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SHA2

// SHA-256 itself is the `SHA2` module's; ClassicalCrypto adds hashing a file through its
// `FileDescriptor`.
extension SHA2.SHA256 {
    /// Returns the SHA-256 digest of the file at `url`, read in constant memory.
    ///
    /// - Throws: ``ClassicalCryptoError/fileSystem(operation:path:errno:)`` when the file cannot be read.
    public static func hash(fileAt url: URL, chunkByteCount: Int = 256 * 1024) throws(ClassicalCryptoError) -> [UInt8] {
        let file = try FileDescriptor.openForReading(url.path)
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkByteCount, 64), alignment: 64)
        defer { buffer.deallocate() }
        while true {
            let count = try file.readFully(into: buffer)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if count < buffer.count { break }
        }
        return hasher.finalize()
    }
}
