import Foundation
import Manifest
import Transport
import ContentAddressing

/// Why a ``StationClient`` operation failed, with the context needed to act on it: what the SDK
/// was doing, the HTTP status and the station's own message when there was an answer.
///
/// Match on ``kind`` to decide what to do; show ``description`` in logs (it never contains secrets).
public struct StationClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, without the details: compare it or `switch` over it (`case .notFound:`, ending
    /// with `default:`).
    public typealias Kind = ErrorKind<StationClientError>

    /// What went wrong.
    public var kind: Kind
    /// What the SDK was doing (`"listing namespace drive"`, `"POST /rewrap"`).
    public var operation: String
    /// The HTTP status of the station's answer, when there was one.
    public var status: Int?
    /// The station's message (`detail`, `error` or `result.error` text), when there was one; for
    /// `Kind.gateway`, the gateway's, when it answered in one of those shapes.
    public var stationMessage: String?
    /// A readable explanation of the failure.
    public var message: String
    /// The pairing outcome, for `Kind.pairing`.
    public var pairingFailure: PairingFailure?
    /// The network failure, for `Kind.unreachable`; the size limit an answer passed, for
    /// `Kind.invalidResponse`.
    public var transportError: TransportError?
    /// The TLS key pin that was expected, for `Kind.keyChanged` and `Kind.untrustedKey`.
    public var expectedFingerprint: PublicKeyFingerprint?
    /// The TLS key the station presented, for `Kind.keyChanged` and `Kind.untrustedKey`.
    public var presentedFingerprint: PublicKeyFingerprint?
    /// How long the station asked to wait before retrying, for `Kind.throttled`: its
    /// `Retry-After` header (delay seconds or an HTTP date; at most a year), `nil` when it sent
    /// none or one that does not parse.
    public var retryAfter: Duration?
    /// The limit that was passed, for `Kind.tooLarge`, when known: a size in bytes, or the most
    /// posts for a manifest past ``StationClientConfiguration/maximumManifestPosts``.
    public var limit: Int64?
    /// The error that caused this one, if any.
    public var underlying: (any Error)?

    /// Creates an error.
    public init(
        _ kind: Kind, operation: String, message: String, status: Int? = nil, stationMessage: String? = nil,
        pairingFailure: PairingFailure? = nil, transportError: TransportError? = nil, underlying: (any Error)? = nil,
        retryAfter: Duration? = nil, limit: Int64? = nil
    ) {
        self.retryAfter = retryAfter
        self.limit = limit
        self.kind = kind
        self.operation = operation
        self.message = message
        self.status = status
        self.stationMessage = stationMessage
        self.pairingFailure = pairingFailure
        self.transportError = transportError
        self.underlying = underlying
    }

    /// The error as the SDK's calls throw it, for a `catch` that receives `any Error` (a task
    /// group, a helper taking a throwing closure): `error` itself when it is a
    /// `StationClientError`, which is every error the calls of this module throw; otherwise mapped
    /// the way the SDK maps what a transport, key store or decoder throws (a `TransportError` by
    /// its kind, a cancellation as `Kind.cancelled`, anything else as `Kind.invalidResponse`).
    ///
    /// - Parameters:
    ///   - error: the error caught.
    ///   - operation: what the app was doing, for an error that was not already a
    ///     `StationClientError` (which keeps its own).
    public init(_ error: any Error, operation: String = "the app's call") {
        self = Self.wrap(error, operation: operation)
    }

    /// `"<operation>: <message> (HTTP <status>: <station message>)"`, with the expected and
    /// presented TLS fingerprints when there are any.
    public var description: String {
        var text = "\(operation): \(message)"
        if let limit, kind == .tooLarge, !message.contains("\(limit)") { text += " (limit \(limit) bytes)" }
        if let retryAfter { text += " (retry after \(retryAfter.components.seconds) s)" }
        if let expectedFingerprint { text += " (expected \(expectedFingerprint.pinString)" }
        if let presentedFingerprint {
            text += expectedFingerprint == nil ? " (" : ", "
            text += "presented \(presentedFingerprint.pinString)"
        }
        if expectedFingerprint != nil || presentedFingerprint != nil { text += ")" }
        if let status {
            text += " (HTTP \(status)"
            if let stationMessage { text += ": \(stationMessage)" }
            text += ")"
        } else if let stationMessage {
            text += " (\(stationMessage))"
        }
        return text
    }

    /// An error for a station answer with an error status, reading the body's message in any of
    /// the station's four shapes; the kind follows the status (401/403 `Kind.unauthorized`,
    /// 404 `Kind.notFound`, 413 `Kind.tooLarge`, 429 `Kind.throttled` with its
    /// `Retry-After`, anything else `Kind.station`).
    static func station(_ response: HTTPResponse, operation: String, now: Date = Date()) -> StationClientError {
        let body = response.body.data.map { [UInt8]($0) } ?? []
        let message = StationErrorBody.parse(body)?.message
        let (kind, text): (Kind, String) = switch response.status {
        case 401, 403: (.unauthorized, "the station refused this device's authentication")
        case 404: (.notFound, "the station has no such item")
        case 413: (.tooLarge, "the station refused the request as too large")
        case 429: (.throttled, "the station is throttling requests; wait and retry")
        default: (.station, "the station refused the request")
        }
        var error = StationClientError(kind, operation: operation, message: text, status: response.status, stationMessage: message)
        if kind == .throttled {
            error.retryAfter = response.headers["Retry-After"].flatMap { retryAfter(parsing: $0, now: now) }
        }
        return error
    }

    /// A `Retry-After` value (RFC 9110 §10.2.3): delay seconds, or an HTTP date (IMF-fixdate)
    /// counted from `now` (a date in the past is zero), at most ``maximumRetryAfterSeconds``.
    /// `nil` for anything else.
    static func retryAfter(parsing value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // Digits only; more than Int64 holds is "a very long time".
            return .seconds(min(Int64(text) ?? maximumRetryAfterSeconds, maximumRetryAfterSeconds))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: text) else { return nil }
        let delay = date.timeIntervalSince(now)
        guard delay > 0 else { return .seconds(0) }
        return .seconds(delay < Double(maximumRetryAfterSeconds) ? Int64(delay.rounded(.up)) : maximumRetryAfterSeconds)
    }

    /// The longest ``retryAfter`` a station's header can set: a year.
    static let maximumRetryAfterSeconds: Int64 = 365 * 24 * 3600

    /// A local file error (`Kind.localFile`).
    static func localFile(_ message: String, operation: String, underlying: (any Error)? = nil) -> StationClientError {
        StationClientError(.localFile, operation: operation, message: message, underlying: underlying)
    }

    /// A local size refusal (`Kind.tooLarge`) against `limit`; nothing was sent.
    static func tooLarge(_ message: String, limit: Int64, operation: String) -> StationClientError {
        StationClientError(.tooLarge, operation: operation, message: message, limit: limit)
    }

    /// An error for a gateway answer with an error status (`Kind.gateway`).
    static func gateway(_ response: HTTPResponse, operation: String) -> StationClientError {
        let body = response.body.data.map { [UInt8]($0) } ?? []
        return StationClientError(
            .gateway, operation: operation, message: "the gateway refused the request",
            status: response.status, stationMessage: StationErrorBody.parse(body)?.message)
    }

    /// Wraps an error of a gateway request: a network failure is `Kind.gateway` (with
    /// ``transportError``), anything else as ``wrap(_:operation:)`` has it.
    static func wrapGateway(_ error: any Error, operation: String) -> StationClientError {
        var wrapped = wrap(error, operation: operation)
        guard wrapped.kind == .unreachable else { return wrapped }
        wrapped.kind = .gateway
        wrapped.message = "the gateway cannot be reached: \(wrapped.message)"
        return wrapped
    }

    /// Wraps any error thrown below the client into a ``StationClientError``.
    static func wrap(_ error: any Error, operation: String) -> StationClientError {
        if let error = error as? StationClientError { return error }
        if let error = error as? TransportError {
            if error.kind == .cancelled {
                return StationClientError(.cancelled, operation: operation, message: "cancelled", transportError: error)
            }
            if error.kind == .responseTooLarge {
                // An answer, just longer than this call's can be: not a network failure.
                let limit = error.kind.limit.map { " the \($0) bytes" } ?? ""
                return StationClientError(.invalidResponse, operation: operation,
                                          message: "the answer is longer than\(limit) this call allows",
                                          transportError: error, underlying: error)
            }
            if error.kind == .pinningUnsupported {
                return StationClientError(
                    .pinningUnsupported, operation: operation,
                    message: "the transport cannot pin the station's TLS key; nothing was sent", transportError: error,
                    underlying: error)
            }
            // The body's own failure (a published file changed while it was sent) is the
            // client's error, not the network's: no retry can mend it.
            if error.kind == .requestBodyFailed, let local = error.underlying as? StationClientError { return local }
            if error.kind == .pinMismatch {
                return StationClientError(
                    .keyChanged, operation: operation, message: "the station presents another TLS key than the pinned one",
                    transportError: error, underlying: error)
            }
            return StationClientError(
                .unreachable, operation: operation, message: error.description, transportError: error, underlying: error)
        }
        if error is CancellationError {
            return StationClientError(.cancelled, operation: operation, message: "cancelled", underlying: error)
        }
        return StationClientError(.invalidResponse, operation: operation, message: "\(error)", underlying: error)
    }
}

