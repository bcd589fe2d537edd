import Foundation
import StationClient

/// `cipher pair URL`: pairs this device with a station.
enum PairCommand: Command {
    static let spec = CommandSpec(
        name: "pair", usage: "pair URL [--name NAME] [--gateway URL]",
        summary: "pair this device with the station at URL (the PIN is in the station's log)",
        options: [
            OptionSpec(names: ["--name"], help: "this device's name (default: the host name)", value: "NAME"),
            OptionSpec(names: ["--gateway"], help: "an IPFS gateway for fallback reads and IPNS", value: "URL"),
        ],
        positionals: 1...1)

    struct Output: Encodable {
        var deviceUID: String
        var stationUID: String
        var endpoint: String
        enum CodingKeys: String, CodingKey { case deviceUID = "device_uid", stationUID = "station_uid", endpoint }
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
        let name = arguments.value("--name") ?? ProcessInfo.processInfo.hostName
        let console = context.console
        let store = try context.home.openKeyStore(console: console, environment: context.environment, creating: true)
        var settings = try context.home.loadSettings()
        settings.gateway = arguments.value("--gateway")
        settings.deviceName = name
        try context.home.saveSettings(settings)
        let configuration = try context.home.configuration(keyStore: store)
        let client = try await StationClient.pair(endpoint: endpoint, deviceName: name, configuration: configuration) { prompt in
            if let failure = prompt.previousFailure { console.note("That PIN was refused: \(failure).") }
            // The PIN is in the station's log; on a terminal we ask, otherwise it comes on standard input.
            if console.stdinIsTerminal { return console.ask("PIN shown by the station: ") }
            return console.readLine()
        }
        let credentials = await client.credentials
        console.say("paired as \(credentials.deviceUID) with station \(credentials.stationUID) at \(credentials.endpoint.absoluteString)")
        console.emit(Output(deviceUID: credentials.deviceUID, stationUID: credentials.stationUID,
                            endpoint: credentials.endpoint.absoluteString))
    }
}
