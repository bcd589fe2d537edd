import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// ML-DSA-65 against PyPI dilithium-py (what stations run), through `Tests/Interop/mldsa_interop.py`:
/// signatures each way on random messages of 0 to 5000 bytes (empty context, hedged), Swift
/// signing with keys loaded from dilithium-py's 4032-byte private keys, and mutated signatures and
/// messages that both sides must reject.
@Suite("ML-DSA-65 interop with dilithium-py",
       .enabled(if: Programs.canStart, "starts python3 (the Python half), which this platform cannot"))
struct MLDSAInteropTests {
    struct SignRequest: Encodable { let op = "keygen_and_sign"; let keys: Int; let messages: [String] }
    struct SignAnswer: Decodable {
        struct Key: Decodable { let pk: String; let sk: String }
        let keys: [Key]
        let signatures: [String]
    }
    struct VerifyCase: Encodable { let key: Int; let msg: String; let sig: String }
    struct VerifyRequest: Encodable { let op = "verify"; let publicKeys: [String]; let cases: [VerifyCase] }

    /// A changed copy of a valid (message, signature) pair: one bit of the signature flipped (in
    /// c̃, z or the hint), or the message altered (a bit flipped, a byte added or removed).
    static func mutate(message: [UInt8], signature: [UInt8], rng: inout SplitMix64) -> (message: [UInt8], signature: [UInt8]) {
        var message = message, signature = signature
        switch rng.next() % 5 {
        case 0:  // commitment hash c̃
            let bit = Int(rng.next() % UInt64(48 * 8))
            signature[bit / 8] ^= UInt8(1 << (bit % 8))
        case 1:  // z
            let bit = Int(rng.next() % UInt64(3200 * 8))
            signature[48 + bit / 8] ^= UInt8(1 << (bit % 8))
        case 2:  // hint indices, padding and counts
            let bit = Int(rng.next() % UInt64(61 * 8))
            signature[3248 + bit / 8] ^= UInt8(1 << (bit % 8))
        case 3 where !message.isEmpty:
            let bit = Int(rng.next() % UInt64(message.count * 8))
            message[bit / 8] ^= UInt8(1 << (bit % 8))
        default:
            if message.isEmpty || rng.next() % 2 == 0 {
                message.append(UInt8(truncatingIfNeeded: rng.next()))
            } else {
                message.removeLast()
            }
        }
        return (message, signature)
    }

    @Test func signaturesBothWays() throws {
        var rng = SplitMix64(seed: 0xD111_7401)
        let count = 200
        func randomMessage() -> [UInt8] { rng.bytes(Int(rng.next() % 5001)) }

        // 1. dilithium-py makes keys and signs 200 random messages.
        let pythonMessages = (0..<count).map { _ in randomMessage() }
        let signed = try InteropPython.call(
            "mldsa_interop.py", SignRequest(keys: 4, messages: pythonMessages.map(\.hex)), as: SignAnswer.self)
        try #require(signed.signatures.count == count && signed.keys.count == 4)

        // 2. Swift verifies them, and loads the 4032-byte private keys.
        var publicKeyHex = [String]()
        var pythonKeys = [MLDSA65.PrivateKey]()
        for key in signed.keys {
            let loaded = try MLDSA65.PrivateKey(expandedRepresentation: try [UInt8](hex: key.sk))
            #expect(loaded.publicKey.rawRepresentation.hex == key.pk, "public key recomputed from dilithium-py's sk")
            #expect(loaded.expandedRepresentation.hex == key.sk)
            pythonKeys.append(loaded)
            publicKeyHex.append(key.pk)
        }
        var swiftAccepted = 0
        var pythonSignatures = [[UInt8]]()
        for (index, signatureHex) in signed.signatures.enumerated() {
            let publicKey = try MLDSA65.PublicKey(rawRepresentation: try [UInt8](hex: signed.keys[index % 4].pk))
            let signature = try [UInt8](hex: signatureHex)
            pythonSignatures.append(signature)
            let valid = publicKey.isValidSignature(signature, for: pythonMessages[index])
            #expect(valid, "dilithium-py signature \(index) (message of \(pythonMessages[index].count) bytes)")
            if valid { swiftAccepted += 1 }
        }

        // 3. Swift signs 200 messages: half with its own keys, half with the keys loaded above.
        let swiftKeys = try (0..<4).map { _ in try MLDSA65.PrivateKey(seedRepresentation: rng.bytes(32)) }
        for key in swiftKeys { publicKeyHex.append(key.publicKey.rawRepresentation.hex) }
        var cases = [VerifyCase]()
        var swiftSigned = [(key: Int, message: [UInt8], signature: [UInt8])]()
        for index in 0..<count {
            let keyIndex = index % 8  // 0–3: loaded from dilithium-py; 4–7: Swift's own
            let key = keyIndex < 4 ? pythonKeys[keyIndex] : swiftKeys[keyIndex - 4]
            let message = randomMessage()
            let signature = [UInt8](try key.signature(for: message))
            #expect(key.publicKey.isValidSignature(signature, for: message))
            swiftSigned.append((keyIndex, message, signature))
            cases.append(VerifyCase(key: keyIndex, msg: message.hex, sig: signature.hex))
        }

        // 4. 100 mutations, half of Swift's signatures and half of dilithium-py's: Swift rejects
        // them here, and dilithium-py must reject them too.
        var swiftRejected = 0
        for index in 0..<100 {
            let (keyIndex, message, signature) = index % 2 == 0
                ? swiftSigned[index]
                : (index % 4, pythonMessages[index], pythonSignatures[index])
            let mutated = Self.mutate(message: message, signature: signature, rng: &rng)
            let publicKey = try MLDSA65.PublicKey(rawRepresentation: try [UInt8](hex: publicKeyHex[keyIndex]))
            let valid = publicKey.isValidSignature(mutated.signature, for: mutated.message)
            #expect(!valid, "mutation \(index) accepted by Swift")
            if !valid { swiftRejected += 1 }
            cases.append(VerifyCase(key: keyIndex, msg: mutated.message.hex, sig: mutated.signature.hex))
        }

        // 5. dilithium-py verifies Swift's 200 signatures and the 100 mutations.
        let verdicts = try InteropPython.call(
            "mldsa_interop.py", VerifyRequest(publicKeys: publicKeyHex, cases: cases), as: [Bool].self)
        try #require(verdicts.count == count + 100)
        let pythonAccepted = verdicts[..<count].filter { $0 }.count
        let pythonRejected = verdicts[count...].filter { !$0 }.count
        for (index, verdict) in verdicts[..<count].enumerated() where !verdict {
            Issue.record("dilithium-py rejected Swift signature \(index) (key \(swiftSigned[index].key))")
        }
        for (index, verdict) in verdicts[count...].enumerated() where verdict {
            Issue.record("dilithium-py accepted mutation \(index)")
        }
        #expect(swiftAccepted == count && pythonAccepted == count)
        #expect(swiftRejected == 100 && pythonRejected == 100)
        print("ML-DSA-65 interop: dilithium-py→Swift \(swiftAccepted)/\(count) verified, "
            + "Swift→dilithium-py \(pythonAccepted)/\(count) verified (100 with keys loaded from dilithium-py's sk), "
            + "mutations rejected: Swift \(swiftRejected)/100, dilithium-py \(pythonRejected)/100")
    }
}
