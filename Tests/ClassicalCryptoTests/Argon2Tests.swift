import Foundation
import PQCrypto
import ClassicalCrypto
import TestSupport
import Testing

@Suite("Argon2id and Argon2i through crypto_pwhash")
struct Argon2Tests {
    /// Keys derived in Swift equal PyNaCl's `argon2id.kdf` / `argon2i.kdf` for the same password,
    /// salt and limits (small limits keep the test fast).
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func matchesPyNaCl() throws {
        var rng = SplitMix64(seed: 0xA2_60_2D)
        var cases = [Argon2Case]()
        var derived = [SymmetricKey]()
        for index in 0..<8 {
            let variant: Argon2.Variant = index % 2 == 0 ? .argon2id : .argon2i
            let password = rng.bytes(index * 7)
            let salt = rng.bytes(16)
            let limits = Argon2.Limits(operations: (variant == .argon2id ? 1 : 3) + index % 3, memoryBytes: 8192 << (index % 4))
            let size = [16, 32, 64, 33][index % 4]
            cases.append(Argon2Case(
                variant: variant == .argon2id ? "argon2id" : "argon2i", password: password.hex, salt: salt.hex,
                operations: limits.operations, memory: limits.memoryBytes, size: size))
            derived.append(try Argon2.deriveKey(byteCount: size, password: password, salt: salt, limits: limits, variant: variant))
        }
        var request = SodiumInteropRequest()
        request.argon2 = cases
        let response = try InteropPython.call("sodium_interop.py", request, as: SodiumInteropResponse.self)
        #expect(response.argon2.count == derived.count)
        for (key, python) in zip(derived, response.argon2) {
            #expect(key == SymmetricKey(data: try [UInt8](hex: python)))
        }
        // The String form hashes the UTF-8 bytes.
        let limits = Argon2.Limits(operations: 1, memoryBytes: 8192)
        let salt = [UInt8](repeating: 9, count: 16)
        #expect(try Argon2.deriveKey(password: "pässword", salt: salt, limits: limits)
            == (try Argon2.deriveKey(password: Array("pässword".utf8), salt: salt, limits: limits)))
        #expect(try Argon2.deriveKey(password: "a", salt: salt, limits: limits)
            != (try Argon2.deriveKey(password: "b", salt: salt, limits: limits)))
    }

    @Test func badParametersAreRejected() throws {
        let salt = [UInt8](repeating: 0, count: 16)
        let small = Argon2.Limits(operations: 1, memoryBytes: 8192)
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "Argon2 salt", reason: "must be 16 bytes, got 15")) {
            try Argon2.deriveKey(password: "p", salt: [UInt8](repeating: 0, count: 15), limits: small)
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "Argon2 key length", reason: "must be at least 16 bytes, got 15")) {
            try Argon2.deriveKey(byteCount: 15, password: "p", salt: salt, limits: small)
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "Argon2 operations", reason: "must be at least 1, got 0")) {
            try Argon2.deriveKey(password: "p", salt: salt, limits: .init(operations: 0, memoryBytes: 8192))
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "Argon2 operations", reason: "must be at least 3, got 2")) {
            try Argon2.deriveKey(password: "p", salt: salt, limits: .init(operations: 2, memoryBytes: 8192), variant: .argon2i)
        }
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "Argon2 memory", reason: "must be at least 8192 bytes, got 8191")) {
            try Argon2.deriveKey(password: "p", salt: salt, limits: .init(operations: 1, memoryBytes: 8191))
        }
        #expect(Argon2.Limits.moderate == Argon2.Limits(operations: 3, memoryBytes: 268_435_456))
    }
}
