import Foundation
import PQCrypto
import TestSupport
import Testing

@Suite("Keccak: SHA3-256, SHA3-512, SHAKE128, SHAKE256")
struct KeccakTests {
    /// FIPS 202 examples (NIST "SHA3-256 / SHA3-512 / SHAKE" example values) for the empty message
    /// and "abc".
    @Test func fipsExamples() throws {
        #expect(SHA3_256.hash(data: [UInt8]()).hex == "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a")
        #expect(SHA3_256.hash(data: Array("abc".utf8)).hex == "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
        #expect(SHA3_512.hash(data: Array("abc".utf8)).hex
            == "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0")
        #expect(SHAKE128.hash(data: [UInt8](), outputByteCount: 32).hex
            == "7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26")
        #expect(SHAKE256.hash(data: [UInt8](), outputByteCount: 64).hex
            == "46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762fd75dc4ddd8c0f200cb05019d67b592f6fc821c49479ab48640292eacb3b7c4be")
        // 200 bytes of 0xA3, the message of NIST's SHA-3 examples (1600 bits).
        let a3 = [UInt8](repeating: 0xA3, count: 200)
        #expect(SHA3_256.hash(data: a3).hex == "79f38adec5c20307a98ef76e8324afbfd46cfd81b22e3973c65fa1bd9de31787")
    }

    /// Random inputs of many lengths, around every rate boundary, against Python's hashlib, with
    /// input split into random chunks (incremental absorb) and output read in random pieces.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func matchesHashlib() throws {
        var rng = SplitMix64(seed: 0x5EED_CAFE)
        var lengths = Array(0...300) + [335, 336, 337, 503, 504, 505, 1000, 4096, 10_000]
        lengths += [71, 72, 73, 135, 136, 137, 167, 168, 169, 271, 272, 273]
        struct Case: Codable { let data: String; let outLen: Int }
        struct Answer: Codable { let sha3_256: String; let sha3_512: String; let shake128: String; let shake256: String }
        var cases = [Case]()
        var inputs = [[UInt8]]()
        for length in lengths {
            let data = rng.bytes(length)
            inputs.append(data)
            cases.append(Case(data: data.hex, outLen: Int(rng.next() % 700)))
        }
        let answers = try InteropPython.call("hashlib_keccak.py", cases, as: [Answer].self)
        #expect(answers.count == cases.count)
        for (index, answer) in answers.enumerated() {
            let data = inputs[index]
            let outLen = cases[index].outLen
            func chunked<H>(_ hasher: inout H, _ update: (inout H, [UInt8]) -> Void) {
                var position = 0
                while position < data.count {
                    let take = min(data.count - position, Int(rng.next() % 200))
                    update(&hasher, Array(data[position..<position + take]))
                    position += take
                }
            }
            var sha256 = SHA3_256()
            chunked(&sha256) { $0.update(data: $1) }
            #expect(sha256.finalize().hex == answer.sha3_256, "SHA3-256 length \(data.count)")
            var sha512 = SHA3_512()
            chunked(&sha512) { $0.update(data: $1) }
            #expect(sha512.finalize().hex == answer.sha3_512, "SHA3-512 length \(data.count)")
            var shake128 = SHAKE128()
            chunked(&shake128) { $0.update(data: $1) }
            var reader128 = shake128.finalize()
            var out128 = [UInt8]()
            while out128.count < outLen {
                out128 += reader128.read(count: min(outLen - out128.count, Int(rng.next() % 300) + 1))
            }
            #expect(out128.hex == answer.shake128, "SHAKE128 length \(data.count) out \(outLen)")
            #expect(SHAKE256.hash(data: data, outputByteCount: outLen).hex == answer.shake256,
                    "SHAKE256 length \(data.count) out \(outLen)")
        }
    }

    @Test func readerOfZeroBytesIsEmpty() {
        var reader = SHAKE256().finalize()
        #expect(reader.read(count: 0).isEmpty)
        #expect(reader.read(count: -5).isEmpty)
        #expect(reader.read(count: 4).hex == "46b9dd2b")
    }
}
