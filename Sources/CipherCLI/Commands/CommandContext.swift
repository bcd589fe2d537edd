import Foundation
import StationClient
import Transport

/// What every command runs with.
struct CommandContext: Sendable {
    var arguments: ParsedArguments
    var console: Console
    var home: Home
    var environment: [String: String]

    /// Opens the key store and loads the paired client.
    func client(namespace: String = DriveFiles.namespace) async throws -> StationClient {
        let store = try home.openKeyStore(console: console, environment: environment)
        return try await StationClient.load(configuration: home.configuration(keyStore: store, namespace: namespace))
    }
}

/// A `cipher` command.
protocol Command: Sendable {
    static var spec: CommandSpec { get }
    static func run(_ context: CommandContext) async throws
}

/// Every command, in the order `cipher --help` lists them.
enum Commands {
    static let all: [any Command.Type] = [
        DemoCommand.self, PairCommand.self, StatusCommand.self, TrustCommand.self, MoveCommand.self, ListCommand.self, PutCommand.self,
        GetCommand.self, ShareCommand.self, RemoveCommand.self, FollowersCommand.self, FollowCommand.self, FollowingCommand.self,
        UnfollowCommand.self, ReadCommand.self, SyncCommand.self, RestoreCredentialsCommand.self, LockCommand.self,
    ]

    static var overview: String {
        var lines = [
            "cipher: an end-to-end encrypted drive on your Cipher Station (the `drive` namespace, shared with CipherVault)",
            "",
            "usage: cipher <command> [options]",
            "",
            "commands:",
        ]
        for command in all {
            lines.append("  " + command.spec.usage)
            lines.append("      " + command.spec.summary)
        }
        // The options every command takes; each command's own (--yes, --dry-run, …) are in its --help.
        lines += ["", "options of every command:"] + CommandSpec.globalOptions.map(\.helpLine)
        lines += [
            "",
            "Run `cipher <command> --help` for a command's options. Credentials live in --home DIR, $CIPHER_HOME",
            "or the platform config directory, encrypted with a passphrase (prompted, or $CIPHER_PASSPHRASE).",
            "On Linux, a login with a session keyring of its own keeps a random session key there (never the passphrase",
            "or the store key) that opens a copy of the store key sealed for this session, for $CIPHER_KEEP_UNLOCKED",
            "seconds (whole seconds, default 900, at most 43200 = 12 h; 0 or off keeps nothing and forgets a kept key),",
            "so later commands of the session skip the passphrase; `cipher lock` and the time-out delete the copy.",
            "Without such a keyring (ssh, cron, containers: the user's shared default one) and elsewhere, every command asks.",
            "Exit codes: 0 success, 1 failure, 2 usage, 3 refused by the station, 4 station, gateway or network unreachable,",
            "5 (sync) done, but some files failed; the next sync tries them again (a retry may help),",
            "6 (sync) more deletions than the limit: the rest synced, they are held back (--max-delete N or --yes lets them through),",
            "7 (sync) another sync of the folder is running, nothing changed (--wait waits for it),",
            "8 (sync) done, but some items are skipped and will not sync until you act (links, special files, refused names,",
            "unreadable places); when files also failed the code is 5,",
            "130 interrupted (Ctrl-C cancels the command and removes its partial download; a sync resumes next time).",
        ]
        return lines.joined(separator: "\n")
    }
}

extension Audience {
    /// Parses `--audience self|all|specific` with `--to UID…`.
    static func parse(_ arguments: ParsedArguments, default fallback: Audience? = .selfOnly) throws(CLIError) -> Audience {
        let uids = arguments.all("--to")
        switch arguments.value("--audience") {
        case nil:
            guard uids.isEmpty else { return .specific(uids) }
            guard let fallback else { throw .usage("--audience is required (self, all or specific --to UID…)") }
            return fallback
        case "self":
            guard uids.isEmpty else { throw .usage("--to goes with --audience specific") }
            return .selfOnly
        case "all":
            guard uids.isEmpty else { throw .usage("--to goes with --audience specific") }
            return .allFollowers
        case "specific":
            guard !uids.isEmpty else { throw .usage("--audience specific needs --to UID…") }
            return .specific(uids)
        case let other?:
            throw .usage("unknown audience \(other) (self, all or specific; public posts use --public)")
        }
    }
}

extension OptionSpec {
    /// `--fingerprint PIN`, a station's TLS key as read on that station (`pair`, `follow`, `trust`);
    /// `help` says what giving it does.
    static func fingerprint(help: String) -> OptionSpec { OptionSpec(names: ["--fingerprint"], help: help, value: "PIN") }
}

extension ParsedArguments {
    /// The key given with `--fingerprint`, or `nil` when none is.
    func fingerprint() throws(CLIError) -> PublicKeyFingerprint? {
        guard let text = value("--fingerprint") else { return nil }
        guard let fingerprint = try? PublicKeyFingerprint(pin: text) else {
            throw .usage("\(text) is not a key fingerprint (sha256//<base64 of 32 bytes>)")
        }
        return fingerprint
    }

    /// `text`, an argument, as a URL with a host (a station to follow or read, a gateway).
    static func url(_ text: String) throws(CLIError) -> URL {
        guard let url = URL(string: text), url.host != nil else { throw .usage("\(text) is not a URL") }
        return url
    }
}

/// The audience options shared by `put` and `share`.
let audienceOptions = [
    OptionSpec(names: ["--audience"], help: "who can read it: self (default), all (approved followers), specific", value: "MODE"),
    OptionSpec(names: ["--to"], help: "the follower uids for --audience specific", value: "UID", takesMany: true),
]

extension CommandContext {
    /// Fixes the station's IPNS key in the credentials when the station names one and they hold
    /// none yet (a station paired before its first publish), so that this device finds the
    /// station again when it moves. Reading the profile never does; a failure is only told.
    func adoptIPNSKeyIfNew(_ client: StationClient) async {
        guard await client.credentials.ipnsName == nil else { return }
        do {
            try await client.adoptIPNSKey()
        } catch {
            console.note("the station's IPNS key is not adopted: \((error as? StationClientError)?.message ?? "\(error)")")
        }
    }
}
