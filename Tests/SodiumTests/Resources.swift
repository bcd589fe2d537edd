import Foundation
import TestSupport

/// Loads a file from this test target's `Resources` folder.
func resourceData(_ path: String) throws -> Data {
    // `.copy("Resources")` keeps the folder inside the bundle directory.
    let url = Bundle.module.bundleURL.appendingPathComponent("Resources").appendingPathComponent(path)
    guard FileManager.default.fileExists(atPath: url.path) else { throw TestDataError.missingResource(path) }
    return try Data(contentsOf: url)
}

/// Decodes a JSON resource.
func loadResource<T: Decodable>(_ path: String, as type: T.Type = T.self) throws -> T {
    try JSONDecoder().decode(T.self, from: resourceData(path))
}

/// A fresh empty directory under the system's temporary directory, removed by `cleanup`.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("sodium-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Names of the files in the directory.
    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    func cleanup() { try? FileManager.default.removeItem(at: url) }
}
