import Foundation

/// The URL of `path` inside a test target's bundle (`.copy("Resources")` keeps the folder inside
/// the bundle directory, so paths start with `Resources/`); throws when the file is missing.
public func resourceURL(in bundle: Bundle, _ path: String) throws -> URL {
    let url = bundle.bundleURL.appendingPathComponent(path)
    guard FileManager.default.fileExists(atPath: url.path) else { throw TestDataError.missingResource(path) }
    return url
}

/// The bytes of `path` in a test target's `Resources` folder (`bundle` is the target's `.module`).
public func resourceData(in bundle: Bundle, _ path: String) throws -> Data {
    try Data(contentsOf: resourceURL(in: bundle, "Resources/" + path))
}

/// A JSON file in a test target's `Resources` folder, decoded with Foundation's decoder (test
/// data, not a wire body).
public func loadResource<T: Decodable>(in bundle: Bundle, _ path: String, as type: T.Type = T.self) throws -> T {
    try JSONDecoder().decode(T.self, from: resourceData(in: bundle, path))
}

/// Why test data could not be read.
public enum TestDataError: Error, CustomStringConvertible {
    /// A file the test needs is not in its bundle.
    case missingResource(String)

    public var description: String {
        switch self {
        case .missingResource(let name): "missing test resource \(name)"
        }
    }
}
