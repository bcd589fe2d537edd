import Foundation

/// Runs the Python side of an interop test: the libraries real stations run (kyber-py, dilithium-py,
/// PyNaCl) in a virtual environment under `.build/interop-venv`.
///
/// The README's test command creates that environment before `swift test`; when a developer runs
/// `swift test` directly, the first interop test creates it (this needs PyPI). Where a test can
/// start a program (macOS, Linux), a test that cannot reach Python fails; it is never skipped.
/// iOS, tvOS, watchOS and visionOS start no programs: there the interop tests are skipped by their
/// `.enabled(if: Programs.canStart, …)` trait, and these calls throw ``ProgramsUnavailable``.
public enum InteropPython {
    /// Exact versions from `Tests/Interop/requirements.txt`, so that interop results are reproducible.
    public static func requirements() throws -> [String] {
        let text = try String(contentsOf: scriptsDirectory.appendingPathComponent("requirements.txt"), encoding: .utf8)
        return text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The package root, found from this file's path (Tests/TestSupport/InteropPython.swift).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The directory holding the Python halves of the interop tests.
    public static var scriptsDirectory: URL {
        packageRoot.appendingPathComponent("Tests/Interop")
    }

    private static let setupLock = NSLock()

    /// The interpreter to use: `CIPHER_INTEROP_PYTHON` if set, else the package's venv (created on
    /// first use).
    public static func interpreter() throws -> String {
        if let explicit = ProcessInfo.processInfo.environment["CIPHER_INTEROP_PYTHON"], !explicit.isEmpty {
            return explicit
        }
        let venv = packageRoot.appendingPathComponent(".build/interop-venv")
        let python = venv.appendingPathComponent("bin/python3").path
        setupLock.lock()
        defer { setupLock.unlock() }
        let marker = venv.appendingPathComponent(".requirements").path
        let requirements = try requirements()
        let wanted = requirements.joined(separator: "\n")
        if FileManager.default.fileExists(atPath: python),
           let have = try? String(contentsOfFile: marker, encoding: .utf8), have == wanted {
            return python
        }
        _ = try run("/usr/bin/env", ["python3", "-m", "venv", venv.path], input: Data())
        _ = try run(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"] + requirements,
                    input: Data())
        try wanted.write(toFile: marker, atomically: true, encoding: .utf8)
        return python
    }

    /// Runs `Tests/Interop/<script>` with `request` as JSON on standard input and decodes its JSON
    /// standard output as `Response`.
    public static func call<Request: Encodable, Response: Decodable>(
        _ script: String, _ request: Request, as: Response.Type = Response.self
    ) throws -> Response {
        let python = try interpreter()
        let input = try JSONEncoder().encode(request)
        let output = try run(python, [scriptsDirectory.appendingPathComponent(script).path], input: input)
        do {
            return try JSONDecoder().decode(Response.self, from: output)
        } catch {
            throw InteropError.badOutput(script: script, output: String(decoding: output.prefix(2000), as: UTF8.self))
        }
    }

    /// Runs a process to completion, feeding `input` and returning standard output; throws with the
    /// standard error text when it exits non-zero.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], input: Data) throws -> Data {
        #if os(macOS) || os(Linux)
        let launched = try PipedProcess(URL(fileURLWithPath: executable), arguments)
        let stdin = launched.stdin, stderr = launched.stderr
        // Write and read on separate threads so that large payloads cannot deadlock on full pipes.
        let writer = Thread {
            stdin.fileHandleForWriting.write(input)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let errorBox = DataBox()
        let errorReader = Thread { errorBox.set(stderr.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let output = launched.stdout.fileHandleForReading.readDataToEndOfFile()
        launched.process.waitUntilExit()
        while !errorBox.isSet { Thread.sleep(forTimeInterval: 0.001) }
        guard launched.process.terminationStatus == 0 else {
            throw InteropError.processFailed(
                command: ([executable] + arguments).joined(separator: " "),
                status: launched.process.terminationStatus,
                stderr: String(decoding: errorBox.value.suffix(4000), as: UTF8.self))
        }
        return output
        #else
        throw ProgramsUnavailable(executable)
        #endif
    }
}

/// Why an interop call failed.
public enum InteropError: Error, CustomStringConvertible {
    case processFailed(command: String, status: Int32, stderr: String)
    case badOutput(script: String, output: String)

    public var description: String {
        switch self {
        case let .processFailed(command, status, stderr): "\(command) exited \(status): \(stderr)"
        case let .badOutput(script, output): "\(script) printed unreadable JSON: \(output)"
        }
    }
}

private final class DataBox: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var done = false
    func set(_ value: Data) { lock.lock(); data = value; done = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return done }
    var value: Data { lock.lock(); defer { lock.unlock() }; return data }
}
