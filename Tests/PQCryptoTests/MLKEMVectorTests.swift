import Foundation
@testable import PQCrypto
import TestSupport
import Testing

/// Every ML-KEM-768 known-answer vector we ship: NIST ACVP, Wycheproof and CCTV.
@Suite("ML-KEM-768 vectors")
struct MLKEMVectorTests {
    struct KeyGenGroup: Decodable {
        let tests: [Test]
        struct Test: Decodable { let tcId: Int; let d: String; let z: String; let ek: String; let dk: String }
    }

    @Test func acvpKeyGen() throws {
        let file = try loadVectors("acvp/ML-KEM-keyGen-FIPS203/internalProjection.json", as: ACVPFile<KeyGenGroup>.self)
        var count = 0
        for test in file.testGroups.flatMap(\.tests) {
            let key = try MLKEM768.PrivateKey(seedRepresentation: test.d.bytes + test.z.bytes)
            #expect(key.publicKey.rawRepresentation.hex == test.ek.lowercased(), "tcId \(test.tcId)")
            #expect(key.expandedRepresentation.hex == test.dk.lowercased(), "tcId \(test.tcId)")
            count += 1
        }
        print("ACVP ML-KEM-768 keyGen: \(count) cases")
        #expect(count == 25)
    }

    struct EncapDecapGroup: Decodable {
        let tgId: Int
        let function: String
        let keyFormat: String?
        let tests: [Test]
        struct Test: Decodable {
            let tcId: Int
            let ek: String?
            let dk: String?
            let d: String?
            let z: String?
            let m: String?
            let c: String?
            let k: String?
            let testPassed: Bool?
        }
    }

    /// Runs one ACVP encapDecap file: encapsulation, decapsulation (expanded or seed keys),
    /// and both key checks.
    func runEncapDecap(_ path: String) throws -> [String: Int] {
        let file = try loadVectors(path, as: ACVPFile<EncapDecapGroup>.self)
        var counts = [String: Int]()
        for group in file.testGroups {
            for test in group.tests {
                let label = "\(path) tg \(group.tgId) tc \(test.tcId)"
                switch group.function {
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
                    Issue.record("unknown function \(group.function) in \(label)")
                }
                counts[group.function, default: 0] += 1
            }
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

    struct WycheproofDecapsGroup: Decodable {
        let tests: [Test]
        struct Test: Decodable {
            let tcId: Int
            let seed: String
            let ek: String?
            let c: String
            let K: String?
            let result: String
        }
    }

    /// `mlkem_768_test.json`: key from seed (invalid: wrong seed length), decapsulation (invalid:
    /// wrong ciphertext length), the strcmp case.
    @Test func wycheproofDecaps() throws {
        let file = try loadVectors("wycheproof/mlkem_768_test.json", as: WycheproofFile<WycheproofDecapsGroup>.self)
        var count = 0
        for test in file.testGroups.flatMap(\.tests) {
            let outcome: (ek: String, k: String)? = {
                guard let key = try? MLKEM768.PrivateKey(seedRepresentation: try test.seed.bytes),
                      let secret = try? key.decapsulate(try test.c.bytes) else { return nil }
                return (key.publicKey.rawRepresentation.hex, secret.hex)
            }()
            if test.result == "valid" {
                #expect(outcome?.k == test.K, "tcId \(test.tcId)")
                if let ek = test.ek { #expect(outcome?.ek == ek, "tcId \(test.tcId)") }
            } else {
                #expect(outcome == nil, "tcId \(test.tcId) must be rejected")
            }
            count += 1
        }
        print("Wycheproof mlkem_768_test: \(count) cases")
        #expect(count == file.numberOfTests)
    }

    struct WycheproofEncapsGroup: Decodable {
        let tests: [Test]
        struct Test: Decodable {
            let tcId: Int
            let ek: String
            let m: String
            let c: String?
            let K: String?
            let result: String
        }
    }

    @Test func wycheproofEncaps() throws {
        let file = try loadVectors("wycheproof/mlkem_768_encaps_test.json", as: WycheproofFile<WycheproofEncapsGroup>.self)
        var count = 0
        for test in file.testGroups.flatMap(\.tests) {
            let ek = try test.ek.bytes
            let parsed = Result { () throws(PQCryptoError) in try MLKEM768.PublicKey(rawRepresentation: ek) }
            switch (parsed, test.result) {
            case let (.success(key), "valid"):
                let result = key.encapsulate(randomness: try test.m.bytes)
                #expect(result.encapsulated.hex == test.c, "tcId \(test.tcId)")
                #expect(result.sharedSecret.hex == test.K, "tcId \(test.tcId)")
            case (.failure, "invalid"):
                break
            default:
                Issue.record("tcId \(test.tcId): expected \(test.result), got \(parsed)")
            }
            count += 1
        }
        print("Wycheproof mlkem_768_encaps_test: \(count) cases")
        #expect(count == file.numberOfTests)
    }

    struct WycheproofKeyGenGroup: Decodable {
        let tests: [Test]
        struct Test: Decodable { let tcId: Int; let seed: String; let ek: String; let dk: String }
    }

    @Test func wycheproofKeyGenSeed() throws {
        let file = try loadVectors("wycheproof/mlkem_768_keygen_seed_test.json", as: WycheproofFile<WycheproofKeyGenGroup>.self)
        var count = 0
        for test in file.testGroups.flatMap(\.tests) {
            let key = try MLKEM768.PrivateKey(seedRepresentation: try test.seed.bytes)
            #expect(key.publicKey.rawRepresentation.hex == test.ek, "tcId \(test.tcId)")
            #expect(key.expandedRepresentation.hex == test.dk, "tcId \(test.tcId)")
            #expect(key.seedRepresentation?.hex == test.seed, "tcId \(test.tcId)")
            count += 1
        }
        print("Wycheproof mlkem_768_keygen_seed_test: \(count) cases")
        #expect(count == file.numberOfTests)
    }

    struct WycheproofSemiExpandedGroup: Decodable {
        let tests: [Test]
        struct Test: Decodable {
            let tcId: Int
            let dk: String
            let c: String
            let K: String?
            let result: String
        }
    }

    @Test func wycheproofSemiExpandedDecaps() throws {
        let file = try loadVectors(
            "wycheproof/mlkem_768_semi_expanded_decaps_test.json", as: WycheproofFile<WycheproofSemiExpandedGroup>.self)
        var count = 0
        for test in file.testGroups.flatMap(\.tests) {
            let secret: String? = {
                guard let key = try? MLKEM768.PrivateKey(expandedRepresentation: try test.dk.bytes),
                      let secret = try? key.decapsulate(try test.c.bytes) else { return nil }
                return secret.hex
            }()
            if test.result == "valid" {
                #expect(secret == test.K, "tcId \(test.tcId)")
            } else {
                #expect(secret == nil, "tcId \(test.tcId) must be rejected")
            }
            count += 1
        }
        print("Wycheproof mlkem_768_semi_expanded_decaps_test: \(count) cases")
        #expect(count == file.numberOfTests)
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
