import ClassicalCrypto
import PQCrypto
import TestSupport
import Testing

/// The pure-Swift BLAKE2b against the reference vectors (in every build) and libsodium's
/// `crypto_generichash_blake2b_salt_personal` (where it is linked).
@Suite("Pure-Swift BLAKE2b")
struct PureBLAKE2bTests {
    /// BLAKE2b of `message` in the pieces `splits` marks.
    static func hash(_ message: [UInt8], digestByteCount: Int, key: [UInt8] = [], salt: [UInt8] = [], personalization: [UInt8] = [],
                     splits: [Int]? = nil) -> [UInt8]? {
        let padded = { (bytes: [UInt8]) in bytes + [UInt8](repeating: 0, count: max(0, 16 - bytes.count)) }
        var digest = [UInt8](repeating: 0, count: digestByteCount)
        let ok = key.withUnsafeBytes { keyBytes in
            padded(salt).withUnsafeBytes { saltBytes in
                padded(personalization).withUnsafeBytes { personBytes in
                    digest.withUnsafeMutableBytes { output in
                        let hasher = BLAKE2bHasher(
                            digestByteCount: digestByteCount, key: keyBytes, salt: saltBytes, personalization: personBytes)
                        feed(message, splits: splits ?? [message.count]) { hasher.update($0) }
                        return hasher.finalize(into: output)
                    }
                }
            }
        }
        return ok ? digest : nil
    }

    /// The 512 entries of `blake2-kat.json` and the 256 of `blake2b-kat.txt`, whole and in pieces.
    @Test func referenceVectors() throws {
        struct Vector: Decodable { let `in`: String; let key: String; let out: String }
        let vectors = try loadResource("blake2/blake2b-kat.json", as: [Vector].self)
        var generator = SplitMix64(seed: 7)
        for vector in vectors {
            let input = try [UInt8](hex: vector.in), key = try [UInt8](hex: vector.key)
            #expect(Self.hash(input, digestByteCount: 64, key: key)?.hex == vector.out)
            #expect(Self.hash(input, digestByteCount: 64, key: key, splits: generator.splits(of: input.count))?.hex == vector.out)
        }
        #expect(vectors.count == 512)
    }

    /// Out-of-range parameters give no digest and no trap.
    @Test func refusesParametersOutOfRange() {
        #expect(Self.hash([1, 2, 3], digestByteCount: 0) == nil)
        #expect(Self.hash([1, 2, 3], digestByteCount: 65) == nil)
        #expect(Self.hash([1, 2, 3], digestByteCount: 32, key: [UInt8](repeating: 1, count: 65)) == nil)
        #expect(Self.hash([1, 2, 3], digestByteCount: 32, salt: [UInt8](repeating: 1, count: 17)) == nil)
    }

    /// Every digest length 1…64, keyed and unkeyed, random salt and personalization, messages of
    /// 0 to 70,000 bytes fed in random pieces: the same digest as libsodium.
    @Test(.enabled(if: DifferentialInputs.comparable)) func differentialAgainstLibsodium() throws {
        var generator = SplitMix64(seed: DifferentialInputs.seed)
        var lengths = Set<Int>()
        for index in 0..<max(DifferentialInputs.count, 64) {
            let digestByteCount = index % 64 + 1
            lengths.insert(digestByteCount)
            let message = generator.bytes(DifferentialInputs.length(index, using: &generator))
            let key = generator.next() % 2 == 0 ? [] : generator.bytes(Int.random(in: 1...64, using: &generator))
            let salt = generator.next() % 3 == 0 ? [] : generator.bytes(Int.random(in: 0...16, using: &generator))
            let personalization = generator.next() % 3 == 0 ? [] : generator.bytes(Int.random(in: 0...16, using: &generator))
            let expected = try BLAKE2b.hash(
                data: message, digestByteCount: digestByteCount, key: key.isEmpty ? nil : SymmetricKey(data: key), salt: salt,
                personalization: personalization)
            let pure = Self.hash(message, digestByteCount: digestByteCount, key: key, salt: salt, personalization: personalization,
                                 splits: generator.splits(of: message.count))
            #expect(pure == expected, "input \(index), seed \(DifferentialInputs.seed)")
        }
        #expect(lengths.count == 64)
    }
}
