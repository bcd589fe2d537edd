import Foundation

/// `cipher lock`: forgets the session key kept for this session and deletes every session's sealed
/// copy of the store key, so the next command asks for the passphrase again and a session key
/// read earlier opens nothing.
enum LockCommand: Command {
    static let spec = CommandSpec(
        name: "lock",
        summary: "forget the unlocked key kept for this session and delete every session's copy (the next command asks)")

    struct Output: Encodable {
        /// Whether a kept key was forgotten (none is kept after a time-out or an earlier `lock`).
        var forgot: Bool
        /// Whether this session can keep a key at all (a Linux kernel session keyring of this login's own).
        var sessionKeyring: Bool
    }

    static func run(_ context: CommandContext) async throws {
        // Locking works whatever CIPHER_KEEP_UNLOCKED says.
        let session = SessionKeyring(storeDirectory: context.home.directory, lifetime: 0)
        let forgot = session.lockEverySession()
        let availability = SessionKeyring.availability
        let available = availability == .own
        if forgot {
            context.console.say("locked: the key for \(context.home.directory.path) is forgotten; the next command asks for the passphrase")
        } else if available {
            context.console.say("nothing to lock: no unlocked key is kept for \(context.home.directory.path)")
        } else if case .sharedUserDefault = availability {
            context.console.say("nothing to lock: this login has no session keyring of its own, so no unlocked key is kept (every command asks for the passphrase)")
        } else {
            context.console.say("nothing to lock: this system keeps no unlocked key (every command asks for the passphrase)")
        }
        context.console.emit(Output(forgot: forgot, sessionKeyring: available))
    }
}
