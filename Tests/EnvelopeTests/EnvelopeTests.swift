import Foundation
import PQCrypto
import ClassicalCrypto
import TestSupport
import Testing

@testable import Envelope

extension SymmetricKey {
    var hex: String { withUnsafeBytes { [UInt8]($0).hex } }
}

/// Recipients derived from fixed seeds, so failures can be replayed.
func recipients(_ count: Int, seed: UInt64) throws -> [MLKEM768.PrivateKey] {
    var rng = SplitMix64(seed: seed)
    return try (0..<count).map { _ in try MLKEM768.PrivateKey(seedRepresentation: rng.bytes(64)) }
}

@Suite("Envelope: seal, open and every rejection")
struct EnvelopeTests {
    @Test func roundTripAndShape() throws {
        let recipient = MLKEM768.PrivateKey()
        let postKey = SecureRandom.symmetricKey()
        let envelope = try Envelope.seal(postKey, to: recipient.publicKey)
        #expect(envelope.count == 2324)
        #expect(Envelope.hexCount == 2324 && Envelope.byteCount == 1162)
        #expect(envelope.hasPrefix("0440"))
        #expect(envelope == envelope.lowercased())
        #expect(try Envelope.open(envelope, with: recipient) == postKey)
        #expect(try Envelope.open(envelope.uppercased(), with: recipient) == postKey)
        // Fresh encapsulation and nonce every time.
        let again = try Envelope.seal(postKey, to: recipient.publicKey)
        #expect(again != envelope)
        #expect(try Envelope.open(again, with: recipient) == postKey)
    }

    /// The layout, checked piece by piece: prefix, KEM ciphertext that decapsulates to the shared
    /// secret, and a SecretBox of the post key under BLAKE2b-256(ss, "orbit-kem").
    @Test func layoutIsPrefixCiphertextSealedKey() throws {
        let recipient = MLKEM768.PrivateKey()
        let postKey = SecureRandom.symmetricKey()
        let bytes = try Hex.decode(try Envelope.seal(postKey, to: recipient.publicKey))
        #expect(bytes.count == 1162)
        #expect(bytes[0] == 0x04 && bytes[1] == 0x40)
        let sharedSecret = try recipient.decapsulate(bytes[2..<1090])
        let wrapKey = try BLAKE2b.hash(data: sharedSecret.withUnsafeBytes { Array($0) }, personalization: "orbit-kem")
        #expect(Envelope.wrapKey(sharedSecret: sharedSecret) == SymmetricKey(data: wrapKey))
        #expect(try SecretBox.openKey(bytes[1090...], using: SymmetricKey(data: wrapKey)) == postKey)
    }

