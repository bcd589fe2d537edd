import Foundation
import LoopbackHTTP

/// The URL of `path` inside a test target's bundle (`.copy("Resources")` keeps the folder inside
/// the bundle directory, so paths start with `Resources/`); throws when the file is missing.
public func resourceURL(in bundle: Bundle, _ path: String) throws -> URL {
    let url = bundle.bundleURL.appendingPathComponent(path)
    guard FileManager.default.fileExists(atPath: url.path) else { throw TestDataError.missingResource(path) }
    return url
}

/// The package's one temporary-directory helper (LoopbackHTTP's, which the conformance cases use too).
package typealias TemporaryDirectory = LoopbackHTTP.TemporaryDirectory
