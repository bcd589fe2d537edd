import Foundation
import ClassicalCrypto
import SHA2
import TestSupport
import Testing

@Suite("SHA-256 through the platform's crypto library")
struct SHA256Tests {
    /// FIPS 180-4 example values.
    @Test func fipsExamples() {
        #expect(SHA256.hash(data: [UInt8]()).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hash(data: Array("abc".utf8)).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(data: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)).hex
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        var million = SHA256()
        let block = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { million.update(data: block) }
        #expect(million.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Random lengths hashed in random pieces, and a file hashed in chunks, against hashlib.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func incrementalAndFileMatchHashlib() throws {
        var rng = SplitMix64(seed: 0x5A25_6000)
        let inputs = (Array(0...130) + [1000, 4096, 65_537, 300_001]).map { rng.bytes($0) }
        var digests = [String]()
        for input in inputs {
            var hasher = SHA256()
            var position = 0
            while position < input.count {
                let take = min(input.count - position, Int(rng.next() % 100))
                input[position..<position + take].withUnsafeBytes { hasher.update(bufferPointer: $0) }
                position += take
            }
            let digest = hasher.finalize()
            #expect(digest == SHA256.hash(data: input))
            digests.append(digest.hex)
        }
        var request = SodiumInteropRequest()
        request.sha256 = inputs.map(\.hex)
        let response = try InteropPython.call("sodium_interop.py", request, as: SodiumInteropResponse.self)
        #expect(response.sha256 == digests)

        let directory = try TemporaryDirectory()
        defer { directory.cleanup() }
        for (index, input) in inputs.enumerated().suffix(6) {
            let url = try directory.write(input, to: "input-\(index)")
            #expect(try SHA256.hash(fileAt: url, chunkByteCount: 4096).hex == digests[index])
        }
        let missing = directory.file("missing")
        #expect(throws: ClassicalCryptoError.fileSystem(operation: "open", path: missing.path, errno: ENOENT)) {
            try SHA256.hash(fileAt: missing)
        }
    }

    /// Copies of a hasher continue independently.
    @Test func hasherIsAValue() {
        var first = SHA256()
        first.update(data: Array("ab".utf8))
        var second = first
        second.update(data: Array("c".utf8))
        #expect(second.finalize().hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(first.finalize() == SHA256.hash(data: Array("ab".utf8)))

        // Finalizing a copy leaves the original able to go on.
        var original = SHA256()
        original.update(data: Array("ab".utf8))
        let copy = original
        #expect(copy.finalize() == SHA256.hash(data: Array("ab".utf8)))
        original.update(data: Array("c".utf8))
        #expect(original.finalize().hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// Every length around the 64-byte block and padding boundaries, against Python's hashlib.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func sha256MatchesHashlib() throws {
        var rng = SplitMix64(seed: 0x5A_256)
        let inputs = (Array(0...200) + [255, 256, 257, 1000, 4095, 4096, 4097]).map { rng.bytes($0) }
        let expected = try InteropPython.call("hashlib_sha256.py", inputs.map(\.hex), as: [String].self)
        #expect(expected.count == inputs.count)
        for (input, digest) in zip(inputs, expected) {
            #expect(SHA256.hash(data: input).hex == digest, "length \(input.count)")
        }
    }
}