/// How pairing failed, read from the station's answer to `/delegate/start` or `/delegate/confirm`.
///
/// A struct rather than an enum, so a new kind of failure in a later release does not break an
/// app's `switch`: switch over ``kind`` (`case .wrongPIN:`, ending with `default:`) and read the
/// details from ``attemptsLeft`` and ``stationMessage``. Two failures are equal when their kind and
/// details are equal; compare ``kind`` to ask only what happened.
public struct PairingFailure: Sendable, Hashable, CustomStringConvertible {
    /// What happened, without the details: compare it or `switch` over it (`case .wrongPIN:`, ending
    /// with `default:`).
    public typealias Kind = ErrorKind<PairingFailure>

    /// What happened.
    public let kind: Kind
    /// The attempts left in this session, for `Kind.wrongPIN`.
    public let attemptsLeft: Int?
    /// The station's text, for `Kind.sessionGone`, `Kind.throttled` and `Kind.invalidKeys`.
    public let stationMessage: String?

    private init(_ kind: Kind, attemptsLeft: Int? = nil, stationMessage: String? = nil) {
        self.kind = kind
        self.attemptsLeft = attemptsLeft
        self.stationMessage = stationMessage
    }

    /// `invalid PIN`: try again; `attemptsLeft` counts the station's five attempts per session locally.
    public static func wrongPIN(attemptsLeft: Int) -> PairingFailure { PairingFailure(.wrongPIN, attemptsLeft: attemptsLeft) }
    /// The session cannot be confirmed any more (expired, locked after five wrong PINs, not
    /// pending, unknown pairing id): start again. The text is the station's.
    public static func sessionGone(_ text: String) -> PairingFailure { PairingFailure(.sessionGone, stationMessage: text) }
    /// HTTP 429: too many pending sessions or too many failed attempts; wait and retry.
    public static func throttled(_ text: String) -> PairingFailure { PairingFailure(.throttled, stationMessage: text) }
    /// The station rejected the device's public keys.
    public static func invalidKeys(_ text: String) -> PairingFailure { PairingFailure(.invalidKeys, stationMessage: text) }
    /// The app's PIN closure returned something that is not 4–8 digits.
    public static let invalidPINFormat = PairingFailure(.invalidPINFormat)
    /// The app cancelled by returning `nil` from the PIN closure.
    public static let cancelledByUser = PairingFailure(.cancelledByUser)

