import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// The public ML-DSA-65 API: key forms, hedged and deterministic signing, contexts, typed errors,
/// and refusal of malformed input without trapping.
@Suite("ML-DSA-65 API")
struct MLDSAAPITests {
    static let seed = [UInt8](repeating: 0x2A, count: 32)

    @Test func signsAndVerifies() throws {
        let key = MLDSA65.PrivateKey()
        let publicKey = key.publicKey
        let message = Data("request body".utf8)
        let signature = try key.signature(for: message)
        #expect(signature.count == 3309)
        #expect(publicKey.isValidSignature(signature, for: message))
        #expect(!publicKey.isValidSignature(signature, for: Data("request bodY".utf8)))
        #expect(!publicKey.isValidSignature(signature, for: message, context: Data([0])))
        #expect(!MLDSA65.PrivateKey.generate().publicKey.isValidSignature(signature, for: message))
        // Non-contiguous and array inputs are accepted alike.
        #expect(publicKey.isValidSignature([UInt8](signature), for: [UInt8](message)))
        #expect(publicKey.isValidSignature(signature, for: message.reversed().reversed()))
    }

    @Test func contexts() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: Self.seed)
        let message = [UInt8](repeating: 7, count: 100)
        let longest = [UInt8](repeating: 0x41, count: 255)
        let signature = try key.signature(for: message, context: longest)
        #expect(key.publicKey.isValidSignature(signature, for: message, context: longest))
        #expect(!key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: message, context: longest.dropLast()))
        let tooLong = [UInt8](repeating: 0x41, count: 256)
        #expect(throws: PQCryptoError.contextTooLong(length: 256)) {
            try key.signature(for: message, context: tooLong)
        }
        // Verification with an over-long context is simply false.
        #expect(!key.publicKey.isValidSignature(signature, for: message, context: tooLong))
        // An explicitly empty context is the default.
        let plain = try key.signature(for: message, deterministic: true)
        #expect(try key.signature(for: message, context: [UInt8](), deterministic: true) == plain)
    }

    @Test func hedgedAndDeterministic() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: Self.seed)
        let message = Data("same message".utf8)
        let first = try key.signature(for: message)
        let second = try key.signature(for: message)
        #expect(first != second, "hedged signatures use fresh randomness")
        #expect(key.publicKey.isValidSignature(first, for: message) && key.publicKey.isValidSignature(second, for: message))
        let deterministic = try key.signature(for: message, deterministic: true)
        #expect(try key.signature(for: message, deterministic: true) == deterministic)
        #expect(deterministic == key.signature(for: message, context: Data(), randomness: [UInt8](repeating: 0, count: 32)))
    }

    @Test func keyRepresentationsRoundTrip() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: Self.seed)
        #expect(key.seedRepresentation == Data(Self.seed))
        #expect(key.expandedRepresentation.count == 4032)
        #expect(key.publicKey.rawRepresentation.count == 1952)

        let fresh = MLDSA65.PrivateKey()
        let reseeded = try MLDSA65.PrivateKey(seedRepresentation: try #require(fresh.seedRepresentation))
        #expect(reseeded.expandedRepresentation == fresh.expandedRepresentation)

        let expanded = try MLDSA65.PrivateKey(expandedRepresentation: key.expandedRepresentation)
        #expect(expanded.seedRepresentation == nil)
        #expect(expanded.expandedRepresentation == key.expandedRepresentation)
        #expect(expanded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        let message = Data("both forms sign alike".utf8)
        #expect(try expanded.signature(for: message, deterministic: true) == key.signature(for: message, deterministic: true))

        let publicKey = try MLDSA65.PublicKey(rawRepresentation: key.publicKey.rawRepresentation)
        #expect(publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(publicKey.isValidSignature(try key.signature(for: message), for: message))
    }

    @Test func wrongLengthsAreTypedErrors() {
        #expect(throws: PQCryptoError.invalidLength(what: "ML-DSA-65 seed", expected: 32, actual: 31)) {
            try MLDSA65.PrivateKey(seedRepresentation: [UInt8](repeating: 0, count: 31))
        }
        #expect(throws: PQCryptoError.invalidLength(what: "ML-DSA-65 private key", expected: 4032, actual: 0)) {
            try MLDSA65.PrivateKey(expandedRepresentation: Data())
        }
        #expect(throws: PQCryptoError.invalidLength(what: "ML-DSA-65 public key", expected: 1952, actual: 1953)) {
            try MLDSA65.PublicKey(rawRepresentation: [UInt8](repeating: 0, count: 1953))
        }
    }

    @Test func inconsistentExpandedKeysAreRefused() throws {
        let encoded = [UInt8](try MLDSA65.PrivateKey(seedRepresentation: Self.seed).expandedRepresentation)
        var badTr = encoded
        badTr[64] ^= 1
        #expect(throws: PQCryptoError.invalidPrivateKey(reason: "tr does not match the public key")) {
            try MLDSA65.PrivateKey(expandedRepresentation: badTr)
        }
        var badT0 = encoded
        badT0[4032 - 1] ^= 0x10
        #expect(throws: PQCryptoError.invalidPrivateKey(reason: "t0 does not match rho, s1 and s2")) {
            try MLDSA65.PrivateKey(expandedRepresentation: badT0)
        }
        var badS2 = encoded
        badS2[128 + 5 * 128] = 0x9F  // nibble 15: coefficient −11
        #expect(throws: PQCryptoError.invalidPrivateKey(reason: "s1 or s2 has a coefficient outside [-4, 4]")) {
            try MLDSA65.PrivateKey(expandedRepresentation: badS2)
        }
    }

    @Test func malformedSignaturesAreFalse() throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: Self.seed)
        let message = [UInt8]("m".utf8)
        let signature = [UInt8](try key.signature(for: message))
        let publicKey = key.publicKey
        for length in [0, 1, 3308, 3310, 6618] {
            let resized = Array(signature.prefix(length)) + [UInt8](repeating: 0, count: max(0, length - signature.count))
            #expect(!publicKey.isValidSignature(resized, for: message), "length \(length)")
        }
        var allOnes = signature
        for i in 48..<3248 { allOnes[i] = 0xFF }  // z = γ1 − (2^20 − 1): far out of range
        #expect(!publicKey.isValidSignature(allOnes, for: message))
        var badHint = signature
        badHint[3308] = 56  // final hint count above ω
        #expect(!publicKey.isValidSignature(badHint, for: message))
        #expect(!publicKey.isValidSignature([UInt8](repeating: 0xFF, count: 3309), for: message))
        #expect(!publicKey.isValidSignature([UInt8](repeating: 0, count: 3309), for: message))
        #expect(publicKey.isValidSignature(signature, for: message))
    }

    /// One key object shared by concurrent tasks (the SDK signs requests from many tasks).
    @Test func keysAreSharedAcrossTasks() async throws {
        let key = try MLDSA65.PrivateKey(seedRepresentation: Self.seed)
        let publicKey = key.publicKey
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let message = [UInt8](repeating: UInt8(index), count: index * 100)
                    guard let signature = try? key.signature(for: message) else { return false }
                    return publicKey.isValidSignature(signature, for: message)
                }
            }
            var all = [Bool]()
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 8 && results.allSatisfy { $0 })
    }
}