    @Test func invalidHexIsRejected() throws {
        let recipient = MLKEM768.PrivateKey()
        let envelope = try Envelope.seal(SecureRandom.symmetricKey(), to: recipient.publicKey)
        #expect(throws: EnvelopeError.invalidHex(.oddLength(2323))) { try Envelope.open(envelope.dropLast(), with: recipient) }
        #expect(throws: EnvelopeError.invalidHex(.oddLength(1))) { try Envelope.open("0", with: recipient) }
        var characters = Array(envelope)
        characters[100] = "g"
        #expect(throws: EnvelopeError.invalidHex(.invalidCharacter(offset: 100))) {
            try Envelope.open(String(characters), with: recipient)
        }
        #expect(throws: EnvelopeError.invalidHex(.invalidCharacter(offset: 4))) {
            try Envelope.open("0440 " + envelope.dropFirst(5), with: recipient)
        }
    }

    @Test func missingOrOverlongLengthPrefixIsRejected() throws {
        let recipient = MLKEM768.PrivateKey()
        #expect(throws: EnvelopeError.missingLengthPrefix(byteCount: 0)) { try Envelope.open("", with: recipient) }
        #expect(throws: EnvelopeError.missingLengthPrefix(byteCount: 1)) { try Envelope.open("04", with: recipient) }
        #expect(throws: EnvelopeError.lengthPrefixPastEnd(declared: 1088, available: 0)) { try Envelope.open("0440", with: recipient) }
        let envelope = try Envelope.seal(SecureRandom.symmetricKey(), to: recipient.publicKey)
        // Cut inside the KEM ciphertext.
        #expect(throws: EnvelopeError.lengthPrefixPastEnd(declared: 1088, available: 1000)) {
            try Envelope.open(envelope.prefix(4 + 2000), with: recipient)
        }
        // A prefix larger than anything the envelope holds.
        #expect(throws: EnvelopeError.lengthPrefixPastEnd(declared: 0xFFFF, available: 1160)) {
            try Envelope.open("ffff" + envelope.dropFirst(4), with: recipient)
        }
    }

    @Test func wrongCiphertextLengthIsRejected() throws {
        let recipient = MLKEM768.PrivateKey()
        let envelope = try Envelope.seal(SecureRandom.symmetricKey(), to: recipient.publicKey)
        // 1024 and 1089 both fit in the envelope, but ML-KEM-768 ciphertexts are 1088 bytes.
        #expect(throws: EnvelopeError.wrongCiphertextLength(expected: 1088, actual: 1024)) {
            try Envelope.open("0400" + envelope.dropFirst(4), with: recipient)
        }
        #expect(throws: EnvelopeError.wrongCiphertextLength(expected: 1088, actual: 1089)) {
            try Envelope.open("0441" + envelope.dropFirst(4), with: recipient)
        }
        #expect(throws: EnvelopeError.wrongCiphertextLength(expected: 1088, actual: 0)) {
            try Envelope.open("0000" + envelope.dropFirst(4), with: recipient)
        }
    }

    /// Tampering anywhere after the prefix, a truncated sealed part or the wrong recipient make
    /// the SecretBox fail (a tampered KEM ciphertext decapsulates to ML-KEM's implicit-rejection
    /// key, which does not open the box).
    @Test func failedSecretBoxIsRejected() throws {
        let recipient = MLKEM768.PrivateKey()
        let envelope = try Hex.decode(try Envelope.seal(SecureRandom.symmetricKey(), to: recipient.publicKey))
        for index in [2, 500, 1089, 1090, 1113, 1114, 1129, 1130, 1161] {
            var tampered = envelope
            tampered[index] ^= 0x01
            #expect(throws: EnvelopeError.sealedKeyFailed(.authenticationFailed), "byte \(index)") {
                try Envelope.open(Hex.encode(tampered), with: recipient)
            }
        }
        #expect(throws: EnvelopeError.sealedKeyFailed(.authenticationFailed)) {
            try Envelope.open(Hex.encode(envelope), with: MLKEM768.PrivateKey())
        }
        #expect(throws: EnvelopeError.sealedKeyFailed(.authenticationFailed)) {
            try Envelope.open(Hex.encode(envelope.dropLast()), with: recipient)
        }
        #expect(throws: EnvelopeError.sealedKeyFailed(.sealedBoxTooShort(minimum: 40, actual: 39))) {
            try Envelope.open(Hex.encode(envelope.prefix(1090 + 39)), with: recipient)
        }
        #expect(throws: EnvelopeError.sealedKeyFailed(.sealedBoxTooShort(minimum: 40, actual: 0))) {
            try Envelope.open(Hex.encode(envelope.prefix(1090)), with: recipient)
        }
    }

    /// The 2-byte length prefix cannot describe a longer ciphertext: a typed error, not a trap.
    @Test func assemblingACiphertextOfAnotherLengthIsRefused() throws {
        let postKey = SecureRandom.symmetricKey()
        for length in [0, 1087, 1089, 70_000] {
            #expect(throws: EnvelopeError.wrongCiphertextLength(expected: 1088, actual: length)) {
                try Envelope.assemble(kemCiphertext: [UInt8](repeating: 1, count: length), sharedSecret: SecureRandom.symmetricKey(),
                                      postKey: postKey, nonce: SecureRandom.bytes(count: SecretBox.nonceByteCount))
            }
        }
    }

    @Test func postKeysMustBe32Bytes() throws {
        let recipient = MLKEM768.PrivateKey()
        for length in [0, 16, 31, 33, 64] {
            #expect(throws: EnvelopeError.invalidPostKeyLength(expected: 32, actual: length)) {
                try Envelope.seal(SymmetricKey(data: [UInt8](repeating: 7, count: length)), to: recipient.publicKey)
            }
        }
        // A well-formed envelope whose box holds a 31-byte key opens but is refused.
        let encapsulation = recipient.publicKey.encapsulate()
        let wrapKey = Envelope.wrapKey(sharedSecret: encapsulation.sharedSecret)
        let box = try SecretBox.seal([UInt8](repeating: 1, count: 31), using: wrapKey)
        let envelope = [0x04, 0x40] + [UInt8](encapsulation.encapsulated) + [UInt8](box)
        #expect(throws: EnvelopeError.invalidPostKeyLength(expected: 32, actual: 31)) {
            try Envelope.open(Hex.encode(envelope), with: recipient)
        }
    }
}

