import Foundation
import TestSupport

/// The outcome of one `cipher` run.
struct CLIResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String

    /// Standard output parsed as a JSON object.
    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any] else {
            throw CLITestError("stdout is not a JSON object: \(stdout)")
        }
        return object
    }
}

struct CLITestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Runs the built `cipher` executable as a subprocess.
enum CLIProcess {
    /// Starts the built `cipher` with `arguments`, `environment` added to a clean one (PATH, a
    /// temporary HOME, and no unlocked key kept in the session keyring unless `environment` sets
    /// `CIPHER_KEEP_UNLOCKED`), in `directory` if given, and its three standard streams on pipes.
    static func launch(_ arguments: [String], environment: [String: String], directory: URL? = nil) throws -> PipedProcess {
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                    "HOME": FileManager.default.temporaryDirectory.path, "CIPHER_KEEP_UNLOCKED": "0"]
        base.merge(environment) { $1 }
        return try PipedProcess(PipedProcess.productsDirectory.appendingPathComponent("cipher"), arguments, environment: base, directory: directory)
    }

    /// Runs `cipher arguments…` with `environment` added to a clean one, in `directory` (by
    /// default the test's). `input` is asked for each line of standard input in turn (it may
    /// wait, e.g. for the station's PIN); `nil` closes it.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil,
        input: @escaping @Sendable () async -> [String] = { [] }
    ) async throws -> CLIResult {
        let launched = try launch(arguments, environment: environment, directory: directory)
        // Blocking reads get their own threads: the cooperative pool may have only two.
        let out = PipeReader(launched.stdout), err = PipeReader(launched.stderr)
        for line in await input() {
            try? launched.stdin.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
        }
        try? launched.stdin.fileHandleForWriting.close()
        let outData = await out.result()
        let errData = await err.result()
        launched.process.waitUntilExit()
        return CLIResult(status: launched.process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                         stderr: String(decoding: errData, as: UTF8.self))
    }
}
