import Foundation
import StationClient
import Transport

/// `cipher status`: what this device is paired with and how the station is.
enum StatusCommand: Command {
    static let spec = CommandSpec(name: "status",
                                  summary: "station URL, uids, health, post count and the TLS fingerprint in use")

    static func run(_ context: CommandContext) async throws {
        let client = try await context.client()
        let health = try await client.health()
        let profile = try await client.profile()
        await context.adoptIPNSKeyIfNew(client)
        let fingerprint = try await client.presentedFingerprint().map { "\($0)" }
        let drivePosts = profile.manifestPostsByClient[DriveFiles.namespace] ?? 0
        var output = await PairingOutput(client)
        output.health = health.status
        output.posts = profile.manifestPostsTotal
        output.drivePosts = drivePosts
        output.tlsFingerprint = fingerprint
        let console = context.console
        console.say("station:  \(output.endpoint) (uid \(output.stationUID))")
        console.say("device:   \(output.deviceUID)")
        console.say("health:   \(health.status)")
        console.say("posts:    \(profile.manifestPostsTotal) (\(drivePosts) in drive)")
        console.say("TLS:      \(fingerprint.map { "public key \($0)" } ?? "none (plain http)")")
        if output.endpointTrust != PairingOutput.plainHTTP {
            console.say("trust:    \(output.tlsPin.map { "pinned \($0)" } ?? "certificate authorities (no pin)")")
        }
        console.emit(output)
    }
}

/// This device's pairing as `pair` and `status` print it under `--json`; the fields only `status`
/// reads stay `nil` for `pair`, so its document has none of them.
struct PairingOutput: Encodable {
    var deviceUID: String
    var stationUID: String
    var endpoint: String
    var tlsPin: String?
    /// How the endpoint is trusted: `pinned_key`, `certificate_authority` or ``plainHTTP`` (the
    /// station's certificate is never looked at over `http`).
    var endpointTrust: String
    var health: String?
    var posts: Int?
    var drivePosts: Int?
    var tlsFingerprint: String?

    /// `endpointTrust` for an `http` endpoint.
    static let plainHTTP = "plain_http"

    /// The pairing of `client`, with the TLS key it pins now.
    init(_ client: StationClient) async {
        let credentials = await client.credentials
        deviceUID = credentials.deviceUID
        stationUID = credentials.stationUID
        endpoint = credentials.endpoint.absoluteString
        tlsPin = await client.activePins.first?.pinString
        endpointTrust = credentials.endpoint.scheme == "https" ? credentials.endpointTrust.rawValue : Self.plainHTTP
    }
}
