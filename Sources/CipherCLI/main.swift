import Foundation
import StationClient
import Transport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// cipher: an end-to-end encrypted drive for the terminal, on the StationClient public API.
// `cipher --help` lists the commands; every command takes --help.

let environment = ProcessInfo.processInfo.environment
let rawArguments = Array(CommandLine.arguments.dropFirst())
let wantsJSON = rawArguments.contains("--json")

// The background process a kept session key starts to delete its sealed copy at the time-out.
if rawArguments.first == SessionKeyring.expireCommand {
    exit(SessionKeyring.runExpiry(Array(rawArguments.dropFirst())))
}

/// Whether the command stopped as SIGINT/SIGTERM asked it to (`sync --watch`): the process then exits 0.
let stoppedOnRequest = Locked(false)

/// Runs one command line and returns the exit code.
func runCommandLine() async -> ExitCode {
    let console = Console(json: wantsJSON)
    guard let name = rawArguments.first, !name.hasPrefix("-") else {
        if rawArguments.contains("--help") || rawArguments.contains("-h") {
            print(Commands.overview)
            return .success
        }
        console.note(TerminalText(trusted: Commands.overview))
        return .usage
    }
    guard let command = Commands.all.first(where: { $0.spec.name == name }) else {
        console.note("cipher: unknown command \(name)\n\n\(trusted: Commands.overview)")
        return .usage
    }
    do {
        let arguments = try CommandLineParser.parse(Array(rawArguments.dropFirst()), spec: command.spec)
        if arguments.has("--help") {
            print(command.spec.helpText)
            return .success
        }
        let context = CommandContext(arguments: arguments, console: console,
                                     home: Home.resolve(arguments, environment: environment), environment: environment)
        try await command.run(context)
        return .success
    } catch is StoppedOnRequest {
        // `sync --watch` stopped as SIGINT/SIGTERM asked, having finished cleanly: exit 0.
        stoppedOnRequest.withLock { $0 = true }
        return .success
    } catch let finished as Finished {
        // The command printed its outcome; only the exit code is left to give.
        return finished.code
    } catch {
        let failure = CLIError.from(error)
        console.note("cipher \(name): \(failure.message(verbose: rawArguments.contains("--verbose")))")
        var detail = ErrorOutput.Detail(kind: failure.kind, message: failure.description, exitCode: failure.exitCode.rawValue)
        if let error = failure.clientError {
            detail.expectedFingerprint = error.expectedFingerprint?.pinString
            detail.presentedFingerprint = error.presentedFingerprint?.pinString
        }
        console.emit(ErrorOutput(error: detail))
        return failure.exitCode
    }
}

/// The JSON document printed for a failure under `--json`.
struct ErrorOutput: Encodable {
    struct Detail: Encodable {
        var kind: String
        var message: String
        var exitCode: Int32
        /// For a refused TLS key: the pin expected and the key presented.
        var expectedFingerprint: String?
        var presentedFingerprint: String?
    }
    var error: Detail
}

// Ctrl-C (SIGINT) and SIGTERM cancel the command's task, so the SDK's cleanup runs (partial
// downloads are removed) before the process exits with 128 + the signal.
let command = Task { await runCommandLine() }
let interruption = Interruption(cancelling: command)
let status = await command.value
if let signal = interruption.received, !stoppedOnRequest.value { exit(128 + signal) }
exit(status.rawValue)
