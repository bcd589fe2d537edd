import Foundation
import PQCrypto
import TestSupport
import Testing

@testable import ClassicalCrypto

@Suite("SecretBox streamed through files")
struct SecretBoxStreamingTests {
    /// Sizes around the 32-byte offset of the message in the keystream, Salsa20's 64-byte
    /// blocks and the chunk size, for several chunk sizes (64 and 100 make every chunk boundary
    /// fall mid-block).
    @Test(arguments: [64, 100, 4096, SecretBoxFileSealer.defaultChunkByteCount])
    func streamedSealEqualsOneShot(chunkByteCount: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        var rng = SplitMix64(seed: UInt64(chunkByteCount))
        let key = SymmetricKey(data: rng.bytes(32))
        var sizes = [0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129, 1000]
        sizes += [chunkByteCount - 1, chunkByteCount, chunkByteCount + 1, 3 * chunkByteCount + 17]
        for size in sizes {
            let message = rng.bytes(size)
            let nonce = rng.bytes(24)
            let plain = try directory.write(message, to: "plain-\(size)")
            let sealedFile = directory.file("sealed-\(size)")
            let opened = directory.file("opened-\(size)")
            let expected = [UInt8](try SecretBox.seal(message, using: key, nonce: nonce))

            let sealer = try SecretBoxFileSealer(plaintextAt: plain, using: key, nonce: nonce, chunkByteCount: chunkByteCount)
            #expect(sealer.plaintextByteCount == size)
            #expect(sealer.sealedByteCount == size + 40)
            #expect(sealer.prefix == Array(expected.prefix(40)))
            #expect(sealer.tag == Array(expected[24..<40]))
            #expect(try sealer.sealedBytes() == expected, "size \(size) chunk \(chunkByteCount)")

            try SecretBox.sealFile(at: plain, to: sealedFile, using: key, nonce: nonce, chunkByteCount: chunkByteCount)
            #expect([UInt8](try Data(contentsOf: sealedFile)) == expected, "size \(size) chunk \(chunkByteCount)")

            // From an open descriptor: what the first pass's observer sees is the sealed bytes
            // in order, with zeros for the tag; every later pass gives the sealed bytes.
            var observed: [UInt8] = []
            let source = try FileDescriptor.openForReading(plain.path)
            let fromDescriptor = try SecretBoxFileSealer(reading: source, identity: try source.identity(), using: key, nonce: nonce,
                                                         chunkByteCount: chunkByteCount) { observed += $0 }
            #expect(try fromDescriptor.sealedBytes() == expected, "size \(size) chunk \(chunkByteCount)")
            #expect(try fromDescriptor.sealedBytes() == expected, "a second pass, size \(size)")
            #expect(fromDescriptor.prefix == Array(expected.prefix(40)))
            #expect(observed == nonce + [UInt8](repeating: 0, count: 16) + expected.dropFirst(40))

            try SecretBox.openFile(at: sealedFile, to: opened, using: key, chunkByteCount: chunkByteCount)
            #expect([UInt8](try Data(contentsOf: opened)) == message, "size \(size) chunk \(chunkByteCount)")
        }
        // Only the files written above: no temporary files left behind.
        #expect(try directory.contents().allSatisfy { !$0.contains(".partial") })
    }

