import Foundation
import Testing
import TestSupport

/// Loads a JSON vector file from this test target's `Resources/Vectors` (ML-KEM's at the top,
/// ML-DSA's under `MLDSA/`; see the READMEs there).
func loadVectors<T: Decodable>(_ path: String, as type: T.Type = T.self) throws -> T {
    let url = try vectorURL(path)
    return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
}

func vectorURL(_ path: String) throws -> URL {
    try resourceURL(in: .module, "Resources/Vectors/" + path)
}

/// An ACVP or Wycheproof vector file (ML-KEM or ML-DSA): `testGroups[].tests[]`. Wycheproof files
/// also say how many cases they hold.
struct VectorFile: Decodable {
    let numberOfTests: Int?
    let testGroups: [VectorGroup]

    /// Reads the file at `path` below `Resources/Vectors`.
    init(_ path: String) throws {
        self = try loadVectors(path)
    }

    /// Calls `check` with every case and its group, in file order; returns how many cases there were.
    func forEachCase(_ check: (VectorGroup, VectorCase) throws -> Void) rethrows -> Int {
        var count = 0
        for group in testGroups {
            for test in group.tests {
                try check(group, test)
                count += 1
            }
        }
        return count
    }

    /// The cases by `tcId` (which joins an ACVP prompt to its expected results).
    var casesByID: [Int: VectorCase] {
        var cases = [Int: VectorCase]()
        _ = forEachCase { _, test in cases[test.tcId] = test }
        return cases
    }
}

/// A group of cases, with the group-level fields the files use; each file fills its own.
struct VectorGroup: Decodable {
    /// The ACVP group number.
    let tgId: Int?
    let parameterSet: String?
    /// The ML-KEM operation of an ACVP encapDecap group.
    let function: String?
    /// The ML-DSA signing flags of an ACVP group.
    let deterministic: Bool?
    let signatureInterface: String?
    let preHash: String?
    let externalMu: Bool?
    let keyFormat: String?
    /// The key of a Wycheproof ML-DSA group.
    let privateSeed: String?
    let privateKey: String?
    let publicKey: String?
    let tests: [VectorCase]

    /// `tgId <n>`, for messages (Wycheproof groups are not numbered).
    var label: String { "tgId " + (tgId.map(String.init) ?? "?") }
}

/// One case of a vector file, ACVP (prompt or expected results) or Wycheproof, ML-KEM or ML-DSA:
/// the files share their field names, and each fills the fields of its own operation.
struct VectorCase: Decodable {
    let tcId: Int
    /// ML-KEM: a seed, its halves d and z, the keys, the message, the ciphertext, the shared
    /// secret (`k` in ACVP, `K` in Wycheproof).
    let seed: String?
    let d: String?
    let z: String?
    let ek: String?
    let dk: String?
    let m: String?
    let c: String?
    let k: String?
    let K: String?
    /// ML-DSA, ACVP.
    let pk: String?
    let sk: String?
    let message: String?
    let mu: String?
    let context: String?
    let rnd: String?
    let hashAlg: String?
    let signature: String?
    /// ML-DSA, Wycheproof.
    let msg: String?
    let ctx: String?
    let sig: String?
    /// The verdict: ACVP's `testPassed`, Wycheproof's `result` and `flags`.
    let testPassed: Bool?
    let result: String?
    let comment: String?
    let flags: [String]?

    /// Whether Wycheproof calls the case valid.
    var isValid: Bool { result == "valid" }

    /// Whether Wycheproof flags the case with `flag`.
    func hasFlag(_ flag: String) -> Bool { flags?.contains(flag) ?? false }
}

/// Runs `check` on every case of the Wycheproof file at `path` (below `Resources/Vectors`), prints
/// how many ran, and expects that to be the number of cases the file declares.
func checkWycheproofFile(_ path: String, _ check: (VectorCase) throws -> Void) throws {
    let file = try VectorFile(path)
    let ran = try file.forEachCase { _, test in try check(test) }
    print("Wycheproof \(path): \(ran) cases")
    #expect(ran == file.numberOfTests)
}

extension String {
    /// Hex-decodes this string (test data only).
    var bytes: [UInt8] {
        get throws { try [UInt8](hex: self) }
    }
}
