import Foundation
import PQCrypto
import ClassicalCrypto
import TestSupport
import Testing

@Suite("SecretBox: XSalsa20-Poly1305, nonce ‖ tag ‖ ciphertext")
struct SecretBoxTests {
    struct VectorFile: Decodable {
        struct Vector: Decodable { let tcId: Int; let key: String; let nonce: String; let msg: String; let box: String }
        let tests: [Vector]
    }

    /// Every vector of both files: sealing with the given nonce gives `nonce ‖ box`, and opening
    /// that gives the message back.
    @Test(arguments: ["secretbox/nacl-secretbox.json", "secretbox/tweetnacl-secretbox-random.json"])
    func knownAnswers(file: String) throws {
        let vectors = try loadResource(file, as: VectorFile.self).tests
        #expect(vectors.count == (file.hasPrefix("secretbox/nacl-") ? 1 : 768))
        for vector in vectors {
            let key = SymmetricKey(data: try [UInt8](hex: vector.key))
            let nonce = try [UInt8](hex: vector.nonce)
            let message = try [UInt8](hex: vector.msg)
            let expected = nonce + (try [UInt8](hex: vector.box))
            let sealed = try SecretBox.seal(message, using: key, nonce: nonce)
            #expect([UInt8](sealed) == expected, "tcId \(vector.tcId)")
            #expect([UInt8](try SecretBox.open(expected, using: key)) == message, "tcId \(vector.tcId)")
        }
    }

    /// WIRE_NOTES "Known-answer values": key 0..31, nonce 100..123.
    @Test func wireNotesKnownAnswers() throws {
        let key = SymmetricKey(data: Array(UInt8(0)...31))
        let nonce = Array(UInt8(100)...123)
        let hello = try SecretBox.seal(Array("hello cipher station".utf8), using: key, nonce: nonce)
        #expect(hello.hex == "6465666768696a6b6c6d6e6f707172737475767778797a7b0cc09697befa7428ad8ee549811462c76adcf5a55596ad80c09546e617f7d7794ac357c9")
        let empty = try SecretBox.seal([UInt8](), using: key, nonce: nonce)
        #expect(empty.hex == "6465666768696a6b6c6d6e6f707172737475767778797a7bf49572d6194281e3c87fbb4e2106932c")
        #expect(try SecretBox.open(empty, using: key).isEmpty)
        #expect(String(decoding: try SecretBox.open(hello, using: key), as: UTF8.self) == "hello cipher station")
    }

    @Test func freshNonceEverySeal() throws {
        let key = SecureRandom.symmetricKey()
        let message = Array("same message".utf8)
        let first = try SecretBox.seal(message, using: key)
        let second = try SecretBox.seal(message, using: key)
        #expect(first.count == message.count + 40)
        #expect(first.prefix(24) != second.prefix(24))
        #expect([UInt8](try SecretBox.open(first, using: key)) == message)
        #expect([UInt8](try SecretBox.open(second, using: key)) == message)
    }

    /// Flipping any bit of the nonce, tag or ciphertext makes opening fail.
    @Test func everyTamperedByteFails() throws {
        let key = SecureRandom.symmetricKey()
        let sealed = [UInt8](try SecretBox.seal(Array(repeating: 0x41, count: 32), using: key))
        for index in sealed.indices {
            for bit in [0, 7] {
                var tampered = sealed
                tampered[index] ^= UInt8(1 << bit)
                #expect(throws: ClassicalCryptoError.authenticationFailed) { try SecretBox.open(tampered, using: key) }
                #expect(throws: ClassicalCryptoError.authenticationFailed) { try SecretBox.openKey(tampered, using: key) }
            }
        }
        // Truncated or extended boxes fail too.
        #expect(throws: ClassicalCryptoError.authenticationFailed) { try SecretBox.open(sealed.dropLast(), using: key) }
        #expect(throws: ClassicalCryptoError.authenticationFailed) { try SecretBox.open(sealed + [0], using: key) }
    }

