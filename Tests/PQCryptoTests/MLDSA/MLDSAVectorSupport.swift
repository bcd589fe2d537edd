import Foundation
import TestSupport

/// Reads the ML-DSA vector files copied into `Resources/Vectors/MLDSA` (see the README there).
enum MLDSAVectorFiles {
    static func data(_ path: String) throws -> Data {
        guard let base = Bundle.module.url(forResource: "Resources", withExtension: nil) else {
            throw TestDataError.missingResource("Resources (looking for \(path))")
        }
        let url = base.appendingPathComponent("Vectors/MLDSA").appendingPathComponent(path)
        guard let data = try? Data(contentsOf: url) else { throw TestDataError.missingResource(path) }
        return data
    }

    static func decode<T: Decodable>(_ type: T.Type, _ path: String) throws -> T {
        try JSONDecoder().decode(T.self, from: data(path))
    }
}

// MARK: ACVP

/// An ACVP prompt file: groups of test cases with the group's flags.
struct ACVPPrompt<Test: Decodable>: Decodable {
    struct Group: Decodable {
        let tgId: Int
        let parameterSet: String
        let deterministic: Bool?
        let signatureInterface: String?
        let preHash: String?
        let externalMu: Bool?
        let keyFormat: String?
        let tests: [Test]
    }
    let testGroups: [Group]
}

/// An ACVP expectedResults file, to be joined with its prompt on `tcId`.
struct ACVPResults<Result: Decodable>: Decodable {
    struct Group: Decodable {
        let tgId: Int
        let tests: [Result]
    }
    let testGroups: [Group]

    /// The results by `tcId`.
    func byCase<Key: Hashable>(_ key: KeyPath<Result, Key>) -> [Key: Result] {
        var map = [Key: Result]()
        for group in testGroups { for test in group.tests { map[test[keyPath: key]] = test } }
        return map
    }
}

struct ACVPKeyGenTest: Decodable { let tcId: Int; let seed: String }
struct ACVPKeyGenResult: Decodable { let tcId: Int; let pk: String; let sk: String }

struct ACVPSigGenTest: Decodable {
    let tcId: Int
    let message: String?
    let mu: String?
    let sk: String?
    let seed: String?
    let context: String?
    let rnd: String?
    let hashAlg: String?
}
struct ACVPSigGenResult: Decodable { let tcId: Int; let signature: String }

struct ACVPSigVerTest: Decodable {
    let tcId: Int
    let pk: String
    let message: String?
    let mu: String?
    let context: String?
    let signature: String
}
struct ACVPSigVerResult: Decodable { let tcId: Int; let testPassed: Bool }

// MARK: Wycheproof

struct WycheproofSignFile: Decodable {
    struct Group: Decodable {
        let privateSeed: String?
        let privateKey: String?
        let publicKey: String?
        let tests: [Test]
    }
    struct Test: Decodable {
        let tcId: Int
        let comment: String
        let msg: String?
        let ctx: String?
        let rnd: String?
        let mu: String?
        let sig: String
        let result: String
        let flags: [String]
    }
    let numberOfTests: Int
    let testGroups: [Group]
}

struct WycheproofVerifyFile: Decodable {
    struct Group: Decodable {
        let publicKey: String
        let tests: [Test]
    }
    struct Test: Decodable {
        let tcId: Int
        let comment: String
        let msg: String
        let ctx: String?
        let sig: String
        let result: String
        let flags: [String]
    }
    let numberOfTests: Int
    let testGroups: [Group]
}
