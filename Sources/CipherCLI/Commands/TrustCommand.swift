import Foundation
import StationClient
import Transport

/// `cipher trust --fingerprint PIN`: pins the station's TLS key anew, on purpose (after it changed).
enum TrustCommand: Command {
    static let spec = CommandSpec(
        name: "trust", arguments: "--fingerprint sha256//BASE64",
        summary: "pin the station's TLS key anew after it changed (read the fingerprint on the station)",
        options: [.fingerprint(help: "the key the station presents now, as read on the station")])

    /// The command that prints a station's fingerprint, run where `run.py` keeps `cert.pem`.
    static let fingerprintCommand =
        "openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"

    struct Output: Encodable {
        var endpoint: String
        var tlsPin: String
        var previousPin: String?
    }

    static func run(_ context: CommandContext) async throws {
        guard let fingerprint = try context.arguments.fingerprint() else {
            throw CLIError.usage("--fingerprint is required: read it on the station with `\(fingerprintCommand)`")
        }
        let client = try await context.client()
        let previous = await client.credentials.stationPublicKeyPin
        try await client.trust(fingerprint: fingerprint)
        let endpoint = await client.credentials.endpoint
        let was = previous.map { " (was \($0.pinString))" } ?? ""
        context.console.say("now trusting \(fingerprint.pinString) for \(endpoint.absoluteString)\(was)")
        context.console.emit(Output(endpoint: endpoint.absoluteString, tlsPin: fingerprint.pinString, previousPin: previous?.pinString))
    }
}
