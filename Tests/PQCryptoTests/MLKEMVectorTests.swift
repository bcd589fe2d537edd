import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// Every ML-KEM-768 known-answer vector we ship: NIST ACVP, Wycheproof and CCTV.
@Suite("ML-KEM-768 vectors")
struct MLKEMVectorTests {
    @Test func acvpKeyGen() throws {
        let file = try VectorFile("acvp/ML-KEM-keyGen-FIPS203/internalProjection.json")
        let count = try file.forEachCase { _, test in
            let key = try MLKEM768.PrivateKey(seedRepresentation: try #require(test.d).bytes + #require(test.z).bytes)
            #expect(key.publicKey.rawRepresentation.hex == test.ek?.lowercased(), "tcId \(test.tcId)")
            #expect(key.expandedRepresentation.hex == test.dk?.lowercased(), "tcId \(test.tcId)")
        }
        print("ACVP ML-KEM-768 keyGen: \(count) cases")
        #expect(count == 25)
    }

    /// Runs one ACVP encapDecap file: encapsulation, decapsulation (expanded or seed keys),
    /// and both key checks.
    func runEncapDecap(_ path: String) throws -> [String: Int] {
        let file = try VectorFile(path)
        var counts = [String: Int]()
        _ = try file.forEachCase { group, test in
            let function = try #require(group.function)
            let label = "\(path) \(group.label) tc \(test.tcId)"
            switch function {
            case "encapsulation":
                let key = try MLKEM768.PublicKey(rawRepresentation: try #require(test.ek).bytes)
                let result = key.encapsulate(randomness: try #require(test.m).bytes)
                #expect(result.encapsulated.hex == test.c?.lowercased(), "\(label)")
                #expect(result.sharedSecret.hex == test.k?.lowercased(), "\(label)")
            case "decapsulation":
                let key: MLKEM768.PrivateKey
                if group.keyFormat == "seed" {
                    key = try MLKEM768.PrivateKey(seedRepresentation: try #require(test.d).bytes + #require(test.z).bytes)
                } else {
                    key = try MLKEM768.PrivateKey(expandedRepresentation: try #require(test.dk).bytes)
                }
                let secret = try key.decapsulate(try #require(test.c).bytes)
                #expect(secret.hex == test.k?.lowercased(), "\(label)")
            case "encapsulationKeyCheck":
                let accepted = (try? MLKEM768.PublicKey(rawRepresentation: try #require(test.ek).bytes)) != nil
                #expect(accepted == test.testPassed, "\(label)")
            case "decapsulationKeyCheck":
                let accepted = (try? MLKEM768.PrivateKey(expandedRepresentation: try #require(test.dk).bytes)) != nil
                #expect(accepted == test.testPassed, "\(label)")
            default:
                Issue.record("unknown function \(function) in \(label)")
            }
            counts[function, default: 0] += 1
        }
        return counts
    }

    @Test func acvpEncapDecap() throws {
        let counts = try runEncapDecap("acvp/ML-KEM-encapDecap-FIPS203/internalProjection.json")
        print("ACVP ML-KEM-768 encapDecap (FIPS203): \(counts.sorted { $0.key < $1.key })")
        #expect(counts == ["encapsulation": 25, "decapsulation": 10, "encapsulationKeyCheck": 10, "decapsulationKeyCheck": 10])
    }

    @Test func acvpEncapDecapRevision1() throws {
        let counts = try runEncapDecap("acvp/ML-KEM-encapDecap-FIPS203-tr1/internalProjection.json")
        print("ACVP ML-KEM-768 encapDecap (FIPS203-tr1): \(counts.sorted { $0.key < $1.key })")
        #expect(counts == ["encapsulation": 25, "decapsulation": 20, "encapsulationKeyCheck": 10, "decapsulationKeyCheck": 10])
    }

    /// `mlkem_768_test.json`: key from seed (invalid: wrong seed length), decapsulation (invalid:
    /// wrong ciphertext length), the strcmp case.
    @Test func wycheproofDecaps() throws {
        try checkWycheproofFile("wycheproof/mlkem_768_test.json") { test in
            let seed = try #require(test.seed), ciphertext = try #require(test.c)
            let outcome: (ek: String, k: String)? = {
                guard let key = try? MLKEM768.PrivateKey(seedRepresentation: try seed.bytes),
                      let secret = try? key.decapsulate(try ciphertext.bytes) else { return nil }
                return (key.publicKey.rawRepresentation.hex, secret.hex)
            }()
            if test.isValid {
                #expect(outcome?.k == test.K, "tcId \(test.tcId)")
                if let ek = test.ek { #expect(outcome?.ek == ek, "tcId \(test.tcId)") }
            } else {
                #expect(outcome == nil, "tcId \(test.tcId) must be rejected")
            }
        }
    }

    @Test func wycheproofEncaps() throws {
        try checkWycheproofFile("wycheproof/mlkem_768_encaps_test.json") { test in
            let ek = try #require(test.ek).bytes
            let parsed = Result { () throws(PQCryptoError) in try MLKEM768.PublicKey(rawRepresentation: ek) }
            let expected = try #require(test.result)
            switch (parsed, expected) {
            case let (.success(key), "valid"):
                let result = key.encapsulate(randomness: try #require(test.m).bytes)
                #expect(result.encapsulated.hex == test.c, "tcId \(test.tcId)")
                #expect(result.sharedSecret.hex == test.K, "tcId \(test.tcId)")
            case (.failure, "invalid"):
                break
            default:
                Issue.record("tcId \(test.tcId): expected \(expected), got \(parsed)")
            }
        }
    }

    @Test func wycheproofKeyGenSeed() throws {
        try checkWycheproofFile("wycheproof/mlkem_768_keygen_seed_test.json") { test in
            let seed = try #require(test.seed)
            let key = try MLKEM768.PrivateKey(seedRepresentation: try seed.bytes)
            #expect(key.publicKey.rawRepresentation.hex == test.ek, "tcId \(test.tcId)")
            #expect(key.expandedRepresentation.hex == test.dk, "tcId \(test.tcId)")
            #expect(key.seedRepresentation?.hex == seed, "tcId \(test.tcId)")
        }
    }

    @Test func wycheproofSemiExpandedDecaps() throws {
        try checkWycheproofFile("wycheproof/mlkem_768_semi_expanded_decaps_test.json") { test in
            let encoded = try #require(test.dk), ciphertext = try #require(test.c)
            let secret: String? = {
                guard let key = try? MLKEM768.PrivateKey(expandedRepresentation: try encoded.bytes),
                      let secret = try? key.decapsulate(try ciphertext.bytes) else { return nil }
                return secret.hex
            }()
            if test.isValid {
                #expect(secret == test.K, "tcId \(test.tcId)")
            } else {
                #expect(secret == nil, "tcId \(test.tcId) must be rejected")
            }
        }
    }

    /// CCTV: 780 encapsulation keys with one unreduced coefficient each; all must be refused.
    @Test func cctvModulusKeysRejected() throws {
        let text = try String(contentsOf: try vectorURL("cctv/mlkem768-modulus.txt"), encoding: .utf8)
        var rejected = 0, total = 0
        for line in text.split(separator: "\n") where !line.isEmpty {
            total += 1
            do {
                _ = try MLKEM768.PublicKey(rawRepresentation: try String(line).bytes)
            } catch PQCryptoError.encapsulationKeyNotReduced {
                rejected += 1
            }
        }
        print("CCTV ML-KEM-768 modulus: \(rejected) of \(total) keys rejected")
        #expect(total == 780)
        #expect(rejected == total)
    }
}

extension SymmetricKey {
    var hex: String { withUnsafeBytes { [UInt8]($0).hex } }
}
