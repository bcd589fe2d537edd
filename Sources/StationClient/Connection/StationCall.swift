import Foundation
import SHA2
import ClassicalCrypto
import Transport

/// A call to the station, signed or not, as ``StationConnection/send(_:budget:)`` sends it.
struct StationCall: Sendable {
    var method: HTTPMethod
    var path: String
    var body: Body
    /// Whether the request carries the device's six `x-cipher-*` headers.
    var isSigned: Bool
    /// Transfer options (response limit, time limits, progress); the origin's pins are added when sent.
    var options: TransferOptions
    /// Headers outside the signature (a `Range` header), added as they are.
    var unsignedHeaders: [(name: String, value: String)] = []
    /// What errors and the log name the call by, e.g. `GET /followers`.
    var operation: String

    /// A signed call; without `options`, at most `limit` bytes of the answer are collected.
    static func signed(
        _ method: HTTPMethod, _ path: String, body: Body = .empty, options: TransferOptions? = nil,
        limit: Int = ResponseLimit.small, timeouts: TransferTimeouts, operation: String
    ) -> StationCall {
        StationCall(method: method, path: path, body: body, isSigned: true,
                       options: options ?? ResponseLimit.options(limit, timeouts: timeouts), operation: operation)
    }

    /// An unsigned call, at most `limit` bytes of the answer collected.
    static func unsigned(
        _ method: HTTPMethod, _ path: String, body: Body = .empty, limit: Int, timeouts: TransferTimeouts,
        operation: String? = nil
    ) -> StationCall {
        StationCall(method: method, path: path, body: body, isSigned: false,
                       options: ResponseLimit.options(limit, timeouts: timeouts), operation: operation ?? "\(method.rawValue) \(path)")
    }
}

extension StationCall {
    /// The body of a station call, fixed before signing so a signature covers the exact bytes sent.
    enum Body: Sendable {
        /// No body (GET): the hash is SHA-256 of the empty string.
        case empty
        /// JSON bytes.
        case json([UInt8])
        /// A multipart form and the SHA-256 of its exact encoded bytes, hashed once before sending.
        case multipart(MultipartForm, sha256: [UInt8])

        var sha256: [UInt8] {
            switch self {
            case .empty: SHA256.hash(data: [UInt8]())
            case .json(let bytes): SHA256.hash(data: bytes)
            case .multipart(_, let digest): digest
            }
        }

        /// A fresh request body (a multipart stream restarts from its first byte each time).
        var requestBody: HTTPRequestBody {
            switch self {
            case .empty: .none
            case .json(let bytes): .bytes(Data(bytes))
            case .multipart(let form, _): form.requestBody()
            }
        }

        var contentType: String? {
            switch self {
            case .empty: nil
            case .json: "application/json"
            case .multipart(let form, _): form.contentType
            }
        }
    }
}

/// The calls one listing may still make: one per post it lists (stale-clock and new-endpoint
/// retries included), so a station cannot make a listing send more.
final class CallBudget: Sendable {
    private let remaining: Locked<Int>

    init(calls: Int) { remaining = Locked(max(0, calls)) }

    /// Takes one call, or returns `false` when none is left.
    func take() -> Bool {
        remaining.withLock { remaining in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
    }
}