    /// Runs `body` with a scratch directory holding the file `plain` (`contents`) and a fresh key,
    /// and removes the directory afterwards.
    func withPlainFile(
        _ contents: some DataProtocol, _ body: (TemporaryDirectory, URL, SymmetricKey) throws -> Void
    ) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        try body(directory, try directory.write(contents, to: "plain"), SecureRandom.symmetricKey())
    }

    @Test func randomNonceByDefault() throws {
        try withPlainFile(Data(repeating: 1, count: 500)) { _, plain, key in
            let first = try SecretBoxFileSealer(plaintextAt: plain, using: key)
            let second = try SecretBoxFileSealer(plaintextAt: plain, using: key)
            #expect(first.nonce != second.nonce)
            #expect([UInt8](try SecretBox.open(try first.sealedBytes(), using: key)) == [UInt8](repeating: 1, count: 500))
        }
    }

    /// A tampered file is rejected in the first pass: nothing is written, and an existing
    /// destination keeps its contents.
    @Test func tamperedFileWritesNothing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let key = SecureRandom.symmetricKey()
        let sealed = [UInt8](try SecretBox.seal([UInt8](repeating: 0x33, count: 10_000), using: key))
        let destination = directory.file("out")
        try Data("previous".utf8).write(to: destination)
        for index in [0, 23, 24, 39, 40, 5000, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x80
            let source = try directory.write(tampered, to: "tampered-\(index)")
            #expect(throws: ClassicalCryptoError.authenticationFailed) {
                try SecretBox.openFile(at: source, to: destination, using: key, chunkByteCount: 4096)
            }
        }
        let truncated = try directory.write(sealed.dropLast(), to: "truncated")
        #expect(throws: ClassicalCryptoError.authenticationFailed) { try SecretBox.openFile(at: truncated, to: destination, using: key) }
        let wrongKey = try directory.write(sealed, to: "good")
        #expect(throws: ClassicalCryptoError.authenticationFailed) {
            try SecretBox.openFile(at: wrongKey, to: destination, using: SecureRandom.symmetricKey())
        }
        #expect(String(decoding: try Data(contentsOf: destination), as: UTF8.self) == "previous")
        #expect(try directory.contents().allSatisfy { !$0.contains(".partial") })
    }

    @Test func shortFileIsRejected() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        for count in [0, 1, 39] {
            let source = try directory.write(Data(repeating: 0, count: count), to: "short-\(count)")
            #expect(throws: ClassicalCryptoError.sealedBoxTooShort(minimum: 40, actual: count)) {
                try SecretBox.openFile(at: source, to: directory.file("out"), using: SecureRandom.symmetricKey())
            }
        }
        #expect(!FileManager.default.fileExists(atPath: directory.file("out").path))
    }

    @Test func badArgumentsAreRejected() throws {
        try withPlainFile([1, 2, 3]) { directory, plain, key in
            #expect(throws: ClassicalCryptoError.invalidKeyLength(expected: 32, actual: 16)) {
                try SecretBoxFileSealer(plaintextAt: plain, using: SymmetricKey(data: [UInt8](repeating: 0, count: 16)))
            }
            #expect(throws: ClassicalCryptoError.invalidNonceLength(expected: 24, actual: 12)) {
                try SecretBoxFileSealer(plaintextAt: plain, using: key, nonce: [UInt8](repeating: 0, count: 12))
            }
            #expect(throws: ClassicalCryptoError.invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got 63")) {
                try SecretBoxFileSealer(plaintextAt: plain, using: key, chunkByteCount: 63)
            }
            #expect(throws: ClassicalCryptoError.invalidParameter(name: "chunkByteCount", reason: "must be at least 64, got 0")) {
                try SecretBox.openFile(at: plain, to: directory.file("x"), using: key, chunkByteCount: 0)
            }
            let missing = directory.file("missing")
            #expect(throws: ClassicalCryptoError.fileSystem(operation: "open", path: missing.path, errno: ENOENT)) {
                try SecretBoxFileSealer(plaintextAt: missing, using: key)
            }
            #expect(throws: ClassicalCryptoError.fileSystem(operation: "open", path: missing.path, errno: ENOENT)) {
                try SecretBox.openFile(at: missing, to: directory.file("x"), using: key)
            }
            // The destination's directory does not exist: the temporary file cannot be created.
            let sealed = directory.file("sealed")
            try SecretBox.sealFile(at: plain, to: sealed, using: key)
            let nowhere = directory.file("no-such-dir/out")
            #expect {
                try SecretBox.openFile(at: sealed, to: nowhere, using: key)
            } throws: { error in
                guard let error = error as? ClassicalCryptoError, error.kind == .fileSystem else { return false }
                return error.operation == "open" && error.errno == ENOENT
            }
        }
    }

    /// A file changed in place after the first pass (same size and inode, new bytes) makes a
    /// later pass fail before its last bytes are handed out, so only incomplete output can come
    /// of it; so does a file replaced under its path.
    @Test(arguments: [(1000, 64), (1000, 4096), (300_000, 4096)])
    func fileChangedBetweenPasses(size: Int, chunkByteCount: Int) throws {
        try withPlainFile(Data(repeating: 5, count: size)) { _, plain, key in
            let sealer = try SecretBoxFileSealer(plaintextAt: plain, using: key, chunkByteCount: chunkByteCount)
            let original = try sealer.sealedBytes()
            #expect(original.count == sealer.sealedByteCount)
            // Changed in place at its last byte, then at its first: a later pass stops at the
            // chunk that differs, having handed out only the first pass's bytes before it.
            for offset in [size - 1, 0] {
                let writer = try FileHandle(forWritingTo: plain)
                try writer.seek(toOffset: UInt64(offset))
                try writer.write(contentsOf: Data([6]))
                try writer.close()
                var handedOut = [UInt8]()
                #expect(throws: ClassicalCryptoError.fileChanged(path: plain.path), "offset \(offset)") {
                    try sealer.writeSealedBytes { handedOut += $0 }
                }
                #expect(handedOut == Array(original.prefix(handedOut.count)), "only the first pass's bytes")
                let changedChunkStart = 40 + (offset / chunkByteCount) * chunkByteCount
                #expect(handedOut.count == changedChunkStart, "offset \(offset): \(handedOut.count) bytes handed out")
            }

            // Replaced under its path (renamed over): the sealer reads the file it opened, which
            // keeps its bytes; a pass gives the first pass's bytes or refuses (where the old
            // file's lost link changes its time), never the new file's.
            try Data(repeating: 5, count: size).write(to: plain)
            let second = try SecretBoxFileSealer(plaintextAt: plain, using: key, chunkByteCount: chunkByteCount)
            let secondBytes = try second.sealedBytes()
            try Data(repeating: 7, count: size).write(to: plain, options: .atomic)
            do {
                #expect(try second.sealedBytes() == secondBytes)
            } catch let error as ClassicalCryptoError {
                #expect(error == .fileChanged(path: plain.path))
            }
        }
    }

    /// Each reader is a pass of its own from the first byte: readers made one after another, or
    /// side by side and read in turns, give the same bytes (what a transport that asks for the
    /// body again receives).
    @Test func readersRestartFromTheFirstByte() throws {
        var rng = SplitMix64(seed: 0x5EA1)
        try withPlainFile(Data(rng.bytes(100_000))) { _, plain, key in
            let sealer = try SecretBoxFileSealer(plaintextAt: plain, using: key, chunkByteCount: 4096)
            let whole = try sealer.sealedBytes()
            #expect([UInt8](try SecretBox.open(whole, using: key)) == [UInt8](try Data(contentsOf: plain)))
            let first = sealer.makeReader(), second = sealer.makeReader()
            var fromFirst = [UInt8](), fromSecond = [UInt8]()
            for _ in 0..<5 { if let chunk = try first.next() { fromFirst += chunk } }
            while let chunk = try second.next() { fromSecond += chunk }
            while let chunk = try first.next() { fromFirst += chunk }
            #expect(fromFirst == whole)
            #expect(fromSecond == whole)
            #expect(try first.next() == nil)
        }
    }

    /// A sealed file rewritten after the tag verified (same size, even with the original times
    /// put back) is caught in the second pass: nothing reaches the destination.
    @Test func openNoticesAFileRewrittenBetweenPasses() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let key = SecureRandom.symmetricKey()
        let sealed = directory.file("sealed")
        let destination = directory.file("out")
        let original = [UInt8](try SecretBox.seal([UInt8](repeating: 0x61, count: 50_000), using: key))
        for rewrite in ["content", "content and times"] {
            try Data(original).write(to: sealed)
            let attributes = try FileManager.default.attributesOfItem(atPath: sealed.path)
            #expect(throws: ClassicalCryptoError.fileChanged(path: sealed.path), "\(rewrite)") {
                try SecretBox.openFile(at: sealed, to: destination, using: key, chunkByteCount: 4096) {
                    // Overwrite in place (same inode and size) with different ciphertext.
                    var altered = original
                    altered[1000] ^= 0xFF
                    guard let handle = try? FileHandle(forWritingTo: sealed) else { return }
                    handle.write(Data(altered))
                    try? handle.close()
                    if rewrite == "content and times" {
                        try? FileManager.default.setAttributes(
                            [.modificationDate: attributes[.modificationDate] as Any], ofItemAtPath: sealed.path)
                    }
                }
            }
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try directory.contents() == ["sealed"])
    }

    @Test func sinkErrorsPropagate() throws {
        struct Stop: Error, Equatable {}
        try withPlainFile(Data(repeating: 5, count: 300_000)) { _, plain, key in
            let sealer = try SecretBoxFileSealer(plaintextAt: plain, using: key, chunkByteCount: 1024)
            var calls = 0
            #expect(throws: Stop()) {
                try sealer.writeSealedBytes { _ in
                    calls += 1
                    if calls == 3 { throw Stop() }
                }
            }
            #expect(calls == 3)
        }
    }

    /// A file sealed by PyNaCl opens through the streamed opener, and a streamed seal opens in
    /// PyNaCl.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func pynaclInteropThroughFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        var rng = SplitMix64(seed: 0xF11E)
        let message = rng.bytes(1_234_567)
        let key = rng.bytes(32)
        let plain = try directory.write(message, to: "plain")
        let sealedBySwift = directory.file("sealed")
        try SecretBox.sealFile(at: plain, to: sealedBySwift, using: SymmetricKey(data: key))
        let swiftHex = try Data(contentsOf: sealedBySwift).hex
        var request = SodiumInteropRequest()
        request.secretboxOpen = [SecretBoxCase(key: key.hex, message: "", sealed: swiftHex)]
        request.secretboxSeal = [SecretBoxCase(key: key.hex, message: message.hex, sealed: nil)]
        let response = try InteropPython.call("sodium_interop.py", request, as: SodiumInteropResponse.self)
        #expect(response.secretboxOpened == [message.hex])
        let sealedByPython = try directory.write(Data(hex: try #require(response.secretboxSealed.first)), to: "python-sealed")
        let opened = directory.file("opened")
        try SecretBox.openFile(at: sealedByPython, to: opened, using: SymmetricKey(data: key), chunkByteCount: 1000)
        #expect([UInt8](try Data(contentsOf: opened)) == message)
    }
}

