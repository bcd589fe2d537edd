import OrderedJSON

/// `GET /health`: `{"status":"healthy","checks":{"database":true,"ipfs":true,"identity":true}}`
/// (200), or `"degraded"` with a failed check (503, after about 3 s when IPFS is down).
public struct HealthResponse: Sendable, Hashable, Decodable {
    /// `healthy` or `degraded`.
    public var status: String
    /// Each check by name, in the station's order.
    public var checks: OrderedMap<Bool>

    /// Creates a response.
    public init(status: String, checks: OrderedMap<Bool>) {
        self.status = status
        self.checks = checks
    }

    /// Whether the station reports itself healthy (status `healthy` and no failed check).
    public var isHealthy: Bool { status == "healthy" && checks.values.allSatisfy { $0 } }

    private enum CodingKeys: String, CodingKey { case status, checks }

    /// Reads the body; checks that are not Booleans are skipped.
    ///
    /// - Throws: `DecodingError` when the body is not an object or has no string `status`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = try container.decode(String.self, forKey: .status)
        checks = [:]
        for (name, value) in container.lenient(JSONObject.self, .checks) ?? [:] {
            if let flag = value.boolValue { checks[name] = flag }
        }
    }
}

/// `POST /delegate/start`: `{"status":"ok","pairing_id":"…","expires_in_seconds":300}`.
package struct DelegateStartResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    var status: String
    /// The session id (24 characters of URL-safe base64) to send to `/delegate/confirm`.
    package var pairingID: String
    /// How long the PIN stays valid.
    package var expiresInSeconds: Int

    private enum CodingKeys: String, CodingKey {
        case status, pairingID = "pairing_id", expiresInSeconds = "expires_in_seconds"
    }
}

/// `POST /delegate/confirm`:
/// `{"status":"ok","action":"delegate_added","uid":"<station uid>","device_uid":"<as sent>"}`.
package struct DelegateConfirmResponse: Sendable, Hashable, Decodable {
    /// `ok`.
    var status: String
    /// `delegate_added`.
    var action: String
    /// The **station's** uid: the `x-cipher-uid` of every signed request.
    package var uid: String
    /// The device uid exactly as sent (case-sensitive; keep this string).
    package var deviceUID: String

    private enum CodingKeys: String, CodingKey {
        case status, action, uid, deviceUID = "device_uid"
    }
}
