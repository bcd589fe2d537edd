import Foundation
import TestSupport

/// Loads a file from this test target's `Resources` folder.
func resourceData(_ path: String) throws -> Data {
    try Data(contentsOf: resourceURL(in: .module, "Resources/" + path))
}

/// Decodes a JSON resource.
func loadResource<T: Decodable>(_ path: String, as type: T.Type = T.self) throws -> T {
    try JSONDecoder().decode(T.self, from: resourceData(path))
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
