#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto

/// Seals a file with SecretBox in constant memory, giving exactly the bytes of
/// ``SecretBox/seal(_:using:nonce:)`` over the whole file: `nonce ‖ tag ‖ ciphertext`.
///
/// Because the tag comes *before* the ciphertext, sealing takes two passes over the file.
/// Creating the sealer runs the first pass (encrypt and authenticate, keeping only the tag);
/// ``writeSealedBytes(to:)`` runs the second (encrypt again and hand out the bytes). Use it to
/// stream a large upload to a sink that cannot seek, such as an HTTP body; to seal into another
/// file use ``SecretBox/sealFile(at:to:using:nonce:chunkByteCount:)``.
///
/// If the file changes between or during the passes, the second pass throws
/// ``ClassicalCryptoError/fileChanged(path:)`` (the bytes already written are then unusable).
public struct SecretBoxFileSealer: Sendable {
    /// The default size of a pass's buffer.
    public static let defaultChunkByteCount = 256 * 1024

    /// The file being sealed.
    public let source: URL
    /// The nonce the sealed bytes start with.
    public let nonce: [UInt8]
    /// The Poly1305 tag, found by the first pass.
    public let tag: [UInt8]
    /// The size of the file when it was sealed.
    public let plaintextByteCount: Int

    private let key: SymmetricKey
    private let identity: FileIdentity
    private let chunkByteCount: Int

    /// The length of the sealed bytes: the file's size plus 40.
    public var sealedByteCount: Int { plaintextByteCount + SecretBox.overheadByteCount }

    /// The first 40 sealed bytes: `nonce ‖ tag`.
    public var prefix: [UInt8] { nonce + tag }

    /// Runs the first pass over the file at `source`: encrypts it chunk by chunk with `key` and
    /// computes the tag.
    ///
    /// - Parameters:
    ///   - source: the plaintext file.
    ///   - key: the 32-byte SecretBox key.
    ///   - nonce: 24 bytes; a fresh random nonce when `nil` (pass one only to reproduce known bytes).
    ///   - chunkByteCount: the buffer size (at least 64 bytes).
    /// - Throws: ``ClassicalCryptoError/invalidKeyLength(expected:actual:)``,
    ///   ``ClassicalCryptoError/invalidNonceLength(expected:actual:)``,
    ///   ``ClassicalCryptoError/invalidParameter(name:reason:)`` for a chunk size under 64,
    ///   ``ClassicalCryptoError/fileSystem(operation:path:errno:)`` when the file cannot be read, or
    ///   ``ClassicalCryptoError/fileChanged(path:)`` when it changes during the pass.
    public init(
        plaintextAt source: URL, using key: SymmetricKey, nonce: [UInt8]? = nil,
        chunkByteCount: Int = defaultChunkByteCount
    ) throws(ClassicalCryptoError) {
        try SecretBox.checkKey(key)
        let nonce = nonce ?? SecureRandom.bytes(count: SecretBox.nonceByteCount)
        guard nonce.count == SecretBox.nonceByteCount else {
            throw .invalidNonceLength(expected: SecretBox.nonceByteCount, actual: nonce.count)
        }
        guard chunkByteCount >= 64 else {
            throw .invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got \(chunkByteCount)")
        }
        let path = source.path
        let file = try FileDescriptor.openForReading(path)
        let identity = try file.identity()
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        let total = try Self.forEachChunk(of: file, from: 0, chunkByteCount: chunkByteCount) { chunk in
            stream.sealChunk(chunk)
        }
        guard try file.identity() == identity, Int64(total) == identity.size else {
            throw .fileChanged(path: path)
        }
        self.source = source
        self.nonce = nonce
        self.tag = stream.finalizeTag()
        self.plaintextByteCount = total
        self.key = key
        self.identity = identity
        self.chunkByteCount = chunkByteCount
    }

    /// Runs the second pass: calls `sink` with the sealed bytes in order, first `nonce ‖ tag`, then
    /// the ciphertext chunk by chunk. Each buffer is valid only during its call. Can be called more
    /// than once (each call reads the file again).
    ///
    /// - Throws: ``ClassicalCryptoError/fileSystem(operation:path:errno:)`` or
    ///   ``ClassicalCryptoError/fileChanged(path:)`` (checked before and after the pass), or whatever
    ///   `sink` throws.
    public func writeSealedBytes(to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let path = source.path
        let file = try FileDescriptor.openForReading(path)
        guard try file.identity() == identity else { throw ClassicalCryptoError.fileChanged(path: path) }
        try prefix.withUnsafeBytes { try sink($0) }
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        var sinkError: (any Error)?
        let total = try Self.forEachChunk(of: file, from: 0, chunkByteCount: chunkByteCount) { chunk in
            guard sinkError == nil else { return }
            stream.xor(chunk)
            do { try sink(UnsafeRawBufferPointer(chunk)) } catch { sinkError = error }
        }
        if let sinkError { throw sinkError }
        guard total == plaintextByteCount, try file.identity() == identity else {
            throw ClassicalCryptoError.fileChanged(path: path)
        }
    }

