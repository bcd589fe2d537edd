#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PQCrypto
import SHA2

/// Seals a file with SecretBox in constant memory, giving exactly the bytes of
/// ``SecretBox/seal(_:using:nonce:)`` over the whole file: `nonce ‖ tag ‖ ciphertext`.
///
/// Because the tag comes *before* the ciphertext, sealing takes two passes over the file.
/// Creating the sealer runs the first pass (encrypt and authenticate, keeping only the tag);
/// ``writeSealedBytes(to:)`` runs the second (encrypt again and hand out the bytes), as often as
/// needed: XSalsa20-Poly1305 with the same key and nonce gives the same bytes every time, so an
/// HTTP body built on it can be sent again from its first byte without a copy of the ciphertext
/// anywhere. To seal into another file use ``SecretBox/sealFile(at:to:using:nonce:chunkByteCount:)``.
///
/// The file is opened once, by the first pass, and every later pass reads that open file (never
/// the path again, which may by then name another file). A later pass hands out only the bytes
/// the first pass made: it compares each chunk of ciphertext with the first pass's (by its
/// SHA-256, kept from the first pass: 32 bytes a chunk) before handing it out, and before the
/// last one also the file's size, times and the tag. So a file that changed between or during the
/// passes throws ``ClassicalCryptoError/fileChanged(path:)`` at the first chunk that differs,
/// and no keystream ever covers two different plaintexts in what a reader receives: only a
/// prefix of the very bytes the first pass found can come of a changed file.
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
    private let file: FileDescriptor
    private let identity: FileIdentity
    private let chunkByteCount: Int
    /// The SHA-256 of each chunk of ciphertext the first pass made, in order, 32 bytes each.
    private let chunkDigests: [UInt8]

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
        let file = try FileDescriptor.openForReading(source.path)
        try self.init(reading: file, identity: try file.identity(), using: key, nonce: nonce, chunkByteCount: chunkByteCount,
                      source: source)
    }

    /// Runs the first pass over the open `file`, read from its start at explicit offsets (its
    /// file offset, shared with a descriptor it may be duplicated from, does not move), which the
    /// sealer keeps open for the later passes. `identity` is the file's when its size was taken
    /// (to check it against a limit, say): a file that differs from it by the end of the pass
    /// throws ``ClassicalCryptoError/fileChanged(path:)``, so the size checked is the size sealed.
    ///
    /// `observe` is handed the sealed bytes in order as they are made, so they can be hashed in
    /// the same pass: the nonce with zeros in place of the tag (known only at the end), then the
    /// ciphertext; each buffer is valid only during its call.
    ///
    /// - Throws: as ``init(plaintextAt:using:nonce:chunkByteCount:)``.
    package init(
        reading file: FileDescriptor, identity: FileIdentity, using key: SymmetricKey, nonce: [UInt8]? = nil,
        chunkByteCount: Int = defaultChunkByteCount, source: URL? = nil, observing observe: (UnsafeRawBufferPointer) -> Void = { _ in }
    ) throws(ClassicalCryptoError) {
        try SecretBox.checkKey(key)
        let nonce = nonce ?? SecureRandom.bytes(count: SecretBox.nonceByteCount)
        guard nonce.count == SecretBox.nonceByteCount else {
            throw .invalidNonceLength(expected: SecretBox.nonceByteCount, actual: nonce.count)
        }
        guard chunkByteCount >= 64 else {
            throw .invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got \(chunkByteCount)")
        }
        (nonce + [UInt8](repeating: 0, count: SecretBox.tagByteCount)).withUnsafeBytes { observe($0) }
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        var chunkDigests: [UInt8] = []
        chunkDigests.reserveCapacity(Int(max(0, identity.size) / Int64(chunkByteCount) + 1) * 32)
        let total = try Self.forEachChunk(of: file, from: 0, chunkByteCount: chunkByteCount) { chunk in
            stream.sealChunk(chunk)
            observe(UnsafeRawBufferPointer(chunk))
            chunkDigests += Self.digest(UnsafeRawBufferPointer(chunk))
        }
        guard try file.identity() == identity, Int64(total) == identity.size else {
            throw .fileChanged(path: file.path)
        }
        self.source = source ?? URL(fileURLWithPath: file.path)
        self.chunkDigests = chunkDigests
        self.nonce = nonce
        self.tag = stream.finalizeTag()
        self.plaintextByteCount = total
        self.key = key
        self.file = file
        self.identity = identity
        self.chunkByteCount = chunkByteCount
    }

    /// Runs a later pass: calls `sink` with the sealed bytes in order, first `nonce ‖ tag`, then
    /// the ciphertext chunk by chunk. Each buffer is valid only during its call. Can be called
    /// more than once (each call reads the file again).
    ///
    /// - Throws: ``ClassicalCryptoError/fileSystem(operation:path:errno:)`` or
    ///   ``ClassicalCryptoError/fileChanged(path:)`` (before the last chunk reaches `sink`), or
    ///   whatever `sink` throws.
    public func writeSealedBytes(to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = makeReader()
        while let chunk = try reader.next() { try chunk.withUnsafeBytes { try sink($0) } }
    }

    /// The SHA-256 of one chunk of ciphertext (not a secret: the station receives the chunk).
    static func digest(_ chunk: UnsafeRawBufferPointer) -> [UInt8] {
        var hasher = SHA2.SHA256()
        hasher.update(bufferPointer: chunk)
        return hasher.finalize()
    }

    /// A later pass as a reader that hands out the sealed bytes one run at a time, from the first:
    /// what a request body pulls from (and makes anew when a transport asks for the body again).
    package func makeReader() -> Reader { Reader(self) }

    /// One later pass over the sealer's file, pulled a run at a time with ``next()``.
    package final class Reader {
        private let sealer: SecretBoxFileSealer
        private let stream: XSalsa20Poly1305Stream
        private let buffer: UnsafeMutableRawBufferPointer
        private var prefixHandedOut = false
        private var plaintextRead: Int64 = 0
        private var finished = false

        fileprivate init(_ sealer: SecretBoxFileSealer) {
            self.sealer = sealer
            stream = sealer.nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: sealer.key, nonce: $0) }
            buffer = .allocate(byteCount: sealer.chunkByteCount, alignment: 64)
        }

        deinit {
            SecureMemory.zero(buffer)
            buffer.deallocate()
        }

        /// The next run of sealed bytes (`nonce ‖ tag` first), or `nil` after the last. Each run is
        /// handed out only if it is the first pass's (its SHA-256), and the last only once the
        /// file is seen unchanged and this pass's tag equals the first pass's.
        ///
        /// - Throws: ``ClassicalCryptoError/fileSystem(operation:path:errno:)`` or
        ///   ``ClassicalCryptoError/fileChanged(path:)``.
        package func next() throws(ClassicalCryptoError) -> Data? {
            guard !finished else { return nil }
            guard prefixHandedOut else {
                prefixHandedOut = true
                if sealer.plaintextByteCount == 0 { try finish() }
                return Data(sealer.prefix)
            }
            let remaining = Int64(sealer.plaintextByteCount) - plaintextRead
            let want = Int(min(Int64(buffer.count), remaining))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want])
            guard try sealer.file.readFully(into: chunk, at: plaintextRead) == want else {
                throw .fileChanged(path: sealer.file.path)
            }
            stream.sealChunk(chunk)
            // The first pass's ciphertext, or nothing: a chunk of a changed file never goes out.
            let index = Int(plaintextRead / Int64(buffer.count)) * 32
            let digest = SecretBoxFileSealer.digest(UnsafeRawBufferPointer(chunk))
            guard index + 32 <= sealer.chunkDigests.count, digest.elementsEqual(sealer.chunkDigests[index..<(index + 32)]) else {
                finished = true
                throw .fileChanged(path: sealer.file.path)
            }
            plaintextRead += Int64(want)
            if plaintextRead == Int64(sealer.plaintextByteCount) { try finish() }
            return Data(chunk)
        }

        /// The checks before the last run goes out: the same file, no longer than before, and
        /// the same ciphertext (its tag).
        private func finish() throws(ClassicalCryptoError) {
            finished = true
            var probe: UInt8 = 0
            let grown = try withUnsafeMutableBytes(of: &probe) { byte throws(ClassicalCryptoError) in
                try sealer.file.readFully(into: byte, at: plaintextRead)
            }
            guard grown == 0, try sealer.file.identity() == sealer.identity,
                  SecureMemory.constantTimeEquals(stream.finalizeTag(), sealer.tag) else {
                throw .fileChanged(path: sealer.file.path)
            }
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
    /// (To stream to a sink that cannot seek, use ``SecretBoxFileSealer``, which makes two passes or more.)
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
        let identity = try file.identity()
        try checkKey(key)
        let nonce = nonce ?? SecureRandom.bytes(count: nonceByteCount)
        guard nonce.count == nonceByteCount else {
            throw .invalidNonceLength(expected: nonceByteCount, actual: nonce.count)
        }
        guard chunkByteCount >= 64 else {
            throw .invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got \(chunkByteCount)")
        }
        let output = try AtomicOutputFile(destination: destination.path, expectedByteCount: Int(identity.size) + overheadByteCount)
        let placeholder = nonce + [UInt8](repeating: 0, count: tagByteCount)
        try placeholder.withUnsafeBytes { buffer in
            Result { () throws(ClassicalCryptoError) in try output.file.writeAll(buffer, at: 0) }
        }.get()
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0) }
        let total = try SecretBoxFileSealer.transformChunks(
            of: file, from: 0, into: output.file, at: Int64(placeholder.count), chunkByteCount: chunkByteCount, stream.sealChunk)
        guard Int64(total) == identity.size, try file.identity() == identity else { throw .fileChanged(path: file.path) }
        let tag = stream.finalizeTag()
        try tag.withUnsafeBytes { buffer in
            Result { () throws(ClassicalCryptoError) in try output.file.writeAll(buffer, at: Int64(nonceByteCount)) }
        }.get()
        try output.commit()
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
