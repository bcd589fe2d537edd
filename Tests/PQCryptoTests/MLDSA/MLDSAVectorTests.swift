import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// ML-DSA-65 against the NIST ACVP, Wycheproof and CCTV vectors in `Resources/Vectors/MLDSA`.
/// HashML-DSA (pre-hash) groups are the only cases skipped; each suite prints what it ran.
@Suite("ML-DSA-65 known-answer vectors")
struct MLDSAVectorTests {
    static let zeroRandomness = [UInt8](repeating: 0, count: 32)

    // MARK: ACVP

    @Test func acvpKeyGen() throws {
        let vectors = try ACVPVectorSet(folder: "ML-DSA-keyGen-FIPS204")
        var ran = 0
        for group in vectors.groups {
            for test in group.tests {
                let expected = try vectors.expected(for: test)
                let pk = try #require(expected.pk).lowercased(), sk = try #require(expected.sk)
                let key = try MLDSA65.PrivateKey(seedRepresentation: try [UInt8](hex: try #require(test.seed)))
                #expect(key.publicKey.rawRepresentation.hex == pk, "tcId \(test.tcId) pk")
                #expect(key.expandedRepresentation.hex == sk.lowercased(), "tcId \(test.tcId) sk")
                // The expanded form loads back to the same key.
                let loaded = try MLDSA65.PrivateKey(expandedRepresentation: try [UInt8](hex: sk))
                #expect(loaded.publicKey.rawRepresentation.hex == pk, "tcId \(test.tcId) reload")
                ran += 1
            }
        }
        print("ML-DSA-65 ACVP keyGen: ran \(ran) cases, skipped 0 pre-hash")
        #expect(ran == 25)
    }

    @Test(arguments: [("ML-DSA-sigGen-FIPS204", 90, 30), ("ML-DSA-sigGen-FIPS204-tr1", 180, 60)])
    func acvpSigGen(folder: String, expectedRan: Int, expectedSkipped: Int) throws {
        let vectors = try ACVPVectorSet(folder: folder)
        var ran = 0, skipped = 0
        for group in vectors.groups {
            if group.preHash == "preHash" {
                skipped += group.tests.count
                continue
            }
            let deterministic = try #require(group.deterministic as Bool?)
            for test in group.tests {
                let expected = try #require(try vectors.expected(for: test).signature).lowercased()
                let key: MLDSA65.PrivateKey
                if let seed = test.seed {
                    #expect(group.keyFormat == "seed")
                    key = try MLDSA65.PrivateKey(seedRepresentation: try [UInt8](hex: seed))
                } else {
                    key = try MLDSA65.PrivateKey(expandedRepresentation: try [UInt8](hex: try #require(test.sk)))
                }
                let rnd = deterministic ? Self.zeroRandomness : try [UInt8](hex: try #require(test.rnd))
                let signature: Data
                let verifies: Bool
                switch (group.signatureInterface, group.externalMu ?? false) {
                case ("external", _):
                    let message = try [UInt8](hex: try #require(test.message))
                    let context = try [UInt8](hex: test.context ?? "")
                    signature = key.signature(for: message, context: context, randomness: rnd)
                    verifies = key.publicKey.isValidSignature(signature, for: message, context: context)
                case ("internal", true):
                    let mu = try [UInt8](hex: try #require(test.mu))
                    signature = key.signatureInternal(mu: mu, randomness: rnd)
                    verifies = key.publicKey.isValidSignature(signature, mu: mu)
                case ("internal", false):
                    let messagePrime = try [UInt8](hex: try #require(test.message))
                    signature = key.signatureInternal(messagePrime: messagePrime, randomness: rnd)
                    verifies = key.publicKey.isValidSignatureInternal(signature, messagePrime: messagePrime)
                default:
                    Issue.record("\(group.label): unknown interface \(group.signatureInterface ?? "nil")")
                    continue
                }
                #expect(signature.hex == expected, "\(folder) \(group.label) tcId \(test.tcId)")
                #expect(verifies, "\(folder) \(group.label) tcId \(test.tcId) does not verify")
                ran += 1
            }
        }
        print("ML-DSA-65 ACVP sigGen \(folder): ran \(ran) cases, skipped \(skipped) pre-hash")
        #expect(ran == expectedRan)
        #expect(skipped == expectedSkipped)
    }

    @Test func acvpSigVer() throws {
        let folder = "ML-DSA-sigVer-FIPS204"
        let vectors = try ACVPVectorSet(folder: folder)
        var ran = 0, skipped = 0, accepted = 0
        for group in vectors.groups {
            if group.preHash == "preHash" {
                skipped += group.tests.count
                continue
            }
            for test in group.tests {
                let expected = try vectors.expected(for: test).testPassed
                let key = try MLDSA65.PublicKey(rawRepresentation: try [UInt8](hex: try #require(test.pk)))
                let signature = try [UInt8](hex: try #require(test.signature))
                let valid: Bool
                switch (group.signatureInterface, group.externalMu ?? false) {
                case ("external", _):
                    valid = key.isValidSignature(signature, for: try [UInt8](hex: try #require(test.message)),
                                                 context: try [UInt8](hex: test.context ?? ""))
                case ("internal", true):
                    valid = key.isValidSignature(signature, mu: try [UInt8](hex: try #require(test.mu)))
                case ("internal", false):
                    valid = key.isValidSignatureInternal(signature, messagePrime: try [UInt8](hex: try #require(test.message)))
                default:
                    Issue.record("\(group.label): unknown interface \(group.signatureInterface ?? "nil")")
                    continue
                }
                #expect(valid == expected, "sigVer \(group.label) tcId \(test.tcId)")
                ran += 1
                if valid { accepted += 1 }
            }
        }
        print("ML-DSA-65 ACVP sigVer: ran \(ran) cases (\(accepted) valid), skipped \(skipped) pre-hash")
        #expect(ran == 45)
        #expect(skipped == 15)
    }

    // MARK: Wycheproof

    /// How a Wycheproof signing file gives each group's private key.
    enum WycheproofKeyFormat: Sendable, CaseIterable {
        /// `privateSeed`, the 32-byte ξ (`mldsa_65_sign_seed_test.json`).
        case seed
        /// `privateKey`, the 4032-byte expanded encoding (`mldsa_65_sign_noseed_test.json`).
        case expanded

        var file: String { self == .seed ? "mldsa_65_sign_seed_test.json" : "mldsa_65_sign_noseed_test.json" }

        /// The refusal of a key of the wrong length.
        func lengthError(actual: Int) -> PQCryptoError {
            self == .seed ? .invalidLength(what: "ML-DSA-65 seed", expected: 32, actual: actual)
                : .invalidLength(what: "ML-DSA-65 private key", expected: 4032, actual: actual)
        }
    }

    /// A group whose key is refused must hold only invalid cases, flagged with the reason the key
    /// was refused for; the other groups' cases go through ``checkWycheproofSign(key:test:rejected:)``.
    @Test(arguments: WycheproofKeyFormat.allCases)
    func wycheproofSign(format: WycheproofKeyFormat) throws {
        let file = try VectorFile("MLDSA/wycheproof/\(format.file)")
        var ran = 0, rejected = 0
        for group in file.testGroups {
            let encoded = try [UInt8](hex: try #require(format == .seed ? group.privateSeed : group.privateKey))
            let key: MLDSA65.PrivateKey
            do {
                switch format {
                case .seed: key = try MLDSA65.PrivateKey(seedRepresentation: encoded)
                case .expanded: key = try MLDSA65.PrivateKey(expandedRepresentation: encoded)
                }
            } catch {
                for test in group.tests {
                    #expect(test.result == "invalid", "tcId \(test.tcId) key refused: \(error)")
                    if test.hasFlag("IncorrectPrivateKeyLength") {
                        #expect(error == format.lengthError(actual: encoded.count))
                    } else {
                        // Only expanded keys can be refused for their contents.
                        #expect(format == .expanded && test.hasFlag("InvalidPrivateKey"), "tcId \(test.tcId)")
                        #expect(error == .invalidPrivateKey(reason: "s1 or s2 has a coefficient outside [-4, 4]"))
                    }
                    ran += 1
                    rejected += 1
                }
                continue
            }
            if format == .expanded {
                #expect(key.seedRepresentation == nil)
                #expect(key.expandedRepresentation.hex == encoded.hex)
            }
            if let publicKey = group.publicKey {
                #expect(key.publicKey.rawRepresentation.hex == publicKey, "keygen for \(encoded.hex.prefix(64))")
            }
            for test in group.tests {
                try Self.checkWycheproofSign(key: key, test: test, rejected: &rejected)
                ran += 1
            }
        }
        print("ML-DSA-65 Wycheproof \(format.file): ran \(ran) cases (\(rejected) invalid, rejected), skipped 0 pre-hash")
        #expect(ran == file.numberOfTests)
    }

    /// One Wycheproof signing case: deterministic unless `rnd` is given; `mu`-only cases go
    /// through the external-μ entry point. Valid cases must reproduce `sig` and verify.
    static func checkWycheproofSign(key: MLDSA65.PrivateKey, test: VectorCase, rejected: inout Int) throws {
        let rnd = try test.rnd.map { try [UInt8](hex: $0) } ?? zeroRandomness
        let expected = try #require(test.sig)
        guard let messageHex = test.msg else {
            let mu = try [UInt8](hex: try #require(test.mu))
            let signature = key.signatureInternal(mu: mu, randomness: rnd)
            #expect(test.result == "valid")
            #expect(signature.hex == expected, "tcId \(test.tcId) (\(test.comment ?? ""))")
            #expect(key.publicKey.isValidSignature(signature, mu: mu), "tcId \(test.tcId) verify")
            return
        }
        let message = try [UInt8](hex: messageHex)
        let context = try [UInt8](hex: test.ctx ?? "")
        if context.count > 255 {
            #expect(test.result == "invalid" && test.hasFlag("InvalidContext"), "tcId \(test.tcId)")
            #expect(throws: PQCryptoError.contextTooLong(length: context.count)) {
                try key.signature(for: message, context: context)
            }
            rejected += 1
            return
        }
        #expect(test.result == "valid", "tcId \(test.tcId) (\(test.comment ?? ""))")
        let signature = key.signature(for: message, context: context, randomness: rnd)
        #expect(signature.hex == expected, "tcId \(test.tcId) (\(test.comment ?? ""))")
        if rnd == zeroRandomness {
            #expect(try key.signature(for: message, context: context, deterministic: true).hex == expected,
                    "tcId \(test.tcId) public deterministic API")
        }
        if let mu = test.mu {
            #expect(key.signatureInternal(mu: try [UInt8](hex: mu), randomness: rnd).hex == expected,
                    "tcId \(test.tcId) external μ")
        }
        #expect(key.publicKey.isValidSignature(signature, for: message, context: context), "tcId \(test.tcId) verify")
    }

    @Test func wycheproofVerify() throws {
        let file = try VectorFile("MLDSA/wycheproof/mldsa_65_verify_test.json")
        var ran = 0, valid = 0
        for group in file.testGroups {
            let encoded = try [UInt8](hex: try #require(group.publicKey))
            let key: MLDSA65.PublicKey
            do {
                key = try MLDSA65.PublicKey(rawRepresentation: encoded)
            } catch {
                #expect(error == .invalidLength(what: "ML-DSA-65 public key", expected: 1952, actual: encoded.count))
                for test in group.tests {
                    #expect(test.result == "invalid" && test.hasFlag("IncorrectPublicKeyLength"), "tcId \(test.tcId)")
                    ran += 1
                }
                continue
            }
            for test in group.tests {
                let accepted = key.isValidSignature(try [UInt8](hex: try #require(test.sig)), for: try [UInt8](hex: try #require(test.msg)),
                                                    context: try [UInt8](hex: test.ctx ?? ""))
                #expect(accepted == (test.result == "valid"), "tcId \(test.tcId) (\(test.comment ?? "")) \(test.flags ?? [])")
                ran += 1
                if accepted { valid += 1 }
            }
        }
        print("ML-DSA-65 Wycheproof verify: ran \(ran) cases (\(valid) valid), skipped 0 pre-hash")
        #expect(ran == file.numberOfTests)
    }

    // MARK: CCTV

    /// CCTV's accumulated test: 100 keys from seeds read off SHAKE128(""), each public key and
    /// deterministic signature of the empty message absorbed into a second SHAKE128.
    @Test func cctvAccumulated100() throws {
        struct File: Decodable {
            struct Entry: Decodable { let expected: [String: String] }
            let entry: Entry
            enum CodingKeys: String, CodingKey { case entry = "ML-DSA-65" }
        }
        let file = try loadVectors("MLDSA/cctv/accumulated-mldsa65.json", as: File.self)
        let expected = try #require(file.entry.expected["100"])
        var seeds = SHAKE128().finalize()
        var accumulator = SHAKE128()
        for _ in 0..<100 {
            let key = try MLDSA65.PrivateKey(seedRepresentation: seeds.read(count: 32))
            let publicKey = key.publicKey
            accumulator.update(data: publicKey.rawRepresentation)
            let signature = try key.signature(for: Data(), deterministic: true)
            accumulator.update(data: signature)
            #expect(publicKey.isValidSignature(signature, for: Data()))
        }
        var reader = accumulator.finalize()
        #expect(reader.read(count: 32).hex == expected)
        print("ML-DSA-65 CCTV accumulated: ran 100 iterations, skipped 0 pre-hash")
    }
}