    /// Reads `file` from `offset` to its end chunk by chunk, transforms each chunk in place
    /// (sealing or opening it) and writes it to `output` from `outputOffset` on; returns the
    /// number of bytes read. Reads and writes are positional, so neither file offset moves. After
    /// a failed write the rest is still read (so the count stays comparable) but neither
    /// transformed nor written, and the write's error is thrown.
    static func transformChunks(
        of file: FileDescriptor, from offset: Int64, into output: FileDescriptor, at outputOffset: Int64, chunkByteCount: Int,
        _ transform: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(ClassicalCryptoError) -> Int {
        var writeError: ClassicalCryptoError?
        var written: Int64 = 0
        let total = try forEachChunk(of: file, from: offset, chunkByteCount: chunkByteCount) { chunk in
            guard writeError == nil else { return }
            transform(chunk)
            do throws(ClassicalCryptoError) {
                try output.writeAll(UnsafeRawBufferPointer(chunk), at: outputOffset + written)
                written += Int64(chunk.count)
            } catch { writeError = error }
        }
        if let writeError { throw writeError }
        return total
    }

    /// Reads `file` from `offset` to its end (positional reads: its file offset does not move)
    /// through one reused buffer (zeroed afterwards, since it held plaintext) and returns the
    /// byte count.
    static func forEachChunk(
        of file: FileDescriptor, from offset: Int64, chunkByteCount: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(ClassicalCryptoError) -> Int {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkByteCount, alignment: 64)
        defer {
            SecureMemory.zero(buffer)
            buffer.deallocate()
        }
        var total = 0
        while true {
            let count = try file.readFully(into: buffer, at: offset + Int64(total))
            if count == 0 { break }
            body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            total += count
            if count < chunkByteCount { break }
        }
        return total
    }
}

extension SecretBox {
    /// Seals the file at `source` into a new file at `destination` in constant memory; the result
    /// is byte for byte what ``seal(_:using:nonce:)`` gives for the whole file.
    ///
    /// A seekable destination needs only one pass over the data: the ciphertext is written as it
    /// is made, after a 16-byte placeholder, and the tag is written into its place at the end.
    /// (To stream to a sink that cannot seek, use ``SecretBoxFileSealer``, which makes two passes.)
    /// Writes under a temporary name beside `destination` and renames it into place when done, so
    /// `destination` never holds partial output; an existing `destination` is replaced.
    /// - Throws: ``ClassicalCryptoError/invalidKeyLength(expected:actual:)``,
    ///   ``ClassicalCryptoError/invalidNonceLength(expected:actual:)``,
    ///   ``ClassicalCryptoError/invalidParameter(name:reason:)`` for a chunk size under 64,
    ///   ``ClassicalCryptoError/fileSystem(operation:path:errno:)``, or ``ClassicalCryptoError/fileChanged(path:)``
    ///   when the source changes while it is read.
    public static func sealFile(
        at source: URL, to destination: URL, using key: SymmetricKey, nonce: [UInt8]? = nil,
        chunkByteCount: Int = SecretBoxFileSealer.defaultChunkByteCount
    ) throws(ClassicalCryptoError) {
        let file = try FileDescriptor.openForReading(source.path)
        var output: AtomicOutputFile?
        _ = try seal(file, identity: try file.identity(), using: key, nonce: nonce, chunkByteCount: chunkByteCount,
                     into: { byteCount throws(ClassicalCryptoError) in
            let file = try AtomicOutputFile(destination: destination.path, expectedByteCount: byteCount)
            output = file
            return file.file
        }, observing: { _ in })
        try output?.commit()
    }

