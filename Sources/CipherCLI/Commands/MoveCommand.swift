import Foundation
import StationClient
import Transport

/// `cipher move URL [--fingerprint PIN]`: points this paired device at the station's new address,
/// on purpose, once the station there proves to be the paired one.
enum MoveCommand: Command {
    static let spec = CommandSpec(
        name: "move", arguments: "URL [--fingerprint sha256//BASE64]",
        summary: "point this device at the station's new address (checked: the same station uid and keys)",
        options: [.fingerprint(help: "the station's TLS key at the new address, as read on the station (a self-signed key)")],
        positionals: 1...1)

    struct Output: Encodable {
        var endpoint: String
        var previousEndpoint: String
        var stationUID: String
        var tlsPin: String?
    }

    static func run(_ context: CommandContext) async throws {
        let text = context.arguments.positionals[0]
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw CLIError.usage("\(text) is not an http(s) URL")
        }
        let trust = try PairCommand.trust(context.arguments, console: context.console)
        let client = try await context.client()
        let previous = await client.credentials.endpoint
        do {
            try await client.move(to: url, trust: trust)
        } catch let error as StationClientError where error.kind == .untrustedKey {
            throw CLIError.followedStation(error, url, command: "move")
        }
        let credentials = await client.credentials
        let pin = credentials.endpointTrust == .pinnedKey && scheme == "https" ? credentials.stationPublicKeyPin : nil
        context.console.say("moved: station \(credentials.stationUID) is now reached at \(url.absoluteString) (was \(previous.absoluteString))")
        if let pin { context.console.say("TLS key pinned: \(pin.pinString)") }
        context.console.emit(Output(endpoint: url.absoluteString, previousEndpoint: previous.absoluteString,
                                    stationUID: credentials.stationUID, tlsPin: pin?.pinString))
    }
}