@Suite("Envelope interop with the station's Python envelope (kyber-py, hashlib, PyNaCl)",
       .enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
struct EnvelopeInteropTests {
    struct Request: Encodable {
        var open: [OpenCase] = []
        var seal: [SealCase] = []
        var assemble: [AssembleCase] = []
    }
    struct OpenCase: Encodable { let dk: String; let envelope: String }
    struct SealCase: Encodable { let ek: String; let post_key: String }
    struct AssembleCase: Encodable { let ct: String; let ss: String; let post_key: String; let nonce: String }
    struct Response: Decodable { let opened: [String?]; let sealed: [String]; let assembled: [String] }

    /// 200 envelopes sealed in Swift open in Python, and 200 sealed in Python (as the station
    /// seals) open in Swift; 20 recipients with 10 envelopes each way.
    @Test func twoHundredEachWay() throws {
        let keys = try recipients(20, seed: 0xE4E1_0FE5)
        var rng = SplitMix64(seed: 0x5EA1)
        var request = Request()
        var swiftPostKeys = [String]()
        var pythonPostKeys = [String]()
        for index in 0..<200 {
            let key = keys[index % keys.count]
            let postKey = SymmetricKey(data: rng.bytes(32))
            swiftPostKeys.append(postKey.hex)
            request.open.append(OpenCase(
                dk: key.expandedRepresentation.hex, envelope: try Envelope.seal(postKey, to: key.publicKey)))
            let pythonPostKey = rng.bytes(32)
            pythonPostKeys.append(pythonPostKey.hex)
            request.seal.append(SealCase(ek: key.publicKey.rawRepresentation.hex, post_key: pythonPostKey.hex))
        }
        let response = try InteropPython.call("envelope_interop.py", request, as: Response.self)
        #expect(response.opened == swiftPostKeys)
        try #require(response.sealed.count == 200)
        for (index, envelope) in response.sealed.enumerated() {
            #expect(envelope.count == 2324 && envelope.hasPrefix("0440"))
            #expect(try Envelope.open(envelope, with: keys[index % keys.count]).hex == pythonPostKeys[index], "envelope \(index)")
        }
    }

    /// With the encapsulation and nonce fixed, Swift and Python build the same bytes.
    @Test func sameBytesForSameInputs() throws {
        let keys = try recipients(4, seed: 0xD373)
        var rng = SplitMix64(seed: 0xA55E)
        var request = Request()
        var expected = [String]()
        for key in keys {
            let encapsulation = key.publicKey.encapsulate()
            let postKey = rng.bytes(32)
            let nonce = rng.bytes(24)
            expected.append(try Envelope.assemble(
                kemCiphertext: encapsulation.encapsulated, sharedSecret: encapsulation.sharedSecret,
                postKey: SymmetricKey(data: postKey), nonce: nonce))
            request.assemble.append(AssembleCase(
                ct: encapsulation.encapsulated.hex, ss: encapsulation.sharedSecret.hex, post_key: postKey.hex, nonce: nonce.hex))
        }
        let response = try InteropPython.call("envelope_interop.py", request, as: Response.self)
        #expect(response.assembled == expected)
    }
}

/// A recipient key the envelope code reaches only through `MLKEM768DecapsulationKey`, as an app's
/// Secure Enclave key: it decapsulates with a key it keeps to itself, or fails as told.
struct KeptRecipient: MLKEM768DecapsulationKey {
    struct Locked: Error {}
    private let key = MLKEM768.PrivateKey()
    var fails = false
    var truncatesSecret = false
    var publicKey: MLKEM768.PublicKey { key.publicKey }

    func decapsulate(_ ciphertext: some DataProtocol) throws -> SymmetricKey {
        if fails { throw Locked() }
        let secret = try key.decapsulate(ciphertext)
        return truncatesSecret ? secret.withUnsafeBytes { SymmetricKey(data: $0.prefix(16)) } : secret
    }
}

@Suite("Envelopes open with any MLKEM768DecapsulationKey")
struct EnvelopeKeyProtocolTests {
    @Test("An envelope sealed to a kept key's public key opens through the protocol; the wrap and SecretBox stay in the SDK")
    func opensWithKeptKey() throws {
        let recipient = KeptRecipient()
        let postKey = SymmetricKey(randomByteCount: 32)
        let envelope = try Envelope.seal(postKey, to: recipient.publicKey)
        #expect(try Envelope.open(envelope, with: recipient) == postKey)
        let existential: any MLKEM768DecapsulationKey = recipient
        #expect(try Envelope.open(envelope, with: existential) == postKey)
        // Another kept key does not open it.
        #expect(throws: EnvelopeError.sealedKeyFailed(.authenticationFailed)) { try Envelope.open(envelope, with: KeptRecipient()) }
    }

    @Test("A key that cannot decapsulate, or returns a secret that is not 32 bytes, gives decapsulationFailed")
    func failingKeys() throws {
        var recipient = KeptRecipient()
        let envelope = try Envelope.seal(SymmetricKey(randomByteCount: 32), to: recipient.publicKey)
        recipient.fails = true
        let locked = #expect(throws: EnvelopeError.self) { try Envelope.open(envelope, with: recipient) }
        #expect(locked?.kind == .decapsulationFailed && locked?.reason?.contains("Locked") == true)
        recipient.fails = false
        recipient.truncatesSecret = true
        let short = #expect(throws: EnvelopeError.self) { try Envelope.open(envelope, with: recipient) }
        #expect(short?.kind == .decapsulationFailed && short?.reason?.contains("16-byte") == true)
        #expect(short?.description.hasPrefix("the recipient key could not decapsulate the envelope") == true)
    }
}
