import Foundation
import TestSupport

/// Loads a file from this test target's `Resources` folder.
func resourceData(_ path: String) throws -> Data { try TestSupport.resourceData(in: .module, path) }

/// Decodes a JSON resource of this test target.
func loadResource<T: Decodable>(_ path: String, as type: T.Type = T.self) throws -> T {
    try TestSupport.loadResource(in: .module, path)
}

extension TemporaryDirectory {
    /// A directory named for this test target.
    init() throws { try self.init(prefix: "sodium-tests") }

    /// Writes `contents` to the file `name` in the directory and returns the file's URL.
    func write(_ contents: some DataProtocol, to name: String) throws -> URL {
        let url = file(name)
        try Data(contents).write(to: url)
        return url
    }
}
