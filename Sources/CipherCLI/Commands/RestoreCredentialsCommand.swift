import Foundation
import StationClient

/// `cipher restore-credentials [BACKUP]`: lists the credential backups `pair --replace` kept, or
/// makes one the current credentials again (the current ones are kept as a backup in turn).
enum RestoreCredentialsCommand: Command {
    static let spec = CommandSpec(
        name: "restore-credentials", arguments: "[BACKUP]",
        summary: "list the credentials `pair --replace` kept, or make BACKUP the current ones again",
        positionals: 0...1)

    struct Output: Encodable {
        var backups: [Entry]
        var restored: String?
        var setAside: String?
        struct Entry: Encodable {
            var name: String
            var deviceUID: String?
            var stationUID: String?
            var endpoint: String?
        }
    }

    static func run(_ context: CommandContext) async throws {
        let console = context.console
        let store = try context.home.openKeyStore(console: console, environment: context.environment)
        guard let name = context.arguments.positionals.first else {
            var entries: [Output.Entry] = []
            for name in CredentialBackups.names(in: store) {
                let described = try await CredentialBackups.describe(name, in: store)
                entries.append(Output.Entry(name: name, deviceUID: described?.deviceUID, stationUID: described?.stationUID,
                                            endpoint: described?.endpoint))
                console.say("\(name): device \(described?.deviceUID ?? "?") with station \(described?.stationUID ?? "?") at \(described?.endpoint ?? "?")")
            }
            if entries.isEmpty { console.say("no credential backups") }
            console.emit(Output(backups: entries))
            return
        }
        guard name.hasPrefix(CredentialBackups.prefix), let backup = try await store.loadSecret(name) else {
            throw CLIError.failure("no credential backup named \(name); `cipher restore-credentials` lists them")
        }
        guard let described = try await CredentialBackups.describe(name, in: store) else {
            throw CLIError.failure("the backup \(name) does not hold readable credentials")
        }
        // The settings of the pairing being restored: those kept with the backup, else (a backup
        // of an earlier version) the current ones without a gateway, which may be another station's.
        let current = try context.home.loadSettings()
        let restoredSettings = try await CredentialBackups.settings(for: name, in: store)
            ?? CLISettings(gateway: nil, deviceName: current.deviceName)
        var setAside: String?
        if try await store.loadSecret(KeyStoreItem.credentials) != nil {
            let aside = try await CredentialBackups.keepCopy(of: KeyStoreItem.credentials, in: store)
            try await CredentialBackups.saveSettings(current, for: aside, in: store)
            setAside = aside
        }
        try await store.saveSecret(backup, as: KeyStoreItem.credentials)
        try context.home.saveSettings(restoredSettings)
        // The caches are named after the station (offline listing, post keys): the restored
        // station's own come back with it, and no other station's shows.
        try await store.delete(name)
        try? await store.delete(CredentialBackups.settingsItem(for: name))
        console.say("restored \(name): device \(described.deviceUID) with station \(described.stationUID) at \(described.endpoint)")
        if let setAside { console.note("The credentials it replaced are kept as \(setAside), with their settings.") }
        console.emit(Output(backups: [], restored: name, setAside: setAside))
    }
}
