import Foundation

// Only where a test can start a program (Programs.canStart): iOS, tvOS, watchOS and visionOS have no Process.
#if os(macOS) || os(Linux)
/// A program started with its three standard streams on pipes: how the tests start a program they
/// talk to (the interop scripts, the built `cipher`).
public struct PipedProcess {
    /// The running program.
    public let process: Process
    /// Its standard input, for writing.
    public let stdin = Pipe()
    /// Its standard output, for reading.
    public let stdout = Pipe()
    /// Its standard error, for reading.
    public let stderr = Pipe()

    /// Starts `executable` with `arguments`; `environment`, when given, replaces the inherited
    /// one, and `directory`, when given, is its working directory.
    /// - Throws: launch errors (`executable` missing or not executable).
    public init(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        if let directory { process.currentDirectoryURL = directory }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
    }

    /// The directory holding the package's built executables: the directory containing the test bundle
    /// (the test runner's bundle lives in the products directory, an xctest bundle or a runner binary).
    public static var productsDirectory: URL {
        var url = Bundle.main.bundleURL
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url
    }
}
#endif
