import Foundation
import PQCrypto
import TestSupport
import Testing

/// The public ML-KEM-768 API: round trips, representations, and typed errors for bad input.
@Suite("ML-KEM-768 API")
struct MLKEMAPITests {
    @Test func roundTripAndRepresentations() throws {
        let key = MLKEM768.PrivateKey.generate()
        let result = key.publicKey.encapsulate()
        #expect(result.encapsulated.count == MLKEM768.ciphertextByteCount)
        #expect(result.sharedSecret.bitCount == 256)
        #expect(try key.decapsulate(result.encapsulated) == result.sharedSecret)

        let seed = try #require(key.seedRepresentation)
        #expect(seed.count == 64)
        let fromSeed = try MLKEM768.PrivateKey(seedRepresentation: seed)
        #expect(fromSeed.expandedRepresentation == key.expandedRepresentation)

        let fromExpanded = try MLKEM768.PrivateKey(expandedRepresentation: key.expandedRepresentation)
        #expect(fromExpanded.seedRepresentation == nil)
        #expect(try fromExpanded.decapsulate(result.encapsulated) == result.sharedSecret)

        let publicKey = try MLKEM768.PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
        let second = publicKey.encapsulate()
        #expect(second.encapsulated != result.encapsulated)
        #expect(try key.decapsulate(second.encapsulated) == second.sharedSecret)
        #expect(MLKEM768.PrivateKey().publicKey.rawRepresentation != key.publicKey.rawRepresentation)
    }

    @Test func tamperedCiphertextGivesAnotherKeyNotAnError() throws {
        let key = MLKEM768.PrivateKey()
        let result = key.publicKey.encapsulate()
        var tampered = [UInt8](result.encapsulated)
        tampered[500] ^= 0x01
        let rejected = try key.decapsulate(tampered)
        #expect(rejected != result.sharedSecret)
        // Implicit rejection is deterministic: J(z ‖ c).
        #expect(try key.decapsulate(tampered) == rejected)
    }

    @Test(arguments: [0, 1183, 1185, 2400])
    func publicKeyOfWrongLengthIsRefused(length: Int) {
        #expect(throws: PQCryptoError.invalidLength(what: "ML-KEM-768 public key", expected: 1184, actual: length)) {
            try MLKEM768.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: length))
        }
    }

    @Test func unreducedPublicKeyIsRefused() {
        var bytes = [UInt8](MLKEM768.PrivateKey().publicKey.rawRepresentation)
        bytes[0] = 0xFF
        bytes[1] |= 0x0F  // first coefficient 4095 ≥ q
        #expect(throws: PQCryptoError.encapsulationKeyNotReduced) {
            try MLKEM768.PublicKey(rawRepresentation: bytes)
        }
    }

    @Test(arguments: [0, 32, 63, 65])
    func seedOfWrongLengthIsRefused(length: Int) {
        #expect(throws: PQCryptoError.invalidLength(what: "ML-KEM-768 seed", expected: 64, actual: length)) {
            try MLKEM768.PrivateKey(seedRepresentation: [UInt8](repeating: 7, count: length))
        }
    }

    @Test func expandedKeyChecks() throws {
        let expanded = [UInt8](MLKEM768.PrivateKey().expandedRepresentation)
        #expect(throws: PQCryptoError.invalidLength(what: "ML-KEM-768 private key", expected: 2400, actual: 2399)) {
            try MLKEM768.PrivateKey(expandedRepresentation: expanded.dropLast())
        }
        var badHash = expanded
        badHash[2340] ^= 0x80
        #expect(throws: PQCryptoError.decapsulationKeyHashMismatch) {
            try MLKEM768.PrivateKey(expandedRepresentation: badHash)
        }
        var badEmbeddedKey = expanded
        badEmbeddedKey[1200] ^= 0x01
        #expect(throws: PQCryptoError.decapsulationKeyHashMismatch) {
            try MLKEM768.PrivateKey(expandedRepresentation: badEmbeddedKey)
        }
    }

    @Test(arguments: [0, 1087, 1089])
    func ciphertextOfWrongLengthIsRefused(length: Int) {
        let key = MLKEM768.PrivateKey()
        #expect(throws: PQCryptoError.invalidLength(what: "ML-KEM-768 ciphertext", expected: 1088, actual: length)) {
            try key.decapsulate([UInt8](repeating: 1, count: length))
        }
    }

    @Test func keysWorkAcrossTasks() async throws {
        let key = MLKEM768.PrivateKey()
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let result = key.publicKey.encapsulate()
                    return (try? key.decapsulate(result.encapsulated)) == result.sharedSecret
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == Array(repeating: true, count: 8))
    }
}
