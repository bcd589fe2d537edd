import Signing

/// Why a Cipher Station refuses a signed request: the station's own failure for each check, with
/// its exact HTTP status and response body, so an emulator can answer as a real station does.
enum VerificationFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// 422: headers are missing (names in the station's order). FastAPI lists every one.
    case missingHeaders([String])
    /// 401 `bad timestamp`: `x-cipher-ts` is not an integer.
    case badTimestamp
    /// 401 `stale request`: more than 60 s between the timestamp and the time the request arrived.
    case staleRequest
    /// 403 `device not authorized`: no Allowed device with that uid and device uid.
    case deviceNotAuthorized
    /// 403 `device has no auth (ML-DSA) public key`.
    case deviceHasNoAuthKey
    /// 401 `replay`: the nonce was already used by this device.
    case replay
    /// 401 `bad body hash`: `x-cipher-body-sha256` is not the SHA-256 of the raw body.
    case badBodyHash
    /// 401 `bad device auth public key`: the stored key is not hex.
    case badDeviceAuthPublicKey
    /// 401 `bad device auth public key length`: the stored key is not 1952 bytes.
    case badDeviceAuthPublicKeyLength
    /// 401 `bad signature encoding`: `x-cipher-sig` is not strict base64.
    case badSignatureEncoding
    /// 401 `bad auth`: the signature does not verify over the canonical string.
    case badAuth
    /// 403 `owner-only endpoint`: authenticated, but not as the station's owner.
    case ownerOnlyEndpoint
    /// 500: the station crashes (Python's `hmac.compare_digest` refuses non-ASCII text) when a
    /// checked body hash header holds a non-ASCII character.
    case internalServerError

    /// The HTTP status the station answers with.
    var status: Int {
        switch self {
        case .missingHeaders: 422
        case .deviceNotAuthorized, .deviceHasNoAuthKey, .ownerOnlyEndpoint: 403
        case .internalServerError: 500
        default: 401
        }
    }

    /// The station's `detail` text (for ``missingHeaders(_:)``, "Field required").
    var detail: String {
        switch self {
        case .missingHeaders: "Field required"
        case .badTimestamp: "bad timestamp"
        case .staleRequest: "stale request"
        case .deviceNotAuthorized: "device not authorized"
        case .deviceHasNoAuthKey: "device has no auth (ML-DSA) public key"
        case .replay: "replay"
        case .badBodyHash: "bad body hash"
        case .badDeviceAuthPublicKey: "bad device auth public key"
        case .badDeviceAuthPublicKeyLength: "bad device auth public key length"
        case .badSignatureEncoding: "bad signature encoding"
        case .badAuth: "bad auth"
        case .ownerOnlyEndpoint: "owner-only endpoint"
        case .internalServerError: "Internal Server Error"
        }
    }

    /// The response's content type.
    var contentType: String {
        self == .internalServerError ? "text/plain; charset=utf-8" : "application/json"
    }

    /// The exact response body: compact JSON `{"detail":"…"}`, FastAPI's list form for missing
    /// headers, or Starlette's plain-text 500 page.
    var responseBody: String {
        switch self {
        case let .missingHeaders(names):
            let items = names.map {
                #"{"type":"missing","loc":["header","\#($0)"],"msg":"Field required","input":null}"#
            }
            return #"{"detail":["# + items.joined(separator: ",") + "]}"
        case .internalServerError:
            return detail
        default:
            return #"{"detail":""# + detail + #""}"#
        }
    }

    /// A readable explanation, for logs and error messages.
    var description: String { "\(status) \(detail)" }
}
