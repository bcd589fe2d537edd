import Foundation
import StationClient
import Transport

/// `cipher status`: what this device is paired with and how the station is.
enum StatusCommand: Command {
    static let spec = CommandSpec(name: "status", usage: "status",
                                  summary: "station URL, uids, health, post count and the TLS fingerprint in use")

    struct Output: Encodable {
        var endpoint: String
        var stationUID: String
        var deviceUID: String
        var health: String
        var posts: Int
        var drivePosts: Int
        var tlsFingerprint: String?
        var tlsPin: String?
        var endpointTrust: String
        enum CodingKeys: String, CodingKey {
            case endpoint, stationUID = "station_uid", deviceUID = "device_uid", health, posts
            case drivePosts = "drive_posts", tlsFingerprint = "tls_fingerprint", tlsPin = "tls_pin", endpointTrust = "endpoint_trust"
        }
    }

    static func run(_ context: CommandContext) async throws {
        let client = try await context.client()
        let health = try await client.health()
        let profile = try await client.profile()
        await context.adoptIPNSKeyIfNew(client)
        let credentials = await client.credentials
        let fingerprint = try await client.presentedFingerprint().map { "\($0)" }
        let pin = await client.activePins.first
        let output = Output(
            endpoint: credentials.endpoint.absoluteString, stationUID: credentials.stationUID, deviceUID: credentials.deviceUID,
            health: health.status, posts: profile.manifestPostsTotal,
            drivePosts: profile.manifestPostsByClient[DriveFiles.namespace] ?? 0, tlsFingerprint: fingerprint,
            tlsPin: pin?.pinString, endpointTrust: trustName(credentials))
        let console = context.console
        console.say("station:  \(output.endpoint) (uid \(output.stationUID))")
        console.say("device:   \(output.deviceUID)")
        console.say("health:   \(output.health)")
        console.say("posts:    \(output.posts) (\(output.drivePosts) in drive)")
        console.say("TLS:      \(fingerprint.map { "public key \($0)" } ?? "none (plain http)")")
        if credentials.endpoint.scheme == "https" {
            console.say("trust:    \(pin.map { "pinned \($0.pinString)" } ?? "certificate authorities (no pin)")")
        }
        console.emit(output)
    }

    /// How the endpoint is trusted, for `--json`: `pinned_key`, `certificate_authority` or `plain_http`.
    static func trustName(_ credentials: DeviceCredentials) -> String {
        guard credentials.endpoint.scheme == "https" else { return "plain_http" }
        return credentials.endpointTrust.rawValue
    }
}