    /// Seals the open file `source`, read from its start, into the file at `destination`, which
    /// exists and belongs to the caller (an upload's staging file): it is overwritten from its
    /// start, with no temporary name, rename or flush, and what it holds after a failure is the
    /// caller's to remove. `identity` is `source`'s when its size was taken (to check it against
    /// a limit, say): if the file differs from it by the end of the pass (``FileIdentity``: a new
    /// size, inode or time), the seal throws ``ClassicalCryptoError/fileChanged(path:)``, so the
    /// size checked is the size sealed. `source` is read at explicit offsets: its file offset
    /// (shared with the descriptor it may be duplicated from) does not move.
    ///
    /// `observe` is handed each run of sealed bytes as it is written, in order, so they can be
    /// hashed in the same pass: the nonce with zeros in place of the tag (known only at the end),
    /// then the ciphertext; each buffer is valid only during its call. Returns the real first
    /// bytes, `nonce ‖ tag`.
    ///
    /// - Throws: as ``sealFile(at:to:using:nonce:chunkByteCount:)``.
    package static func sealFile(
        reading source: FileDescriptor, identity: FileIdentity, overwriting destination: URL, using key: SymmetricKey,
        nonce: [UInt8]? = nil, chunkByteCount: Int = SecretBoxFileSealer.defaultChunkByteCount,
        observing observe: (UnsafeRawBufferPointer) -> Void
    ) throws(ClassicalCryptoError) -> [UInt8] {
        try seal(source, identity: identity, using: key, nonce: nonce, chunkByteCount: chunkByteCount, into: { _ throws(ClassicalCryptoError) in
            try FileDescriptor.openForOverwriting(destination.path)
        }, observing: observe)
    }

    /// Seals `file` (whose identity was `identity`) from its start in one pass into the file
    /// `makeOutput` opens for the sealed length: the ciphertext is written after a 16-byte
    /// placeholder, and the tag into its place at the end.
    private static func seal(
        _ file: FileDescriptor, identity: FileIdentity, using key: SymmetricKey, nonce: [UInt8]?, chunkByteCount: Int,
        into makeOutput: (_ sealedByteCount: Int) throws(ClassicalCryptoError) -> FileDescriptor,
        observing observe: (UnsafeRawBufferPointer) -> Void
    ) throws(ClassicalCryptoError) -> [UInt8] {
        try checkKey(key)
        let nonce = nonce ?? SecureRandom.bytes(count: nonceByteCount)
        guard nonce.count == nonceByteCount else {
            throw .invalidNonceLength(expected: nonceByteCount, actual: nonce.count)
        }
        guard chunkByteCount >= 64 else {
            throw .invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got \(chunkByteCount)")
        }
        let output = try makeOutput(Int(identity.size) + overheadByteCount)
        let placeholder = nonce + [UInt8](repeating: 0, count: tagByteCount)
        try placeholder.withUnsafeBytes { buffer in
            observe(buffer)
            return Result { () throws(ClassicalCryptoError) in try output.writeAll(buffer, at: 0) }
        }.get()
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        let total = try SecretBoxFileSealer.transformChunks(
            of: file, from: 0, into: output, at: Int64(placeholder.count), chunkByteCount: chunkByteCount
        ) { chunk in
            stream.sealChunk(chunk)
            observe(UnsafeRawBufferPointer(chunk))
        }
        guard Int64(total) == identity.size, try file.identity() == identity else { throw .fileChanged(path: file.path) }
        let tag = stream.finalizeTag()
        try tag.withUnsafeBytes { buffer in
            Result { () throws(ClassicalCryptoError) in try output.writeAll(buffer, at: Int64(nonceByteCount)) }
        }.get()
        return nonce + tag
    }

    /// Opens the sealed file at `source` into a new plaintext file at `destination` in constant
    /// memory.
    ///
    /// Two passes: the first only verifies the tag, and no plaintext is written unless it passes;
    /// the second decrypts into a temporary file beside `destination` (readable only by its owner)
    /// while authenticating the ciphertext again, and renames it into place only if the tag
    /// verifies again and the sealed file is unchanged (same inode, size, modification and change
    /// times). So what reaches `destination` is exactly what was verified, even if the file was
    /// rewritten between the passes. A failure leaves `destination` untouched.
    /// - Throws: ``ClassicalCryptoError/sealedBoxTooShort(minimum:actual:)``,
    ///   ``ClassicalCryptoError/authenticationFailed``, ``ClassicalCryptoError/invalidKeyLength(expected:actual:)``,
    ///   ``ClassicalCryptoError/fileChanged(path:)``, ``ClassicalCryptoError/fileSystem(operation:path:errno:)``.
    public static func openFile(
        at source: URL, to destination: URL, using key: SymmetricKey,
        chunkByteCount: Int = SecretBoxFileSealer.defaultChunkByteCount
    ) throws(ClassicalCryptoError) {
        try openFile(at: source, to: destination, using: key, chunkByteCount: chunkByteCount, betweenPasses: {})
    }

