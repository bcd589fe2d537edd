import Foundation
import PQCrypto
import ClassicalCrypto
import TestSupport
import Testing

@Suite("BLAKE2b: reference vectors, personalization, hashlib")
struct BLAKE2bTests {
    /// The 512 `blake2b` entries of BLAKE2's `blake2-kat.json` (256 unkeyed, 256 keyed; 64-byte
    /// digests).
    @Test func referenceJSONVectors() throws {
        struct Vector: Decodable { let hash: String; let `in`: String; let key: String; let out: String }
        let vectors = try loadResource("blake2/blake2b-kat.json", as: [Vector].self)
        #expect(vectors.count == 512)
        #expect(vectors.filter { $0.key.isEmpty }.count == 256)
        for vector in vectors {
            let key = vector.key.isEmpty ? nil : SymmetricKey(data: try [UInt8](hex: vector.key))
            let digest = try BLAKE2b.hash(data: try [UInt8](hex: vector.in), digestByteCount: 64, key: key)
            #expect(digest.hex == vector.out, "in \(vector.in.prefix(16))… key \(vector.key.isEmpty ? "none" : "64 B")")
        }
    }

    /// The 256 keyed vectors of BLAKE2's `blake2b-kat.txt`.
    @Test func referenceTextVectors() throws {
        let text = String(decoding: try resourceData("blake2/blake2b-kat.txt"), as: UTF8.self)
        var fields = [String: String]()
        var checked = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { continue }
            let name = parts[0].trimmingCharacters(in: .whitespaces).replacingOccurrences(of: ":", with: "")
            fields[name] = String(parts[1])
            if name == "hash" {
                let input = try [UInt8](hex: try #require(fields["in"]))
                let key = SymmetricKey(data: try [UInt8](hex: try #require(fields["key"])))
                #expect(try BLAKE2b.hash(data: input, digestByteCount: 64, key: key).hex == fields["hash"], "in length \(input.count)")
                #expect(input == (0..<checked).map { UInt8($0) })
                checked += 1
                fields = [:]
            }
        }
        #expect(checked == 256)
    }

    /// WIRE_NOTES "Known-answer values": BLAKE2b-256, person "orbit-kem".
    @Test func orbitKEMKnownAnswers() throws {
        #expect(try BLAKE2b.hash(data: [UInt8](), personalization: "orbit-kem").hex
            == "9a85486c19bf934d7ae9008ae646dc02a0ebd2c0dc454b8a7ed38bf93e8eb391")
        #expect(try BLAKE2b.hash(data: [UInt8](repeating: 0, count: 32), personalization: "orbit-kem").hex
            == "aa5e32c9e9911d9d10c50b98ce797a7a011546e5c2185f90925860c8d362612c")
        let derived = try BLAKE2b.deriveKey(from: SymmetricKey(data: [UInt8](repeating: 0, count: 32)), personalization: "orbit-kem")
        #expect(derived == SymmetricKey(data: try [UInt8](hex: "aa5e32c9e9911d9d10c50b98ce797a7a011546e5c2185f90925860c8d362612c")))
        // Personalization is zero-padded: the explicit padded form is the same hash.
        let padded = Array("orbit-kem".utf8) + [UInt8](repeating: 0, count: 7)
        #expect(try BLAKE2b.hash(data: [UInt8](), personalization: padded).hex
            == "9a85486c19bf934d7ae9008ae646dc02a0ebd2c0dc454b8a7ed38bf93e8eb391")
        // BLAKE2b-256 is not BLAKE2b-512 cut short.
        #expect(try BLAKE2b.hash(data: [UInt8](), digestByteCount: 64, personalization: "orbit-kem").prefix(32)
            != (try BLAKE2b.hash(data: [UInt8](), personalization: "orbit-kem"))[...])
    }

    /// Random data, digest sizes 1...64, keys, salts and personalizations of every allowed length
    /// against Python's hashlib.blake2b.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func matchesHashlib() throws {
        var rng = SplitMix64(seed: 0xB1A2_EB00)
        var cases = [BLAKE2bCase]()
        var expected = [String]()
        for index in 0..<300 {
            let data = rng.bytes(index < 200 ? index : Int(rng.next() % 10_000))
            let digestSize = Int(rng.next() % 64) + 1
            let key = rng.bytes(index % 3 == 0 ? 0 : Int(rng.next() % 65))
            let salt = rng.bytes(Int(rng.next() % 17))
            let person = rng.bytes(Int(rng.next() % 17))
            cases.append(BLAKE2bCase(data: data.hex, digestSize: digestSize, key: key.hex, salt: salt.hex, person: person.hex))
            let digest = try BLAKE2b.hash(
                data: data, digestByteCount: digestSize, key: key.isEmpty ? nil : SymmetricKey(data: key),
                salt: salt, personalization: person)
            expected.append(digest.hex)
        }
        var request = SodiumInteropRequest()
        request.blake2b = cases
        let response = try InteropPython.call("sodium_interop.py", request, as: SodiumInteropResponse.self)
        #expect(response.blake2b == expected)
    }

    @Test func parametersOutOfRangeAreRejected() throws {
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "BLAKE2b digest length", reason: "must be 1...64 bytes, got 0")) {
            try BLAKE2b.hash(data: [UInt8](), digestByteCount: 0)
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "BLAKE2b digest length", reason: "must be 1...64 bytes, got 65")) {
            try BLAKE2b.hash(data: [UInt8](), digestByteCount: 65)
        }
        #expect(throws: ClassicalCryptoError.invalidKeyLength(expected: 64, actual: 65)) {
            try BLAKE2b.hash(data: [UInt8](), key: SymmetricKey(data: [UInt8](repeating: 1, count: 65)))
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "BLAKE2b salt", reason: "must be at most 16 bytes, got 17")) {
            try BLAKE2b.hash(data: [UInt8](), salt: [UInt8](repeating: 1, count: 17))
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "BLAKE2b personalization", reason: "must be at most 16 bytes, got 17")) {
            try BLAKE2b.hash(data: [UInt8](), personalization: "seventeen-bytes!!")
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "BLAKE2b digest length", reason: "must be 1...64 bytes, got 0")) {
            try BLAKE2b.deriveKey(from: SecureRandom.symmetricKey(), byteCount: 0, personalization: "x")
        }
    }
}
