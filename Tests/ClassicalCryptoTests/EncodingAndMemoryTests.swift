import Foundation
import PQCrypto
import ClassicalCrypto
import TestSupport
import Testing

@Suite("Hex, secure memory and secure random")
struct EncodingAndMemoryTests {
    @Test func hexRoundTrips() throws {
        var rng = SplitMix64(seed: 0x4E_C5)
        for length in Array(0...40) + [1162] {
            let bytes = rng.bytes(length)
            let hex = Hex.encode(bytes)
            #expect(hex == bytes.hex)
            #expect(try Hex.decode(hex) == bytes)
            #expect(try Hex.decode(hex.uppercased()) == bytes)
            #expect(try Hex.decode(Substring(hex)) == bytes)
        }
        #expect(Hex.encode(Array(UInt8(0)...255)) == (0...255).map { String(format: "%02x", $0) }.joined())
        #expect(try Hex.decode("0123456789abcdefABCDEF") == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xAB, 0xCD, 0xEF])
    }

    /// Every byte value at every position of a 16-character input (two 8-character words, the
    /// fast path) and of a 6-character input (the byte-by-byte tail) is accepted exactly when it
    /// is a hex digit, and a bad one is reported at its offset.
    @Test func hexDecodesEveryByteAtEveryPosition() throws {
        let digits = Array("0123456789abcdefABCDEF".utf8)
        for template in [Array("0123456789abcDEF".utf8), Array("a0B1c2".utf8)] {
            for position in template.indices {
                for value in UInt8.min...UInt8.max {
                    var text = template
                    text[position] = value
                    let result = Result { () throws(HexDecodingError) in
                        try text.withUnsafeBufferPointer { buffer throws(HexDecodingError) in try Hex.decode(buffer) }
                    }
                    if digits.contains(value) {
                        let expected = stride(from: 0, to: text.count, by: 2).map {
                            UInt8(String(decoding: text[$0..<$0 + 2], as: UTF8.self), radix: 16)!
                        }
                        #expect(try result.get() == expected)
                    } else {
                        #expect(throws: HexDecodingError.invalidCharacter(offset: position)) { try result.get() }
                    }
                }
            }
        }
    }

    @Test func hexRejectsMalformedText() {
        #expect(throws: HexDecodingError.oddLength(3)) { try Hex.decode("abc") }
        #expect(throws: HexDecodingError.oddLength(1)) { try Hex.decode("a") }
        // Every byte that is not a hex digit is rejected, at its offset.
        let digits = Set("0123456789abcdefABCDEF".utf8)
        for byte in UInt8(0)...127 where !digits.contains(byte) {
            let text = "00" + String(UnicodeScalar(byte)) + "0"
            #expect(throws: HexDecodingError.invalidCharacter(offset: 2)) { try Hex.decode(text) }
            let high = "0" + String(UnicodeScalar(byte)) + "00"
            #expect(throws: HexDecodingError.invalidCharacter(offset: 1)) { try Hex.decode(high) }
        }
        // "é" is two UTF-8 bytes: an even length that fails at its first byte.
        #expect(throws: HexDecodingError.invalidCharacter(offset: 0)) { try Hex.decode("é") }
        #expect(throws: HexDecodingError.invalidCharacter(offset: 2)) { try Hex.decode("00é") }
    }

    @Test func constantTimeEquality() {
        #expect(SecureMemory.constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 3] as [UInt8]))
        #expect(!SecureMemory.constantTimeEquals([1, 2, 3] as [UInt8], [1, 2, 4] as [UInt8]))
        #expect(!SecureMemory.constantTimeEquals([1, 2, 3] as [UInt8], [1, 2] as [UInt8]))
        #expect(SecureMemory.constantTimeEquals([UInt8](), Data()))
        #expect(SecureMemory.constantTimeEquals(Data([9, 8]), [9, 8] as [UInt8]))
    }

    @Test func zeroing() {
        var bytes: [UInt8] = [1, 2, 3, 4]
        SecureMemory.zero(&bytes)
        #expect(bytes == [0, 0, 0, 0])
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 1)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0xFF)
        SecureMemory.zero(buffer)
        #expect(buffer.allSatisfy { $0 == 0 })
    }

    @Test func secureRandom() {
        #expect(SecureRandom.bytes(count: 0).isEmpty)
        #expect(SecureRandom.bytes(count: -1).isEmpty)
        let samples = (0..<4).map { _ in SecureRandom.bytes(count: 32) }
        #expect(Set(samples).count == 4)
        // 4 KiB of output uses every byte value at least once with overwhelming probability.
        #expect(Set(SecureRandom.bytes(count: 4096)).count == 256)
        let key = SecureRandom.symmetricKey()
        #expect(key.bitCount == 256)
        #expect(key != SecureRandom.symmetricKey())
        #expect(SecureRandom.symmetricKey(byteCount: 64).bitCount == 512)
    }

    @Test func hexIntoABufferAndSecretDecodingMatchTheStringForms() throws {
        var rng = SplitMix64(seed: 0x5EC)
        for length in [0, 1, 15, 256, 4032] {
            let bytes = rng.bytes(length)
            let secret = SecretBytes(count: 2 * length) { output in
                let wrote = bytes.withUnsafeBytes { Hex.encode($0, into: output) }
                #expect(wrote)
            }
            #expect(secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == Hex.encode(bytes))
            let decoded = try secret.withUnsafeBytes { try Hex.decodeSecret($0) }
            #expect(decoded == SecretBytes(copying: bytes))
        }
        // A wrong output size writes nothing.
        var output = [UInt8](repeating: 0x2A, count: 3)
        let wrote = [UInt8]([1, 2]).withUnsafeBytes { source in output.withUnsafeMutableBytes { Hex.encode(source, into: $0) } }
        #expect(!wrote && output == [0x2A, 0x2A, 0x2A])
        #expect(throws: HexDecodingError.self) { try Array("0g".utf8).withUnsafeBytes { try Hex.decodeSecret($0) } }
    }

    @Test func secretBytesTakeOverArraysAndOpenFromSealedBoxes() throws {
        var bytes: [UInt8] = [1, 2, 3, 4]
        let secret = SecretBytes(zeroing: &bytes)
        #expect(bytes == [0, 0, 0, 0])
        #expect(secret.withUnsafeBytes { [UInt8]($0) } == [1, 2, 3, 4])
        #expect(secret.description == "SecretBytes(4 bytes)")
        let key = SecureRandom.symmetricKey()
        let sealed = try SecretBox.seal(Data([9, 8, 7]), using: key)
        #expect(try SecretBox.openSecret(sealed, using: key) == SecretBytes(copying: [9, 8, 7]))
        #expect(throws: ClassicalCryptoError.self) { try SecretBox.openSecret(sealed, using: SecureRandom.symmetricKey()) }
    }
}
