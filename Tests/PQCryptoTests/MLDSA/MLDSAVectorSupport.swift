import Foundation
import Testing
import TestSupport

/// An ML-DSA ACVP vector set in `Resources/Vectors/MLDSA/acvp` (see the README there): the prompt
/// file and its expected results, joined on `tcId`.
struct ACVPVectorSet {
    let prompt: VectorFile
    let results: [Int: VectorCase]

    /// Reads `<folder>/prompt.json` and `<folder>/expectedResults.json`.
    init(folder: String) throws {
        prompt = try VectorFile("MLDSA/acvp/\(folder)/prompt.json")
        results = try VectorFile("MLDSA/acvp/\(folder)/expectedResults.json").casesByID
    }

    /// The ML-DSA-65 groups (the files also hold ML-DSA-44 and -87).
    var groups: [VectorGroup] { prompt.testGroups.filter { $0.parameterSet == "ML-DSA-65" } }

    /// The expected result of `test`; fails the test when the results file lacks it.
    func expected(for test: VectorCase) throws -> VectorCase { try #require(results[test.tcId]) }
}
