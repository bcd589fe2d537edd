import ClassicalCrypto
import Foundation
import PQCrypto
import TestSupport
import Testing
import SHA2

/// The pure-Swift XSalsa20-Poly1305 (one-shot and streamed) and SHA-256 against the NaCl and
/// TweetNaCl vectors (in every build) and libsodium / libcrypto (where they are linked).
@Suite("Pure-Swift XSalsa20-Poly1305 and SHA-256")
struct PureSecretBoxTests {
    /// `tag ‖ ciphertext` of `message`, or `nil` when the sizes are refused.
    static func seal(_ message: [UInt8], key: [UInt8], nonce: [UInt8], outputByteCount: Int? = nil) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: outputByteCount ?? message.count + 16)
        let ok = message.withUnsafeBytes { m in
            key.withUnsafeBytes { k in
                nonce.withUnsafeBytes { n in output.withUnsafeMutableBytes { XSalsa20Poly1305.seal(m, into: $0, key: k, nonce: n) } }
            }
        }
        return ok ? output : nil
    }

    /// The message in `box` (`tag ‖ ciphertext`), or `nil` when it does not verify.
    static func open(_ box: [UInt8], key: [UInt8], nonce: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0xAA, count: max(box.count - 16, 0))
        let ok = box.withUnsafeBytes { b in
            key.withUnsafeBytes { k in
                nonce.withUnsafeBytes { n in output.withUnsafeMutableBytes { XSalsa20Poly1305.open(b, into: $0, key: k, nonce: n) } }
            }
        }
        if !ok { #expect(output.allSatisfy { $0 == 0xAA }, "a refused box wrote to the output") }
        return ok ? output : nil
    }

    /// Seals `message` through the streaming state in `chunk`-byte pieces (as the file sealer
    /// does), in pure Swift, and returns `tag ‖ ciphertext`.
    static func streamSeal(_ message: [UInt8], key: SymmetricKey, nonce: [UInt8], chunk: Int) -> [UInt8] {
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0, usesSystemLibrary: false) }
        var ciphertext = message
        ciphertext.withUnsafeMutableBytes { stream.process($0, inChunksOf: chunk, sealing: true) }
        return stream.finalizeTag() + ciphertext
    }

    /// Opens `tag ‖ ciphertext` through the streaming state in `chunk`-byte pieces, in pure Swift:
    /// the message, or `nil` when the tag does not verify.
    static func streamOpen(_ box: [UInt8], key: SymmetricKey, nonce: [UInt8], chunk: Int) -> [UInt8]? {
        let stream = nonce.withUnsafeBytes { XSalsa20Poly1305Stream(key: key, nonce: $0, usesSystemLibrary: false) }
        var message = Array(box.dropFirst(16))
        message.withUnsafeMutableBytes { stream.process($0, inChunksOf: chunk, sealing: false) }
        return SecureMemory.constantTimeEquals(stream.finalizeTag(), box.prefix(16)) ? message : nil
    }

    /// The 769 NaCl and TweetNaCl vectors, one-shot and streamed in 64-byte chunks.
    @Test(arguments: ["secretbox/nacl-secretbox.json", "secretbox/tweetnacl-secretbox-random.json"])
    func knownAnswers(file: String) throws {
        let vectors = try loadResource(file, as: SecretBoxTests.VectorFile.self).tests
        for vector in vectors {
            let key = try [UInt8](hex: vector.key), nonce = try [UInt8](hex: vector.nonce)
            let message = try [UInt8](hex: vector.msg), box = try [UInt8](hex: vector.box)
            #expect(Self.seal(message, key: key, nonce: nonce) == box, "tcId \(vector.tcId)")
            #expect(Self.open(box, key: key, nonce: nonce) == message, "tcId \(vector.tcId)")
            #expect(Self.streamSeal(message, key: SymmetricKey(data: key), nonce: nonce, chunk: 64) == box, "tcId \(vector.tcId)")
            #expect(Self.streamOpen(box, key: SymmetricKey(data: key), nonce: nonce, chunk: 100) == message, "tcId \(vector.tcId)")
        }
    }

    /// Wrong key, nonce or output sizes, truncated and tampered boxes: refused, nothing written.
    @Test func refusesBadInput() {
        let key = [UInt8](repeating: 7, count: 32), nonce = [UInt8](repeating: 9, count: 24)
        let message = Array("attack at dawn".utf8)
        #expect(Self.seal(message, key: Array(key.dropLast()), nonce: nonce) == nil)
        #expect(Self.seal(message, key: key + [0], nonce: nonce) == nil)
        #expect(Self.seal(message, key: key, nonce: Array(nonce.dropLast())) == nil)
        #expect(Self.seal(message, key: key, nonce: nonce, outputByteCount: message.count + 15) == nil)
        guard let box = Self.seal(message, key: key, nonce: nonce) else {
            Issue.record("seal failed")
            return
        }
        #expect(Self.open(box, key: key, nonce: nonce) == message)
        #expect(Self.open(Array(box.prefix(15)), key: key, nonce: nonce) == nil)
        #expect(Self.open(Array(box.dropLast()), key: key, nonce: nonce) == nil)
        for index in [0, 15, 16, box.count - 1] {
            var tampered = box
            tampered[index] ^= 0x01
            #expect(Self.open(tampered, key: key, nonce: nonce) == nil, "byte \(index)")
        }
        #expect(Self.open(box, key: [UInt8](repeating: 8, count: 32), nonce: nonce) == nil)
        var tamperedTail = box
        tamperedTail[tamperedTail.count - 1] ^= 0x80
        #expect(Self.streamOpen(tamperedTail, key: SymmetricKey(data: key), nonce: nonce, chunk: 5) == nil)
        // The empty message seals to a bare tag that opens to nothing.
        #expect(Self.open(Self.seal([], key: key, nonce: nonce) ?? [], key: key, nonce: nonce) == [])
    }

    /// The keystream is the same however a long run is split, across the 32-bit counter carry.
    @Test func keystreamAcrossTheCounterCarry() {
        let key = [UInt8](repeating: 3, count: 32), nonce = [UInt8](repeating: 5, count: 8)
        let start: UInt64 = 0xFFFF_FFFE
        var whole = [UInt8](repeating: 0, count: 64 * 9 + 5)
        key.withUnsafeBytes { k in
            nonce.withUnsafeBytes { n in
                whole.withUnsafeMutableBytes { Salsa20.xor($0, key: k.baseAddress!, nonce: n.baseAddress!, initialCounter: start) }
            }
        }
        var pieces = [UInt8]()
        for block in 0..<10 {
            var piece = [UInt8](repeating: 0, count: 64)
            key.withUnsafeBytes { k in
                nonce.withUnsafeBytes { n in
                    piece.withUnsafeMutableBytes {
                        Salsa20.xor($0, key: k.baseAddress!, nonce: n.baseAddress!, initialCounter: start + UInt64(block))
                    }
                }
            }
            pieces += piece
        }
        #expect(Array(pieces.prefix(whole.count)) == whole)
        // Blocks on both sides of the carry (counter 2^32 - 1, 2^32) differ: the high word moved.
        #expect(pieces[64..<128] != pieces[128..<192])
    }

    /// Random messages of 0 to 70,000 bytes: sealing gives libsodium's bytes and opens back;
    /// streamed in 64-byte and default-size chunks, with lengths that end before, on and after a
    /// chunk boundary, it gives the same bytes too.
    @Test(.enabled(if: DifferentialInputs.comparable)) func differentialAgainstLibsodium() throws {
        var generator = SplitMix64(seed: DifferentialInputs.seed)
        for index in 0..<DifferentialInputs.count {
            let key = generator.bytes(32), nonce = generator.bytes(24)
            let message = generator.bytes(DifferentialInputs.length(index, using: &generator))
            let expected = [UInt8](try SecretBox.seal(message, using: SymmetricKey(data: key), nonce: nonce).dropFirst(24))
            #expect(Self.seal(message, key: key, nonce: nonce) == expected, "input \(index), seed \(DifferentialInputs.seed)")
            #expect(Self.open(expected, key: key, nonce: nonce) == message, "input \(index)")
            #expect(Self.streamSeal(message, key: SymmetricKey(data: key), nonce: nonce, chunk: 64) == expected, "input \(index)")
            #expect(Self.streamOpen(expected, key: SymmetricKey(data: key), nonce: nonce, chunk: 64) == message, "input \(index)")
        }
        let chunk = SecretBoxFileSealer.defaultChunkByteCount
        for length in [chunk - 1, chunk, chunk + 1, 2 * chunk - 33, 2 * chunk, 2 * chunk + 31, 64 - 32, 64, 96] {
            let key = SymmetricKey(data: generator.bytes(32)), nonce = generator.bytes(24)
            let message = generator.bytes(length)
            let expected = [UInt8](try SecretBox.seal(message, using: key, nonce: nonce).dropFirst(24))
            #expect(Self.streamSeal(message, key: key, nonce: nonce, chunk: chunk) == expected, "length \(length)")
            #expect(Self.streamSeal(message, key: key, nonce: nonce, chunk: 64) == expected, "length \(length)")
            #expect(Self.streamOpen(expected, key: key, nonce: nonce, chunk: chunk) == message, "length \(length)")
        }
    }

    /// FIPS 180-4's "abc" and 448-bit examples, in one piece and byte by byte.
    @Test func sha256KnownAnswers() {
        func digest(_ message: [UInt8], splits: [Int]) -> String {
            var state = SHA256State()
            feed(message, splits: splits) { state.update($0) }
            var output = [UInt8](repeating: 0, count: 32)
            output.withUnsafeMutableBytes { state.finalize(into: $0.baseAddress!) }
            return output.hex
        }
        let abc = Array("abc".utf8)
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(digest(abc, splits: [3]) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(digest(long, splits: Array(1...long.count)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(digest([], splits: [0]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// Random messages of 0 to 70,000 bytes in random pieces: the digest of the platform's SHA-256.
    @Test(.enabled(if: DifferentialInputs.comparable)) func sha256DifferentialAgainstLibcrypto() {
        var generator = SplitMix64(seed: DifferentialInputs.seed ^ 0x256)
        for index in 0..<DifferentialInputs.count {
            let message = generator.bytes(DifferentialInputs.length(index, using: &generator))
            var state = SHA256State()
            feed(message, splits: generator.splits(of: message.count)) { state.update($0) }
            var copy = state
            var output = [UInt8](repeating: 0, count: 32), fromCopy = output
            output.withUnsafeMutableBytes { state.finalize(into: $0.baseAddress!) }
            fromCopy.withUnsafeMutableBytes { copy.finalize(into: $0.baseAddress!) }
            #expect(output == SHA256.hash(data: message), "input \(index), seed \(DifferentialInputs.seed)")
            #expect(fromCopy == output)
        }
    }
}
