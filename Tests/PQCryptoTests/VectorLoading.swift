import Foundation
import TestSupport

/// Loads a JSON vector file from this test target's `Resources/Vectors`.
func loadVectors<T: Decodable>(_ path: String, as type: T.Type = T.self) throws -> T {
    let url = try vectorURL(path)
    return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
}

func vectorURL(_ path: String) throws -> URL {
    try resourceURL(in: .module, "Resources/Vectors/" + path)
}

/// ACVP vector-set files: `testGroups[].tests[]` with group-level fields.
struct ACVPFile<Group: Decodable>: Decodable {
    let testGroups: [Group]
}

/// Wycheproof files: `testGroups[].tests[]`.
struct WycheproofFile<Group: Decodable>: Decodable {
    let numberOfTests: Int
    let testGroups: [Group]
}

extension String {
    /// Hex-decodes this string (test data only).
    var bytes: [UInt8] {
        get throws { try [UInt8](hex: self) }
    }
}