    @Test func wrongKeyFails() throws {
        let sealed = try SecretBox.seal(Array("secret".utf8), using: SecureRandom.symmetricKey())
        #expect(throws: ClassicalCryptoError.authenticationFailed) { try SecretBox.open(sealed, using: SecureRandom.symmetricKey()) }
    }

    @Test func shortBoxesAreRejected() throws {
        let key = SecureRandom.symmetricKey()
        for count in 0..<40 {
            #expect(throws: ClassicalCryptoError.sealedBoxTooShort(minimum: 40, actual: count)) {
                try SecretBox.open([UInt8](repeating: 0, count: count), using: key)
            }
            #expect(throws: ClassicalCryptoError.sealedBoxTooShort(minimum: 40, actual: count)) {
                try SecretBox.openKey([UInt8](repeating: 0, count: count), using: key)
            }
        }
    }

    @Test func badKeyAndNonceLengthsAreRejected() throws {
        for length in [0, 16, 31, 33, 64] {
            let key = SymmetricKey(data: [UInt8](repeating: 1, count: length))
            #expect(throws: ClassicalCryptoError.invalidKeyLength(expected: 32, actual: length)) {
                try SecretBox.seal([1, 2, 3], using: key)
            }
            #expect(throws: ClassicalCryptoError.invalidKeyLength(expected: 32, actual: length)) {
                try SecretBox.open([UInt8](repeating: 0, count: 48), using: key)
            }
        }
        let key = SecureRandom.symmetricKey()
        for length in [0, 8, 23, 25, 32] {
            #expect(throws: ClassicalCryptoError.invalidNonceLength(expected: 24, actual: length)) {
                try SecretBox.seal([1, 2, 3], using: key, nonce: [UInt8](repeating: 0, count: length))
            }
        }
    }

    @Test func sealAndOpenIntoBuffers() throws {
        let key = SecureRandom.symmetricKey()
        let message = [UInt8](repeating: 7, count: 100)
        let nonce = SecureRandom.bytes(count: 24)
        var output = [UInt8](repeating: 0, count: 140)
        try message.withUnsafeBytes { source in
            try nonce.withUnsafeBytes { nonceBuffer in
                try output.withUnsafeMutableBytes { target in
                    try SecretBox.seal(source, into: target, using: key, nonce: nonceBuffer)
                }
            }
        }
        #expect(output == [UInt8](try SecretBox.seal(message, using: key, nonce: nonce)))
        var opened = [UInt8](repeating: 0, count: 100)
        try output.withUnsafeBytes { sealed in
            try opened.withUnsafeMutableBytes { target in try SecretBox.open(sealed, into: target, using: key) }
        }
        #expect(opened == message)
        var short = [UInt8](repeating: 0, count: 99)
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "output buffer", reason: "must be 100 bytes, got 99")) {
            try output.withUnsafeBytes { sealed in
                try short.withUnsafeMutableBytes { target in try SecretBox.open(sealed, into: target, using: key) }
            }
        }
        output[50] ^= 1
        var untouched = [UInt8](repeating: 0xEE, count: 100)
        #expect(throws: ClassicalCryptoError.authenticationFailed) {
            try output.withUnsafeBytes { sealed in
                try untouched.withUnsafeMutableBytes { target in try SecretBox.open(sealed, into: target, using: key) }
            }
        }
        #expect(untouched == [UInt8](repeating: 0xEE, count: 100))
        output[50] ^= 1
        var wrong = [UInt8](repeating: 0, count: 139)
        #expect(throws: ClassicalCryptoError.invalidParameter(name: "output buffer", reason: "must be 140 bytes, got 139")) {
            try message.withUnsafeBytes { source in
                try nonce.withUnsafeBytes { nonceBuffer in
                    try wrong.withUnsafeMutableBytes { target in
                        try SecretBox.seal(source, into: target, using: key, nonce: nonceBuffer)
                    }
                }
            }
        }
    }

    @Test func openKeyReturnsTheSealedKey() throws {
        let postKey = SecureRandom.symmetricKey()
        let wrapKey = SecureRandom.symmetricKey()
        let sealed = try postKey.withUnsafeBytes { try SecretBox.seal(Array($0), using: wrapKey) }
        #expect(try SecretBox.openKey(sealed, using: wrapKey) == postKey)
        #expect(try SecretBox.openKey(sealed, using: wrapKey).bitCount == 256)
    }

    /// Non-contiguous input (DispatchData with several regions) seals like the same bytes in one
    /// array.
    @Test func nonContiguousInput() throws {
        let key = SecureRandom.symmetricKey()
        let nonce = SecureRandom.bytes(count: 24)
        let parts: [[UInt8]] = [[1, 2, 3], Array(repeating: 9, count: 70), [4]]
        var dispatch = DispatchData.empty
        for part in parts { part.withUnsafeBytes { dispatch.append($0) } }
        #expect(dispatch.regions.count == 3)
        #expect(try SecretBox.seal(dispatch, using: key, nonce: nonce) == (try SecretBox.seal(parts.flatMap { $0 }, using: key, nonce: nonce)))
    }

    /// SecretBox output from PyNaCl 1.6.2 opens in Swift, and Swift's opens in PyNaCl, for message
    /// lengths 0 to 2000 and a 1 MiB message.
    @Test(.enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
    func pynaclInteropBothWays() throws {
        var rng = SplitMix64(seed: 0x5EC2_E7B0)
        var lengths = Array(0...64) + [127, 128, 129, 255, 256, 257, 1000, 2000, 1 << 20]
        lengths += (0..<30).map { _ in Int(rng.next() % 5000) }
        var swiftSealed = [SecretBoxCase]()
        var messages = [[UInt8]]()
        for length in lengths {
            let message = rng.bytes(length)
            let key = rng.bytes(32)
            messages.append(message)
            let sealed = try SecretBox.seal(message, using: SymmetricKey(data: key))
            swiftSealed.append(SecretBoxCase(key: key.hex, message: message.hex, sealed: sealed.hex))
        }
        let request = SodiumInteropRequest(secretboxOpen: swiftSealed, secretboxSeal: swiftSealed.map {
            SecretBoxCase(key: $0.key, message: $0.message, sealed: nil)
        })
        let response = try InteropPython.call("sodium_interop.py", request, as: SodiumInteropResponse.self)
        // Python opened Swift's boxes.
        #expect(response.secretboxOpened == swiftSealed.map(\.message))
        // Swift opens Python's boxes, which used fresh PyNaCl nonces.
        #expect(response.secretboxSealed.count == lengths.count)
        for (index, sealedHex) in response.secretboxSealed.enumerated() {
            let key = SymmetricKey(data: try [UInt8](hex: swiftSealed[index].key))
            let sealed = try [UInt8](hex: sealedHex)
            #expect(sealed.count == messages[index].count + 40)
            #expect([UInt8](try SecretBox.open(sealed, using: key)) == messages[index], "length \(lengths[index])")
        }
    }
}

/// The JSON exchanged with `Tests/Interop/sodium_interop.py`; every section is optional.
struct SecretBoxCase: Codable {
    let key: String
    let message: String
    let sealed: String?
}

struct BLAKE2bCase: Codable {
    let data: String
    let digestSize: Int
    let key: String
    let salt: String
    let person: String
}

struct Argon2Case: Codable {
    let variant: String
    let password: String
    let salt: String
    let operations: Int
    let memory: Int
    let size: Int
}

struct SodiumInteropRequest: Codable {
    var secretboxOpen: [SecretBoxCase] = []
    var secretboxSeal: [SecretBoxCase] = []
    var blake2b: [BLAKE2bCase] = []
    var sha256: [String] = []
    var argon2: [Argon2Case] = []
}

struct SodiumInteropResponse: Codable {
    let secretboxOpened: [String]
    let secretboxSealed: [String]
    let blake2b: [String]
    let sha256: [String]
    let argon2: [String]
}
