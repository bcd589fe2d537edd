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
        try hash(file: try FileDescriptor.openForReading(url.path), chunkByteCount: chunkByteCount)
    }

    /// Returns the SHA-256 digest of the whole file `file` has open, read from its start with
    /// positional reads in constant memory (the file offset is left alone).
    ///
    /// - Throws: ``ClassicalCryptoError/fileSystem(operation:path:errno:)`` when the file cannot be read.
    package static func hash(file: FileDescriptor, chunkByteCount: Int = 256 * 1024) throws(ClassicalCryptoError) -> [UInt8] {
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(chunkByteCount, 64), alignment: 64)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while true {
            let count = try file.readFully(into: buffer, at: offset)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            offset += Int64(count)
            if count < buffer.count { break }
        }
        return hasher.finalize()
    }
}
