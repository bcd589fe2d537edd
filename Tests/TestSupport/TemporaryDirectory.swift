import Foundation

/// A fresh empty directory under the system's temporary directory, removed by `cleanup()`: the
/// tests' scratch directory.
package struct TemporaryDirectory: Sendable {
    /// The directory.
    package let url: URL

    /// Creates `<temporary directory>/<prefix>-<UUID>`.
    package init(prefix: String = "cipher-tests") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    package func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Names of the files in the directory, sorted.
    package func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }

    /// Removes the directory and everything in it.
    package func cleanup() { try? FileManager.default.removeItem(at: url) }
}
