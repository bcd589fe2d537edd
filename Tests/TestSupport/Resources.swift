import Foundation

/// The URL of `path` inside a test target's bundle (`.copy("Resources")` keeps the folder inside
/// the bundle directory, so paths start with `Resources/`); throws when the file is missing.
public func resourceURL(in bundle: Bundle, _ path: String) throws -> URL {
    let url = bundle.bundleURL.appendingPathComponent(path)
    guard FileManager.default.fileExists(atPath: url.path) else { throw TestDataError.missingResource(path) }
    return url
}

/// A fresh empty directory under the system's temporary directory, removed by `cleanup`.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "cipher-tests") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Names of the files in the directory, sorted.
    public func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Removes the directory and everything in it.
    public func cleanup() { try? FileManager.default.removeItem(at: url) }
}