extension SecretBoxFileSealer {
    /// The whole sealed box, collected from ``writeSealedBytes(to:)`` (the files here are small).
    func sealedBytes() throws -> [UInt8] {
        var bytes = [UInt8]()
        try writeSealedBytes { bytes.append(contentsOf: $0) }
        return bytes
    }
}

/// The descriptor forms, for a file the caller opened itself and keeps (DriveSync opens its files
/// without following symbolic links): the same bytes as the path forms, read and written at
/// explicit offsets (the caller's file offset never moves), and the same checks.
@Suite("SecretBox through open descriptors")
struct SecretBoxDescriptorTests {
    /// A duplicate of `handle`'s descriptor, as StationClient makes one (closed when dropped).
    func duplicate(_ handle: FileHandle) throws -> FileDescriptor {
        try FileDescriptor.duplicating(handle.fileDescriptor, path: "the handle")
    }

    @Test(arguments: [0, 1, 39, 40, 1000, 300_000])
    func descriptorFormsGiveThePathFormsBytes(size: Int) throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        var rng = SplitMix64(seed: UInt64(size) + 1)
        let key = SymmetricKey(data: rng.bytes(32))
        let nonce = rng.bytes(24)
        let message = rng.bytes(size)
        let plain = try directory.write(message, to: "plain")
        let byPath = directory.file("sealed-by-path")
        try SecretBox.sealFile(at: plain, to: byPath, using: key, nonce: nonce, chunkByteCount: 4096)
        let sealed = [UInt8](try Data(contentsOf: byPath))

