import DriveSync
import Foundation
import StationClient
import Transport

/// `cipher pair URL`: pairs this device with a station.
enum PairCommand: Command {
    static let spec = CommandSpec(
        name: "pair", arguments: "URL [--name NAME] [--gateway URL] [--fingerprint sha256//BASE64] [--replace]",
        summary: "pair this device with the station at URL (the PIN is in the station's log)",
        options: [
            OptionSpec(names: ["--replace"],
                       help: "pair even though this home is paired; its credentials are kept as a backup (see restore-credentials)"),
            OptionSpec(names: ["--name"], help: "this device's name, also the one its sync conflict copies carry (default: the host name)", value: "NAME"),
            OptionSpec(names: ["--gateway"], help: "an IPFS gateway for fallback reads and IPNS", value: "URL"),
            .fingerprint(help: "the station's TLS key, read on the station (pins it without asking; see `cipher trust --help`)"),
        ],
        positionals: 1...1)

    /// How a self-signed station's TLS key is trusted: `--fingerprint`, else `kept` (a key trusted
    /// before, so a changed one is refused), else asked on a terminal, else not at all.
    static func trust(_ arguments: ParsedArguments, console: Console, kept: PublicKeyFingerprint? = nil) throws(CLIError) -> StationKeyTrust {
        if let expected = try arguments.fingerprint() { return .expected(expected) }
        if let kept { return .expected(kept) }
        guard console.stdinIsTerminal else { return .certificateAuthorityOnly }
        return .confirm { prompt in
            console.say("The station at \(prompt.endpoint.absoluteString) presents a certificate no trusted authority signed.")
            console.say("Its TLS key: \(prompt.fingerprint.pinString)")
            console.say("Compare it with the fingerprint on the station's machine:\n  \(trusted: TrustCommand.fingerprintCommand)")
            let answer = console.ask("Trust this key? [y/N] ")?.trimmingCharacters(in: .whitespaces).lowercased()
            return answer == "y" || answer == "yes"
        }
    }

    static func run(_ context: CommandContext) async throws {
        let arguments = context.arguments
        guard let endpoint = URL(string: arguments.positionals[0]), let scheme = endpoint.scheme,
              ["http", "https"].contains(scheme), endpoint.host != nil else {
            throw CLIError.usage("\(arguments.positionals[0]) is not an http(s) URL")
        }
        if let gateway = arguments.value("--gateway"), URL(string: gateway)?.host == nil {
            throw CLIError.usage("\(gateway) is not a gateway URL")
        }
        // The host name as the kernel has it: `ProcessInfo.hostName` may wait on a DNS lookup.
        let name = arguments.value("--name") ?? SyncOptions.defaultDeviceName
        let console = context.console
        let trust = try Self.trust(arguments, console: console)
        let store = try context.home.openKeyStore(console: console, environment: context.environment, creating: true)
        let current = try context.home.loadSettings()
        // The current credentials, with the settings of their pairing, are set aside first; a
        // pairing that fails removes that backup again and writes nothing else, so the home is
        // left exactly as it was (its gateway and every setting included).
        let backup = try await CredentialBackups.setAside(in: store, replacing: arguments.has("--replace"), settings: current,
                                                          console: console)
        var settings = current
        settings.gateway = arguments.value("--gateway")
        settings.deviceName = name
        let configuration = context.home.configuration(keyStore: store, settings: settings)
        let client: StationClient
        do {
            client = try await StationClient.pair(endpoint: endpoint, deviceName: name, configuration: configuration,
                                                  trust: trust) { prompt in
                if let failure = prompt.previousFailure { console.note("That PIN was refused: \(failure).") }
                // The PIN is in the station's log; on a terminal we ask, otherwise it comes on standard input.
                if console.stdinIsTerminal { return console.ask("PIN shown by the station: ") }
                return console.readLine()
            }
        } catch {
            if let backup { await CredentialBackups.discard(backup.name, in: store) }
            throw error
        }
        try context.home.saveSettings(settings)
        let output = await PairingOutput(client)
        console.say("paired as \(output.deviceUID) with station \(output.stationUID) at \(output.endpoint)")
        if let pin = output.tlsPin { console.say("TLS key pinned: \(pin)") }
        if let backup {
            console.note("The previous credentials are kept as \(backup.name); `cipher restore-credentials \(backup.name)` brings them back.")
            console.note("The previous device \(backup.deviceUID) stays registered on its station; remove it there if it is no longer used.")
        }
        console.emit(output)
    }
}
