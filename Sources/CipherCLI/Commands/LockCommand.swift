import Foundation

/// `cipher lock`: forgets the key store key kept for this session, so the next command asks for
/// the passphrase again.
enum LockCommand: Command {
    static let spec = CommandSpec(
        name: "lock", usage: "lock",
        summary: "forget the unlocked key kept for this session (the next command asks for the passphrase)",
        positionals: 0...0)

    struct Output: Encodable {
        /// Whether a kept key was forgotten (none is kept after a time-out or an earlier `lock`).
        var forgot: Bool
        /// Whether this session can keep a key at all (the Linux kernel session keyring).
        var sessionKeyring: Bool
        enum CodingKeys: String, CodingKey { case forgot, sessionKeyring = "session_keyring" }
    }

    static func run(_ context: CommandContext) async throws {
        let session = context.home.sessionKeyring(environment: context.environment)
        let forgot = session.forget()
        let available = SessionKeyring.isAvailable
        if forgot {
            context.console.say("locked: the key for \(context.home.directory.path) is forgotten; the next command asks for the passphrase")
        } else if available {
            context.console.say("nothing to lock: no unlocked key is kept for \(context.home.directory.path)")
        } else {
            context.console.say("nothing to lock: this system keeps no unlocked key (every command asks for the passphrase)")
        }
        context.console.emit(Output(forgot: forgot, sessionKeyring: available))
    }
}
