import ClassicalCrypto
import PQCrypto
import TestSupport
import Testing

/// The pure-Swift Argon2 against RFC 9106 and the reference implementation (in every build) and
/// libsodium's `crypto_pwhash` (where it is linked).
@Suite("Pure-Swift Argon2")
struct PureArgon2Tests {
    struct VectorFile: Decodable {
        struct Vector: Decodable {
            let variant: String
            let memory_kib: Int
            let passes: Int
            let lanes: Int
            let password: String
            let salt: String
            let secret: String
            let associated_data: String
            let tag: String
        }
        let vectors: [Vector]
    }

    /// Argon2 with every parameter, as `Argon2Core` takes them.
    static func derive(_ variant: Argon2Core.Variant, outputByteCount: Int, password: [UInt8], salt: [UInt8],
                       passes: Int, memoryKiB: Int, lanes: Int = 1, secret: [UInt8] = [],
                       associatedData: [UInt8] = []) throws(Argon2Core.Failure) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let result = output.withUnsafeMutableBytes { out in
            password.withUnsafeBytes { passwordBytes in
                salt.withUnsafeBytes { saltBytes in
                    secret.withUnsafeBytes { secretBytes in
                        associatedData.withUnsafeBytes { adBytes in
                            Result { () throws(Argon2Core.Failure) in
                                try Argon2Core.deriveKey(
                                    into: out, password: passwordBytes, salt: saltBytes, passes: passes, memoryKiB: memoryKiB,
                                    lanes: lanes, secret: secretBytes, associatedData: adBytes, variant: variant)
                            }
                        }
                    }
                }
            }
        }
        try result.get()
        return output
    }

    static func variant(named name: String) -> Argon2Core.Variant? {
        switch name {
        case "argon2d": .argon2d
        case "argon2i": .argon2i
        case "argon2id": .argon2id
        default: nil
        }
    }

    /// RFC 9106 §5 (Argon2d, Argon2i, Argon2id: 4 lanes, 32 KiB, 3 passes, secret and associated
    /// data) and 300 reference-implementation vectors (1–8 lanes, odd memory sizes, salts of 8–100
    /// bytes, outputs of 4–1025 bytes).
    @Test(arguments: ["argon2/argon2-vectors.json", "argon2/argon2-extra-vectors.json"])
    func knownAnswers(file: String) throws {
        let vectors = try loadResource(file, as: VectorFile.self).vectors
        #expect(vectors.count == (file.hasSuffix("extra-vectors.json") ? 300 : 3))
        for (index, vector) in vectors.enumerated() {
            let variant = try #require(Self.variant(named: vector.variant))
            let tag = try [UInt8](hex: vector.tag)
            let derived = try Self.derive(
                variant, outputByteCount: tag.count, password: [UInt8](hex: vector.password), salt: [UInt8](hex: vector.salt),
                passes: vector.passes, memoryKiB: vector.memory_kib, lanes: vector.lanes, secret: [UInt8](hex: vector.secret),
                associatedData: [UInt8](hex: vector.associated_data))
            #expect(derived == tag, "\(file) vector \(index) (\(vector.variant))")
        }
    }

    /// Parameters RFC 9106 forbids, and memory that cannot be had, are typed errors.
    @Test func refusesParametersOutOfRange() {
        let salt = [UInt8](repeating: 2, count: 16)
        #expect(throws: Argon2Core.Failure.parameterOutOfRange) {
            try Self.derive(.argon2id, outputByteCount: 32, password: [1], salt: salt, passes: 0, memoryKiB: 64)
        }
        #expect(throws: Argon2Core.Failure.parameterOutOfRange) {
            try Self.derive(.argon2id, outputByteCount: 32, password: [1], salt: salt, passes: 1, memoryKiB: 7)
        }
        #expect(throws: Argon2Core.Failure.parameterOutOfRange) {
            try Self.derive(.argon2id, outputByteCount: 32, password: [1], salt: [1, 2, 3], passes: 1, memoryKiB: 64)
        }
        #expect(throws: Argon2Core.Failure.parameterOutOfRange) {
            try Self.derive(.argon2id, outputByteCount: 3, password: [1], salt: salt, passes: 1, memoryKiB: 64)
        }
        #expect(throws: Argon2Core.Failure.parameterOutOfRange) {
            try Self.derive(.argon2id, outputByteCount: 32, password: [1], salt: salt, passes: 1, memoryKiB: 64, lanes: 0)
        }
        #expect(throws: Argon2Core.Failure.outOfMemory) {
            try Self.derive(.argon2id, outputByteCount: 32, password: [1], salt: salt, passes: 1, memoryKiB: 1 << 32 - 1)
        }
    }

    /// Argon2id and Argon2i at small costs (1–4 passes, 8 KiB–256 KiB and one in sixteen up to
    /// 1 MiB, memory limits that are not whole KiB), passwords of 0–100 bytes, outputs of 16–100
    /// bytes: libsodium's bytes.
    @Test(.enabled(if: DifferentialInputs.comparable)) func differentialAgainstLibsodium() throws {
        var generator = SplitMix64(seed: DifferentialInputs.seed)
        for index in 0..<DifferentialInputs.count {
            let isID = index % 2 == 0
            let passes = isID ? Int.random(in: 1...4, using: &generator) : Int.random(in: 3...4, using: &generator)
            let memoryBytes = Int.random(in: 8192...(index % 16 == 0 ? 1 << 20 : 256 << 10), using: &generator)
            let password = generator.bytes(Int.random(in: 0...100, using: &generator)), salt = generator.bytes(16)
            let outputByteCount = Int.random(in: 16...100, using: &generator)
            let expected = try Argon2.deriveKey(
                byteCount: outputByteCount, password: password, salt: salt,
                limits: .init(operations: passes, memoryBytes: memoryBytes), variant: isID ? .argon2id : .argon2i)
            let pure = try Self.derive(
                isID ? .argon2id : .argon2i, outputByteCount: outputByteCount, password: password, salt: salt, passes: passes,
                memoryKiB: memoryBytes / 1024)
            #expect(expected.withUnsafeBytes { Array($0) } == pure, "input \(index), seed \(DifferentialInputs.seed)")
        }
    }
}