    /// What happened and what to do, in words for people ("wrong PIN (4 attempts left)").
    public var description: String {
        let text = stationMessage ?? ""
        switch kind {
        case .wrongPIN:
            let left = attemptsLeft ?? 0
            return "wrong PIN (\(left) \(left == 1 ? "attempt" : "attempts") left)"
        case .sessionGone: return "the pairing session is gone (\(text)); start again"
        case .throttled: return "the station is throttling pairing (\(text)); wait and retry"
        case .invalidKeys: return "the station rejected the device's keys (\(text))"
        case .invalidPINFormat: return "a PIN is 4 to 8 digits"
        case .cancelledByUser: return "cancelled"
        default: return "\(kind)"
        }
    }
}

extension ErrorKind where Failure == StationClientError {
    /// The station answered with an error status that no other kind covers (a 400 for an
    /// argument it rejects, a 5xx, or a 200 carrying `result.error`): see ``StationClientError/status`` and
    /// ``StationClientError/stationMessage``.
    public static var station: Self { Self() }
    /// The station has no such thing (HTTP 404): an unknown post, follower, pending follower
    /// or CID. Content a listed post should have is `.contentLost` instead.
    public static var notFound: Self { Self() }
    /// The station is rate-limiting this client (HTTP 429): wait ``StationClientError/retryAfter`` (when the
    /// station said, from its `Retry-After` header) and retry.
    public static var throttled: Self { Self() }
    /// Too large: the station refused the request's size (HTTP 413), or the SDK refused
    /// before sending because the request or file would pass the station's limit; ``StationClientError/limit``
    /// is that limit in bytes when known. Also a manifest holding more posts than
    /// ``StationClientConfiguration/maximumManifestPosts`` (read no further, before any
    /// `/rewrap`); ``StationClientError/limit`` is then that number of posts.
    public static var tooLarge: Self { Self() }
    /// The station refused this device's authentication (HTTP 401 or 403, after the SDK's
    /// one retry for a stale clock): the device was revoked or its keys are not the station's.
    public static var unauthorized: Self { Self() }
    /// A followed station's post that was not shared with this follower: its envelope set
    /// holds no envelope for this identity.
    public static var notShared: Self { Self() }
    /// The manifest lists the post but neither the station's `/content` nor the gateway has
    /// its bytes (HTTP 404 from both), e.g. after the station's in-place share
    /// (``StationClient/unsafeReshareInPlace(postCID:audience:namespace:)``) destroyed them.
    public static var contentLost: Self { Self() }
    /// A local file cannot be read, created, written or moved into place; the path is in
    /// ``StationClientError/message`` and the system error in ``StationClientError/underlying`` when there is
    /// one.
    public static var localFile: Self { Self() }
    /// The transport cannot enforce the TLS key pin this request needs (e.g. `URLSession` on
    /// Linux); nothing was sent. Use a transport that pins (`CurlTransport`).
    public static var pinningUnsupported: Self { Self() }
    /// No answer from the station: the network failed (see ``StationClientError/transportError``).
    public static var unreachable: Self { Self() }
    /// An IPFS gateway failed: it answered with an error status (see ``StationClientError/status``), or it
    /// could not be reached (``StationClientError/transportError`` is set). Bytes it served that fail
    /// verification are `.integrity`; an invalid CID or IPNS name is `.refused` before anything is sent.
    public static var gateway: Self { Self() }
    /// The answer could not be read as the expected shape, or was longer than any answer of
    /// that call can be (then ``StationClientError/transportError`` has kind `.responseTooLarge`).
    public static var invalidResponse: Self { Self() }
    /// Content or keys failed verification: a CID mismatch, an envelope or SecretBox that does not open.
    public static var integrity: Self { Self() }
    /// The request was refused locally before anything was sent: an invalid argument (a
    /// malformed CID or IPNS name, a public post given a new audience, a post that is not
    /// in the namespace). Size refusals are `.tooLarge`, file errors `.localFile`.
    public static var refused: Self { Self() }
    /// The namespace is blank or holds a control character; nothing was sent (see
    /// ``StationClient/StationClient/normalizedNamespace(_:)``).
    public static var invalidNamespace: Self { Self() }
    /// No credentials: the device is not paired, or the key store holds nothing under that name.
    public static var notPaired: Self { Self() }
    /// The key store failed (wrong passphrase, unreadable or corrupt file, disk error).
    public static var keyStore: Self { Self() }
    /// The task was cancelled.
    public static var cancelled: Self { Self() }
    /// A pairing step failed; see ``StationClientError/pairingFailure``.
    public static var pairing: Self { Self() }
    /// The station presented a TLS key nobody accepted: a certificate no trusted authority signed, with neither
    /// an expected fingerprint that matches nor a confirmation. The key it presented, when it could be read, is
    /// ``StationClientError/presentedFingerprint``; an expected one that did not match is
    /// ``StationClientError/expectedFingerprint``. Nothing was sent to the station.
    public static var untrustedKey: Self { Self() }
    /// The station presents another TLS key than the key pinned at pairing (or re-trusted):
    /// ``StationClientError/expectedFingerprint`` is the pin, ``StationClientError/presentedFingerprint`` the
    /// key now presented (when it could be read). Nothing was sent; re-trust only on purpose, with
    /// ``StationClient/trust(fingerprint:)``.
    public static var keyChanged: Self { Self() }
    /// A download ran past its deadline: the station sent its bytes slower on average than
    /// ``StationClientConfiguration/minimumDownloadRate`` allows (after
    /// ``StationClientConfiguration/downloadGracePeriod``), so it was stopped.
    public static var tooSlow: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.station, .notFound, .throttled, .tooLarge, .unauthorized, .notShared, .contentLost, .localFile, .pinningUnsupported, .unreachable, .gateway, .invalidResponse, .integrity, .refused, .invalidNamespace, .notPaired, .keyStore, .cancelled, .pairing, .untrustedKey, .keyChanged, .tooSlow] }
}

extension ErrorKind where Failure == PairingFailure {
    /// `invalid PIN`: try again; ``PairingFailure/attemptsLeft`` counts the station's five
    /// attempts per session locally.
    public static var wrongPIN: Self { Self() }
    /// The session cannot be confirmed any more (expired, locked after five wrong PINs, not
    /// pending, unknown pairing id): start again. ``PairingFailure/stationMessage`` is the
    /// station's text.
    public static var sessionGone: Self { Self() }
    /// HTTP 429: too many pending sessions or too many failed attempts; wait and retry.
    public static var throttled: Self { Self() }
    /// The station rejected the device's public keys.
    public static var invalidKeys: Self { Self() }
    /// The app's PIN closure returned something that is not 4–8 digits.
    public static var invalidPINFormat: Self { Self() }
    /// The app cancelled by returning `nil` from the PIN closure.
    public static var cancelledByUser: Self { Self() }
    /// Every kind known to this version of the package, for an app's tests. A later version may
    /// add kinds: a `switch` still ends with `default:`.
    public static var knownValues: [Self] { [.wrongPIN, .sessionGone, .throttled, .invalidKeys, .invalidPINFormat, .cancelledByUser] }
}
