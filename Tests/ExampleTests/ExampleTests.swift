import Foundation
import TestSupport
import Testing

/// Builds (through the test target's dependencies) and runs every example, checking its output,
/// like swift-argument-parser's example tests.
@Suite("Examples")
struct ExampleTests {
    /// The directory holding the built executables: the one containing the test bundle.
    static var productsDirectory: URL {
        var url = Bundle.main.bundleURL
        // The test runner's bundle lives in the products directory (xctest bundle or runner binary).
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url
    }

    static func run(_ product: String, _ arguments: [String] = []) throws -> String {
        let executable = productsDirectory.appendingPathComponent(product).path
        let output = try InteropPython.run(executable, arguments, input: Data())
        return String(decoding: output, as: UTF8.self)
    }

    @Test func postQuantumTour() throws {
        let output = try Self.run("post-quantum-tour")
        #expect(output.contains("ML-KEM-768: public key 1184 B, ciphertext 1088 B, shared secrets match: true"))
        #expect(output.contains("reloaded 2400-byte key decapsulates too: true"))
        // SHA3-256("cipher station"), computed independently with Python's hashlib.
        #expect(output.contains("f36dbec02a696b1acdde0b0a9d2fe173c485b396cb0c8e4bba0e11e66abe8a3d"))
    }
}