        // Sealed from a handle whose offset is mid-file: the whole file is read, the offset stays.
        let handle = try FileHandle(forReadingFrom: plain)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(size / 2))
        let source = try duplicate(handle)
        let sealer = try SecretBoxFileSealer(reading: source, identity: try source.identity(), using: key, nonce: nonce,
                                             chunkByteCount: 4096)
        #expect(try sealer.sealedBytes() == sealed)
        #expect(sealer.prefix == Array(sealed.prefix(40)))
        #expect(try handle.offset() == UInt64(size / 2))

        // Opened into a file the caller holds, longer than the plaintext: emptied, then written from its start.
        let openedByPath = directory.file("opened-by-path")
        try SecretBox.openFile(at: byPath, to: openedByPath, using: key, chunkByteCount: 4096)
        let out = try directory.write([UInt8](repeating: 0x55, count: size + 1000), to: "out")
        let output = try FileHandle(forUpdating: out)
        defer { try? output.close() }
        try output.seek(toOffset: 7)
        try SecretBox.openFile(at: byPath, into: try duplicate(output), using: key, chunkByteCount: 4096)
        #expect([UInt8](try Data(contentsOf: out)) == message)
        #expect(try Data(contentsOf: out) == Data(contentsOf: openedByPath))
        #expect(try output.offset() == 7)

        // A plain copy into the held file (a public download's last step) is exact too.
        try Data(repeating: 0x66, count: size + 10).write(to: out)
        try duplicate(output).overwrite(withContentsOf: FileDescriptor.openForReading(plain.path))
        #expect([UInt8](try Data(contentsOf: out)) == message)
        #expect(try output.offset() == 7)
    }

    /// Nothing is written into the caller's file unless the tag verified: a tampered, truncated
    /// or wrongly keyed box leaves it as it was.
    @Test func aBoxThatDoesNotOpenLeavesTheFileAlone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let key = SecureRandom.symmetricKey()
        let sealed = [UInt8](try SecretBox.seal([UInt8](repeating: 0x33, count: 10_000), using: key))
        var tampered = sealed
        tampered[5000] ^= 0x80
        let previous = Data("the caller's bytes".utf8)
        let out = try directory.write(previous, to: "out")
        let output = try FileHandle(forUpdating: out)
        defer { try? output.close() }
        for (name, box, key) in [("tampered", tampered, key), ("truncated", Array(sealed.dropLast()), key),
                                 ("wrong key", sealed, SecureRandom.symmetricKey())] {
            let source = try directory.write(box, to: name)
            #expect(throws: ClassicalCryptoError.authenticationFailed, "\(name)") {
                try SecretBox.openFile(at: source, into: try duplicate(output), using: key, chunkByteCount: 4096)
            }
        }
        let short = try directory.write([UInt8](repeating: 0, count: 39), to: "short")
        #expect(throws: ClassicalCryptoError.sealedBoxTooShort(minimum: 40, actual: 39)) {
            try SecretBox.openFile(at: short, into: try duplicate(output), using: key)
        }
        #expect(try Data(contentsOf: out) == previous)
    }

    /// The seal holds the file to the identity it is handed (taken when the size was measured):
    /// a file grown since then, or during the pass, fails with `fileChanged`.
    @Test func aDescriptorSealNoticesAChangedFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        let key = SecureRandom.symmetricKey()
        let plain = try directory.write(Data(repeating: 5, count: 100_000), to: "plain")
        let handle = try FileHandle(forReadingFrom: plain)
        defer { try? handle.close() }
        let source = try duplicate(handle)
        let writer = try FileHandle(forUpdating: plain)
        defer { try? writer.close() }

        let measured = try source.identity()
        try writer.seekToEnd()
        try writer.write(contentsOf: Data([1]))
        #expect(throws: ClassicalCryptoError.fileChanged(path: "the handle")) {
            try SecretBoxFileSealer(reading: source, identity: measured, using: key)
        }

        var grown = false
        #expect(throws: ClassicalCryptoError.fileChanged(path: "the handle")) {
            try SecretBoxFileSealer(reading: source, identity: try source.identity(), using: key, chunkByteCount: 4096) { _ in
                guard !grown else { return }
                grown = true
                _ = try? writer.seekToEnd()
                try? writer.write(contentsOf: Data([2]))
            }
        }
        #expect(grown)
        // Unchanged since it was measured, it seals.
        _ = try SecretBoxFileSealer(reading: source, identity: try source.identity(), using: key)
    }
}
