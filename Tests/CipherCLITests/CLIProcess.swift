// Tests of the cipher command line, a macOS and Linux program that most of them start: iOS, tvOS,
// watchOS and visionOS start no programs, so there this target compiles to nothing.
#if os(macOS) || os(Linux)
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

    /// The `error` object of the JSON document a failure prints under `--json` (`nil` when there is none).
    func jsonError() throws -> [String: Any]? { try json()["error"] as? [String: Any] }

    /// The `kind` of that error (`notPaired`, `unreachable`, …).
    func errorKind() throws -> String? { try jsonError()?["kind"] as? String }
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
    /// A value in `environment` that leaves the variable unset (`CIPHER_KEEP_UNLOCKED` included).
    static let unset = "\u{1}unset"

    /// With `keyring`, `cipher` runs in that session keyring (see ``TestKeyring``).
    static func launch(_ arguments: [String], environment: [String: String], directory: URL? = nil,
                       keyring: TestKeyring? = nil) throws -> PipedProcess {
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                    "HOME": FileManager.default.temporaryDirectory.path, "CIPHER_KEEP_UNLOCKED": "0"]
        base.merge(environment) { $1 }
        base = base.filter { $0.value != unset }
        let cipher = PipedProcess.productsDirectory.appendingPathComponent("cipher")
        if let keyring {
            return try PipedProcess(URL(fileURLWithPath: "/usr/bin/env"),
                                    ["python3", "-c", TestKeyring.script, "exec", keyring.name, cipher.path] + arguments,
                                    environment: base, directory: directory)
        }
        return try PipedProcess(cipher, arguments, environment: base, directory: directory)
    }

    /// Runs `cipher arguments…` with `environment` added to a clean one, in `directory` (by
    /// default the test's). `input` is asked for each line of standard input in turn (it may
    /// wait, e.g. for the station's PIN); `nil` closes it.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil, keyring: TestKeyring? = nil,
        input: @escaping @Sendable () async -> [String] = { [] }
    ) async throws -> CLIResult {
        let launched = try launch(arguments, environment: environment, directory: directory, keyring: keyring)
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

/// A Linux kernel session keyring for `cipher` runs, as a login gets from pam_keyinit: each run
/// joins the keyring named ``name`` as its session keyring (made on first use and linked into
/// the user keyring so that it outlives the run), so consecutive runs share it as the commands
/// of one terminal session do. ``shared`` joins the user's default session keyring instead
/// (`_uid_ses.<uid>`, what ssh, cron and containers give), unchanged. Only for tests: the test
/// keyring lets the user's processes search and read it, so that the next run can join it.
struct TestKeyring: Sendable {
    let name: String

    /// A fresh keyring of this test's own.
    static func own() -> TestKeyring { TestKeyring(name: "cipher-test-" + UUID().uuidString.prefix(8).lowercased()) }
    /// The user's default session keyring.
    static var shared: TestKeyring { TestKeyring(name: "_uid_ses.\(getuid())") }

    /// Joins the keyring named argv[2] (for "exec", then runs argv[3…]; for "read", prints the
    /// payload of the user key argv[3] in hex; for "add", adds argv[4] (hex) as the user key
    /// argv[3]; for "remove", invalidates the keyring).
    static let script = """
        import ctypes, os, sys
        libc = ctypes.CDLL(None, use_errno=True)
        KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
        ADD_KEY = {"x86_64": 248, "aarch64": 217}[os.uname().machine]
        def keyctl(*args): return libc.syscall(KEYCTL, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
        action, name = sys.argv[1], sys.argv[2]
        ring = keyctl(1, ctypes.c_char_p(name.encode()))
        if ring < 0: sys.exit(97)
        if not name.startswith("_uid_ses."):
            keyctl(5, ring, 0x3f3f0000)
            keyctl(8, ring, -4)
        if action == "exec":
            os.execv(sys.argv[3], sys.argv[3:])
        elif action == "read":
            key = keyctl(10, ring, ctypes.c_char_p(b"user"), ctypes.c_char_p(sys.argv[3].encode()), 0)
            if key < 0: sys.exit(98)
            buffer = ctypes.create_string_buffer(256)
            count = keyctl(11, key, buffer, 256)
            print(buffer.raw[:count].hex())
        elif action == "add":
            payload = bytes.fromhex(sys.argv[4])
            if libc.syscall(ADD_KEY, ctypes.c_char_p(b"user"), ctypes.c_char_p(sys.argv[3].encode()), ctypes.c_char_p(payload),
                            ctypes.c_size_t(len(payload)), ctypes.c_long(ring)) < 0: sys.exit(99)
        elif action == "remove":
            keyctl(9, ring, -4)
            keyctl(21, ring)
        """

    /// Runs the script's `action` in this keyring; its standard output.
    func run(_ action: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, action, name] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CLITestError("keyring \(action) failed: \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Removes a keyring of the test's own.
    func remove() { if !name.hasPrefix("_uid_ses.") { _ = try? run("remove") } }
}
#endif