    /// Opens the sealed file at `source` into `output`, an open file of the caller's (opened for
    /// writing), in constant memory.
    ///
    /// The two passes of ``openFile(at:to:using:chunkByteCount:)``: nothing is written into
    /// `output` unless the tag verified in the first; then `output` is emptied, the plaintext
    /// written from its start, and it is flushed (``DurableWrite``) once the second pass verified
    /// the same ciphertext again. Reads and writes are positional: no file offset moves. A failure
    /// in the second pass (the sealed file changed, a write failed) can leave part of the
    /// plaintext in `output`, which the caller then discards.
    ///
    /// - Throws: as ``openFile(at:to:using:chunkByteCount:)``.
    package static func openFile(
        at source: URL, into output: FileDescriptor, using key: SymmetricKey,
        chunkByteCount: Int = SecretBoxFileSealer.defaultChunkByteCount
    ) throws(ClassicalCryptoError) {
        try open(source, using: key, chunkByteCount: chunkByteCount, betweenPasses: {}, into: { _ throws(ClassicalCryptoError) in
            try output.truncate(to: 0)
            return output
        })
        // Ordering: the plaintext of a sealed file that stays, so a power cut costs a redo.
        try output.flush(need: .ordering)
    }

    /// ``openFile(at:to:using:chunkByteCount:)`` with a hook that runs after the tag verified and
    /// before decryption starts, so tests can change the file between the passes.
    static func openFile(
        at source: URL, to destination: URL, using key: SymmetricKey, chunkByteCount: Int,
        betweenPasses: () -> Void
    ) throws(ClassicalCryptoError) {
        var output: AtomicOutputFile?
        try open(source, using: key, chunkByteCount: chunkByteCount, betweenPasses: betweenPasses,
                 into: { byteCount throws(ClassicalCryptoError) in
            let file = try AtomicOutputFile(destination: destination.path, expectedByteCount: byteCount)
            output = file
            return file.file
        })
        try output?.commit()
    }

    /// Opens the sealed file at `source` in two passes: the first only verifies the tag; the
    /// second, only if it passed, decrypts into the file `makeOutput` hands over for the
    /// plaintext's length (written from its start), authenticating the ciphertext again and
    /// checking that the sealed file did not change.
    private static func open(
        _ source: URL, using key: SymmetricKey, chunkByteCount: Int, betweenPasses: () -> Void,
        into makeOutput: (_ plaintextByteCount: Int) throws(ClassicalCryptoError) -> FileDescriptor
    ) throws(ClassicalCryptoError) {
        try checkKey(key)
        guard chunkByteCount >= 64 else {
            throw .invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got \(chunkByteCount)")
        }
        let path = source.path
        let file = try FileDescriptor.openForReading(path)
        let identity = try file.identity()
        guard identity.size >= Int64(overheadByteCount) else {
            throw .sealedBoxTooShort(minimum: overheadByteCount, actual: Int(identity.size))
        }
        var prefix = [UInt8](repeating: 0, count: overheadByteCount)
        let prefixCount = try prefix.withUnsafeMutableBytes { buffer in
            Result { () throws(ClassicalCryptoError) in try file.readFully(into: buffer, at: 0) }
        }.get()
        guard prefixCount == overheadByteCount else { throw .fileChanged(path: path) }
        let nonce = Array(prefix[0..<nonceByteCount])
        let expectedTag = Array(prefix[nonceByteCount...])
        let messageCount = Int(identity.size) - overheadByteCount
        let messageStart = Int64(overheadByteCount)

        // Pass 1: authenticate only.
        let verifier = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        let verifiedCount = try SecretBoxFileSealer.forEachChunk(of: file, from: messageStart, chunkByteCount: chunkByteCount) { chunk in
            verifier.authenticate(UnsafeRawBufferPointer(chunk))
        }
        guard verifiedCount == messageCount, try file.identity() == identity else { throw .fileChanged(path: path) }
        guard SecureMemory.constantTimeEquals(verifier.finalizeTag(), expectedTag) else { throw .authenticationFailed }
        betweenPasses()

        // Pass 2: decrypt, authenticating the same ciphertext again.
        let output = try makeOutput(messageCount)
        let decryptor = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        let decryptedCount = try SecretBoxFileSealer.transformChunks(
            of: file, from: messageStart, into: output, at: 0, chunkByteCount: chunkByteCount, decryptor.openChunk)
        guard decryptedCount == messageCount, try file.identity() == identity,
              SecureMemory.constantTimeEquals(decryptor.finalizeTag(), expectedTag) else {
            throw .fileChanged(path: path)
        }
    }
}
